"""Security and failure handling of the HTTP API (issue #22): what a remote client must not be able to do.

The body limit and the Host check are tested against a real uvicorn server on 127.0.0.1 (the checks live
in front of FastAPI, where the raw stream and headers arrive); the rest through FastAPI's TestClient.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi", reason="the service needs kgrag[serve]")

import uvicorn
from fastapi import FastAPI

from kgrag.graph.kg import KnowledgeGraph
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.service import ServiceConfig, create_app
from kgrag.service.process import running_server
from tests.conftest import MOVIES

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
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + 10]), body[i : i + 10]) for i in range(0, len(body), 10))
    status, raw = raw_request(live, head + "Connection: close\r\n", chunks + b"0\r\n\r\n")
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
