"""Building the KGs a suite names, once: a store in the KG cache is reused while its sources are unchanged.

Building a KG (parsing a dump, indexing it) can take far longer than a retrieval-only run over it, and a suite
is run again and again while a method is tuned; so the build is kept apart from running and its cache is
keyed on what the store depends on (:func:`source_digest`), never on time stamps.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgrag import __version__
from kgrag.eval.renamed import write_renamed
from kgrag.eval.suite_file import KGEntry
from kgrag.graph.io import load_file
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.store import FORMAT_VERSION, file_digest, load_kg, save_kg


def source_digest(entry: KGEntry) -> dict[str, Any]:
    """What a built store depends on: the source files' sha256, the build options, kgrag's store format."""
    from kgrag.demo import demo_path, get_demo

    source = entry.source
    if source["kind"] == "demo":
        path = demo_path(source["demo"])
        files = [path]
        if get_demo(source["demo"]).property_graph:
            files = sorted(p for p in path.parent.iterdir() if p.suffix in (".csv", ".json"))
    elif source["kind"] == "mapping":
        files = sorted(p for p in source["path"].parent.iterdir() if p.suffix in (".csv", ".json"))
    else:
        files = [source["path"]]
    return {
        "source": entry.source_text,
        "options": {k: v for k, v in source.items() if k not in ("kind", "path", "demo")},
        "rename_relations": entry.rename_relations,
        "files": {p.name: file_digest(p) for p in files},
        "store_format": FORMAT_VERSION,
        "kgrag": __version__,
    }


@dataclass
class BuiltKG:
    kg: KnowledgeGraph
    built: bool  # False when a cached store was reused
    seconds: float


def build_kg(entry: KGEntry, cache_dir: Path) -> BuiltKG:
    """Load the KG of ``entry``: a ``store`` as it is; any other source built once into ``cache_dir/<name>``
    and reused while its sources and options are unchanged (a record of them sits beside the store)."""
    start = time.perf_counter()
    source = entry.source
    if source["kind"] == "store":
        return BuiltKG(load_kg(source["path"]), False, time.perf_counter() - start)
    target = cache_dir / entry.name
    record = cache_dir / f"{entry.name}.source.json"
    wanted = source_digest(entry)
    if record.exists() and (target / "manifest.json").exists():
        try:
            if json.loads(record.read_text("utf-8")) == wanted:
                return BuiltKG(load_kg(target), False, time.perf_counter() - start)
        except ValueError:
            pass  # an unreadable record: build again
    cache_dir.mkdir(parents=True, exist_ok=True)
    record.unlink(missing_ok=True)  # a build that fails half-way must not look current
    _build_store(entry, target, cache_dir)
    record.write_text(json.dumps(wanted, indent=2) + "\n", "utf-8")
    return BuiltKG(load_kg(target), True, time.perf_counter() - start)


def _build_store(entry: KGEntry, target: Path, cache_dir: Path) -> None:
    from kgrag.demo import demo_path, get_demo

    source = entry.source
    path: Path = source.get("path") or demo_path(source["demo"])
    is_mapping = source["kind"] == "mapping" or (source["kind"] == "demo" and get_demo(source["demo"]).property_graph)
    if is_mapping:
        from kgrag.graph.property_graph import PropertyGraph

        graph = PropertyGraph.load(path)
        save_kg(graph.to_knowledge_graph(), target, derive=graph.save_tables)
        return
    fmt = source.get("format", get_demo(source["demo"]).format if source["kind"] == "demo" else "auto")
    columns = {k: source[k] for k in ("head", "relation", "tail") if k in source}
    if entry.rename_relations is not None:
        # the renamed KG is written out as a file and ingested like any user's file
        renamed = cache_dir / f"{entry.name}.triples.tsv.gz"
        write_renamed(path, renamed, entry.rename_relations, format=fmt, **columns)
        path, fmt, columns = renamed, "tsv", {}
    save_kg(load_file(path, format=fmt, **columns), target)
