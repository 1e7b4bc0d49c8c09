"""Graph algorithms every retrieval method shares, vectorised over the KG's CSR arrays.

All functions take entity ids as integer arrays and return numpy arrays of ids (triple ids index
``kg.heads/kg.rels/kg.tails``).  No function loops over edges in Python: a step over a frontier of
nodes gathers all their incident edges with one ``np.repeat``-based range expansion.

Directions: ``"out"`` follows head→tail, ``"in"`` tail→head, ``"both"`` treats the KG as undirected.
Relation filters in ``k_hop``/``shortest_paths``/``simple_paths``/``personalized_pagerank`` name *base*
relations (allowed in whichever direction is being followed); ``follow_relation_path`` takes *directed*
relation ids, where ``r + num_relations`` (``<rel>_inv``) walks ``r`` backwards.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kgrag.graph.kg import KnowledgeGraph, _check_direction, unique_ints

IdsLike = Sequence[int] | np.ndarray | Iterable[int]


# ---------------------------------------------------------------------- result types
@dataclass
class Paths:
    """A batch of paths as padded arrays.

    ``nodes[i, :lengths[i] + 1]`` are the entities of path ``i`` (source first) and
    ``edges[i, :lengths[i]]`` the triple ids between them; padding is ``-1``.  Whether an edge was walked
    forwards is ``kg.heads[edge] == node_before_it``.
    """

    nodes: np.ndarray
    edges: np.ndarray
    lengths: np.ndarray
    truncated: bool = False

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Iterator[tuple[list[int], list[int]]]:
        for i in range(len(self)):
            n = int(self.lengths[i])
            yield self.nodes[i, : n + 1].tolist(), self.edges[i, :n].tolist()

    def endpoints(self) -> np.ndarray:
        """The last entity of every path."""
        return self.nodes[np.arange(len(self)), self.lengths] if len(self) else np.empty(0, np.int32)

    def triple_ids(self) -> np.ndarray:
        """Distinct triple ids used by any path."""
        return unique_ints(self.edges[self.edges >= 0])

    @staticmethod
    def empty(truncated: bool = False) -> Paths:
        return Paths(np.empty((0, 1), np.int32), np.empty((0, 0), np.int64), np.empty(0, np.int32), truncated)

    @staticmethod
    def concat(parts: Sequence[Paths]) -> Paths:
        parts = [p for p in parts if len(p)]
        if not parts:
            return Paths.empty()
        width = max(p.nodes.shape[1] for p in parts)
        nodes = np.full((sum(len(p) for p in parts), width), -1, np.int32)
        edges = np.full((len(nodes), width - 1), -1, np.int64)
        row = 0
        for p in parts:
            nodes[row : row + len(p), : p.nodes.shape[1]] = p.nodes
            edges[row : row + len(p), : p.edges.shape[1]] = p.edges
            row += len(p)
        return Paths(nodes, edges, np.concatenate([p.lengths for p in parts]), any(p.truncated for p in parts))


@dataclass
class Neighborhood:
    """Entities within ``hops`` of the seeds (with their hop distance) and the triples walked to reach them."""

    nodes: np.ndarray
    distance: np.ndarray
    edges: np.ndarray


@dataclass
class RelationPathResult:
    """Entities reached by following a relation sequence, and concrete paths (at most ``max_paths``)."""

    reached: np.ndarray
    paths: Paths
    truncated: bool = False


@dataclass
class RankedNodes:
    """Entity ids sorted by descending score."""

    nodes: np.ndarray
    scores: np.ndarray
    iterations: int = 0
    converged: bool = field(default=False)


# ---------------------------------------------------------------------- primitives
def _as_ids(ids: IdsLike | int, n: int, what: str = "entity") -> np.ndarray:
    arr = np.atleast_1d(
        np.asarray(
            list(ids) if not isinstance(ids, (np.ndarray, list, tuple, int, np.integer)) else ids,
            dtype=np.int64,
        )
    )
    if arr.ndim != 1:
        raise ValueError(f"{what} ids must be a 1-d array")
    if len(arr) and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"{what} id out of range [0, {n})")
    return arr


def expand_ranges(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges ``[starts[i], ends[i])`` return ``(owner, index)``: every index with the range it came from.

    >>> expand_ranges(np.array([0, 5]), np.array([2, 8]))
    (array([0, 0, 1, 1, 1]), array([0, 1, 5, 6, 7]))
    """
    lens = ends - starts
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    owner = np.repeat(np.arange(len(starts)), lens)
    offsets = np.repeat(starts - (np.cumsum(lens) - lens), lens)
    return owner, offsets + np.arange(total)


