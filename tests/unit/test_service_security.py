"""Security and failure handling of the HTTP API (issue #22): what a remote client must not be able to do.

The body limit and the Host check are tested against a real uvicorn server on 127.0.0.1 (the checks live
in front of FastAPI, where the raw stream and headers arrive); the rest through FastAPI's TestClient.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the service needs kgrag[serve]")

import uvicorn
from fastapi import FastAPI

from kgrag.errors import LLMError, LLMUnavailableError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.settings import ClientRange, marker
from kgrag.models.embeddings.base import Embedder
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.service import ServiceConfig, create_app
from kgrag.service.limits import LLMBusyError
from kgrag.service.process import running_server
from tests.conftest import MOVIES, local_client

LLM_SCRIPT = {"default": "<answers>Michael Mann</answers>"}


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> KnowledgeGraph:
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("sec") / "kg"))


class LiveServer:
    """A uvicorn server for ``app`` on 127.0.0.1 (free port) in a thread, as ``kgrag serve`` runs it."""

    def __init__(self, app: FastAPI) -> None:
        self.sock = socket.socket(socket.AF_INET)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)


def read_response(conn: socket.socket) -> tuple[int, bytes]:
    """Status and raw bytes of one HTTP/1.1 response (read until the server closes or the body is complete)."""
    data = b""
    while True:
        try:
            chunk = conn.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        length = [int(v) for k, v in _headers(head) if k == "content-length"]
        if sep and length and len(body) >= length[0]:
            break
    return int(data.split(b" ", 2)[1]), data


def _headers(head: bytes) -> Iterator[tuple[str, str]]:
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.decode("latin-1").partition(":")
        yield key.strip().lower(), value.strip()


def chunked(body: bytes, size: int) -> bytes:
    """``body`` in HTTP/1.1 chunked framing, ``size`` bytes a chunk, with the closing empty chunk."""
    parts = (body[i : i + size] for i in range(0, len(body), size))
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"


def raw_request(server: LiveServer, head: str, body: bytes = b"") -> tuple[int, bytes]:
    with server.connect() as conn:
        conn.sendall(head.encode("latin-1") + b"\r\n" + body)
        return read_response(conn)


@pytest.fixture(scope="module")
def live(kg) -> Iterator[LiveServer]:
    with LiveServer(create_app(kg, ServiceConfig(), llm=ScriptedLLM(LLM_SCRIPT))) as server:
        yield server


# ---------------------------------------------------------------------------------------------- body limit
def test_a_chunked_body_is_cut_off_at_the_limit(live):
    """No Content-Length: the limit must hold on the stream itself, answered long before the client is done."""
    head = "POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
    chunk = b"%x\r\n%s\r\n" % (16384, b"x" * 16384)
    budget = 20 * 1024 * 1024  # what the client is willing to send; the old server read (and parsed) it all
    with live.connect() as conn:
        conn.sendall(head.encode() + b"\r\n" + b'4\r\n{"q:\r\n')
        sent = 0
        conn.setblocking(False)
        while sent < budget:
            try:
                if conn.recv(1, socket.MSG_PEEK):
                    break  # the server answered before the body ended
            except BlockingIOError:
                pass
            try:
                sent += conn.send(chunk)
            except BlockingIOError:
                time.sleep(0.001)
            except (BrokenPipeError, ConnectionResetError):
                break
        else:
            conn.sendall(b"0\r\n\r\n")
        conn.setblocking(True)
        conn.settimeout(10)
        status, raw = read_response(conn)
    assert status == 413 and b"request body over 65536 bytes" in raw, raw[:300]
    assert sent < budget / 4, f"the server read {sent} bytes before refusing"
    assert raw_request(live, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n")[0] == 200


def test_a_declared_oversized_body_is_refused_before_it_is_sent(live):
    head = "POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n"
    status, raw = raw_request(live, head, b'{"question": ')
    assert status == 413, raw[:300]


def test_a_body_under_the_limit_still_works_when_chunked(live):
    body = b'{"question": "who directed Heat", "method": "kaping", "topic_entities": ["Heat"]}'
    head = "POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
    status, raw = raw_request(live, head + "Connection: close\r\n", chunked(body, 10))
    assert status == 200 and b"Michael Mann" in raw, raw[:500]


# ---------------------------------------------------------------------------------------------- Host header
@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:{port}", "localhost", "LOCALHOST:{port}", "[::1]:{port}"])
def test_local_host_names_are_served(live, host):
    head = f"GET /health HTTP/1.1\r\nHost: {host.format(port=live.port)}\r\nConnection: close\r\n"
    assert raw_request(live, head)[0] == 200


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example", "localhost.evil.example:80", "[::2]"]
)
def test_a_foreign_host_header_is_refused(live, host):
    """DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 must not reach the API."""
    for path in ("GET /health", "GET /entities?q=Heat", "POST /ask"):
        head = f"{path} HTTP/1.1\r\nHost: {host.format(port=live.port)}\r\nConnection: close\r\n"
        body = b'{"question": "who directed Heat"}' if path.startswith("POST") else b""
        extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" if body else ""
        status, raw = raw_request(live, head + extra, body)
        assert status == 421 and b"Host" in raw, (path, raw[:300])


def test_a_request_without_host_is_refused(live):
    assert raw_request(live, "GET /health HTTP/1.0\r\n")[0] == 421


def test_the_operator_allows_more_host_names(kg):
    config = ServiceConfig(allowed_hosts=("kg.example.org",), bind_host="10.1.2.3")
    with LiveServer(create_app(kg, config, llm=ScriptedLLM(LLM_SCRIPT))) as server:
        for host, status in [("kg.example.org", 200), ("kg.example.org:8443", 200), ("10.1.2.3:80", 200),
                             ("localhost", 200), ("other.example.org", 421)]:  # fmt: skip
            assert raw_request(server, f"GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n")[0] == status


def test_the_printed_url_of_a_wildcard_bind_is_served():
    """`kgrag serve --host 0.0.0.0` prints http://0.0.0.0:PORT/; a browser opening it sends that Host."""
    from kgrag.service.guards import allowed_host_names, host_name

    assert {"0.0.0.0", "localhost"} <= allowed_host_names("0.0.0.0")
    assert host_name("[::]:8000") in allowed_host_names("::") and "evil.example" not in allowed_host_names("::")


