"""KG store: round trip, memory-mapping, checksums, versions and atomic writes."""

from __future__ import annotations

import json

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
