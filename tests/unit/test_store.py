"""KG store: round trip, memory-mapping, checksums, versions and atomic writes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from kgrag.errors import KGStoreError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.store import load_kg, save_kg
from tests.conftest import MOVIES


def test_round_trip_is_memory_mapped(tmp_path, movies_kg):
    store = movies_kg.save(tmp_path / "kg")
    kg = KnowledgeGraph.load(store)
    assert kg.entities == movies_kg.entities
    assert kg.relations == movies_kg.relations
    for name in ("heads", "rels", "tails", "out_indptr", "in_indptr", "in_edges"):
        assert np.array_equal(getattr(kg, name), getattr(movies_kg, name))
    assert isinstance(kg.heads.base, np.memmap) and not kg.heads.flags.writeable  # mapped, read-only
    assert kg.checksum and len(kg.checksum) == 64
    assert kg.entity_id("Heat") == movies_kg.entity_id("Heat")


def test_aliases_and_unicode_survive(tmp_path):
    kg = KnowledgeGraph.from_triples(
        [("Amélie", "directed_by", "Jean-Pierre Jeunet"), ("東京物語", "r", "小津")],
        aliases={"Amélie": ["Le Fabuleux Destin d'Amélie Poulain"]},
    )
    back = KnowledgeGraph.load(kg.save(tmp_path / "s"))
    assert back.entities == kg.entities
    assert back.entity_id("Le Fabuleux Destin d'Amélie Poulain") == back.entity_id("Amélie")


def test_checksum_mismatch_is_detected(tmp_path, movies_kg):
    store = movies_kg.save(tmp_path / "kg")
    data = bytearray((store / "tails.npy").read_bytes())
    data[-1] ^= 0xFF
    (store / "tails.npy").write_bytes(bytes(data))
    with pytest.raises(KGStoreError, match="checksum mismatch"):
        load_kg(store)
    load_kg(store, verify=False)  # explicitly skipping verification still loads


def test_unknown_version_and_missing_store(tmp_path, movies_kg):
    with pytest.raises(KGStoreError, match="not a kgrag KG store"):
        load_kg(tmp_path)
    store = movies_kg.save(tmp_path / "kg")
    manifest = json.loads((store / "manifest.json").read_text())
    manifest["format_version"] = 999
    (store / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(KGStoreError, match="format version 999"):
        load_kg(store)


def test_failed_save_leaves_nothing_behind(tmp_path, movies_kg):
    store = movies_kg.save(tmp_path / "kg")
    before = sorted(p.name for p in tmp_path.iterdir())
    broken = KnowledgeGraph.from_triples(MOVIES)
    broken.entities[0] = "bad\nname"  # names with line breaks cannot be stored
    with pytest.raises(ValueError, match="line breaks"):
        save_kg(broken, store)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert load_kg(store).entities == movies_kg.entities  # the previous store is intact


def test_overwrite_replaces_store(tmp_path, movies_kg):
    store = movies_kg.save(tmp_path / "kg")
    small = KnowledgeGraph.from_triples(MOVIES[:2])
    small.save(store)
    assert load_kg(store).num_triples == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kg"]


def test_refuses_to_overwrite_foreign_directory(tmp_path, movies_kg):
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("precious")
    with pytest.raises(KGStoreError, match="not a kgrag store"):
        movies_kg.save(target)
    assert (target / "notes.txt").read_text() == "precious"


# ---------------------------------------------------------------------- replacing an existing --out
def test_refuses_a_project_folder_that_happens_to_hold_a_manifest(tmp_path, movies_kg):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "manifest.json").write_text('{"name": "my web app"}')
    (project / "README.md").write_text("precious")
    (project / "src" / "main.py").write_text("print()")
    with pytest.raises(KGStoreError, match="not a kgrag store"):
        movies_kg.save(project)
    assert sorted(p.name for p in project.iterdir()) == ["README.md", "manifest.json", "src"]
    assert (project / "src" / "main.py").read_text() == "print()"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]  # no temp directory left behind


def test_refuses_a_store_holding_files_kgrag_did_not_write(tmp_path, movies_kg):
    store = movies_kg.save(tmp_path / "kg")
    (store / "my_notes.txt").write_text("precious")
    with pytest.raises(KGStoreError, match=r"my_notes\.txt"):
        movies_kg.save(store)
    assert (store / "my_notes.txt").read_text() == "precious"


def test_refuses_a_file_and_replaces_an_empty_directory(tmp_path, movies_kg):
    (tmp_path / "file").write_text("precious")
    with pytest.raises(KGStoreError, match="not a directory"):
        movies_kg.save(tmp_path / "file")
    assert (tmp_path / "file").read_text() == "precious"
    (tmp_path / "empty").mkdir()
    assert load_kg(movies_kg.save(tmp_path / "empty")).num_triples == len(MOVIES)


def test_replacing_keeps_derived_directories_out_of_the_new_store(tmp_path, movies_kg):
    store = movies_kg.save(tmp_path / "kg")
    (store / "ladybug").mkdir()
    (store / "ladybug" / "tag.json").write_text("{}")
    KnowledgeGraph.from_triples(MOVIES[:2]).save(store)
    assert not (store / "ladybug").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kg"]


def _interrupt_rename(monkeypatch, call: int) -> None:
    """Make the ``call``-th os.rename raise KeyboardInterrupt, as a Ctrl+C at that moment would."""
    real, calls = os.rename, []

    def rename(src, dst, *args, **kwargs):
        calls.append((src, dst))
        if len(calls) == call:
            raise KeyboardInterrupt
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "rename", rename)


def test_interrupt_between_the_two_renames_keeps_the_old_store(tmp_path, movies_kg, monkeypatch):
    store = movies_kg.save(tmp_path / "kg")
    _interrupt_rename(monkeypatch, call=2)
    with pytest.raises(KeyboardInterrupt):
        KnowledgeGraph.from_triples(MOVIES[:2]).save(store)
    monkeypatch.undo()
    assert load_kg(store).num_triples == len(MOVIES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kg"]


def test_a_killed_ingest_is_recovered_by_load_and_by_the_next_save(tmp_path, movies_kg):
    store = movies_kg.save(tmp_path / "kg")
    os.rename(store, tmp_path / ".kg.old-4242-abcd")  # killed (SIGKILL) between the two renames
    assert load_kg(store).num_triples == len(MOVIES)  # load puts the previous store back
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kg"]
    os.rename(store, tmp_path / ".kg.old-4242-abcd")
    KnowledgeGraph.from_triples(MOVIES[:2]).save(store)
    assert load_kg(store).num_triples == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kg"]


def test_a_leftover_old_store_is_removed_by_the_next_save(tmp_path, movies_kg):
    store = movies_kg.save(tmp_path / "kg")
    shutil.copytree(store, tmp_path / ".kg.old-4242-abcd")  # killed after the second rename
    (tmp_path / ".kg.old-9999-user").mkdir()  # not a kgrag store: never deleted
    (tmp_path / ".kg.old-9999-user" / "notes.txt").write_text("precious")
    movies_kg.save(store)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kg.old-9999-user", "kg"]


def test_replace_derived_refuses_a_directory_kgrag_did_not_build(tmp_path):
    from kgrag.graph.store import replace_derived

    def built(name: str) -> Path:
        tmp = tmp_path / name
        tmp.mkdir()
        (tmp / "tag.json").write_text(name)
        return tmp

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("precious")
    with pytest.raises(KGStoreError, match="not built by kgrag"):
        replace_derived(built("a"), mine, "tag.json")
    assert (mine / "notes.txt").read_text() == "precious"
    replace_derived(built("b"), tmp_path / "db", "tag.json")
    replace_derived(built("c"), tmp_path / "db", "tag.json")  # a previous build is replaced
    assert (tmp_path / "db" / "tag.json").read_text() == "c"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "db", "mine"]


def test_edited_property_graph_tables_are_refused(tmp_path):
    from kgrag.demo import demo_path
    from kgrag.graph.property_graph import PropertyGraph, stored_mapping

    graph = PropertyGraph.load(demo_path("northwind"))
    store = graph.to_knowledge_graph().save(tmp_path / "nw")
    graph.save_tables(store)
    assert stored_mapping(KnowledgeGraph.load(store))["nodes"]
    table = store / "property_graph" / "node_Product.csv"
    table.write_text(table.read_text("utf-8").replace('"Chai"', '"Hacked!"'), "utf-8")
    with pytest.raises(KGStoreError, match="differ from what `kgrag ingest` wrote"):
        stored_mapping(KnowledgeGraph.load(store))


def test_a_leftover_that_cannot_be_renamed_back_is_named_in_the_error(tmp_path, movies_kg, monkeypatch):
    store = movies_kg.save(tmp_path / "kg")
    os.rename(store, tmp_path / ".kg.old-4242-abcd")

    def read_only(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "rename", read_only)
    with pytest.raises(KGStoreError, match=r"previous store at .*\.kg\.old-4242-abcd.*rename it yourself"):
        load_kg(store)
