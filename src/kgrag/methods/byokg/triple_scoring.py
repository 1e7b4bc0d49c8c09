"""Scoring-based triplet retrieval (BYOKG-RAG appendix A): text-based scoring and the graph reranker.

*Text-based* (A.1) scores every triple of the KG as ``q·h + q·r + q·t`` — the question's similarity to the
head name, the relation name and the tail name — from per-KG entity and relation vectors, so no triple is
ever embedded and the whole KG is scored with three gathers and a sum.

*Graph reranker* (A.2) keeps the triples within ``hops`` of the linked entities, prunes them to the ``k_r``
relations most similar to the question, then to the ``k_t`` best triples (a cheap decomposed prefilter
first when there are many, then the cached triple embeddings), and optionally reorders those with a
stronger reranker (a cross-encoder) to the final ``top_k``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kgrag.graph.algorithms.neighbourhood import k_hop
from kgrag.graph.kg import KnowledgeGraph, unique_ints
from kgrag.graph.verbalize import humanize, verbalize_triples
from kgrag.models.embeddings import Embedder, dot_scores
from kgrag.models.rerankers import Reranker
from kgrag.retrieval.triples import kg_vectors, rank_triples, whole_facts


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest scores, best first."""
    k = min(k, len(scores))
    if k <= 0:
        return np.empty(0, np.int64)
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")]


def decomposed_scores(
    kg: KnowledgeGraph, question: str, tids: np.ndarray | None = None, *, embedder: Embedder
) -> np.ndarray:
    """``q·h + q·r + q·t`` for triples ``tids`` (all triples when ``None``), from per-KG name vectors."""
    vecs = kg_vectors(kg, embedder)
    q = embedder.encode([question])[0]
    ent = dot_scores(vecs.entities(), q).astype(np.float32, copy=False)
    rel = dot_scores(vecs.relations(), q).astype(np.float32, copy=False)
    if tids is None:
        return ent[kg.heads] + rel[kg.rels] + ent[kg.tails]
    tids = np.asarray(tids, dtype=np.int64)
    return ent[kg.heads[tids]] + rel[kg.rels[tids]] + ent[kg.tails[tids]]


def text_retrieval(
    kg: KnowledgeGraph,
    question: str,
    *,
    embedder: Embedder,
    top_k: int = 10,
    tids: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``top_k`` triples of the KG (or of ``tids``) by decomposed similarity to the question, best first."""
    if kg.num_triples == 0 or (tids is not None and not len(tids)):
        return np.empty(0, np.int64), np.empty(0, np.float32)
    scores = decomposed_scores(kg, question, tids, embedder=embedder)
    best = _top(scores, top_k)
    ids = best.astype(np.int64) if tids is None else np.asarray(tids, dtype=np.int64)[best]
    return ids, scores[best]


def best_triples(
    kg: KnowledgeGraph,
    question: str,
    tids: np.ndarray,
    *,
    top_k: int,
    embedder: Embedder,
    prefilter: Embedder | None = None,
    max_candidates: int = 2000,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``top_k`` of ``tids`` by triple-embedding similarity; a decomposed prefilter first above
    ``max_candidates`` (so a hub's 100k triples never all get embedded)."""
    tids = np.asarray(tids, dtype=np.int64)
    if len(tids) > max_candidates:
        pre = decomposed_scores(kg, question, tids, embedder=prefilter or embedder)
        tids = np.sort(tids[_top(pre, max_candidates)])
    return rank_triples(kg, question, tids, embedder=embedder, top_k=top_k)


@dataclass
class RerankResult:
    """Triples kept by the graph reranker (best first) and what each stage did."""

    tids: np.ndarray
    scores: np.ndarray
    stats: dict = field(default_factory=dict)


def graph_rerank(
    kg: KnowledgeGraph,
    question: str,
    seeds: Sequence[int] | np.ndarray,
    *,
    embedder: Embedder,
    prefilter: Embedder | None = None,
    hops: int = 2,
    k_r: int = 20,
    k_t: int = 100,
    top_k: int | None = None,
    reranker: Reranker | None = None,
    max_candidates: int = 2000,
    facts: bool = False,
) -> RerankResult:
    """BYOKG-RAG's graph reranker (appendix A.2) around ``seeds``.

    Relations are scored by ``reranker`` when given, else by the cached relation-name embeddings; triples by
    the cached triple embeddings, then (when ``reranker`` is given) reordered by it and cut to ``top_k`` —
    with ``facts``, ``top_k`` triples taken as whole facts (:func:`kgrag.retrieval.triples.whole_facts`).
    """
    seeds = unique_ints(np.asarray(list(seeds), dtype=np.int64))
    empty = RerankResult(np.empty(0, np.int64), np.empty(0, np.float32), {"triples": 0})
    if not len(seeds):
        return empty
    tids = k_hop(kg, seeds, hops).edges
    stats: dict = {"triples": len(tids)}
    if not len(tids):
        return RerankResult(tids, np.empty(0, np.float32), stats)
    rels = unique_ints(kg.rels[tids].astype(np.int64))
    stats["relations"] = len(rels)
    if len(rels) > k_r:
        if reranker is not None:
            rel_scores = reranker.score(question, [humanize(kg.relations[r]) for r in rels])
        else:
            q = embedder.encode([question])[0]
            rel_scores = dot_scores(kg_vectors(kg, embedder).relations()[rels], q)
        rels = rels[_top(np.asarray(rel_scores, dtype=np.float32), k_r)]
        tids = tids[np.isin(kg.rels[tids], rels)]
    stats["kept_relations"] = [kg.relations[r] for r in rels[:k_r]]
    stats["relation_triples"] = len(tids)
    best, scores = best_triples(
        kg, question, tids, top_k=k_t, embedder=embedder, prefilter=prefilter, max_candidates=max_candidates
    )
    if reranker is not None and len(best):
        scores = np.asarray(reranker.score(question, verbalize_triples(kg, best)), dtype=np.float32)
        order = _top(scores, top_k or len(best))
        best, scores = best[order], scores[order]
    elif top_k is not None:
        keep = whole_facts(kg, best, seeds, top_k) if facts else slice(top_k)
        best, scores = best[keep], scores[keep]
    stats["kept"] = len(best)
    return RerankResult(best, scores, stats)


__all__ = ["RerankResult", "best_triples", "decomposed_scores", "graph_rerank", "text_retrieval"]
