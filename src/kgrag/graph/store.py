"""On-disk KG store: memory-mapped numpy arrays plus compact name files, written atomically.

Layout of a store directory::

    manifest.json     format name + version, counts, sha256 of every data file
    heads.npy rels.npy tails.npy            int32 triples, sorted by (head, relation, tail)
    out_indptr.npy in_indptr.npy in_edges.npy   CSR indexes (so loading does no sorting)
    entities.txt relations.txt              UTF-8 names, one per line, in id order
    aliases.json                            {entity id: [alias, ...]}

The store is first written to a hidden sibling temp directory and renamed into place, so a crash or a
bad input never leaves a half-written store behind.  Other components may keep derived files (indexes,
embedded databases) in the same directory, in the subdirectories named by ``DERIVED``; they key them by the
manifest's ``checksum``.

Replacing a store is two renames (old store → ``.NAME.old-*``, new store → ``NAME``) because POSIX cannot
swap two directories portably.  A Ctrl+C between them puts the old store back; a kill between them leaves
``NAME`` missing and the old store beside it, and the next :func:`load_kg` or :func:`save_kg` renames it
back.  Only a directory that is a kgrag store holding nothing but what kgrag writes (or an empty one) is ever
replaced or deleted, so ``--out`` pointing at a project folder is refused, not wiped.
"""

from __future__ import annotations

import glob
import hashlib
import json
import logging
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable
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
# Subdirectories other components derive from a store (Ladybug database, embedding caches, property-graph
# tables) and kgrag's own hidden temp directories: a store holding anything else has user files in it.
DERIVED = frozenset({"ladybug", "embeddings", "property_graph", "adapted"})
_HIDDEN = tuple(f".{name}." for name in DERIVED)  # their temp and set-aside copies: .ladybug.tmp-x, ...
_OLD_INFIX = ".old-"
log = logging.getLogger("kgrag.store")


