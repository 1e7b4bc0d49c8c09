"""Simple paths (no repeated entity) up to a length, pruned towards targets by a reverse BFS."""

from __future__ import annotations

import numpy as np

from kgrag.graph.algorithms.edges import as_ids, incident_edges, relation_mask
from kgrag.graph.algorithms.results import IdsLike, Paths
from kgrag.graph.algorithms.shortest_paths import bfs_levels
from kgrag.graph.kg import KnowledgeGraph, _check_direction, unique_ints


def simple_paths(
    kg: KnowledgeGraph,
    sources: IdsLike | int,
    targets: IdsLike | int | None = None,
    *,
    max_length: int = 3,
    max_paths: int = 1000,
    direction: str = "both",
    relations: IdsLike | None = None,
    max_frontier: int = 200_000,
) -> Paths:
    """Paths without repeated entities, of 1..``max_length`` edges, from ``sources`` (to ``targets``).

    With ``targets`` the search is pruned by a BFS from the targets: a partial path is only extended to an
    entity that can still reach a target within the remaining hops.  Without targets every simple path
    up to ``max_length`` is returned.  Stops at ``max_paths`` results; a frontier above ``max_frontier``
    partial paths is cut (``truncated`` tells).
    """
    _check_direction(direction)
    sources = unique_ints(as_ids(sources, kg.num_entities))
    rel_filter = None if relations is None else as_ids(relations, 2 * kg.num_relations, "relation")
    target_mask, to_target = _target_pruning(kg, targets, direction, rel_filter, max_length)
    nodes = sources[:, None]
    edges = np.empty((len(sources), 0), np.int64)
    found: list[Paths] = []
    total = 0
    truncated = False
    for depth in range(1, max_length + 1):
        if not len(nodes):
            break
        owner, tids, other, _ = incident_edges(kg, nodes[:, -1], direction)
        ok = ~(nodes[owner] == other[:, None]).any(axis=1)
        mask = relation_mask(kg, tids, rel_filter)
        if mask is not None:
            ok &= mask
        if to_target is not None:
            d = to_target[other]
            ok &= (d >= 0) & (depth + d <= max_length)
        owner, tids, other = owner[ok], tids[ok], other[ok]
        nodes = np.hstack([nodes[owner], other[:, None]])
        edges = np.hstack([edges[owner], tids[:, None]])
        hit = target_mask[other] if target_mask is not None else np.ones(len(other), bool)
        if hit.any():
            take = np.flatnonzero(hit)[: max_paths - total]
            found.append(Paths(nodes[take].astype(np.int32), edges[take], np.full(len(take), depth, np.int32)))
            total += len(take)
            if total >= max_paths:
                truncated = bool(hit.sum() > len(take)) or depth < max_length
                break
        if len(nodes) > max_frontier:
            nodes, edges, truncated = nodes[:max_frontier], edges[:max_frontier], True
    result = Paths.concat(found)
    result.truncated = truncated
    return result


def _target_pruning(
    kg: KnowledgeGraph, targets: IdsLike | int | None, direction: str, rel_filter: np.ndarray | None, max_length: int
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(is_target, hops_to_a_target)`` per entity, by a BFS backwards from the targets; ``(None, None)``
    without targets.  A partial path is extended only where a target is still within the remaining hops."""
    if targets is None:
        return None, None
    targets = unique_ints(as_ids(targets, kg.num_entities))
    target_mask = np.zeros(kg.num_entities, dtype=bool)
    target_mask[targets] = True
    back = {"out": "in", "in": "out", "both": "both"}[direction]
    to_target, _ = bfs_levels(kg, targets, back, rel_filter, max_length)
    return target_mask, to_target
