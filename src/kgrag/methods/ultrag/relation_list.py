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
from dataclasses import dataclass

import numpy as np

from kgrag.graph.algorithms import incident_edges
from kgrag.graph.hubs import walkable
from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph, unique_ints

HOP_BONUS = (0.3, 0.15)
"""Added to the cosine (MiniLM: unrelated names ~0.1, related ~0.4–0.6) of relations on an edge at a topic
entity, resp. one step further out: enough to put a vaguely related relation where the query starts ahead
of a similar one elsewhere, not enough to put an unrelated one ahead of a close match."""


@dataclass
class Neighbourhood:
    """The relations around a question's entities: ``hops[r]`` is 1 when relation ``r`` is on an edge at a topic
    entity, 2 when on an edge one step further out, 0 otherwise; ``examples[r]`` is a triple id of that edge
    (``-1`` for 0), the nearest one with the fewest unnamed ends."""

    hops: np.ndarray
    examples: np.ndarray

    @property
    def empty(self) -> bool:
        return not self.hops.any()


def neighbourhood(kg: KnowledgeGraph, topics: Sequence[int]) -> Neighbourhood:
    """The relations within two hops of ``topics`` (both directions), with one example edge each.

    The second hop is taken only from neighbours that are not hubs (:func:`kgrag.graph.hubs.walkable`): past an unnamed
    node or a film it is what a two-step query follows, past a country with a thousand edges it is most of
    the KG's relations, and the relations the question needs drown in them (WebQSP, "who was Richard Nixon
    married to": 84 relations within two hops, 76 of them through "United States of America")."""
    hops = np.zeros(kg.num_relations, dtype=np.int8)
    examples = np.full(kg.num_relations, -1, dtype=np.int64)
    if not len(topics) or not kg.num_triples:
        return Neighbourhood(hops, examples)
    seeds = unique_ints(np.asarray(topics, dtype=np.int64))
    _, first, reached, _ = incident_edges(kg, seeds)
    inner = unique_ints(reached[walkable(kg)[reached]].astype(np.int64))
    _, second, _, _ = incident_edges(kg, inner)
    tids = np.concatenate([first, second]).astype(np.int64)
    near = np.concatenate([np.ones(len(first), np.int8), np.full(len(second), 2, np.int8)])
    heads, tails, rels = kg.heads[tids], kg.tails[tids], kg.rels[tids]
    unnamed = unnamed_entities(kg)
    order = np.lexsort((tids, unnamed[heads].astype(np.int8) + unnamed[tails], near, rels))
    first_of_relation = np.ones(len(order), dtype=bool)
    first_of_relation[1:] = rels[order][1:] != rels[order][:-1]
    chosen = order[first_of_relation]
    hops[rels[chosen]] = near[chosen]
    examples[rels[chosen]] = tids[chosen]
    return Neighbourhood(hops, examples)


def relation_relevance(
    question_vector: np.ndarray,
    relation_vectors: np.ndarray,
    hood: Neighbourhood,
    *,
    hop_bonus: tuple[float, float] = HOP_BONUS,
) -> np.ndarray:
    """Relevance of each base relation to a question, ``(num_relations,)`` float64: the cosine of
    ``question_vector`` and the relation's unit row in ``relation_vectors`` (same embedder), plus
    ``hop_bonus[0]`` / ``hop_bonus[1]`` for relations 1 / 2 hops out in ``hood``."""
    scores = np.asarray(relation_vectors, dtype=np.float64) @ np.asarray(question_vector, dtype=np.float64)
    bonus = np.array([0.0, hop_bonus[0], hop_bonus[1]])
    return scores + bonus[hood.hops]


def rank_relations(scores: np.ndarray, hood: Neighbourhood | None = None, *, others: int | None = None) -> np.ndarray:
    """Relation ids by decreasing score (ties: the KG's order). With a non-empty ``hood`` and ``others``, the
    relations outside the neighbourhood stop after the ``others`` best of them: a query that starts at the
    question's entities cannot use them within two steps, so beyond a few close matches (in case an
    entity was missed) they only crowd the prompt."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    if hood is None or hood.empty or others is None:
        return order
    outside = hood.hops[order] == 0
    keep = ~outside | (np.cumsum(outside) <= others)
    return order[keep]


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


def shown_order(relations: Sequence[int] | np.ndarray, hood: Neighbourhood | None = None) -> list[int]:
    """The relations in the order the prompt lists them: the KG's; with ``hood``, the ones at the question's
    entities first, then those one step further, then the rest (a small model picks from the top of a
    long list, and the query has to start with a relation at its entity)."""
    if hood is None:
        return sorted(int(r) for r in relations)
    group = np.where(hood.hops == 0, 3, hood.hops)
    return sorted((int(r) for r in relations), key=lambda r: (int(group[r]), r))


__all__ = [
    "HOP_BONUS",
    "Neighbourhood",
    "longest_fitting",
    "neighbourhood",
    "rank_relations",
    "relation_relevance",
    "shown_order",
]
