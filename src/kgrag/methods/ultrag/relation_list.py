"""Which relations the query writer is shown: the ones that matter for the question, as many as its context holds.

The paper lists every relation of the KG in a prompt that is the same for every question (GPT-5, whose
provider caches it). A local model reads 4,096 tokens: on the WebQSP Freebase proxy (800 relations, each
listed with an example fact read both ways) the list alone took ~11,000, so every call failed, and listing
the 200 most frequent relations instead left out the ones the questions needed. So here the relations are
ranked per question — cosine of the question and the relation's name under the method's text embedder, plus
a bonus for relations on the edges around the question's entities, where the query starts (1 hop: the first
projection; 2 hops: the next one, e.g. past an unnamed node) — and the best ones that fit the prompt's token
budget are listed. When the whole list fits, nothing is ranked (no embedding is computed) and every
question sees the same list. Either way the shown relations keep the KG's order, so a relation's place in
the prompt does not depend on the question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kgrag.graph.algorithms import k_hop
from kgrag.graph.kg import KnowledgeGraph

HOP_BONUS = (0.3, 0.15)
"""Added to the cosine (MiniLM: unrelated names ~0.1, related ~0.4–0.6) of relations on an edge at a topic
entity, resp. one step further out: enough to put a vaguely related relation where the query starts ahead
of a similar one elsewhere, not enough to put an unrelated one ahead of a close match."""


def relation_relevance(
    kg: KnowledgeGraph,
    question_vector: np.ndarray,
    relation_vectors: np.ndarray,
    topics: Sequence[int] = (),
    *,
    hop_bonus: tuple[float, float] = HOP_BONUS,
) -> np.ndarray:
    """Relevance of each base relation to a question, ``(num_relations,)`` float64.

    ``relation_vectors`` (unit rows, one per relation) and ``question_vector`` come from the same embedder;
    ``topics`` are the question's entity ids. A relation on an edge incident to a topic gets
    ``hop_bonus[0]``, one on an edge incident to a topic's neighbour ``hop_bonus[1]`` (the larger applies).
    """
    scores = np.asarray(relation_vectors, dtype=np.float64) @ np.asarray(question_vector, dtype=np.float64)
    if len(topics) and kg.num_triples:
        hood = k_hop(kg, np.asarray(topics, dtype=np.int64), 2)
        dist = np.full(kg.num_entities, 3, dtype=np.int32)
        dist[hood.nodes] = hood.distance
        tids = hood.edges
        near = np.minimum(dist[kg.heads[tids]], dist[kg.tails[tids]])  # 0: the edge touches a topic
        bonus = np.zeros(kg.num_relations, dtype=np.float64)
        np.maximum.at(bonus, kg.rels[tids], np.where(near == 0, hop_bonus[0], hop_bonus[1]))
        scores = scores + bonus
    return scores


def rank_relations(scores: np.ndarray) -> np.ndarray:
    """Relation ids by decreasing score (ties: the KG's order)."""
    return np.argsort(-np.asarray(scores), kind="stable")


def longest_fitting(count: int, fits: Callable[[int], bool]) -> int:
    """The largest ``k`` in ``[0, count]`` with ``fits(k)`` true, for a ``fits`` that stays false once false
    (a prompt of the ``k`` best relations grows with ``k``); binary search, so ~log2(count) prompts are
    rendered and counted. ``0`` when even ``fits(1)`` fails."""
    low, high = 0, count
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def shown_order(relations: Sequence[int] | np.ndarray) -> list[int]:
    """The relations in the order the prompt lists them: the KG's."""
    return sorted(int(r) for r in relations)


__all__ = ["HOP_BONUS", "longest_fitting", "rank_relations", "relation_relevance", "shown_order"]