def incident_edges(
    kg: KnowledgeGraph, nodes: np.ndarray, direction: str = "both"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """All edges at ``nodes``: ``(owner, triple_id, other_end, directed_relation)``.

    ``owner[i]`` indexes ``nodes``; ``directed_relation`` is ``rel`` for edges leaving the node and
    ``rel + num_relations`` for edges entering it.
    """
    parts = []
    if direction in ("out", "both"):
        owner, tids = expand_ranges(kg.out_indptr[nodes], kg.out_indptr[nodes + 1])
        parts.append((owner, tids, kg.tails[tids], kg.rels[tids].astype(np.int64)))
    if direction in ("in", "both"):
        owner, pos = expand_ranges(kg.in_indptr[nodes], kg.in_indptr[nodes + 1])
        tids = kg.in_edges[pos].astype(np.int64)
        parts.append((owner, tids, kg.heads[tids], kg.rels[tids].astype(np.int64) + kg.num_relations))
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate(cols) for cols in zip(*parts))  # type: ignore[return-value]


def _relation_mask(kg: KnowledgeGraph, tids: np.ndarray, relations: np.ndarray | None) -> np.ndarray | None:
    if relations is None:
        return None
    return np.isin(kg.rels[tids], np.asarray(relations) % max(kg.num_relations, 1))


# ---------------------------------------------------------------------- neighbourhoods
def _scratch_distances(kg: KnowledgeGraph) -> np.ndarray:
    """A per-thread int32 array of ``-1`` (one per entity), reused across calls.

    Allocating and scanning an entity-sized array costs more than a small BFS itself on a big KG, so
    callers reset only the entries they touched instead.
    """
    local = kg.resources.get("scratch", threading.local)
    arr = getattr(local, "dist", None)
    if arr is None:
        arr = local.dist = np.full(kg.num_entities, -1, dtype=np.int32)
    return arr


def k_hop(
    kg: KnowledgeGraph,
    seeds: IdsLike | int,
    hops: int = 2,
    *,
    direction: str = "both",
    relations: IdsLike | None = None,
) -> Neighborhood:
    """Entities within ``hops`` steps of ``seeds`` and the triples that reach them.

    ``edges`` holds every triple incident to an entity at distance ``< hops`` (allowed by the relation
    filter), i.e. the edges of the k-hop subgraph as a BFS walks it.
    """
    _check_direction(direction)
    seeds = unique_ints(_as_ids(seeds, kg.num_entities))
    rel_filter = None if relations is None else _as_ids(relations, 2 * kg.num_relations, "relation")
    dist = _scratch_distances(kg)
    dist[seeds] = 0
    frontier = seeds
    edge_chunks = []
    node_chunks = [seeds]
    try:
        for depth in range(1, hops + 1):
            if not len(frontier):
                break
            _, tids, other, _ = incident_edges(kg, frontier, direction)
            mask = _relation_mask(kg, tids, rel_filter)
            if mask is not None:
                tids, other = tids[mask], other[mask]
            edge_chunks.append(tids)
            new = unique_ints(other[dist[other] < 0])
            dist[new] = depth
            node_chunks.append(new)
            frontier = new
        nodes = np.sort(np.concatenate(node_chunks)).astype(np.int32)
        distance = dist[nodes]
    finally:
        for chunk in node_chunks:  # leave the scratch array all -1 for the next call
            dist[chunk] = -1
    edges = unique_ints(np.concatenate(edge_chunks)) if edge_chunks else np.empty(0, np.int64)
    return Neighborhood(nodes=nodes, distance=distance, edges=edges)


