"""Shortest paths: hop-count BFS (all shortest paths per target) and least-weight paths (scipy Dijkstra)."""

from __future__ import annotations

import numpy as np

from kgrag.graph.algorithms.edges import as_ids, expand_ranges, incident_edges, relation_mask
from kgrag.graph.algorithms.results import IdsLike, Paths
from kgrag.graph.kg import KnowledgeGraph, _check_direction, unique_ints


def bfs_levels(
    kg: KnowledgeGraph,
    sources: np.ndarray,
    direction: str,
    rel_filter: np.ndarray | None,
    max_length: int,
    stop_mask: np.ndarray | None = None,
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Multi-source BFS. Returns distances and, per level, every (child, parent, triple) shortest-path edge.

    Stops early once every entity in ``stop_mask`` has been reached.
    """
    dist = np.full(kg.num_entities, -1, dtype=np.int32)
    dist[sources] = 0
    frontier = sources
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    remaining = int(stop_mask.sum() - stop_mask[sources].sum()) if stop_mask is not None else -1
    for depth in range(1, max_length + 1):
        if not len(frontier) or remaining == 0:
            break
        owner, tids, other, _ = incident_edges(kg, frontier, direction)
        mask = relation_mask(kg, tids, rel_filter)
        if mask is not None:
            owner, tids, other = owner[mask], tids[mask], other[mask]
        fresh = dist[other] < 0
        child, parent, tids = other[fresh].astype(np.int64), frontier[owner[fresh]], tids[fresh]
        new = unique_ints(child)
        dist[new] = depth
        levels.append((child, parent, tids))
        frontier = new
        if stop_mask is not None:
            remaining -= int(stop_mask[new].sum())
    return dist, levels


def shortest_path_lengths(
    kg: KnowledgeGraph,
    sources: IdsLike | int,
    *,
    direction: str = "both",
    relations: IdsLike | None = None,
    weights: np.ndarray | None = None,
    max_length: int | None = None,
) -> np.ndarray:
    """Distance from the nearest source to every entity (``-1`` / ``inf`` if unreachable).

    Unweighted: hop counts (int32, ``-1`` unreachable) by BFS.  With ``weights`` (one positive float per
    triple) the distances are weighted (float64, ``inf`` unreachable), via ``scipy.sparse.csgraph.dijkstra``.
    """
    _check_direction(direction)
    sources = unique_ints(as_ids(sources, kg.num_entities))
    rel_filter = None if relations is None else as_ids(relations, 2 * kg.num_relations, "relation")
    if weights is None:
        dist, _ = bfs_levels(kg, sources, direction, rel_filter, max_length or kg.num_entities)
        return dist
    from scipy.sparse.csgraph import dijkstra

    graph, _ = _weighted_graph(kg, weights, direction, rel_filter)
    return dijkstra(
        graph,
        directed=True,
        indices=sources,
        min_only=True,
        limit=np.inf if max_length is None else float(max_length),
    )


def shortest_paths(
    kg: KnowledgeGraph,
    sources: IdsLike | int,
    targets: IdsLike | int,
    *,
    direction: str = "both",
    relations: IdsLike | None = None,
    max_length: int = 6,
    max_paths: int = 100,
    max_paths_per_target: int | None = None,
) -> Paths:
    """All shortest paths (unweighted) from the source set to each reachable target, source first.

    Each target gets the paths of its own shortest distance from the nearest source; at most
    ``max_paths_per_target`` per target (default: ``max_paths``) and ``max_paths`` in all.  Targets that
    are sources, or farther than ``max_length``, yield no path.
    """
    _check_direction(direction)
    sources = unique_ints(as_ids(sources, kg.num_entities))
    targets = unique_ints(as_ids(targets, kg.num_entities))
    rel_filter = None if relations is None else as_ids(relations, 2 * kg.num_relations, "relation")
    stop = np.zeros(kg.num_entities, dtype=bool)
    stop[targets] = True
    dist, levels = bfs_levels(kg, sources, direction, rel_filter, max_length, stop)
    per_target = max_paths_per_target or max_paths
    sorted_levels = []
    for child, parent, tids in levels:
        order = np.argsort(child, kind="stable")
        sorted_levels.append((child[order], parent[order], tids[order]))
    groups = []
    truncated = False
    for depth in range(1, len(levels) + 1):
        group = targets[dist[targets] == depth]
        if not len(group):
            continue
        nodes = group[:, None].astype(np.int64)  # built backwards: target first
        edges = np.empty((len(group), 0), np.int64)
        target_of = np.arange(len(group))
        for level in range(depth, 0, -1):
            child, parent, tids = sorted_levels[level - 1]
            last = nodes[:, -1]
            owner, idx = expand_ranges(np.searchsorted(child, last, "left"), np.searchsorted(child, last, "right"))
            tgt = target_of[owner]
            rank = np.arange(len(tgt)) - np.searchsorted(tgt, tgt, "left")  # owner order keeps groups together
            keep = rank < per_target
            truncated |= not keep.all()
            owner, idx, target_of = owner[keep], idx[keep], tgt[keep]
            nodes = np.hstack([nodes[owner], parent[idx][:, None]])
            edges = np.hstack([edges[owner], tids[idx][:, None]])
        groups.append(
            Paths(nodes[:, ::-1].astype(np.int32), edges[:, ::-1].copy(), np.full(len(nodes), depth, np.int32))
        )
    result = Paths.concat(groups)
    if len(result) > max_paths:
        result = Paths(result.nodes[:max_paths], result.edges[:max_paths], result.lengths[:max_paths], True)
    result.truncated |= truncated
    return result


def _weighted_graph(
    kg: KnowledgeGraph, weights: np.ndarray, direction: str, rel_filter: np.ndarray | None
) -> tuple[object, tuple[np.ndarray, np.ndarray]]:
    """CSR graph with, for each (u, v), the lightest triple between them; plus (sorted keys, triple ids)."""
    import scipy.sparse as sp

    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (kg.num_triples,):
        raise ValueError(f"weights must have one value per triple ({kg.num_triples}), got {weights.shape}")
    if (weights < 0).any() or not np.isfinite(weights).all():
        raise ValueError("weights must be finite and non-negative")
    tids = np.arange(kg.num_triples)
    if rel_filter is not None:
        tids = tids[np.isin(kg.rels, rel_filter % max(kg.num_relations, 1))]
    h, t = kg.heads[tids].astype(np.int64), kg.tails[tids].astype(np.int64)
    rows, cols = {"out": (h, t), "in": (t, h), "both": (np.concatenate([h, t]), np.concatenate([t, h]))}[direction]
    if direction == "both":
        tids = np.concatenate([tids, tids])
    w = np.maximum(weights[tids], 1e-12)  # csgraph would read an explicit 0 as "no edge"
    n = kg.num_entities
    key = rows * n + cols
    order = np.lexsort((w, key))
    key, w, tids = key[order], w[order], tids[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    key, w, tids = key[first], w[first], tids[first]
    graph = sp.csr_matrix((w, (key // n, key % n)), shape=(n, n))
    return graph, (key, tids)


def weighted_shortest_paths(
    kg: KnowledgeGraph,
    sources: IdsLike | int,
    targets: IdsLike | int,
    weights: np.ndarray,
    *,
    direction: str = "both",
    relations: IdsLike | None = None,
) -> Paths:
    """One least-weight path from the nearest source to each reachable target (Dijkstra, scipy)."""
    from scipy.sparse.csgraph import dijkstra

    _check_direction(direction)
    sources = unique_ints(as_ids(sources, kg.num_entities))
    targets = unique_ints(as_ids(targets, kg.num_entities))
    rel_filter = None if relations is None else as_ids(relations, 2 * kg.num_relations, "relation")
    graph, (keys, key_tids) = _weighted_graph(kg, weights, direction, rel_filter)
    dist, pred, _ = dijkstra(graph, directed=True, indices=sources, min_only=True, return_predecessors=True)
    n = kg.num_entities
    found = []
    for target in targets[np.isfinite(dist[targets]) & ~np.isin(targets, sources)]:
        chain = [int(target)]
        while pred[chain[-1]] >= 0:
            chain.append(int(pred[chain[-1]]))
        found.append(chain[::-1])
    if not found:
        return Paths.empty()
    width = max(len(c) for c in found)
    nodes = np.full((len(found), width), -1, np.int64)
    for i, chain in enumerate(found):
        nodes[i, : len(chain)] = chain
    lengths = np.array([len(c) - 1 for c in found], np.int32)
    edges = np.full((len(found), width - 1), -1, np.int64)
    valid = (nodes[:, :-1] >= 0) & (nodes[:, 1:] >= 0)
    step_keys = nodes[:, :-1] * n + nodes[:, 1:]
    edges[valid] = key_tids[np.searchsorted(keys, step_keys[valid])]
    return Paths(nodes.astype(np.int32), edges, lengths)
