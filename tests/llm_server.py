"""A real OpenAI-compatible HTTP server on 127.0.0.1 that misbehaves on purpose, for LLM failure tests.

Each request is answered by the next *reply* of the script (the last one repeats), so a test can say
"429 twice, then a good answer". A reply is a function of the request handler; the helpers below build the
ones the failure cases need (status codes, garbage bodies, hangs, slow drips, huge bodies).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[BaseHTTPRequestHandler, threading.Event], None]


def completion(content: Any = "<answers>\nMichael Mann\n</answers>", **overrides: Any) -> dict[str, Any]:
    """A chat completion body with ``content`` (any JSON value) as the first choice's message content."""
    body: dict[str, Any] = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }
    body.update(overrides)
    return body


def send(
    status: int = 200,
    body: bytes | str | dict | list = b"",
    headers: dict[str, str] | None = None,
    *,
    content_type: str = "application/json",
) -> Reply:
    """Reply with ``status``, ``body`` (dicts/lists as JSON) and extra ``headers``."""
    data = json.dumps(body).encode() if isinstance(body, dict | list) else body
    data = data.encode() if isinstance(data, str) else data

    def reply(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)

    return reply


def ok(content: Any = "<answers>\nMichael Mann\n</answers>") -> Reply:
    return send(200, completion(content))


def hang(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
    """Read the request, then never answer (until the server shuts down)."""
    stop.wait(60)


def drip(every: float = 0.2) -> Reply:
    """Send the headers at once, then one body byte every ``every`` seconds (each read is quick, the whole
    reply never ends): a per-read timeout alone does not bound it."""

    def reply(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        data = json.dumps(completion()).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data) * 100))
        handler.end_headers()
        for i in range(len(data) * 100):
            if stop.wait(every):
                return
            handler.wfile.write(data[i % len(data) : i % len(data) + 1])
            handler.wfile.flush()

    return reply


def drip_headers(every: float = 0.1) -> Reply:
    """Start the status line and a header, then add one header byte every ``every`` seconds: the HTTP library
    never gets to the body, and each of its reads is quick."""

    def reply(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        handler.wfile.flush()
        while not stop.wait(every):
            handler.wfile.write(b"x")
            handler.wfile.flush()

    return reply


def huge(megabytes: int, *, declare_length: bool) -> Reply:
    """A 200 whose body is ``megabytes`` MB of JSON-looking padding (with or without a Content-Length)."""

    def reply(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        chunk = b" " * (1 << 20)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        if declare_length:
            handler.send_header("Content-Length", str(megabytes << 20))
        else:
            handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for _ in range(megabytes):
            if stop.is_set():
                return
            if declare_length:
                handler.wfile.write(chunk)
            else:
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        if not declare_length:
            handler.wfile.write(b"0\r\n\r\n")

    return reply


@dataclass
class FakeLLMServer:
    """The running server: ``url`` (ends in /v1), the ``script`` and when each request arrived."""

    url: str
    script: list[Reply]
    arrivals: list[float] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return len(self.arrivals)


@contextmanager
def fake_llm_server(*script: Reply) -> Iterator[FakeLLMServer]:
    """Serve ``script`` on a free 127.0.0.1 port for the duration of the block."""
    stop = threading.Event()
    state = FakeLLMServer("", list(script))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            index = len(state.arrivals)
            state.arrivals.append(time.monotonic())
            reply = state.script[min(index, len(state.script) - 1)]
            with suppress(BrokenPipeError, ConnectionResetError):  # the client gave up reading: expected here
                reply(self, stop)
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def refused_url() -> str:
    """A 127.0.0.1 URL where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
