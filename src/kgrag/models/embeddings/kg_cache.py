"""Embeddings of a KG's entity names, relation names and verbalised triples, computed once per KG.

Stored inside the KG store directory under ``embeddings/<embedder id>/``, tagged with the KG checksum so a
re-ingested KG never reuses stale vectors.  Triples are embedded lazily (a method only ever needs the few
thousand it ranks): a memory-mapped ``(num_triples, dim)`` matrix plus a "done" bitmap, so no triple is
embedded twice, across questions and across processes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kgrag.cancel import check_cancelled
from kgrag.graph.kg import KnowledgeGraph, unique_ints
from kgrag.graph.verbalize import humanize, verbalize_triples
from kgrag.models.embeddings.base import Embedder

TRIPLE_CHUNK = 256
"""Triples embedded between two cancellation checks."""


class KGEmbeddings:
    def __init__(self, kg: KnowledgeGraph, embedder: Embedder, directory: str | Path | None = None) -> None:
        self.kg = kg
        self.embedder = embedder
        base = Path(directory) if directory else (kg.store_path / "embeddings" if kg.store_path else None)
        self.dir = base / embedder.id if base else None
        self._memory: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        if self.dir is not None:
            self._check_tag()

    def _check_tag(self) -> None:
        assert self.dir is not None
        tag = {"kg_checksum": self.kg.checksum, "embedder": self.embedder.id, "dim": self.embedder.dim}
        tag_file = self.dir / "tag.json"
        if tag_file.exists() and json.loads(tag_file.read_text()) == tag:
            return
        if self.dir.exists():  # stale: other KG or embedder version
            for f in self.dir.iterdir():
                f.unlink()
        self.dir.mkdir(parents=True, exist_ok=True)
        tag_file.write_text(json.dumps(tag))

    def _whole(self, kind: str, texts: Callable[[], list[str]]) -> np.ndarray:
        with self._lock:
            if kind in self._memory:
                return self._memory[kind]
            path = self.dir / f"{kind}.npy" if self.dir else None
            if path is not None and path.exists():
                mat = np.load(path, mmap_mode="r")
            else:
                mat = self.embedder.encode(texts())
                if path is not None:
                    tmp = path.with_suffix(".tmp.npy")
                    np.save(tmp, mat)
                    tmp.replace(path)
            self._memory[kind] = mat
            return mat

    def entities(self) -> np.ndarray:
        """``(num_entities, dim)`` vectors of the entity names (underscores read as spaces)."""
        return self._whole("entities", lambda: [humanize(n) for n in self.kg.entities])

    def relations(self) -> np.ndarray:
        """``(num_relations, dim)`` vectors of the relation names."""
        return self._whole("relations", lambda: [humanize(n) for n in self.kg.relations])

    def triples(self, tids: np.ndarray) -> np.ndarray:
        """Vectors of the verbalised triples ``tids`` (computing only those never embedded before).

        New triples are embedded :data:`TRIPLE_CHUNK` at a time, each chunk kept as soon as it is done, with a
        cancellation check before each: a request that timed out stops within one chunk (about a second with
        MiniLM on two cores) instead of embedding thousands of triples for nobody, and what it finished is not
        embedded again by the next request."""
        tids = np.asarray(tids, dtype=np.int64)
        with self._lock:
            mat, done = self._triple_store()
            todo = unique_ints(tids[~done[tids]])
            try:
                for start in range(0, len(todo), TRIPLE_CHUNK):
                    check_cancelled()
                    chunk = todo[start : start + TRIPLE_CHUNK]
                    mat[chunk] = self.embedder.encode(verbalize_triples(self.kg, chunk))
                    done[chunk] = True
            finally:
                if len(todo) and isinstance(mat, np.memmap):
                    mat.flush()
                    done.flush()
            return np.asarray(mat[tids])

    def _triple_store(self) -> tuple[np.ndarray, np.ndarray]:
        if "triples" in self._memory:
            return self._memory["triples"], self._memory["triples_done"]
        n, dim = self.kg.num_triples, self.embedder.dim
        if self.dir is None:
            mat = np.zeros((n, dim), dtype=np.float32)
            done = np.zeros(n, dtype=bool)
        else:
            mat_path, done_path = self.dir / "triples.f32", self.dir / "triples_done.u8"
            fresh = not (mat_path.exists() and done_path.exists())
            mat = np.memmap(mat_path, dtype=np.float32, mode="w+" if fresh else "r+", shape=(n, dim))
            done = np.memmap(done_path, dtype=np.bool_, mode="w+" if fresh else "r+", shape=(n,))
        self._memory["triples"], self._memory["triples_done"] = mat, done
        return mat, done
