"""Following a sequence of directed relations (``r`` forwards, ``r + num_relations`` backwards) from sources."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kgrag.graph.algorithms.edges import as_ids, expand_ranges, relation_edges
from kgrag.graph.algorithms.results import IdsLike, Paths, RelationPathResult
from kgrag.graph.kg import KnowledgeGraph, unique_ints


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
    sources = unique_ints(as_ids(sources, kg.num_entities))
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
    paths = _enumerate_paths(steps, frontier, max_paths)
    return RelationPathResult(reached=reached, paths=paths, truncated=paths.truncated)


def _enumerate_paths(
    steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]], reached: np.ndarray, max_paths: int
) -> Paths:
    """Concrete paths through the per-hop ``(source, target, triple)`` edges that end in ``reached``.

    Edges that lead to no reached entity are pruned backwards first, so every partial path extended forwards
    completes and the ``max_paths`` cap only ever drops complete paths.
    """
    alive = reached
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
    return Paths(nodes.astype(np.int32), edges, np.full(len(nodes), len(steps), np.int32), truncated)
