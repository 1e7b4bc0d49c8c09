"""Which facts a decompose step reads beyond its similarity ranking."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kgrag.graph.hubs import walkable
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


def connected_top(
    kg: KnowledgeGraph, tids: np.ndarray, scores: np.ndarray, starts: Sequence[int], k: int
) -> np.ndarray:
    """Up to ``k`` positions of ``tids`` forming facts that join up with ``starts``: each next one is the
    best-scored fact touching an entity the starts or the facts taken so far reach (greedy, as Prim grows a
    tree), never going on through a hub (:mod:`kgrag.graph.hubs`) other than a start. A flat top-k over a
    two-hop neighbourhood fills with the second hop of everything ("Filmistaan release year 2012"), so a small
    model answers from facts no chain joins to the question; here every fact read is one step from what the
    question names or from a fact already read. In the order taken."""
    heads, tails = kg.heads[tids], kg.tails[tids]
    through = walkable(kg)
    on = np.zeros(kg.num_entities, dtype=bool)  # entities a next fact may touch
    on[np.asarray(starts, dtype=np.int64)] = True
    open_ = np.ones(len(tids), dtype=bool)
    taken: list[int] = []
    for _ in range(min(k, len(tids))):
        front = open_ & (on[heads] | on[tails])
        if not front.any():
            break
        best = int(np.argmax(np.where(front, scores, -np.inf)))
        open_[best] = False
        for end in (heads[best], tails[best]):
            on[end] |= through[end]
        taken.append(best)
    return np.asarray(taken, dtype=np.int64)
