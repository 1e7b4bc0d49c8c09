"""Embedding linking: nearest entity names in a faiss index, and ULTRAG's soft (Gaussian) linking.

The index is built once per KG and embedder and saved next to the KG store (rebuilt when either changes, or
when it no longer matches the digest recorded when it was written): exact inner product (``IndexFlatIP``) for
small KGs, HNSW above ``HNSW_THRESHOLD`` names.  The default embedder here is the static one: it embeds a
million names in well under a minute.
"""

from __future__ import annotations

import threading

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.base import Candidate
from kgrag.models.embeddings import Embedder, load_embedder
from kgrag.models.embeddings.kg_cache import KGEmbeddings

HNSW_THRESHOLD = 200_000
INDEX_FILE = "entities.faiss"  # in the KGEmbeddings cache directory, digest-checked like its matrices


class EmbeddingLinker:
    def __init__(self, kg: KnowledgeGraph, embedder: Embedder | None = None) -> None:
        import faiss

        faiss.omp_set_num_threads(1)  # single-query searches: threading costs ~3x here
        self.kg = kg
        self.embedder = embedder or load_embedder("static")
        self.vectors = KGEmbeddings(kg, self.embedder)
        self._lock = threading.Lock()
        path = self.vectors.verified(INDEX_FILE)  # None when missing, or when it is not what was written
        if path is not None:
            self.index = faiss.read_index(str(path))
        else:
            mat = np.ascontiguousarray(self.vectors.entities(), dtype=np.float32)
            if len(mat) > HNSW_THRESHOLD:
                index = faiss.IndexHNSWFlat(mat.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
                index.hnsw.efSearch = 64
            else:
                index = faiss.IndexFlatIP(mat.shape[1])
            index.add(mat)
            self.index = index
            self.vectors.write(INDEX_FILE, lambda tmp: faiss.write_index(index, str(tmp)))

    def search(self, mention: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(entity ids, cosine similarities) of the ``k`` nearest names."""
        q = self.embedder.encode([mention])
        if not q.any():
            return np.empty(0, np.int64), np.empty(0, np.float32)
        with self._lock:
            sims, ids = self.index.search(q, k)
        keep = ids[0] >= 0
        return ids[0][keep], sims[0][keep]

    def link(self, mention: str, k: int = 3) -> list[Candidate]:
        ids, sims = self.search(mention, k)
        return [Candidate(int(e), self.kg.entities[int(e)], float(max(s, 0.0))) for e, s in zip(ids, sims)]

    def soft_link(self, mention: str, *, k: int = 10, sigma: float = 0.1) -> dict[int, float]:
        """ULTRAG soft linking: weights ∝ exp(−d²/2σ²) over the ``k`` nearest names, renormalised to sum 1.

        ``d`` is the Euclidean distance between unit vectors (``d² = 2 − 2·cos``).
        """
        ids, sims = self.search(mention, k)
        if not len(ids):
            return {}
        d2 = np.maximum(2.0 - 2.0 * sims.astype(np.float64), 0.0)
        logits = -d2 / (2.0 * sigma**2)
        weights = np.exp(logits - logits.max())  # stable: the nearest name gets weight 1 before renormalising
        weights /= weights.sum()
        return {int(e): float(w) for e, w in zip(ids, weights) if w > 1e-6}
