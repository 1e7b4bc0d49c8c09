"""The HTTP API on a tiny KG with the scripted LLM (plumbing only: no accuracy is claimed from it)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import pytest

pytest.importorskip("fastapi", reason="the service needs kgrag[serve]")


from kgrag.errors import LLMError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import registry
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.service import ServiceConfig, create_app
from kgrag.service.limits import ConcurrencyLimitedLLM
from kgrag.types import Answer
from tests.conftest import MOVIES, local_client

KAPING_STEPS = ["link", "candidates", "rank", "answer"]


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("svc") / "kg"))


def scripted() -> ScriptedLLM:
    return ScriptedLLM(
        {
            "rules": [
                {"prompt": "kaping_answer", "match": "Heat directed by", "response": "<answers>Michael Mann</answers>"}
            ],
            "default": "<answers>Ridley Scott</answers>",
        }
    )


class SlowLLM(LLM):
    """Sleeps, and records how many calls overlap (for the timeout and the concurrency cap)."""

    model_id = "slow"

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.active = 0
        self.peak = 0
        self.calls = 0
        self._lock = threading.Lock()

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        with self._lock:
            self.calls += 1
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(self.seconds)
        with self._lock:
            self.active -= 1
        return Generation("<answers>Michael Mann</answers>", 10, 3)


@pytest.fixture
def client(kg):
    with local_client(create_app(kg, ServiceConfig(), llm=scripted())) as c:
        yield c


def sse_events(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_health_kg_schema_and_methods(client, kg):
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["entities"] == kg.num_entities and health["llm"]["loaded"]
    info = client.get("/kg").json()
    rels = {r["name"]: r["triples"] for r in info["schema"]["relations"]}
    assert rels == {"starred_actors": 5, "directed_by": 4, "release_year": 2, "written_by": 1}
    assert info["stats"]["triples"] == 12
    methods = client.get("/methods").json()
    assert [m["name"] for m in methods["methods"]] == list(registry)  # whatever is registered, in order
    kaping = next(m for m in methods["methods"] if m["name"] == "kaping")
    assert kaping["settings"]["top_k"] == 60 and kaping["needs_llm"]


def test_ask_returns_the_typed_answer(client):
    resp = client.post("/ask", json={"question": "who directed Heat", "method": "kaping", "topic_entities": ["Heat"]})
    assert resp.status_code == 200, resp.text
    answer = Answer.model_validate(resp.json())
    assert answer.answers == ["Michael Mann"] and answer.grounded and answer.error is None
    assert [s.name for s in answer.trace] == KAPING_STEPS
    assert answer.usage.llm_calls == 1 and answer.evidence[0].text == "Heat directed by Michael Mann"


def test_stream_sends_each_step_before_the_answer(client):
    resp = client.post("/ask/stream", json={"question": "who directed Heat", "method": "kaping"})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
    events = sse_events(resp.text)
    kinds = [kind for kind, _ in events]
    assert kinds == ["start", "step", "step", "step", "step", "answer"]
    assert [data["name"] for kind, data in events if kind == "step"] == KAPING_STEPS
    assert [data["index"] for kind, data in events if kind == "step"] == [0, 1, 2, 3]
    answer = Answer.model_validate(events[-1][1])
    assert answer.answers == ["Michael Mann"] and [s.name for s in answer.trace] == KAPING_STEPS


def test_retrieve_needs_no_llm(kg):
    app = create_app(kg, ServiceConfig(llm="scripted:/nonexistent/script.json"))
    with local_client(app) as c:
        resp = c.post("/retrieve", json={"question": "who directed Heat", "method": "kaping", "settings": {"top_k": 3}})
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert len(body["evidence"]) == 3 and body["evidence"][0]["text"] == "Heat directed by Michael Mann"
        assert [s["name"] for s in body["trace"]] == ["link", "candidates", "rank"]
        assert not c.get("/health").json()["llm"]["loaded"]
        # the LLM cannot load: asking is 503 with the reason, retrieval keeps working
        resp = c.post("/ask", json={"question": "who directed Heat"})
        assert resp.status_code == 503 and "no such script file" in resp.json()["error"]
        assert c.post("/retrieve", json={"question": "who directed Alien"}).status_code == 200


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ('{"question": ', 400, "malformed JSON"),
        ("[1, 2]", 422, "valid dictionary"),
        ('{"question": ""}', 422, "question is empty"),
        ('{"question": "   \\n "}', 422, "question is empty"),
        (json.dumps({"question": "x" * 1001}), 422, "limit is 1000"),
        ('{"question": 42}', 422, "question"),
        ('{"question": "who directed Heat", "method": "nope"}', 422, "unknown method 'nope'; choose one of"),
        ('{"question": "who directed Heat", "topic_entities": ["Haet"]}', 422, "did you mean 'Heat'"),
        ('{"question": "who directed Heat", "settings": {"top_kk": 3}}', 422, "top_kk"),
        ('{"question": "who directed Heat", "settings": {"top_k": "many"}}', 422, "top_k"),
        ('{"question": "who directed Heat", "colour": "red"}', 422, "colour"),
        (json.dumps({"question": "q", "topic_entities": ["Heat"] * 11}), 422, "limit is 10"),
    ],
)
def test_bad_input_is_a_4xx_with_a_message(client, body, status, message):
    for path in ("/ask", "/ask/stream", "/retrieve"):
        resp = client.post(path, content=body, headers={"content-type": "application/json"})
        assert resp.status_code == status, (path, resp.text)
        assert message in resp.json()["error"], (path, resp.json())
    assert client.get("/health").status_code == 200  # still serving
    assert client.post("/ask", json={"question": "who directed Heat"}).json()["answers"] == ["Michael Mann"]


def test_oversized_body_is_refused_before_parsing(client):
    resp = client.post("/ask", content=b"{" + b" " * 70_000 + b"}", headers={"content-type": "application/json"})
    assert resp.status_code == 413 and "request body" in resp.json()["error"]


def test_entities_autocomplete_and_neighbors(client):
    body = client.get("/entities", params={"q": "mich"}).json()
    assert body["entities"][0] == {"name": "Michael Mann", "degree": 3, "score": 0.3333, "match": "prefix"}
    assert client.get("/entities", params={"q": "crowe"}).json()["entities"][0]["name"] == "Russell Crowe"
    assert client.get("/entities", params={"q": "Gladiatr"}).json()["entities"][0]["match"] == "fuzzy"
    assert client.get("/entities", params={"q": "qqqzzz"}).json()["entities"] == []
    tail = client.get("/entities", params={"q": "who directed the movie Glad", "tail": 1}).json()
    assert tail["start"] == len("who directed the movie ") and tail["entities"][0]["name"] == "Gladiator"
    assert client.get("/entities", params={"q": ""}).status_code == 422
    assert client.get("/entities", params={"q": "x", "k": 0}).status_code == 422
    hood = client.get("/neighbors", params={"entity": "Alien"}).json()
    assert sorted(e["text"] for e in hood["evidence"]) == ["Alien directed by Ridley Scott", "Alien release year 1979"]
    resp = client.get("/neighbors", params={"entity": "Alein"})
    assert resp.status_code == 404 and "did you mean 'Alien'" in resp.json()["error"]


def test_page_and_vendored_graph_library(client):
    page = client.get("/")
    assert page.status_code == 200 and "/static/vendor/cytoscape.min.js" in page.text
    lib = client.get("/static/vendor/cytoscape.min.js")
    assert lib.status_code == 200 and len(lib.content) > 100_000
    assert client.get("/static/app.js").status_code == 200


def test_method_instances_are_reused(kg):
    app = create_app(kg, ServiceConfig(), llm=scripted())
    ask = {"question": "who directed Heat", "method": "kaping"}
    with local_client(app) as c:
        for _ in range(3):
            assert c.post("/ask", json=ask).status_code == 200
        assert c.post("/ask", json={**ask, "settings": {"top_k": 2}}).status_code == 200
        assert c.post("/retrieve", json=ask).status_code == 200
        assert c.post("/retrieve", json={"question": "who directed Heat"}).status_code == 200  # the default: auto
        keys = list(app.state.kgrag._methods)
    assert [(k[0], k[2]) for k in keys] == [("kaping", True), ("kaping", True), ("kaping", False), ("auto", False)]


def test_unexpected_method_error_is_500_and_the_server_goes_on(client, monkeypatch):
    from kgrag.methods.baselines import Kaping

    def boom(self, question, topic_entities=None):
        raise RuntimeError("boom")

    monkeypatch.setattr(Kaping, "retrieve", boom)
    ask = {"question": "who directed Heat", "method": "kaping"}
    resp = client.post("/retrieve", json=ask)
    assert resp.status_code == 500 and "RuntimeError: boom" in resp.json()["error"]
    monkeypatch.undo()
    assert client.post("/retrieve", json=ask).status_code == 200


def test_request_timeout_is_504_and_stream_ends_with_an_error(kg):
    app = create_app(kg, ServiceConfig(request_timeout=0.3), llm=SlowLLM(1.0))
    with local_client(app) as c:
        resp = c.post("/ask", json={"question": "who directed Heat"})
        assert resp.status_code == 504 and "0.3 s request timeout" in resp.json()["error"]
        events = sse_events(c.post("/ask/stream", json={"question": "who directed Heat"}).text)
        assert events[0][0] == "start" and events[-1] == (
            "error",
            {"status": 504, "error": "no result within the 0.3 s request timeout"},
        )
        assert c.get("/health").status_code == 200


def test_timed_out_work_stops_at_its_next_llm_call(kg):
    # the paper's decomposition call first, so that a finished request takes at least two calls
    body = {"question": "who directed Heat", "method": "decompose", "settings": {"plan_answers": False}}
    patient = SlowLLM(0.3)
    with local_client(create_app(kg, ServiceConfig(request_timeout=30), llm=patient)) as c:
        assert c.post("/ask", json=body).status_code == 200
    assert patient.calls >= 2  # decompose: decomposition, then at least one answer call
    slow = SlowLLM(0.6)
    with local_client(create_app(kg, ServiceConfig(request_timeout=0.2), llm=slow)) as c:
        assert c.post("/ask", json=body).status_code == 504
        time.sleep(1.5)  # the first call ends at 0.6 s; the worker then stops instead of calling again
        assert slow.calls == 1 and slow.active == 0
        assert c.get("/health").status_code == 200


@pytest.mark.parametrize("limit", [1, 2])
def test_concurrent_llm_calls_are_capped(kg, limit):
    llm = SlowLLM(0.2)
    app = create_app(kg, ServiceConfig(max_llm_calls=limit, workers=4), llm=llm)

    async def ask_four() -> list[int]:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as c:
                resps = await asyncio.gather(
                    *(c.post("/ask", json={"question": f"who directed Heat {i}"}) for i in range(4))
                )
        return [r.status_code for r in resps]

    assert asyncio.run(ask_four()) == [200] * 4
    assert llm.peak == limit


def test_limited_llm_waits_then_gives_up():
    inner = SlowLLM(0.3)
    llm = ConcurrencyLimitedLLM(inner, 1, wait=0.05)
    errors: list[str] = []

    def call() -> None:
        try:
            llm.generate("hi")
        except LLMError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inner.peak == 1 and len(errors) == 1 and "stayed busy" in errors[0]
    with pytest.raises(ValueError):
        ConcurrencyLimitedLLM(inner, 0)


def test_every_registered_method_streams_its_trace(kg):
    """Whatever methods are registered, the page can run them: steps stream, then the typed answer."""
    llm = ScriptedLLM({"default": "<answers>Michael Mann</answers>"})
    with local_client(create_app(kg, ServiceConfig(), llm=llm)) as c:
        for name in registry:
            events = sse_events(c.post("/ask/stream", json={"question": "who directed Heat", "method": name}).text)
            kinds = [kind for kind, _ in events]
            assert kinds[0] == "start" and kinds[-1] == "answer", (name, events[-1])
            answer = Answer.model_validate(events[-1][1])
            streamed = [data["name"] for kind, data in events if kind == "step"]
            # every step of the trace was streamed, in order (a method running another inside streams those too)
            remaining = iter(streamed)
            assert answer.method == name and all(s.name in remaining for s in answer.trace), (name, streamed)
            assert c.post("/retrieve", json={"question": "who directed Heat", "method": name}).status_code == 200
