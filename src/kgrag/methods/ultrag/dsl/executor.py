"""Executing queries over fuzzy sets: the shared recursion, and the symbolic executor.

A fuzzy set is a float vector over the KG's entities with memberships in [0, 1].  Leaves come from entity
linking (one set per mention), projections follow a relation, intersections multiply (the product t-norm).
:class:`FuzzyExecutor` owns the recursion and keeps every intermediate set, so the answers can be explained
afterwards (:func:`supporting_triples`); subclasses implement :meth:`FuzzyExecutor.project` only.

The symbolic projection is max-product over edges, ``y[t] = max over (h, r, t) of x[h]`` (edge weight 1),
computed from the KG's CSR arrays for the entities in the support of ``x`` only — the cost is the number of
edges touched, not the size of the KG.  Execution can be restricted to an entity subset (ULTRAG runs on a
SEPPR subgraph): edges with an end outside it are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from kgrag.graph.algorithms.edges import relation_edges, reversed_relation
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.ultrag.dsl.nodes import Entity, Intersection, Projection, Query
from kgrag.registry import Registry

Anchors = Mapping[str, Mapping[int, float]]
"""Linked leaves: mention → {entity id: membership}."""


class ExecutionError(ValueError):
    """A query cannot run: a relation is unknown or a leaf was not linked."""


@dataclass
class Execution:
    """Scores of every KG entity for the query's answer variable, plus the intermediate fuzzy sets."""

    scores: np.ndarray
    intermediate: dict[Query, np.ndarray] = field(default_factory=dict)
    mask: np.ndarray | None = None  # the entity subset it ran on (None: the whole KG)

    def top(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best entities with a positive score, best first (ties by entity id)."""
        positive = np.flatnonzero(self.scores > 0)
        if k < len(positive):
            kth = np.partition(self.scores[positive], len(positive) - k)[len(positive) - k]
            positive = positive[self.scores[positive] >= kth]
        order = positive[np.argsort(-self.scores[positive], kind="stable")][:k]
        return order, self.scores[order]


def subgraph_mask(kg: KnowledgeGraph, nodes: np.ndarray | None) -> np.ndarray | None:
    """Boolean membership array for an entity subset (``None``: the whole KG)."""
    if nodes is None:
        return None
    mask = np.zeros(kg.num_entities, dtype=bool)
    mask[np.asarray(nodes, dtype=np.int64)] = True
    return mask


def anchor_vector(kg: KnowledgeGraph, members: Mapping[int, float]) -> np.ndarray:
    """A linked mention as a fuzzy set (memberships clipped to [0, 1])."""
    x = np.zeros(kg.num_entities, dtype=np.float64)
    if members:
        ids = np.fromiter(members.keys(), dtype=np.int64, count=len(members))
        vals = np.fromiter(members.values(), dtype=np.float64, count=len(members))
        if ids.min() < 0 or ids.max() >= kg.num_entities:
            raise ExecutionError("linked entity id out of range")
        np.maximum.at(x, ids, np.clip(vals, 0.0, 1.0))
    return x


class FuzzyExecutor:
    """Runs a query tree bottom-up over fuzzy sets; subclasses define the projection."""

    name = "fuzzy"

    def __init__(self, kg: KnowledgeGraph, nodes: np.ndarray | None = None) -> None:
        self.kg = kg
        self.nodes = None if nodes is None else np.sort(np.asarray(nodes, dtype=np.int64))
        self.mask = subgraph_mask(kg, self.nodes)

    def execute(self, query: Query, anchors: Anchors) -> Execution:
        """Scores for the query's answers; ``anchors`` links every leaf mention to entities."""
        intermediate: dict[Query, np.ndarray] = {}
        scores = self._run(query, anchors, intermediate)
        return Execution(scores, intermediate, self.mask)

    def _run(self, node: Query, anchors: Anchors, memo: dict[Query, np.ndarray]) -> np.ndarray:
        if node in memo:
            return memo[node]
        if isinstance(node, Entity):
            if node.name not in anchors:
                raise ExecutionError(f"entity mention {node.name!r} was not linked")
            x = anchor_vector(self.kg, anchors[node.name])
            if self.mask is not None:
                x[~self.mask] = 0.0
        elif isinstance(node, Projection):
            x = self.project(self._run(node.operand, anchors, memo), self.relation_id(node.relation))
        elif isinstance(node, Intersection):
            x = self._run(node.operands[0], anchors, memo).copy()
            for op in node.operands[1:]:
                x *= self._run(op, anchors, memo)  # product t-norm
        else:  # pragma: no cover
            raise TypeError(f"not a query node: {node!r}")
        memo[node] = x
        return x

    def relation_id(self, name: str) -> int:
        try:
            return self.kg.relation_id(name)
        except KeyError as exc:
            raise ExecutionError(str(exc)) from None

    def project(self, x: np.ndarray, relation: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class SymbolicExecutor(FuzzyExecutor):
    """Crisp graph traversal lifted to fuzzy sets: projection is max-product over the KG's edges."""

    name = "symbolic"

    def project(self, x: np.ndarray, relation: int) -> np.ndarray:
        sources = np.flatnonzero(x > 0)
        if self.mask is not None:
            sources = sources[self.mask[sources]]
        src, dst, _ = relation_edges(self.kg, sources, relation, self.mask)
        y = np.zeros_like(x)
        if len(dst):
            np.maximum.at(y, dst, x[src])
        return y


def supporting_triples(
    kg: KnowledgeGraph,
    query: Query,
    execution: Execution,
    entity: int,
    *,
    mask: np.ndarray | None = None,
    max_triples: int = 12,
) -> list[int]:
    """KG triples that support ``entity`` as an answer: for each projection, the edge from the best-scored
    member of its operand, walked back to the leaves (triple ids, root side first; empty when the KG has no
    such edge, e.g. a link the neural executor inferred)."""
    found: list[int] = []

    def back(node: Query, target: int) -> None:
        if len(found) >= max_triples or isinstance(node, Entity):
            return
        if isinstance(node, Intersection):
            for op in node.operands:
                back(op, target)
            return
        x = execution.intermediate.get(node.operand)
        if x is None:
            return
        rid = kg.relation_id(node.relation)
        inverse = reversed_relation(rid, kg.num_relations)
        # edges entering ``target`` along the relation = edges leaving it along the inverse
        _, dst, tids = relation_edges(kg, np.array([target], np.int64), inverse, mask)
        if not len(dst):
            return
        best = int(np.argmax(x[dst]))
        if x[dst[best]] <= 0:
            return
        found.append(int(tids[best]))
        back(node.operand, int(dst[best]))

    back(query, int(entity))
    return list(dict.fromkeys(found))


executors: Registry[type[FuzzyExecutor]] = Registry("query executor")
executors.register("symbolic")(SymbolicExecutor)
