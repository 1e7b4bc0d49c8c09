"""Fix projections written in the wrong direction, using the KG itself (an addition to the paper).

The most frequent mistake of small query writers is the direction of a relation: ``"Max von Sydow" ->
starred_actors`` for "films starring Max von Sydow" (``starred_actors`` links films to actors, so from an
actor it reaches nothing).  Walking the query bottom-up with crisp supports, a projection that reaches no
entity while the same relation in the other direction does is flipped (``starred_actors`` ↔
``starred_actors_inv``).  A projection that reaches nothing either way is left alone: the query then runs
empty and the method falls back.  Cost: one symbolic pass over the supports (the edges touched).
"""

from __future__ import annotations

import numpy as np

from kgrag.graph.algorithms.edges import relation_edges
from kgrag.graph.kg import KnowledgeGraph, unique_ints
from kgrag.methods.ultrag.dsl.executor import Anchors
from kgrag.methods.ultrag.dsl.nodes import INVERSE_SUFFIX, Entity, Intersection, Projection, Query


def flip(relation: str) -> str:
    return relation[: -len(INVERSE_SUFFIX)] if relation.endswith(INVERSE_SUFFIX) else relation + INVERSE_SUFFIX


def repair_directions(
    kg: KnowledgeGraph, query: Query, anchors: Anchors, mask: np.ndarray | None = None
) -> tuple[Query, list[str]]:
    """The query with dead-end projections flipped, and one note per flip."""
    notes: list[str] = []

    def support(ids: np.ndarray, relation: str) -> np.ndarray:
        _, dst, _ = relation_edges(kg, ids, kg.relation_id(relation), mask)
        return unique_ints(dst)

    def walk(node: Query) -> tuple[Query, np.ndarray]:
        if isinstance(node, Entity):
            ids = np.fromiter((e for e, w in anchors.get(node.name, {}).items() if w > 0), dtype=np.int64)
            if mask is not None:
                ids = ids[mask[ids]]
            return node, ids
        if isinstance(node, Intersection):
            parts = [walk(op) for op in node.operands]
            ids = parts[0][1]
            for _, other in parts[1:]:
                inside = np.zeros(kg.num_entities, dtype=bool)
                inside[other] = True
                ids = ids[inside[ids]]
            return Intersection(tuple(p[0] for p in parts)), ids
        operand, ids = walk(node.operand)
        reached = support(ids, node.relation) if len(ids) else ids
        if len(ids) and not len(reached):
            other = flip(node.relation)
            flipped = support(ids, other)
            if len(flipped):
                notes.append(f"{node.relation!r} reaches nothing from there: followed {other!r} instead")
                return Projection(operand, other), flipped
        return Projection(operand, node.relation), reached

    repaired, _ = walk(query)
    return repaired, notes
