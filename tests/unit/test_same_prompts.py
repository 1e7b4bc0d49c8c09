"""`kgrag ask`, `kgrag eval` and the service send the LLM the same prompts for the same question and settings.

Each path runs with its own response cache; the cache is keyed by the model, the messages and the decoding
parameters, so equal key sets mean byte-identical prompts. (A user once got different answers from `ask` and
`eval` for one question: the two built different prompts.)
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods import registry
from kgrag.service.app import create_app
from kgrag.service.state import ServiceConfig
from tests.conftest import MOVIES, local_client, run_cli

QUESTION = "Who directed Heat?"
SHIPPED = [n for n in registry if get_method(n).__module__.startswith("kgrag.") and get_method(n).needs_llm]


def _keys(path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT key FROM responses")}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("same")
    store = KnowledgeGraph.from_triples(MOVIES).save(tmp / "kg")
    script = tmp / "llm.json"
    script.write_text(json.dumps({"default": "<answers>\nMichael Mann\n</answers>"}))
    questions = tmp / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": QUESTION, "answers": ["Michael Mann"]}) + "\n")
    return tmp, store, f"scripted:{script}", questions


@pytest.mark.parametrize("name", SHIPPED)
def test_ask_eval_and_the_service_send_the_same_prompts(setup, name):
    tmp, store, llm, questions = setup
    caches = {path: tmp / f"{name}.{path}.sqlite" for path in ("ask", "eval", "service")}
    run_cli("ask", str(store), QUESTION, "-m", name, "--llm", llm, "--cache", str(caches["ask"]))
    run_cli(
        "eval", str(store), "-d", f"jsonl:{questions}", "-m", name, "--llm", llm,
        "--cache", str(caches["eval"]), "--out", str(tmp / f"{name}.runs"),
    )  # fmt: skip
    app = create_app(KnowledgeGraph.load(store), ServiceConfig(llm=llm, cache=str(caches["service"])))
    with local_client(app) as client:
        assert client.post("/ask", json={"question": QUESTION, "method": name}).status_code == 200
    ask, evaluated, served = (_keys(caches[p]) for p in ("ask", "eval", "service"))
    assert ask, f"{name} made no LLM call"
    assert ask == evaluated == served, name
