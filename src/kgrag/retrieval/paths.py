"""KG paths as evidence: verbalisation, relation patterns and question-aware ranking.

Paths arrive as padded :class:`kgrag.graph.algorithms.Paths` arrays. Ranking thousands of paths with a
transformer embedding per path would cost seconds, yet most paths share a handful of *relation patterns*
(the directed relation sequence, e.g. ``directed_by → directed_by_inv → in_language``). So a path's score is
the similarity of its pattern to the question (one embedding per distinct pattern, cached per KG), plus small
tie-breakers supplied by the caller (e.g. the endpoint's PageRank). Selection keeps one path per endpoint so
that ``top_k`` paths reach ``top_k`` different entities — the candidates an answer is chosen from.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kgrag.graph.algorithms.results import Paths
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.verbalize import humanize, verbalize_path
from kgrag.models.embeddings import Embedder, dot_scores
from kgrag.types import Evidence


def directed_relations(kg: KnowledgeGraph, paths: Paths) -> np.ndarray:
    """Directed relation id per path edge (``r`` forwards, ``r + num_relations`` backwards; ``-1`` padding)."""
    if not len(paths):
        return np.empty((0, paths.edges.shape[1]), np.int64)
    edges = paths.edges
    valid = edges >= 0
    safe = np.where(valid, edges, 0)
    forward = kg.heads[safe] == paths.nodes[:, :-1]
    rels = kg.rels[safe].astype(np.int64) + np.where(forward, 0, kg.num_relations)
    return np.where(valid, rels, -1)


def relation_patterns(kg: KnowledgeGraph, paths: Paths) -> tuple[np.ndarray, np.ndarray]:
    """The distinct directed relation sequences of ``paths`` (rows padded with -1) and each path's row."""
    rels = directed_relations(kg, paths)
    if not len(rels):
        return rels, np.empty(0, np.int64)
    patterns, inverse = np.unique(rels, axis=0, return_inverse=True)
    return patterns, inverse.ravel()


def pattern_text(kg: KnowledgeGraph, pattern: Sequence[int]) -> str:
    """``"directed by, then directed by (reverse), then in language"`` for an embedding model."""
    parts = []
    for rid in pattern:
        if rid < 0:
            break
        base = humanize(kg.relations[rid % kg.num_relations])
        parts.append(base if rid < kg.num_relations else f"{base} (reverse)")
    return ", then ".join(parts)


def pattern_vectors(kg: KnowledgeGraph, patterns: np.ndarray, embedder: Embedder) -> np.ndarray:
    """Embeddings of relation patterns, each computed once per KG and embedder."""
    cache: dict[tuple[int, ...], np.ndarray] = kg.resources.get(("pattern_vectors", embedder.id), dict)
    keys = [tuple(int(r) for r in row if r >= 0) for row in patterns]
    missing = list(dict.fromkeys(k for k in keys if k not in cache))
    if missing:
        vecs = embedder.encode([pattern_text(kg, k) for k in missing])
        cache.update(zip(missing, vecs))
    if not keys:
        return np.empty((0, embedder.dim), np.float32)
    return np.stack([cache[k] for k in keys])


def select_paths(
    paths: Paths, scores: np.ndarray, top_k: int, *, exclude_endpoints: Sequence[int] = (), distinct: bool = True
) -> tuple[Paths, np.ndarray]:
    """The ``top_k`` best paths, best first; with ``distinct`` at most one path per endpoint."""
    if not len(paths):
        return paths, np.empty(0, np.float32)
    order = np.argsort(-scores, kind="stable")
    ends = paths.endpoints()[order]
    keep = ~np.isin(ends, np.asarray(exclude_endpoints, dtype=np.int64))
    if distinct:
        first = np.zeros(len(order), bool)
        _, idx = np.unique(ends, return_index=True)
        first[idx] = True
        keep &= first
    chosen = order[keep][:top_k]
    return subset(paths, chosen), scores[chosen]


def subset(paths: Paths, rows: np.ndarray) -> Paths:
    return Paths(paths.nodes[rows], paths.edges[rows], paths.lengths[rows], paths.truncated)


def rank_paths(
    kg: KnowledgeGraph,
    question: str,
    paths: Paths,
    *,
    embedder: Embedder,
    top_k: int = 32,
    bonus: np.ndarray | None = None,
    exclude_endpoints: Sequence[int] = (),
    distinct: bool = True,
) -> tuple[Paths, np.ndarray]:
    """Best ``top_k`` paths for ``question``: pattern similarity (+ optional per-path ``bonus``)."""
    if not len(paths):
        return paths, np.empty(0, np.float32)
    patterns, which = relation_patterns(kg, paths)
    q = embedder.encode([question])[0]
    pattern_score = dot_scores(pattern_vectors(kg, patterns, embedder), q)
    scores = pattern_score[which].astype(np.float64)
    if bonus is not None:
        scores = scores + bonus
    return select_paths(paths, scores, top_k, exclude_endpoints=exclude_endpoints, distinct=distinct)


def verbalize_paths(kg: KnowledgeGraph, paths: Paths) -> list[str]:
    return [verbalize_path(kg, nodes, edges) for nodes, edges in paths]


def paths_as_evidence(
    kg: KnowledgeGraph, paths: Paths, scores: np.ndarray | None = None, *, source: str = "path"
) -> list[Evidence]:
    """One :class:`Evidence` per path: text, entities and relations along it, triple ids."""
    return [
        path_as_evidence(kg, nodes, edges, score=None if scores is None else float(scores[i]), source=source)
        for i, (nodes, edges) in enumerate(paths)
    ]


def path_as_evidence(
    kg: KnowledgeGraph, nodes: Sequence[int], edges: Sequence[int], *, score: float | None = None, source: str = "path"
) -> Evidence:
    """One path (its entity ids and the triple ids between them) as :class:`Evidence`."""
    return Evidence(
        text=verbalize_path(kg, list(nodes), list(edges)),
        entities=[kg.entities[n] for n in nodes],
        relations=[kg.relations[int(kg.rels[e])] for e in edges],
        triples=[int(e) for e in edges],
        score=None if score is None else round(score, 4),
        source=source,
    )
