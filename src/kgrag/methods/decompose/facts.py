"""Which facts a decompose step reads beyond its similarity ranking."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgrag.types import Evidence

if TYPE_CHECKING:
    from kgrag.graph.kg import KnowledgeGraph


def widen(
    kg: KnowledgeGraph, answers: Sequence[int], evidence: Sequence[Evidence], anchors: Sequence[int]
) -> list[int]:
    """``answers`` and the entities the same facts reach the same way: each fact of ``evidence`` that links an
    anchor to an answer names a (anchor, relation, direction); every other fact of ``evidence`` with the same
    one adds its far end. Only facts the step read count, so nothing the model was not shown is added."""
    found, anchor_set = set(answers), set(anchors)
    facts = [(int(kg.heads[t]), int(kg.rels[t]), int(kg.tails[t])) for ev in evidence for t in ev.triples[:1]]
    ways = {(h, r, True) for h, r, t in facts if h in anchor_set and t in found}
    ways |= {(t, r, False) for h, r, t in facts if t in anchor_set and h in found}
    more = [t for h, r, t in facts if (h, r, True) in ways] + [h for h, r, t in facts if (t, r, False) in ways]
    return list(dict.fromkeys([*answers, *(e for e in more if e not in anchor_set)]))
