"""Question subgraphs: the k-hop neighbourhood of the topic entities, pruned by personalized PageRank.

FRAG's preprocessing: a k-hop ball around the topics keeps everything a k-hop question can need, and PPR
seeded at the topics (restricted to that ball) ranks its entities by how well-connected they are to the
topics; only the top ``n`` survive as path targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kgrag.graph.algorithms.neighbourhood import k_hop
from kgrag.graph.algorithms.pagerank import personalized_pagerank
from kgrag.graph.kg import KnowledgeGraph


@dataclass
class PrunedSubgraph:
    """Entities of the k-hop ball (``ball_nodes``), the PPR-ranked survivors and their scores."""

    ball_nodes: np.ndarray
    ball_edges: np.ndarray
    nodes: np.ndarray
    scores: np.ndarray
    ppr_iterations: int = 0

    def score_of(self, entities: np.ndarray) -> np.ndarray:
        """PPR score of each entity (0 for entities outside the kept set)."""
        order = np.argsort(self.nodes)
        pos = np.searchsorted(self.nodes[order], entities)
        pos = np.clip(pos, 0, max(len(order) - 1, 0))
        found = len(order) > 0
        hit = (self.nodes[order][pos] == entities) if found else np.zeros(len(entities), bool)
        return np.where(hit, self.scores[order][pos] if found else 0.0, 0.0)


def ppr_pruned_subgraph(
    kg: KnowledgeGraph,
    topics: Sequence[int],
    *,
    hops: int,
    top_n: int = 2000,
    damping: float = 0.8,
    max_iter: int = 1000,
    tol: float = 1e-6,
) -> PrunedSubgraph:
    """The ``hops``-ball of ``topics`` and its ``top_n`` entities by PPR (topics always kept)."""
    topics_arr = np.asarray(list(topics), dtype=np.int64)
    if not len(topics_arr):
        empty = np.empty(0, np.int64)
        return PrunedSubgraph(empty, empty, empty, np.empty(0))
    ball = k_hop(kg, topics_arr, hops)
    if len(ball.nodes) <= top_n:  # nothing to prune: skip the walk
        return PrunedSubgraph(ball.nodes, ball.edges, ball.nodes.astype(np.int64), np.ones(len(ball.nodes)))
    restrict = len(ball.nodes) < kg.num_entities // 2  # slicing a near-whole graph costs more than it saves
    ranked = personalized_pagerank(
        kg,
        topics_arr,
        damping=damping,
        max_iter=max_iter,
        tol=tol,
        top_k=top_n if restrict else None,
        restrict_to=ball.nodes if restrict else None,
    )
    nodes, scores = ranked.nodes.astype(np.int64), ranked.scores
    if not restrict:  # the walk ran on the whole KG: keep the ball's entities only
        inside = np.zeros(kg.num_entities, bool)
        inside[ball.nodes] = True
        keep = inside[nodes]
        nodes, scores = nodes[keep][:top_n], scores[keep][:top_n]
    return PrunedSubgraph(ball.nodes, ball.edges, nodes, scores, ranked.iterations)
