"""Linking a query's leaves to fuzzy sets of entities, and the SEPPR subgraph they seed (ULTRAG §3.2).

A leaf whose text is an entity's name (or alias, after normalisation) is crisp: membership 1 for each entity
of that name.  Any other leaf is linked softly with the paper's Gaussian kernel, ``p_j ∝ exp(−d_j²/2σ²)``
(σ = 0.1), over the nearest names by embedding (faiss) and by edit similarity (typos that embeddings miss);
``d_j`` is the Euclidean distance of unit vectors, ``d² = 2 − 2·s``, with ``s`` the larger of the cosine
and the edit similarity.  The SEPPR seeds are the leaves' memberships summed and renormalised
(Algorithm 2, case ii), or uniform over the crisp entities when every leaf is crisp (case i).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kgrag.graph.algorithms.pagerank import seppr
from kgrag.graph.algorithms.results import RankedNodes
from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.hybrid import HybridLinker


@dataclass
class LinkedLeaf:
    """One leaf mention and its fuzzy set; ``crisp`` when it matched a name exactly."""

    mention: str
    members: dict[int, float]
    crisp: bool


def gaussian_weights(similarities: np.ndarray, sigma: float = 0.1) -> np.ndarray:
    """Renormalised ``exp(−d²/2σ²)`` with ``d² = 2 − 2·similarity`` (unit vectors)."""
    d2 = np.maximum(2.0 - 2.0 * np.asarray(similarities, dtype=np.float64), 0.0)
    logits = -d2 / (2.0 * sigma**2)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def link_leaf(linker: HybridLinker, mention: str, *, sigma: float = 0.1, k: int = 10) -> LinkedLeaf:
    """The fuzzy set of entities ``mention`` may denote (empty when nothing is close)."""
    exact = linker.names.exact(mention, k)
    if exact:
        return LinkedLeaf(mention, {c.entity: 1.0 for c in exact}, crisp=True)
    sims: dict[int, float] = {}
    for cand in linker.fuzzy.link(mention, k):
        sims[cand.entity] = max(sims.get(cand.entity, 0.0), float(cand.score))
    if linker.use_embedding:
        ids, cos = linker.embedding.search(mention, k)
        for eid, s in zip(ids.tolist(), cos.tolist()):
            sims[eid] = max(sims.get(eid, 0.0), float(s))
    if not sims:
        return LinkedLeaf(mention, {}, crisp=False)
    ids = np.fromiter(sims.keys(), dtype=np.int64, count=len(sims))
    weights = gaussian_weights(np.fromiter(sims.values(), dtype=np.float64, count=len(sims)), sigma)
    keep = weights > 1e-4
    return LinkedLeaf(mention, {int(e): float(w) for e, w in zip(ids[keep], weights[keep])}, crisp=False)


def link_leaves(
    kg: KnowledgeGraph,
    mentions: Sequence[str],
    *,
    linker: HybridLinker | None = None,
    sigma: float = 0.1,
    k: int = 10,
) -> dict[str, LinkedLeaf]:
    """Every distinct leaf mention, linked."""
    linker = linker or HybridLinker(kg)
    return {m: link_leaf(linker, m, sigma=sigma, k=k) for m in dict.fromkeys(mentions)}


def seed_distribution(leaves: Mapping[str, LinkedLeaf]) -> dict[int, float]:
    """SEPPR's boundary condition ``x₀``: uniform over crisp seeds, else summed memberships (renormalised)."""
    total: dict[int, float] = {}
    crisp = all(leaf.crisp for leaf in leaves.values())
    for leaf in leaves.values():
        for eid, w in leaf.members.items():
            total[eid] = 1.0 if crisp else total.get(eid, 0.0) + w
    mass = sum(total.values())
    return {e: w / mass for e, w in total.items()} if mass > 0 else {}


def seppr_subgraph(
    kg: KnowledgeGraph, seeds: Mapping[int, float], *, alpha: float = 0.85, iterations: int = 5, top_k: int = 30_000
) -> RankedNodes:
    """The top ``top_k`` entities by seed-entity PageRank (seeds are always kept)."""
    if kg.num_entities <= top_k:  # nothing to cut: skip the walk
        nodes = np.arange(kg.num_entities, dtype=np.int32)
        return RankedNodes(nodes, np.ones(kg.num_entities), 0, True)
    ranked = seppr(kg, dict(seeds), alpha=alpha, iterations=iterations, top_k=top_k)
    kept = np.zeros(kg.num_entities, dtype=bool)
    kept[ranked.nodes] = True
    seed_ids = np.fromiter(seeds.keys(), dtype=np.int32, count=len(seeds))
    missing = seed_ids[~kept[seed_ids]]  # (np.setdiff1d hashes: ~40x slower on a big KG)
    if len(missing):  # pragma: no cover - seeds carry teleport mass, so they are always in the top k
        ranked = RankedNodes(
            np.concatenate([ranked.nodes, missing]), np.concatenate([ranked.scores, np.zeros(len(missing))])
        )
    return ranked
