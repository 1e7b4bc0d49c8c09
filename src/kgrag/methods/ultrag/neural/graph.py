"""The two graphs ULTRA reads, built with numpy/scipy from a KG (or an entity subset of it).

*Entity graph*: every fact ``(h, r, t)`` inside the subset is two directed edges, ``r`` and its inverse
``r + R`` (the KG's own ``_inv`` numbering, which is also ULTRA's).  Edges are kept as
``(receiver, sender, type)`` in the orientation the checkpoint was trained with: ULTRA's fused message-passing
kernel accumulates at the *first* row of ``edge_index`` from the second, so the fact ``(h, r, t)`` lets ``h``
receive from ``t`` under type ``r`` and ``t`` receive from ``h`` under type ``r_inv``.

*Relation graph*: one node per directed relation, and an edge of one of four kinds between two relations
that share an entity: head-to-head (0), tail-to-tail (1), head-to-tail (2), tail-to-head (3).  With binary
incidence matrices ``H[r, v]`` (``v`` is the first endpoint of an ``r`` edge) and ``T[r, v]`` (the second), the
four adjacencies are ``H·Hᵀ``, ``T·Tᵀ``, ``H·Tᵀ`` and ``T·Hᵀ``; self-interactions are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from kgrag.graph.algorithms.edges import expand_ranges
from kgrag.graph.kg import KnowledgeGraph

HH, TT, HT, TH = 0, 1, 2, 3


@dataclass
class LocalGraph:
    """A KG restricted to ``nodes`` (sorted global entity ids), in local ids ``0..len(nodes)-1``."""

    nodes: np.ndarray
    num_relations: int  # directed: 2 × the KG's relations
    receiver: np.ndarray
    sender: np.ndarray
    edge_type: np.ndarray
    rel_receiver: np.ndarray
    rel_sender: np.ndarray
    rel_type: np.ndarray

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    @property
    def num_edges(self) -> int:
        return len(self.receiver)

    def local_ids(self, entities: np.ndarray) -> np.ndarray:
        """Local ids of global entity ids (``-1`` for entities outside the subset)."""
        pos = np.searchsorted(self.nodes, entities)
        pos = np.clip(pos, 0, max(len(self.nodes) - 1, 0))
        hit = self.nodes[pos] == entities if len(self.nodes) else np.zeros(len(entities), bool)
        return np.where(hit, pos, -1)


def facts_inside(kg: KnowledgeGraph, nodes: np.ndarray | None) -> np.ndarray:
    """Triple ids with both ends in ``nodes`` (all triples when ``None``)."""
    if nodes is None:
        return np.arange(kg.num_triples, dtype=np.int64)
    inside = np.zeros(kg.num_entities, dtype=bool)
    inside[nodes] = True
    _, tids = expand_ranges(kg.out_indptr[nodes], kg.out_indptr[nodes + 1])
    return tids[inside[kg.tails[tids]]]


def build_local_graph(kg: KnowledgeGraph, nodes: np.ndarray | None = None) -> LocalGraph:
    """Entity and relation graphs of ``kg`` restricted to ``nodes`` (the whole KG when ``None``)."""
    nodes = np.arange(kg.num_entities, dtype=np.int64) if nodes is None else np.unique(np.asarray(nodes, np.int64))
    tids = facts_inside(kg, nodes)
    local = np.full(kg.num_entities, -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    h, t = local[kg.heads[tids]], local[kg.tails[tids]]
    r = kg.rels[tids].astype(np.int64)
    n_rel = 2 * kg.num_relations
    # ULTRA's edge_index holds (h -> t, r) and (t -> h, r + R); rows[0] receive from rows[1]
    first = np.concatenate([h, t])
    second = np.concatenate([t, h])
    etype = np.concatenate([r, r + kg.num_relations])
    rel_recv, rel_send, rel_type = relation_graph(first, second, etype, len(nodes), n_rel)
    return LocalGraph(nodes, n_rel, first, second, etype, rel_recv, rel_send, rel_type)


def relation_graph(
    first: np.ndarray, second: np.ndarray, etype: np.ndarray, num_nodes: int, num_relations: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges ``(row relation, column relation, kind)`` of the relation graph of an edge list."""
    ones = np.ones(len(etype), dtype=np.float32)
    shape = (num_relations, max(num_nodes, 1))
    head = sp.csr_matrix((ones, (etype, first)), shape=shape)
    tail = sp.csr_matrix((ones, (etype, second)), shape=shape)
    head.data[:] = 1.0  # duplicates were summed: back to 0/1 incidence
    tail.data[:] = 1.0
    rows, cols, kinds = [], [], []
    for kind, (a, b) in enumerate(((head, head), (tail, tail), (head, tail), (tail, head))):
        adj = (a @ b.T).tocoo()
        order = np.lexsort((adj.col, adj.row))
        rows.append(adj.row[order].astype(np.int64))
        cols.append(adj.col[order].astype(np.int64))
        kinds.append(np.full(len(order), kind, dtype=np.int64))
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(kinds)
