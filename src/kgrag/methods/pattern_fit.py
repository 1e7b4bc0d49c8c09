"""Does the relation path to an answer read as the question? A confidence signal every method can use.

Support says that *some* chain of evidence joins an answer to the question's entity, not that it is the chain
the question asks about. kaping answering MetaQA's 3-hop "who wrote the films that share actors with the films
of X" with a film one hop from X is supported and wrong, and its confidence (0.77 on average there, for a Hit@1
of 0.33) could not tell. The question itself says which relations it asks for, and FRAG's zero-shot pattern
scorer reads that on any KG with no training: every relation pattern of up to three hops from the question's
entities, scored by how well its relation names align with spans of the question
(:meth:`kgrag.methods.frag.Frag.zero_shot_pattern_scores`).

``fit`` of an answer is 1 when the best-scored pattern reaches it, and falls linearly with how far below the
best the best pattern that reaches it scores, to 0 at :data:`SCALE` below (about twice the score gap under which
nine in ten gold answers lie on every dev KG: the WebQSP proxy, renamed MetaQA, the user-style CSVs); an answer no
pattern reaches (not a KG entity, more than three hops away, or no entity of the question found) gets 0. The
scorer runs without any trained router or pattern model, so the signal means the same on every KG, and it costs
one retrieval-sized walk per question (milliseconds; no LLM call).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kgrag.graph.kg import KnowledgeGraph

if TYPE_CHECKING:
    from kgrag.methods.frag import Frag

SCALE = 0.1


def zero_shot_scorer(kg: KnowledgeGraph, embedder: object = None) -> Frag:
    """A FRAG instance that scores patterns zero-shot on ``kg`` (no trained router or scorer, whatever the KG)."""
    from kgrag.methods.frag import Frag

    return Frag(kg, embedder=embedder, router="none", patterns="none", hops=None)


def pattern_fit(scorer: Frag, question: str, starts: Iterable[int], answers: Sequence[str]) -> dict[str, float]:
    """``fit`` (module docstring) of each answer, read from the patterns leaving ``starts`` (the question's
    entities, as support finds them: :func:`kgrag.methods.support.question_entities`); empty when there is
    nothing to read it from (no such entity, no pattern leaving one)."""
    kg = scorer.kg
    ids = sorted(set(starts))
    scored = scorer.zero_shot_pattern_scores(question, ids) if ids else None
    if scored is None or not len(scored[1]):
        return {}
    reach, scores = scored
    out = dict.fromkeys(answers, 0.0)
    best = float(scores.max())
    left = {e: a for a in answers if (e := kg.find_entity(a)) is not None}  # entity -> the answer naming it
    for k in np.argsort(-scores, kind="stable"):
        gap = best - float(scores[k])
        if gap >= SCALE or not left:
            break
        for e in np.intersect1d(reach.endpoints(int(k)), np.fromiter(left, dtype=np.int64)):
            out[left.pop(int(e))] = round(1.0 - gap / SCALE, 4)
    return out


def best_pattern_hops(scorer: Frag, question: str, starts: Sequence[int]) -> tuple[int, str] | None:
    """How many hops the question's best reading takes from ``starts`` (the relation pattern FRAG's zero-shot
    scorer puts first), with that pattern's label; None when there is nothing to read. On dev questions with
    their hop counts known (MetaQA first 15 per hop, software, pharmacy, bookshelf) it is right on 75 of 99,
    decompose's plans on 58 (benchmarks/results/decompose_cap_plan.json)."""
    from kgrag.methods.frag.patterns import pattern_key, pattern_label

    scored = scorer.zero_shot_pattern_scores(question, sorted(set(starts))) if starts else None
    if scored is None or not len(scored[1]):
        return None
    best = scored[0].patterns[int(np.argmax(scored[1]))]
    return len(pattern_key(best)), pattern_label(scorer.kg, best)
