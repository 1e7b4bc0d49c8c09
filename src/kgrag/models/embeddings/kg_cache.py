"""Embeddings of a KG's entity names, relation names and verbalised triples, computed once per KG.

Stored inside the KG store directory under ``embeddings/<embedder id>/``, tagged with the KG checksum so a
re-ingested KG never reuses stale vectors.  Triples are embedded lazily (a method only ever needs the few
thousand it ranks): a memory-mapped ``(num_triples, dim)`` matrix plus a "done" bitmap, so no triple is
embedded twice, across questions and across processes.

Cached vectors are checked before they are used, because wrong vectors fail silently (a zeroed triple cache
made kaping rank irrelevant facts first): whole files written at once (entity and relation matrices, the
linker's index) have their sha256 recorded in ``tag.json`` and compared when opened; each lazily embedded
triple row has a checksum, tied to its triple id, compared every time the row is read.  Anything that does not
match is recomputed, with a warning.  This catches damage and edits that do not also recompute the checksums.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kgrag.cancel import check_cancelled
from kgrag.graph.kg import KnowledgeGraph, unique_ints
from kgrag.graph.store import file_digest
from kgrag.graph.verbalize import humanize, verbalize_triples
from kgrag.models.embeddings.base import Embedder

log = logging.getLogger("kgrag.embeddings")
_LAYOUT = 2  # 2: digests of whole files in the tag, per-row checksums of the triple matrix
_TRIPLE_FILES = ("triples.f32", "triples_done.u8", "triples_sum.u64")
# Every file this cache (and the linker's index in it) writes; a stale cache deletes these and nothing else.
_OWN_FILES = frozenset({"entities.npy", "relations.npy", "entities.faiss", "tag.json", *_TRIPLE_FILES})
_ROW_SALT = np.uint64(0x9E3779B97F4A7C15)


@functools.lru_cache(maxsize=8)
def _row_weights(dim: int) -> np.ndarray:
    """Fixed odd 64-bit multipliers, one per float of a row: any change to one float changes the sum."""
    return np.random.default_rng(dim).integers(1, 2**63, size=dim, dtype=np.uint64) | np.uint64(1)


def row_checksums(rows: np.ndarray, tids: np.ndarray) -> np.ndarray:
    """A checksum per embedding row, mixed with its triple id so a zeroed or swapped row does not match."""
    bits = np.ascontiguousarray(rows, dtype=np.float32).view(np.uint32).astype(np.uint64)
    sums = (bits * _row_weights(bits.shape[1])).sum(axis=1, dtype=np.uint64)
    return sums + (tids.astype(np.uint64) + np.uint64(1)) * _ROW_SALT


def _save_npy(path: Path, mat: np.ndarray) -> None:
    with open(path, "wb") as fh:  # a file object: np.save would append .npy to a temp name
        np.save(fh, mat, allow_pickle=False)


TRIPLE_CHUNK = 256
"""Triples embedded between two cancellation checks."""


class KGEmbeddings:
    def __init__(self, kg: KnowledgeGraph, embedder: Embedder, directory: str | Path | None = None) -> None:
        self.kg = kg
        self.embedder = embedder
        base = Path(directory) if directory else (kg.store_path / "embeddings" if kg.store_path else None)
        self.dir = base / embedder.id if base else None
        self._memory: dict[str, np.ndarray] = {}
        self._digests: dict[str, str] = {}
        self._lock = threading.Lock()
        if self.dir is not None:
            self._check_tag()

    # ------------------------------------------------------------------ tag and whole files
    def _identity(self) -> dict:
        return {
            "kg_checksum": self.kg.checksum,
            "embedder": self.embedder.id,
            "dim": self.embedder.dim,
            "layout": _LAYOUT,
        }

    def _recorded(self) -> dict[str, str] | None:
        """The file digests ``tag.json`` records now, if it was made for this KG and embedder (else None). Read
        again where it matters: another instance on the same store — another method, another process — may
        have written files since this one started."""
        assert self.dir is not None
        try:
            tag = json.loads((self.dir / "tag.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None
        if isinstance(tag, dict) and {k: v for k, v in tag.items() if k != "files"} == self._identity():
            return dict(tag.get("files") or {})
        return None

    def _check_tag(self) -> None:
        """Adopt the cache if it was made for this KG and embedder; otherwise empty it (only kgrag's files)."""
        assert self.dir is not None
        recorded = self._recorded()
        if recorded is not None:
            self._digests = recorded
            return
        if self.dir.exists():  # stale: other KG or embedder version
            for f in self.dir.iterdir():
                if f.name in _OWN_FILES or f.name.removesuffix(".tmp") in _OWN_FILES:
                    f.unlink()
        self.dir.mkdir(parents=True, exist_ok=True)
        self._write_tag()

    def _write_tag(self, drop: str | None = None) -> None:
        """Record this instance's digests beside those another instance recorded since (without ``drop``)."""
        assert self.dir is not None
        files = {**(self._recorded() or {}), **self._digests}
        files.pop(drop or "", None)
        tmp = self.dir / "tag.json.tmp"
        tmp.write_text(json.dumps({**self._identity(), "files": files}), "utf-8")
        tmp.replace(self.dir / "tag.json")

    def verified(self, name: str) -> Path | None:
        """The cached file ``name`` if it is exactly what :meth:`write` wrote, else None (so the caller
        recomputes it); a file that differs is removed, with a warning."""
        if self.dir is None or not (self.dir / name).is_file():
            return None
        path = self.dir / name
        digest = file_digest(path)
        if self._digests.get(name) != digest:  # written by another instance since this one read the tag?
            recorded = (self._recorded() or {}).get(name)
            if recorded is not None:
                self._digests[name] = recorded
        if self._digests.get(name) == digest:
            return path
        log.warning("%s: differs from what was written (edited or damaged); recomputing it", path)
        path.unlink()
        self._digests.pop(name, None)
        self._write_tag(drop=name)
        return None

    def write(self, name: str, save: Callable[[Path], None]) -> None:
        """Write the cached file ``name`` with ``save(temp path)``, then record its digest for :meth:`verified`."""
        if self.dir is None:
            return
        tmp = self.dir / f"{name}.tmp"
        save(tmp)
        self._digests[name] = file_digest(tmp)
        tmp.replace(self.dir / name)
        self._write_tag()

    def _whole(self, kind: str, texts: Callable[[], list[str]]) -> np.ndarray:
        with self._lock:
            if kind in self._memory:
                return self._memory[kind]
            path = self.verified(f"{kind}.npy")
            if path is not None:
                mat = np.load(path, mmap_mode="r")
            else:
                mat = self.embedder.encode(texts())
                self.write(f"{kind}.npy", lambda tmp: _save_npy(tmp, mat))
            self._memory[kind] = mat
            return mat

    def entities(self) -> np.ndarray:
        """``(num_entities, dim)`` vectors of the entity names (underscores read as spaces)."""
        return self._whole("entities", lambda: [humanize(n) for n in self.kg.entities])

    def relations(self) -> np.ndarray:
        """``(num_relations, dim)`` vectors of the relation names."""
        return self._whole("relations", lambda: [humanize(n) for n in self.kg.relations])

    # ------------------------------------------------------------------ lazily embedded triples
    def triples(self, tids: np.ndarray) -> np.ndarray:
        """Vectors of the verbalised triples ``tids`` (computing only those never embedded before).

        New triples are embedded :data:`TRIPLE_CHUNK` at a time, each chunk kept as soon as it is done, with a
        cancellation check before each: a request that timed out stops within one chunk (about a second with
        MiniLM on two cores) instead of embedding thousands of triples for nobody, and what it finished is not
        embedded again by the next request."""
        tids = np.asarray(tids, dtype=np.int64)
        with self._lock:
            mat, done, sums = self._triple_store()
            self._forget_damaged(mat, done, sums, tids)
            todo = unique_ints(tids[~done[tids]])
            try:
                for start in range(0, len(todo), TRIPLE_CHUNK):
                    check_cancelled()
                    chunk = todo[start : start + TRIPLE_CHUNK]
                    mat[chunk] = self.embedder.encode(verbalize_triples(self.kg, chunk))
                    sums[chunk] = row_checksums(mat[chunk], chunk)
                    done[chunk] = True
            finally:
                if len(todo):
                    for array in (mat, sums, done):
                        if isinstance(array, np.memmap):
                            array.flush()
            return np.asarray(mat[tids])

    def _forget_damaged(self, mat: np.ndarray, done: np.ndarray, sums: np.ndarray, tids: np.ndarray) -> None:
        """Mark cached rows among ``tids`` whose checksum does not match as not embedded (so they are redone)."""
        cached = unique_ints(tids[done[tids]])
        if not len(cached):
            return
        bad = cached[row_checksums(mat[cached], cached) != sums[cached]]
        if len(bad):
            log.warning(
                "%s: %d cached triple embeddings do not match their checksums (edited or damaged); re-embedding",
                self.dir,
                len(bad),
            )
            done[bad] = False

    def _triple_store(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if "triples" in self._memory:
            return self._memory["triples"], self._memory["triples_done"], self._memory["triples_sum"]
        n, dim = self.kg.num_triples, self.embedder.dim
        if self.dir is None:
            arrays = np.zeros((n, dim), dtype=np.float32), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.uint64)
        else:
            arrays = self._open_triple_files(n, dim)
        self._memory["triples"], self._memory["triples_done"], self._memory["triples_sum"] = arrays
        return arrays

    def _open_triple_files(self, n: int, dim: int) -> tuple[np.memmap, np.memmap, np.memmap]:
        """Memory-map the three triple files, starting afresh if any is missing or has the wrong size."""
        assert self.dir is not None
        specs = ((np.float32, (n, dim)), (np.bool_, (n,)), (np.uint64, (n,)))
        paths = [self.dir / name for name in _TRIPLE_FILES]
        sizes = [int(np.prod(shape)) * np.dtype(dtype).itemsize for dtype, shape in specs]
        fresh = not all(p.is_file() and p.stat().st_size == size for p, size in zip(paths, sizes))
        if fresh and any(p.exists() for p in paths):
            log.warning("%s: the triple embedding cache is incomplete; starting it afresh", self.dir)
        mat, done, sums = (
            np.memmap(path, dtype=dtype, mode="w+" if fresh else "r+", shape=shape)
            for path, (dtype, shape) in zip(paths, specs)
        )
        return mat, done, sums