def file_digest(path: Path) -> str:
    """sha256 (hex) of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def digest_files(directory: Path, exclude: frozenset[str] = frozenset()) -> dict[str, str]:
    """sha256 of every file under ``directory`` by relative POSIX path (names in ``exclude`` skipped).

    Derived data (the Ladybug database, embedding caches) records this when it is built and compares it when
    it is opened: the manifest's checksums cannot cover files written after the store, and a database edited
    in place would otherwise answer with names the KG does not have.  Extra files count as a mismatch too
    (a planted write-ahead log would be replayed).
    """
    files = sorted(p for p in directory.rglob("*") if p.is_file() and p.name not in exclude)
    return {p.relative_to(directory).as_posix(): file_digest(p) for p in files}


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


def save_kg(kg: KnowledgeGraph, directory: str | Path, *, derive: Callable[[Path], object] | None = None) -> Path:
    """Write ``kg`` to ``directory`` (replacing a previous store there) and return the path.

    ``derive(store)`` is called on the finished store before it is renamed into place, for derived data that
    must arrive with it (property-graph tables); if it fails, the previous store stays as it was.  Raises
    :class:`KGStoreError` before writing anything if ``directory`` holds anything but a kgrag store.
    """
    target = Path(directory).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    recover(target)
    check_replaceable(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        for name in _ARRAYS:
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(getattr(kg, name)), allow_pickle=False)
        _write_names(tmp / "entities.txt", kg.entities)
        _write_names(tmp / "relations.txt", kg.relations)
        (tmp / "aliases.json").write_text(
            json.dumps({str(k): v for k, v in sorted(kg.aliases.items())}, ensure_ascii=False), "utf-8"
        )
        files = {p.name: file_digest(p) for p in sorted(tmp.iterdir())}
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
        if derive is not None:
            derive(tmp)
        _swap_into_place(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _foreign_entries(directory: Path) -> list[str] | None:
    """Entries of ``directory`` kgrag did not write there, or None if it is not a kgrag store at all."""
    try:
        manifest = read_manifest(directory)
    except KGStoreError:
        return None
    ours = {MANIFEST, *manifest.get("files", {}), *DERIVED}
    return sorted(p.name for p in directory.iterdir() if p.name not in ours and not p.name.startswith(_HIDDEN))


def check_replaceable(target: Path) -> None:
    """Raise unless ``target`` is absent, an empty directory, or a kgrag store with only kgrag's files in it.

    A ``manifest.json`` alone proves nothing (web projects have one), so the manifest must name this format.
    """
    if not target.exists() and not target.is_symlink():
        return
    if not target.is_dir():
        raise KGStoreError(f"{target}: exists and is not a directory; refusing to replace it")
    if not any(target.iterdir()):
        return
    foreign = _foreign_entries(target)
    if foreign is None:
        raise KGStoreError(
            f"{target}: exists, is not empty and is not a kgrag store; refusing to replace it "
            "(choose another --out, or remove the directory yourself)"
        )
    if foreign:
        raise KGStoreError(
            f"{target}: this kgrag store also holds files kgrag did not write ({', '.join(foreign[:5])}); "
            "refusing to replace it (move them out first)"
        )


def _old_siblings(target: Path) -> list[Path]:
    """Previous stores set aside by interrupted replacements of ``target``, oldest first."""
    found = target.parent.glob(f".{glob.escape(target.name)}{_OLD_INFIX}*")
    return sorted((p for p in found if _foreign_entries(p) == []), key=lambda p: p.stat().st_mtime)


def recover(target: Path) -> None:
    """Put back the store an interrupted replacement left beside a missing ``target`` (newest first)."""
    if target.exists() or target.is_symlink():
        return
    leftovers = _old_siblings(target)
    if not leftovers:
        return
    try:
        os.rename(leftovers[-1], target)
    except OSError as exc:
        raise KGStoreError(
            f"{target}: missing; an interrupted `kgrag ingest` left the previous store at {leftovers[-1]}, "
            f"which could not be renamed back ({exc.strerror}); rename it yourself"
        ) from None
    log.warning("%s: restored the previous store left by an interrupted `kgrag ingest`", target)


def _discard(path: Path, marker: str) -> None:
    """Delete a directory kgrag wrote, ``marker`` (the file that identifies it) last, so an interrupted delete
    still reads as kgrag's (and is finished later) instead of an unrecognisable directory nobody dares to
    remove.  Failures are logged, not raised: the new data is already in place."""
    try:
        for entry in path.iterdir():
            if entry.name != marker:
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        (path / marker).unlink(missing_ok=True)
        path.rmdir()
    except OSError as exc:
        log.warning("%s: could not remove the previous copy (%s); delete it by hand", path, exc)


def _set_aside(target: Path) -> Path:
    """Rename ``target`` to a unique hidden sibling and return that path."""
    old = target.with_name(f".{target.name}{_OLD_INFIX}{os.getpid()}-{secrets.token_hex(4)}")
    os.rename(target, old)
    return old


def _rename_over(tmp: Path, target: Path, marker: str) -> None:
    """Rename ``tmp`` to ``target``; a previous non-empty ``target`` is set aside first and deleted after,
    and put back if the second rename fails or is interrupted."""
    if target.is_dir() and not any(target.iterdir()):
        target.rmdir()
    if not target.exists():
        os.rename(tmp, target)
        return
    old = _set_aside(target)
    try:
        os.rename(tmp, target)
    except BaseException:
        if not target.exists():
            os.rename(old, target)
        raise
    _discard(old, marker)


def replace_derived(tmp: Path, target: Path, marker: str) -> None:
    """Move the freshly built derived directory ``tmp`` (Ladybug database, property-graph tables) to ``target``.

    A previous ``target`` is replaced only if it is empty or holds ``marker``, the file its builder writes; any
    other directory there is user data, and is refused rather than deleted.  A copy set aside by an interrupted
    replacement needs no recovery: derived data is rebuilt when missing.
    """
    if target.exists() and not (target / marker).is_file() and (not target.is_dir() or any(target.iterdir())):
        raise KGStoreError(f"{target}: exists and was not built by kgrag (no {marker}); refusing to replace it")
    _rename_over(tmp, target, marker)


def _swap_into_place(tmp: Path, target: Path) -> None:
    """Rename the finished store ``tmp`` to ``target``, replacing a previous store there (see module doc)."""
    recover(target)
    check_replaceable(target)
    for leftover in _old_siblings(target):
        _discard(leftover, MANIFEST)
    _rename_over(tmp, target, MANIFEST)


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
    recover(directory)
    manifest = read_manifest(directory)
    for name, digest in manifest["files"].items():
        path = directory / name
        if not path.exists():
            raise KGStoreError(f"{path}: missing from the store")
        if verify and file_digest(path) != digest:
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