# ---------------------------------------------------------------------- relation paths
def relation_edges(
    kg: KnowledgeGraph, sources: np.ndarray, relation: int, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges leaving ``sources`` along directed ``relation``: ``(source, target, triple id)``."""
    n_rel = kg.num_relations
    forward, base = relation < n_rel, relation % n_rel
    if forward:
        owner, tids = expand_ranges(kg.out_indptr[sources], kg.out_indptr[sources + 1])
    else:
        owner, pos = expand_ranges(kg.in_indptr[sources], kg.in_indptr[sources + 1])
        tids = kg.in_edges[pos].astype(np.int64)
    keep = kg.rels[tids] == base
    tids = tids[keep]
    src = sources[owner[keep]]
    dst = (kg.tails if forward else kg.heads)[tids].astype(np.int64)
    if mask is not None:
        inside = mask[dst]
        src, dst, tids = src[inside], dst[inside], tids[inside]
    return src, dst, tids


def follow_relation_path(
    kg: KnowledgeGraph,
    sources: IdsLike | int,
    path: Sequence[int | str],
    *,
    max_paths: int = 1000,
) -> RelationPathResult:
    """Follow a sequence of directed relations from ``sources``.

    ``reached`` is exact (set propagation); ``paths`` enumerates concrete entity/triple paths that end in
    ``reached`` — dead ends are pruned first, so the ``max_paths`` cap only ever drops complete paths.

    >>> kg = KnowledgeGraph.from_triples([("A", "r", "B"), ("C", "r", "B")])
    >>> res = follow_relation_path(kg, [kg.entity_id("A")], ["r", "r_inv"])
    >>> sorted(kg.entities[i] for i in res.reached)
    ['A', 'C']
    """
    sources = unique_ints(_as_ids(sources, kg.num_entities))
    rel_ids = [kg.relation_id(r) if isinstance(r, str) else int(r) for r in path]
    n_rel = kg.num_relations
    for rid in rel_ids:
        if not 0 <= rid < 2 * n_rel:
            raise ValueError(f"relation id {rid} out of range [0, {2 * n_rel})")
    steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    frontier = sources
    for rid in rel_ids:
        src, dst, tids = relation_edges(kg, frontier, rid)
        steps.append((src, dst, tids))
        frontier = unique_ints(dst)
    reached = frontier.astype(np.int32)
    if not rel_ids:
        # Fix: the empty relation path used to return every source as a path, ignoring ``max_paths``.
        truncated = len(sources) > max_paths
        kept = sources[:max_paths]
        return RelationPathResult(
            reached,
            Paths(
                kept[:, None].astype(np.int32),
                np.empty((len(kept), 0), np.int64),
                np.zeros(len(kept), np.int32),
                truncated,
            ),
            truncated,
        )
    alive = frontier
    for i in range(len(steps) - 1, -1, -1):  # backward pruning of dead ends
        src, dst, tids = steps[i]
        keep = np.isin(dst, alive)
        steps[i] = (src[keep], dst[keep], tids[keep])
        alive = unique_ints(src[keep])
    nodes = alive[:, None]
    edges = np.empty((len(alive), 0), np.int64)
    truncated = False
    for src, dst, tids in steps:
        order = np.argsort(src, kind="stable")
        src, dst, tids = src[order], dst[order], tids[order]
        last = nodes[:, -1]
        owner, idx = expand_ranges(np.searchsorted(src, last, "left"), np.searchsorted(src, last, "right"))
        if len(owner) > max_paths:
            owner, idx, truncated = owner[:max_paths], idx[:max_paths], True
        nodes = np.hstack([nodes[owner], dst[idx][:, None]])
        edges = np.hstack([edges[owner], tids[idx][:, None]])
    paths = Paths(nodes.astype(np.int32), edges, np.full(len(nodes), len(steps), np.int32), truncated)
    return RelationPathResult(reached=reached, paths=paths, truncated=truncated)


# ---------------------------------------------------------------------- shortest paths
def _bfs_levels(
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
        mask = _relation_mask(kg, tids, rel_filter)
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
    sources = unique_ints(_as_ids(sources, kg.num_entities))
    rel_filter = None if relations is None else _as_ids(relations, 2 * kg.num_relations, "relation")
    if weights is None:
        dist, _ = _bfs_levels(kg, sources, direction, rel_filter, max_length or kg.num_entities)
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
    sources = unique_ints(_as_ids(sources, kg.num_entities))
    targets = unique_ints(_as_ids(targets, kg.num_entities))
    rel_filter = None if relations is None else _as_ids(relations, 2 * kg.num_relations, "relation")
    stop = np.zeros(kg.num_entities, dtype=bool)
    stop[targets] = True
    dist, levels = _bfs_levels(kg, sources, direction, rel_filter, max_length, stop)
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
    sources = unique_ints(_as_ids(sources, kg.num_entities))
    targets = unique_ints(_as_ids(targets, kg.num_entities))
    rel_filter = None if relations is None else _as_ids(relations, 2 * kg.num_relations, "relation")
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


# ---------------------------------------------------------------------- simple paths
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
    sources = unique_ints(_as_ids(sources, kg.num_entities))
    rel_filter = None if relations is None else _as_ids(relations, 2 * kg.num_relations, "relation")
    to_target = None
    target_mask = None
    if targets is not None:
        targets = unique_ints(_as_ids(targets, kg.num_entities))
        target_mask = np.zeros(kg.num_entities, dtype=bool)
        target_mask[targets] = True
        back = {"out": "in", "in": "out", "both": "both"}[direction]
        to_target, _ = _bfs_levels(kg, targets, back, rel_filter, max_length)
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
        mask = _relation_mask(kg, tids, rel_filter)
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


# ---------------------------------------------------------------------- PageRank
def transition_matrix(
    kg: KnowledgeGraph, direction: str = "both", relations: IdsLike | None = None
) -> tuple[object, np.ndarray]:
    """Column-stochastic transition matrix ``M = Aᵀ D⁻¹`` (CSR) and the ids of dangling entities.

    Cached on the KG for the unfiltered case.
    """

    if relations is None:
        return kg.resources.get(("transition", direction), lambda: _column_stochastic(kg.adjacency(direction)))
    return _column_stochastic(kg.adjacency(direction, _as_ids(relations, 2 * kg.num_relations, "relation")))


def _column_stochastic(adj: object) -> tuple[object, np.ndarray]:
    """``Aᵀ D⁻¹`` as CSR (column j scaled by 1/out-weight(j)) and the entities with no out-weight."""
    import scipy.sparse as sp

    out_weight = np.asarray(adj.sum(axis=1)).ravel()
    inv = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=out_weight > 0)
    return sp.csr_matrix(adj.T.multiply(inv[None, :])), np.flatnonzero(out_weight == 0)


def _seed_vector(n: int, seeds: IdsLike | int | Mapping[int, float], weights: np.ndarray | None) -> np.ndarray:
    if isinstance(seeds, Mapping):
        ids = np.fromiter(seeds.keys(), dtype=np.int64, count=len(seeds))
        weights = np.fromiter(seeds.values(), dtype=np.float64, count=len(seeds))
    else:
        ids = _as_ids(seeds, n)
    if len(ids) and (ids.min() < 0 or ids.max() >= n):
        raise ValueError(f"seed id out of range [0, {n})")
    p = np.zeros(n, dtype=np.float64)
    if weights is None:
        np.add.at(p, ids, 1.0)
    else:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != ids.shape or (weights < 0).any():
            raise ValueError("seed weights must be non-negative, one per seed")
        np.add.at(p, ids, weights)
    total = p.sum()
    if total <= 0:
        raise ValueError("personalized PageRank needs at least one seed with positive weight")
    return p / total


def personalized_pagerank(
    kg: KnowledgeGraph,
    seeds: IdsLike | int | Mapping[int, float],
    weights: np.ndarray | None = None,
    *,
    damping: float = 0.85,
    max_iter: int = 100,
    tol: float = 1e-6,
    top_k: int | None = None,
    direction: str = "both",
    relations: IdsLike | None = None,
    restrict_to: np.ndarray | None = None,
) -> RankedNodes:
    """Personalized PageRank by power iteration, ``x ← d·M·x + (d·dangling(x) + 1 − d)·p``.

    ``seeds`` are entity ids (optionally with ``weights``) or a ``{id: weight}`` mapping — the fuzzy seed
    sets of SEPPR.  Iteration starts from the seed distribution and stops after ``max_iter`` steps or when
    the L1 change falls below ``tol`` (``tol=0`` runs exactly ``max_iter`` steps, as SEPPR's ``T``).
    ``restrict_to`` limits the walk to an entity subset (e.g. a k-hop subgraph).  Returns the ``top_k``
    entities (all with a non-zero score when ``None``) by descending score.
    """

    _check_direction(direction)
    if not 0 <= damping < 1:
        raise ValueError("damping must be in [0, 1)")
    n = kg.num_entities
    p_full = _seed_vector(n, seeds, weights)
    matrix, _ = transition_matrix(kg, direction, relations)
    local = None
    if restrict_to is not None:
        local = unique_ints(_as_ids(restrict_to, n))
        p = p_full[local]
        if p.sum() <= 0:
            raise ValueError("no seed lies inside restrict_to")
        p = p / p.sum()
        sub = kg.adjacency(direction, None if relations is None else _as_ids(relations, 2 * kg.num_relations))
        sub = sub[local][:, local]
        matrix, _ = _column_stochastic(sub)
    else:
        p = p_full
    # Dangling mass and teleport both return to the seeds, so they only touch the seed entries: per
    # iteration that is one mat-vec, one sum and one in-place scale (no dense dangling gather).
    seed_idx = np.flatnonzero(p)
    seed_p = p[seed_idx]
    x = p.copy()
    mass = 1.0
    converged = False
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        x_new = matrix @ x
        spread = float(x_new.sum())  # mass of x on non-dangling entities (columns of M sum to 1)
        x_new *= damping
        back = damping * (mass - spread) + (1.0 - damping) * mass
        x_new[seed_idx] += back * seed_p
        mass = damping * spread + back
        if tol > 0:
            err = np.abs(x_new - x).sum()
            x = x_new
            if err < tol:
                converged = True
                break
        else:
            x = x_new
    order = _top_k(x, top_k)
    ids = local[order] if local is not None else order
    return RankedNodes(ids.astype(np.int32), x[order], iterations, converged)


def seppr(
    kg: KnowledgeGraph,
    seeds: IdsLike | int | Mapping[int, float],
    weights: np.ndarray | None = None,
    *,
    alpha: float = 0.85,
    iterations: int = 5,
    top_k: int = 30_000,
) -> RankedNodes:
    """Seed-entity PPR (ULTRAG, Algorithm 2): ``T`` fixed diffusion steps from (fuzzy) seeds, top ``k``."""
    return personalized_pagerank(kg, seeds, weights, damping=alpha, max_iter=iterations, tol=0.0, top_k=top_k)


def _top_k(scores: np.ndarray, k: int | None) -> np.ndarray:
    """Entities with a positive score, by score descending then id ascending, cut to ``k``.

    Ties with the k-th score are all kept before cutting, so ``top_k`` is always a prefix of the full
    ranking.  A stable argsort of the (ascending-id) candidates gives the id tie-break for free and is
    ~3× faster than a two-key lexsort on a million scores.
    """
    positive = np.flatnonzero(scores > 0)
    if k is not None and k < len(positive):
        kth = scores[positive[np.argpartition(-scores[positive], k - 1)[k - 1]]]
        positive = positive[scores[positive] >= kth]
    ranked = positive[np.argsort(-scores[positive], kind="stable")]
    return ranked if k is None else ranked[:k]
