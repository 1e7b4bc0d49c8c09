"""k-hop neighbourhoods: the entities near the seeds and the triples a BFS walks to reach them."""

from __future__ import annotations

import threading

import numpy as np

from kgrag.graph.algorithms.edges import as_ids, incident_edges, relation_mask
from kgrag.graph.algorithms.results import IdsLike, Neighborhood
from kgrag.graph.kg import KnowledgeGraph, _check_direction, unique_ints


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
    seeds = unique_ints(as_ids(seeds, kg.num_entities))
    rel_filter = None if relations is None else as_ids(relations, 2 * kg.num_relations, "relation")
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
            mask = relation_mask(kg, tids, rel_filter)
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
