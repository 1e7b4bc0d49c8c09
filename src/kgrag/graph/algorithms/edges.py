"""The primitives every graph algorithm is built from: id validation and one-step CSR edge gathering.

A step over a frontier of nodes gathers all their incident edges with one ``np.repeat``-based range expansion
(:func:`expand_ranges`), so no algorithm loops over edges in Python.
"""

from __future__ import annotations

import numpy as np

from kgrag.graph.algorithms.results import IdsLike
from kgrag.graph.kg import KnowledgeGraph


def reversed_relation(relation: int, num_relations: int) -> int:
    """The directed id of ``relation`` walked the other way (``r`` <-> ``r + num_relations``)."""
    return (relation + num_relations) % (2 * num_relations)


def as_ids(ids: IdsLike | int, n: int, what: str = "entity") -> np.ndarray:
    """``ids`` as a 1-d int64 array checked against ``[0, n)``, so a bad id fails here, not as an index error."""
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


def relation_mask(kg: KnowledgeGraph, tids: np.ndarray, relations: np.ndarray | None) -> np.ndarray | None:
    """Which triples a relation filter allows (None: no filter); directed ids count as their base relation."""
    if relations is None:
        return None
    return np.isin(kg.rels[tids], np.asarray(relations) % max(kg.num_relations, 1))


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