def test_kgrag_serve_takes_allowed_hosts(kg):
    """The CLI wires --host and --allowed-host into the check (a real `kgrag serve` process)."""
    with running_server(
        kg.store_path, "--llm", "scripted:/nonexistent.json", "--allowed-host", "kg.example.org"
    ) as url:
        port = int(url.rsplit(":", 1)[1])
        for host, status in [("kg.example.org", 200), (f"127.0.0.1:{port}", 200), ("evil.example", 421)]:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
                conn.sendall(f"GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
                assert read_response(conn)[0] == status, host


# ---------------------------------------------------------------------------------------------- settings
@pytest.mark.parametrize("name", ["kaping", "decompose", "frag", "byokg-scoring"])
def test_an_embedder_setting_is_the_config_field_not_an_embedder_object(kg, name):
    """``--set embedder=static`` (CLI, or the operator's serve settings) was taken as the constructor's embedder
    *object*, so the first retrieval called ``"static".encode`` (the service answered 500)."""
    from kgrag.methods import get
    from kgrag.models.embeddings.base import Embedder

    method = get(name)(kg, llm=None, embedder="static")
    assert method.config.embedder == "static" and isinstance(method.text_embedder, Embedder)
    assert method.retrieve("who directed Heat", ["Heat"]) is not None


CASES = json.loads((Path(__file__).parents[1] / "fixtures" / "attacks" / "service" / "cases.json").read_text())
QUESTION_PATHS = ("/ask", "/retrieve", "/ask/stream")


@pytest.fixture(scope="module")
def traps(tmp_path_factory) -> dict[str, Path]:
    """A canary file and a FIFO a path setting could be pointed at, in a directory of their own."""
    base = tmp_path_factory.mktemp("traps")
    canary = base / "canary.npz"
    canary.write_bytes(b"not a router")
    os.mkfifo(base / "fifo")
    return {"tmpdir": base, "canary": canary, "fifo": base / "fifo"}


@pytest.fixture(scope="module")
def client(kg) -> Iterator[Any]:
    with local_client(create_app(kg, ServiceConfig(request_timeout=20), llm=ScriptedLLM(LLM_SCRIPT))) as c:
        yield c


def question(case: dict, traps: dict[str, Path]) -> dict:
    """The request body of a settings case."""
    return {"question": "who directed Heat", "method": case["method"], "settings": fill(case["settings"], traps)}


def fill(value: Any, traps: dict[str, Path]) -> Any:
    """The case's settings with {canary}, {fifo} and {tmpdir} replaced by the trap paths."""
    if isinstance(value, str):
        return value.format(**{k: str(v) for k, v in traps.items()})
    if isinstance(value, dict):
        return {k: fill(v, traps) for k, v in value.items()}
    return value


@pytest.mark.parametrize("case", CASES["settings"], ids=lambda c: c["name"])
def test_a_client_setting_attack_is_refused_with_its_name(client, traps, case):
    for path in QUESTION_PATHS:
        resp = client.post(path, json=question(case, traps))
        assert resp.status_code == case["status"], (path, resp.text[:300])
        assert case["message"] in resp.json()["error"], (path, resp.json())


@pytest.mark.parametrize("case", CASES["raw_bodies"], ids=lambda c: c["name"])
def test_a_raw_body_attack_is_refused(client, case):
    for path in QUESTION_PATHS:
        resp = client.post(path, content=case["body"], headers={"content-type": "application/json"})
        assert resp.status_code == case["status"], (path, resp.text[:300])
        assert case["message"] in resp.json()["error"], (path, resp.json())


def send_case(server: LiveServer, case: dict) -> int:
    """Send one raw HTTP case (a declared body of ``body_bytes``, chunked or not); the response's status."""
    body = case.get("body", "x" * case.get("body_bytes", 0)).encode()
    if case.get("chunked"):
        body = chunked(body, 8192)
    with server.connect() as conn:
        # the server may answer and close before the body is sent
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(case["head"].format(port=server.port).encode() + b"Connection: close\r\n\r\n" + body)
        return read_response(conn)[0]


@pytest.mark.parametrize("case", CASES["http"], ids=lambda c: c["name"])
def test_an_http_level_attack_is_refused(live, case):
    assert send_case(live, case) == case["status"]
    assert raw_request(live, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n")[0] == 200


def test_no_attack_read_or_wrote_a_file(kg, traps):
    """Every case again, watching the trap directory: nothing opened the canary (atime) or the FIFO (a reader
    would block the worker), changed it (mtime) or created files beside it."""
    canary = traps["canary"]
    os.utime(canary, ns=(1_000_000_000_000_000_000, 1_500_000_000_000_000_000))  # atime < mtime: a read updates it
    before = {p.name: p.stat().st_mtime_ns for p in traps["tmpdir"].iterdir()}
    atime = canary.stat().st_atime_ns
    start = time.monotonic()
    with local_client(create_app(kg, ServiceConfig(request_timeout=5), llm=ScriptedLLM(LLM_SCRIPT))) as c:
        for case in CASES["settings"]:
            for path in QUESTION_PATHS:
                assert c.post(path, json=question(case, traps)).status_code == case["status"]
        assert c.get("/health").json()["in_flight"] == 0  # no worker is stuck on the FIFO
    assert time.monotonic() - start < 30
    assert canary.stat().st_atime_ns == atime and canary.read_bytes() == b"not a router"
    assert {p.name: p.stat().st_mtime_ns for p in traps["tmpdir"].iterdir()} == before


NAMES_SOMETHING = re.compile(r"embed|router|pattern|backend|rerank|model|path|file|dir|url|uri|host|llm|cache|fallback")


def every_setting() -> Iterator[tuple[str, str, Any]]:
    from kgrag.methods import get, registry

    for name in registry:
        for field, info in get(name).Config.model_fields.items():
            yield name, field, info


@pytest.mark.parametrize(
    ("method", "field", "info"), list(every_setting()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_every_method_setting_says_what_a_client_may_do_with_it(method, field, info):
    """A new setting cannot slip through: a number needs client bounds, text must be marked operator-only or
    bounded free text, and text whose name or default looks like it names a file, model or host (a non-empty
    default is a named spec: "builtin", "minilm", "ladybug") must be operator-only."""
    from kgrag.methods.settings import ClientRange, ClientText, OperatorOnly, marker
    from kgrag.service.settings import value_kind

    kind, mark = value_kind(info.annotation), marker(info)
    if kind == "number":
        assert isinstance(mark, ClientRange), f"{method}.{field}: a number needs Annotated[..., ClientRange(lo, hi)]"
        assert mark.low <= (info.default if info.default is not None else mark.low) <= mark.high
    elif kind == "text":
        assert isinstance(mark, OperatorOnly | ClientText), f"{method}.{field}: text needs a marker"
        if NAMES_SOMETHING.search(field) or (isinstance(info.default, str) and info.default):
            assert isinstance(mark, OperatorOnly), f"{method}.{field} looks like it names a file, model or host"
    elif kind == "other":
        assert isinstance(mark, OperatorOnly), f"{method}.{field}: {info.annotation} is no plain JSON value"


def test_every_method_has_its_defaults_within_client_bounds_and_refuses_no_default():
    """The web page sends a method's defaults back as settings (GET /methods): they must all pass."""
    from kgrag.methods import get, registry
    from kgrag.service.settings import client_may_set, client_settings

    for name in registry:
        cls = get(name)
        defaults = {k: i.default for k, i in cls.Config.model_fields.items() if client_may_set(i) and i.default}
        assert client_settings(cls, defaults, {}) == defaults


def test_the_operator_sets_what_clients_may_not(kg):
    """`kgrag serve --set embedder=static` reaches every method with that setting; a client adds its own."""
    app = create_app(kg, ServiceConfig(settings={"embedder": "static", "top_k": 2}), llm=ScriptedLLM(LLM_SCRIPT))
    kaping = {"question": "who directed Heat", "method": "kaping"}
    with local_client(app) as c:
        assert len(c.post("/retrieve", json=kaping).json()["evidence"]) == 2
        resp = c.post("/retrieve", json={**kaping, "settings": {"top_k": 3}})
        assert len(resp.json()["evidence"]) == 3
        assert c.post("/retrieve", json={"question": "who directed Heat", "method": "decompose"}).status_code == 200
        assert c.post("/retrieve", json={**kaping, "settings": {"embedder": "minilm"}}).status_code == 403
        assert c.post("/retrieve", json={"question": "who directed Heat"}).status_code == 200  # auto, the default
        methods = {m["name"]: m for m in c.get("/methods").json()["methods"]}
        assert (
            "top_k" in methods["kaping"]["client_settings"] and "embedder" not in methods["kaping"]["client_settings"]
        )
    used = {key[0]: method for key, method in app.state.kgrag._methods.items()}
    assert used["kaping"].config.embedder == used["decompose"].config.embedder == "static"
    # auto passes the operator's settings on to the methods it asks
    assert used["auto"]._make("kaping").config.top_k == 2
    assert used["auto"]._make("frag").config.embedder == used["auto"]._make("kaping").config.embedder == "static"


@pytest.mark.parametrize(
    ("settings", "message"),
    [({"top_kk": 3}, "no method has the setting(s) top_kk"), ({"top_k": "many"}, "method 'decompose'")],
)
def test_a_bad_operator_setting_fails_at_startup(kg, settings, message):
    from kgrag.methods.base import MethodConfigError

    with pytest.raises(MethodConfigError, match=re.escape(message)):
        create_app(kg, ServiceConfig(settings=settings))


def test_kgrag_serve_takes_operator_settings(kg):
    with running_server(kg.store_path, "--llm", "scripted:/nonexistent.json", "--set", "top_k=1") as url:
        req = urllib.request.Request(
            url + "/retrieve",
            json.dumps({"question": "who directed Heat", "method": "kaping"}).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert len(json.loads(resp.read())["evidence"]) == 1


# ---------------------------------------------------------------------------------------------- LLM failures
class FailingLLM(LLM):
    """An LLM whose every call raises ``error`` (a backend that is down, busy or broken)."""

    model_id = "failing"

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        raise self.error


def assert_llm_down(llm: LLM, kg: KnowledgeGraph, message: str) -> None:
    """/ask and /ask/stream report 503 with the reason as JSON; /retrieve (no LLM) still answers."""
    with local_client(create_app(kg, ServiceConfig(), llm=llm)) as c:
        resp = c.post("/ask", json={"question": "who directed Heat"})
        assert resp.status_code == 503 and message in resp.json()["error"], resp.text
        assert resp.json()["error"].startswith("the LLM is not available")
        stream = c.post("/ask/stream", json={"question": "who directed Heat"}).text
        last = stream.strip().split("\n\n")[-1]
        assert last.startswith("event: error") and '"status": 503' in last and message in last, last
        assert c.post("/retrieve", json={"question": "who directed Heat"}).status_code == 200


@pytest.mark.parametrize(
    "error",
    [LLMUnavailableError("127.0.0.1:9 did not answer"), LLMError("context window exceeded"), LLMBusyError("busy")],
    ids=lambda e: type(e).__name__,
)
def test_an_llm_error_is_503(kg, error):
    """The method turned the failure into an answer with ``error`` and no answers, sent as 200."""
    assert_llm_down(FailingLLM(error), kg, str(error))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_openai_endpoint_is_503(kg):
    pytest.importorskip("openai")
    from kgrag.models.llm.openai_compat import OpenAICompatLLM

    port = closed_port()
    llm = OpenAICompatLLM("m", f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=5)
    assert_llm_down(llm, kg, f"127.0.0.1:{port}")  # the error names the endpoint, whatever the backend's wording


@pytest.fixture
def garbage_server() -> Iterator[http.server.ThreadingHTTPServer]:
    """An 'OpenAI-compatible' endpoint on 127.0.0.1 that answers every request with HTTP 200 and garbage."""

    class Garbage(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "17")
            self.end_headers()
            self.wfile.write(b"<html>oops</html>")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_an_llm_answering_garbage_is_503_not_500(kg, garbage_server):
    pytest.importorskip("openai")
    from kgrag.models.llm.openai_compat import OpenAICompatLLM

    port = garbage_server.server_port
    llm = OpenAICompatLLM("m", f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=5)
    assert_llm_down(llm, kg, f"127.0.0.1:{port}")  # the error names the endpoint, whatever the backend's wording


def bounded_settings(cls: type) -> Iterator[tuple[str, ClientRange, str]]:
    """(field, its ClientRange, "int" or "float") for every client-bounded number of ``cls.Config``."""
    for field, info in cls.Config.model_fields.items():
        mark = marker(info)
        if isinstance(mark, ClientRange):
            yield field, mark, "int" if "int" in str(info.annotation) else "float"


def at(mark: ClientRange, end: str, kind: str) -> int | float:
    value = getattr(mark, end)
    return int(value) if kind == "int" else float(value)


GIVEN = {"ultrag": {"query": '"Heat" -> directed_by'}}  # retrieval without an LLM needs the query


OTHER_END = {"low": "high", "high": "low"}


@pytest.mark.parametrize("end", ["low", "high"])
def test_every_client_bound_is_a_setting_the_method_runs_with(kg, end):
    """No bound a client may reach crashes the method: each number at one end with all others at the other
    end (PPR damping 1.0 with top_nodes=1 was a 500: PageRank needs damping < 1), and all at one end."""
    from kgrag.methods import get, registry

    with local_client(create_app(kg, ServiceConfig(), llm=ScriptedLLM(LLM_SCRIPT))) as c:
        for name in registry:
            bounds = list(bounded_settings(get(name)))
            same = {f: at(m, end, kind) for f, m, kind in bounds}
            others = {f: at(m, OTHER_END[end], kind) for f, m, kind in bounds}
            tries = [("/retrieve", {**others, f: v}) for f, v in same.items()] + [("/ask", same), ("/retrieve", same)]
            for path, settings in tries:
                body = {
                    "question": "who directed Heat",
                    "method": name,
                    "settings": {**GIVEN.get(name, {}), **settings},
                }
                resp = c.post(path, json=body)
                assert resp.status_code == 200, (name, path, settings, resp.text[:300])


# ---------------------------------------------------------------------------------------------- timeouts
class SlowEmbedder(Embedder):
    """Takes ``seconds`` per text and counts the texts it embedded (a cold MiniLM on a busy machine)."""

    id = "slow-test"
    dim = 8

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.texts = 0

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        time.sleep(self.seconds * len(texts))
        self.texts += len(texts)
        return np.ones((len(texts), self.dim), dtype=np.float32)


def test_timed_out_retrieval_stops_embedding(monkeypatch):
    """Ranking 3000 never-embedded triples takes 6 s here; the request gives up at 0.5 s and its worker must
    stop within a chunk instead of embedding all of them for nobody (it only stopped at the next step)."""
    triples = [("Hub", "links_to", f"Spoke {i}") for i in range(3000)]
    embedder = SlowEmbedder(0.002)
    monkeypatch.setattr("kgrag.methods.base.load_embedder", lambda spec: embedder)
    settings = {"hops": 1, "max_candidates": 3000}
    app = create_app(KnowledgeGraph.from_triples(triples), ServiceConfig(request_timeout=0.5), llm=None)
    with local_client(app) as c:
        body = {
            "question": "what does Hub link to",
            "method": "kaping",
            "topic_entities": ["Hub"],
            "settings": settings,
        }
        assert c.post("/retrieve", json=body).status_code == 504
        deadline = time.monotonic() + 10
        while app.state.kgrag.in_flight and time.monotonic() < deadline:
            time.sleep(0.05)
        stopped = time.monotonic() - (deadline - 10)
        assert app.state.kgrag.in_flight == 0 and embedder.texts < 1000, (embedder.texts, stopped)
        app.state.kgrag.config.request_timeout = 30
        assert c.post("/retrieve", json=body).status_code == 200  # finishes what the first one started
    assert embedder.texts <= 3000 + 2  # every triple embedded once (plus the question, twice)
