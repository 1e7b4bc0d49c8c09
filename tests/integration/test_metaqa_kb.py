"""Ingest of the real MetaQA KB (bundled demo copy and the shared copy)."""

from __future__ import annotations

import hashlib
import json

from kgrag.graph.algorithms import follow_relation_path
from kgrag.graph.io import load_file
from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import BUNDLED_METAQA, run_cli, shared_file


def test_bundled_demo_is_the_shared_kb():
    shared = shared_file("metaqa", "kb.txt.gz")
    assert hashlib.sha256(BUNDLED_METAQA.read_bytes()).hexdigest() == hashlib.sha256(shared.read_bytes()).hexdigest()


def test_ingest_demo_counts_and_reload(tmp_path):
    proc = run_cli("ingest", "--demo", "metaqa", "--out", str(tmp_path / "kg"), "--json", ok=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["entities"], summary["relations"], summary["triples"]) == (43_234, 9, 133_582)
    kg = KnowledgeGraph.load(tmp_path / "kg")
    counts = kg.stats()["top_relations"]
    assert counts["starred_actors"] == 33_718 and counts["has_tags"] == 28_719 and counts["has_imdb_votes"] == 119
    # "who directed Kismet" and "films sharing a director with Kismet" (a MetaQA 2-hop pattern)
    kismet = kg.entity_id("Kismet")
    directors = follow_relation_path(kg, [kismet], ["directed_by"]).reached
    assert [kg.entities[d] for d in directors] == ["William Dieterle"]
    films = follow_relation_path(kg, [kismet], ["directed_by", "directed_by_inv"])
    assert kismet in films.reached and len(films.reached) > 10
    assert all(kg.has_triple(int(p[1]), kg.relation_id("directed_by_inv"), int(p[2])) for p in films.paths.nodes)


def test_shared_kb_loads_identically():
    kg = load_file(shared_file("metaqa", "kb.txt.gz"))
    assert (kg.num_entities, kg.num_relations, kg.num_triples) == (43_234, 9, 133_582)
