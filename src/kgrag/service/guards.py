"""Checks in front of the app, on the raw ASGI request: the Host header and the body size.

They are plain ASGI middleware rather than FastAPI middleware because both must act before anything reads
the request: a FastAPI ``http`` middleware only sees headers, and the route's body parsing reads a chunked
body (no Content-Length) to its end however long it is — 200 MB were read and parsed before this existed.

The Host check stops DNS rebinding: a web page on ``evil.example`` whose name is re-pointed at 127.0.0.1 can
make the visitor's browser post to the local service, but the browser still sends ``Host: evil.example``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


async def send_error(send: Send, status: int, message: str) -> None:
    """A JSON ``{"error": ...}`` response like the app's own; the connection is closed after it."""
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def header(scope: Scope, name: bytes) -> str | None:
    """The first value of header ``name`` (lower case), decoded as latin-1 like HTTP/1.1 does."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def host_name(value: str) -> str:
    """The name part of a Host header, lower case: ``[::1]:8000`` -> ``::1``, ``Example.org:80`` -> ``example.org``."""
    value = value.strip().lower()
    if value.startswith("["):  # IPv6 literal, maybe with a port
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_host_names(bind_host: str | None, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names a Host header may carry: local names, the operator's, and the bound address as ``kgrag serve``
    prints it (even ``0.0.0.0``: a rebinding page sends its own name, never the literal address)."""
    names = {*LOCAL_HOSTS, *(host_name(h) for h in extra)}
    if bind_host:
        names.add(host_name(bind_host if ":" not in bind_host else f"[{bind_host}]"))
    return frozenset(names)


class HostCheck:
    """Answer 421 (Misdirected Request) to any request whose Host header names another server."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        value = header(scope, b"host")
        if value is None or host_name(value) not in self.allowed:
            shown = "no Host header" if value is None else f"Host {value!r}"
            message = f"{shown} is not this server; `kgrag serve --allowed-host NAME` serves another name"
            return await send_error(send, 421, message)
        return await self.app(scope, receive, send)


class BodyLimit:
    """Read at most ``max_bytes`` of a request body, then answer 413 without reading the rest.

    The (small) body is read here in full and replayed to the app, so the limit holds whatever the framing:
    a Content-Length over the limit is refused at once, a chunked or lying stream when its bytes pass it.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = header(scope, b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_bytes:
            return await send_error(send, 413, f"request body over {self.max_bytes} bytes")
        first = await self._read_body(receive)
        if first is None:
            return await send_error(send, 413, f"request body over {self.max_bytes} bytes")
        return await self.app(scope, _replay(first, receive), send)

    async def _read_body(self, receive: Receive) -> Message | None:
        """The whole body as one ``http.request`` message (or the disconnect), None once it passes the limit."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                return None
            if not message.get("more_body", False):
                return {"type": "http.request", "body": bytes(body), "more_body": False}


def _replay(first: Message, receive: Receive) -> Receive:
    """A receive callable giving ``first``, then whatever the server sends next (e.g. the client's disconnect)."""
    pending = [first]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed
