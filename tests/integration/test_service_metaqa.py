"""The service on the real MetaQA demo KG: autocomplete over 43k names, kaping retrieval without an LLM
(real ONNX embedder), and `kgrag serve` as a real server process."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

pytest.importorskip("fastapi", reason="the service needs kgrag[serve]")

from kgrag.graph.store import load_kg
from kgrag.service import ServiceConfig, create_app
from kgrag.service.process import running_server
from tests.conftest import local_client, run_cli

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def metaqa_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("metaqa") / "kg"
    run_cli("ingest", "--demo", "metaqa", "--out", str(out))
    return out


@pytest.fixture(scope="module")
def client(metaqa_dir):
    # no LLM is ever loaded: only /entities and /retrieve are used
    with local_client(create_app(load_kg(metaqa_dir), ServiceConfig(llm="scripted:/nonexistent.json"))) as c:
        yield c


def test_kg_schema_is_the_metaqa_relations(client):
    info = client.get("/kg").json()
    rels = {r["name"]: r["triples"] for r in info["schema"]["relations"]}
    assert len(rels) == 9 and rels["starred_actors"] == 33_718 and rels["has_imdb_votes"] == 119
    assert info["stats"]["entities"] == 43_234


def test_entity_autocomplete_on_metaqa(client):
    names = [e["name"] for e in client.get("/entities", params={"q": "kism"}).json()["entities"]]
    assert names[0] == "Kismet"
    michael = client.get("/entities", params={"q": "michael m", "k": 5}).json()["entities"]
    assert michael[0]["name"] == "Michael Mann" and all(e["name"].lower().startswith("michael m") for e in michael)
    assert client.get("/entities", params={"q": "pacino"}).json()["entities"][0]["name"] == "Al Pacino"
    assert client.get("/entities", params={"q": "Kismett"}).json()["entities"][0]["name"] == "Kismet"  # typo
    tail = client.get("/entities", params={"q": "what films did Temuera Mor", "tail": 1}).json()
    assert tail["entities"][0]["name"] == "Temuera Morrison" and tail["start"] == len("what films did ")


def test_kaping_retrieves_without_an_llm(client):
    resp = client.post("/retrieve", json={"question": "who directed Kismet", "method": "kaping"})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    texts = [e["text"] for e in body["evidence"]]
    assert "Kismet directed by William Dieterle" in texts and len(texts) == 60  # top_k
    assert all(e["triples"] and e["source"] == "kaping" for e in body["evidence"])
    assert body["trace"][0]["outputs"]["entities"] == ["Kismet"]
    resp = client.post("/retrieve", json={"question": "who directed Kismet", "topic_entities": ["Kismit"]})
    assert resp.status_code == 422 and "unknown entity 'Kismit'" in resp.json()["error"]
    assert not client.get("/health").json()["llm"]["loaded"]


def _post(url: str, body: bytes) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_kgrag_serve_answers_over_http_and_survives_bad_input(metaqa_dir, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "<answers>William Dieterle</answers>"}), "utf-8")
    with running_server(metaqa_dir, "--llm", f"scripted:{script}") as url:
        assert url.startswith("http://127.0.0.1:")
        assert _post(url + "/ask", b'{"question": ')[0] == 400
        assert _post(url + "/ask", b'{"question": "who directed Kismet", "method": "frobnicate"}')[0] == 422
        status, answer = _post(url + "/ask", json.dumps({"question": "who directed Kismet"}).encode())
        assert status == 200 and answer["answers"] == ["William Dieterle"] and answer["grounded"]
        assert answer["usage"]["llm_calls"] == 1


def test_kgrag_serve_reports_bad_arguments(metaqa_dir, tmp_path):
    proc = run_cli("serve", str(tmp_path / "missing"), ok=False)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")
    proc = run_cli("serve", str(metaqa_dir), "--method", "frobnicate", ok=False)
    assert proc.returncode == 2 and "unknown method 'frobnicate'" in proc.stderr
