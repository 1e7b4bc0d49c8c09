"""On-disk KG store: memory-mapped numpy arrays plus compact name files, written atomically.

Layout of a store directory::

    manifest.json     format name + version, counts, sha256 of every data file
    heads.npy rels.npy tails.npy            int32 triples, sorted by (head, relation, tail)
    out_indptr.npy in_indptr.npy in_edges.npy   CSR indexes (so loading does no sorting)
    entities.txt relations.txt              UTF-8 names, one per line, in id order
    aliases.json                            {entity id: [alias, ...]}

The store is first written to a hidden sibling temp directory and renamed into place, so a crash or a
bad input never leaves a half-written store behind.  Other components may keep derived files (indexes,
embedded databases) in the same directory; they key them by the manifest's ``checksum``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from kgrag import __version__
from kgrag.errors import KGStoreError
from kgrag.graph.kg import KnowledgeGraph

FORMAT_NAME = "kgrag-kg"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
_ARRAYS = ("heads", "rels", "tails", "out_indptr", "in_indptr", "in_edges")
_NAME_FILES = ("entities.txt", "relations.txt")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_names(path: Path, names: list[str]) -> None:
    bad = next((n for n in names if "\n" in n or "\r" in n), None)
    if bad is not None:
        raise ValueError(f"names may not contain line breaks: {bad!r}")
    path.write_bytes("\n".join(names).encode("utf-8"))


def _read_names(path: Path, expected: int) -> list[str]:
    text = path.read_bytes().decode("utf-8")
    names = text.split("\n") if expected else []
    if len(names) != expected:
        raise KGStoreError(f"{path}: expected {expected} names, found {len(names)}")
    return names


def save_kg(kg: KnowledgeGraph, directory: str | Path) -> Path:
    """Write ``kg`` to ``directory`` (replacing a previous store there) and return the path."""
    target = Path(directory).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        for name in _ARRAYS:
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(getattr(kg, name)), allow_pickle=False)
        _write_names(tmp / "entities.txt", kg.entities)
        _write_names(tmp / "relations.txt", kg.relations)
        (tmp / "aliases.json").write_text(
            json.dumps({str(k): v for k, v in sorted(kg.aliases.items())}, ensure_ascii=False), "utf-8"
        )
        files = {p.name: _sha256(p) for p in sorted(tmp.iterdir())}
        checksum = hashlib.sha256("".join(f"{k}:{v};" for k, v in files.items()).encode()).hexdigest()
        manifest = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "created_by": f"kgrag {__version__}",
            "entities": kg.num_entities,
            "relations": kg.num_relations,
            "triples": kg.num_triples,
            "files": files,
            "checksum": checksum,
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2), "utf-8")
        if target.exists():
            if not (target / MANIFEST).exists() and any(target.iterdir()):
                raise KGStoreError(f"{target}: exists and is not a kgrag store; refusing to overwrite it")
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def read_manifest(directory: str | Path) -> dict:
    path = Path(directory) / MANIFEST
    if not path.exists():
        raise KGStoreError(f"{directory}: not a kgrag KG store (no {MANIFEST}); create one with `kgrag ingest`")
    try:
        manifest = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise KGStoreError(f"{path}: unreadable manifest ({exc})") from exc
    if manifest.get("format") != FORMAT_NAME:
        raise KGStoreError(f"{path}: not a kgrag KG store (format {manifest.get('format')!r})")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise KGStoreError(
            f"{path}: store format version {manifest.get('format_version')} is not supported by this kgrag "
            f"(expects {FORMAT_VERSION}); re-run `kgrag ingest`"
        )
    return manifest


def load_kg(directory: str | Path, *, verify: bool = True) -> KnowledgeGraph:
    """Load a store; arrays are memory-mapped read-only. ``verify`` checks every file's sha256."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    for name, digest in manifest["files"].items():
        path = directory / name
        if not path.exists():
            raise KGStoreError(f"{path}: missing from the store")
        if verify and _sha256(path) != digest:
            raise KGStoreError(f"{path}: checksum mismatch (the store is corrupt); re-run `kgrag ingest`")
    # Memory-mapped, but exposed as plain ndarray views: np.memmap's Python-level __getitem__ costs more
    # than a small graph query itself.
    arrays = {name: np.asarray(np.load(directory / f"{name}.npy", mmap_mode="r")) for name in _ARRAYS}
    entities = _read_names(directory / "entities.txt", manifest["entities"])
    relations = _read_names(directory / "relations.txt", manifest["relations"])
    aliases = {int(k): v for k, v in json.loads((directory / "aliases.json").read_text("utf-8")).items()}
    if len(arrays["heads"]) != manifest["triples"]:
        raise KGStoreError(f"{directory}: expected {manifest['triples']} triples, found {len(arrays['heads'])}")
    kg = KnowledgeGraph(
        entities,
        relations,
        arrays["heads"],
        arrays["rels"],
        arrays["tails"],
        aliases=aliases,
        _canonical=True,
        _index=(arrays["out_indptr"], arrays["in_indptr"], arrays["in_edges"]),
    )
    kg.checksum = manifest["checksum"]
    kg.store_path = directory.resolve()
    return kg
