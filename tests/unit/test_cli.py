"""The CLI as a user runs it: real subprocesses, exit codes, one-line errors, --json contracts."""

from __future__ import annotations

import json

import pytest

from kgrag.graph.io import write_file
from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import MOVIES, run_cli

run = run_cli


@pytest.fixture
def store(tmp_path):
    src = write_file(KnowledgeGraph.from_triples(MOVIES), tmp_path / "movies.tsv")
    out = tmp_path / "kg"
    summary = json.loads(run("ingest", str(src), "--out", str(out), "--json").stdout)
    assert summary["triples"] == len(MOVIES) and summary["entities"] == 11 and summary["relations"] == 4
    return out


def test_info_json(store):
    info = json.loads(run("info", str(store), "--json").stdout)
    assert (info["entities"], info["relations"], info["triples"]) == (11, 4, len(MOVIES))


def test_neighbors_and_paths(store):
    out = json.loads(run("neighbors", str(store), "Michael Mann", "--relation", "directed_by", "--json").stdout)
    assert sorted(n["entity"] for n in out["neighbors"]) == ["Heat", "The Insider"]
    text = run("neighbors", str(store), "Heat", "--hops", "1").stdout
    assert "Heat directed by Michael Mann" in text
    paths = json.loads(run("paths", str(store), "--from", "Michael Mann", "--to", "Russell Crowe", "--json").stdout)
    assert [p["entities"] for p in paths["paths"]] == [["Michael Mann", "The Insider", "Russell Crowe"]]
    assert paths["paths"][0]["text"] == "Michael Mann <-[directed by]- The Insider -[starred actors]-> Russell Crowe"


def test_bad_input_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("a|r|b\nragged|row\n")
    proc = run("ingest", str(bad), "--out", str(tmp_path / "kg"), ok=False)
    assert proc.returncode == 2
    assert f"{bad}:2: expected 3 fields" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "kg").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.txt"]


def test_unknown_entity_and_missing_store(store, tmp_path):
    proc = run("neighbors", str(store), "Micheal Mann", ok=False)
    assert proc.returncode == 2 and "did you mean 'Michael Mann'" in proc.stderr and "Traceback" not in proc.stderr
    proc = run("info", str(tmp_path / "nowhere"), ok=False)
    assert proc.returncode == 2 and "not a kgrag KG store" in proc.stderr


def test_ingest_needs_path_or_demo(tmp_path):
    proc = run("ingest", "--out", str(tmp_path / "kg"), ok=False)
    message = " ".join(proc.stderr.replace("│", " ").split())  # typer boxes and wraps usage errors
    assert proc.returncode == 2 and "give either a PATH, --demo NAME or --mapping FILE" in message


def test_retrieve_json(store):
    out = json.loads(run("retrieve", str(store), "who directed Heat", "--method", "kaping", "--json").stdout)
    assert out["method"] == "kaping" and out["evidence"]
    assert out["evidence"][0]["text"] == "Heat directed by Michael Mann"
    assert out["evidence"][0]["triples"]


def test_index_builds_linking_and_triple_vectors(store):
    out = json.loads(run("index", str(store), "--triples", "--embedder", "static", "--json").stdout)
    assert set(out) == {"linking_seconds", "triples_seconds"}
    done = store / "embeddings" / "static-minilm-static-256" / "triples_done.u8"
    assert done.exists() and all(done.read_bytes())


def test_method_settings_from_the_command_line(store):
    out = json.loads(run("retrieve", str(store), "who directed Heat", "--set", "top_k=2", "--json").stdout)
    assert len(out["evidence"]) == 2
    bad = run("retrieve", str(store), "who directed Heat", "--set", "nope=1", ok=False)
    assert bad.returncode == 2 and "method 'kaping': nope" in bad.stderr and "Traceback" not in bad.stderr


def test_ingest_refuses_to_replace_a_project_folder(tmp_path):
    src = write_file(KnowledgeGraph.from_triples(MOVIES), tmp_path / "movies.tsv")
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "manifest.json").write_text('{"name": "web app"}')
    (project / "README.md").write_text("precious")
    proc = run("ingest", str(src), "--out", str(project), ok=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "not a kgrag store; refusing to replace it" in proc.stderr
    assert sorted(p.name for p in project.iterdir()) == ["README.md", "manifest.json", "src"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["movies.tsv", "project"]
    # refused before the input is read (a 10 GB input would otherwise be parsed first)
    proc = run("ingest", str(tmp_path / "not-read-yet.nt"), "--out", str(project), ok=False)
    assert proc.returncode == 2 and "refusing to replace it" in proc.stderr


def test_a_bad_typed_value_in_a_property_graph_leaves_the_old_store_whole(tmp_path):
    import shutil

    from kgrag.demo import demo_path

    source = tmp_path / "nw"
    shutil.copytree(demo_path("northwind").parent, source)
    out = tmp_path / "kg"
    run("ingest", "--mapping", str(source / "mapping.json"), "--out", str(out))
    before = sorted(p.name for p in (out / "property_graph").iterdir())
    products = source / "products.csv"
    lines = products.read_text("utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace(",39,0,10,0", ",lots,0,10,0")  # unitsInStock is INTEGER
    products.write_text("".join(lines), "utf-8")
    proc = run("ingest", "--mapping", str(source / "mapping.json"), "--out", str(out), ok=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr == f"error: {products}:2: column 'unitsInStock': 'lots' is not INTEGER\n"
    assert sorted(p.name for p in (out / "property_graph").iterdir()) == before  # the old store, tables and all
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kg", "nw"]
