"""The registered methods, and `kgrag serve`: the HTTP API and web UI over one KG."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Annotated

import typer

from kgrag.cli.common import (
    JsonOpt,
    KGDir,
    LLMOpt,
    LLMTimeoutOpt,
    app,
    console,
    err_console,
    llm_timeout_kwargs,
    load_store,
    parse_settings,
    print_json,
)


@app.command()
def methods(
    as_json: JsonOpt = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print every method's settings as Markdown.")] = False,
) -> None:
    """List the registered methods (--markdown: their settings, defaults and notes: docs/settings.md)."""
    from kgrag.methods import get as get_method
    from kgrag.methods import registry

    if markdown:
        from kgrag.methods.settings_doc import settings_markdown

        sys.stdout.write(settings_markdown())
        return
    rows = [
        {"name": n, "needs_llm": get_method(n).needs_llm, "doc": (get_method(n).__doc__ or "").strip()}
        for n in registry
    ]
    if as_json:
        print_json({"methods": rows})
        return
    for row in rows:
        console.print(f"[bold]{row['name']}[/bold]  {row['doc']}", highlight=False)


AllowedHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allowed-host",
        help="A name clients reach the server by (repeatable); other Host headers are refused (DNS rebinding). "
        "localhost, 127.0.0.1, [::1] and --host are always allowed.",
    ),
]
ServeSetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Method setting KEY=VALUE for every method that has it (repeatable). The only way to set what "
        "names a file, model or host (router, embedder, cypher_backend...); clients may override the rest.",
    ),
]


@app.command()
def serve(
    kg_dir: KGDir,
    host: Annotated[str, typer.Option(help="Address to listen on (127.0.0.1: this machine only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free port).")] = 8000,
    llm: LLMOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    cache: Annotated[Path | None, typer.Option(help="SQLite file caching LLM responses.")] = None,
    max_llm_calls: Annotated[int, typer.Option(min=1, help="LLM calls running at once; more wait.")] = 1,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds before a question gives up (504).")] = 300.0,
    workers: Annotated[int, typer.Option(min=1, help="Threads running methods.")] = 4,
    method: Annotated[str, typer.Option("--method", "-m", help="Method preselected in the web page.")] = "auto",
    allowed_host: AllowedHostOpt = None,
    settings: ServeSetOpt = None,
) -> None:
    """Serve the HTTP API and the web page for KG_DIR (needs the [serve] extra); prints the URL."""
    from kgrag.errors import MissingExtraError
    from kgrag.methods import get as get_method

    try:
        import uvicorn
    except ImportError as exc:
        raise MissingExtraError("serve", "kgrag serve", "uvicorn") from exc
    from kgrag.service import ServiceConfig, create_app

    get_method(method)  # an unknown default method fails now, with the choices
    config = ServiceConfig(
        llm=llm,
        llm_timeout=llm_timeout_kwargs(llm, llm_timeout).get("timeout"),
        cache=str(cache) if cache else None,
        max_llm_calls=max_llm_calls,
        request_timeout=timeout,
        workers=workers,
        default_method=method,
        bind_host=host,
        allowed_hosts=tuple(allowed_host or ()),
        settings=parse_settings(settings),
    )
    with err_console.status(f"loading {kg_dir}", spinner="dots"):
        service = create_app(load_store(kg_dir), config)
    sock = _bound_socket(host, port)
    shown = f"[{host}]" if ":" in host else host
    sys.stdout.write(f"kgrag serving {kg_dir} at http://{shown}:{sock.getsockname()[1]}/\n")  # one unwrapped line
    sys.stdout.flush()
    err_console.print(f"LLM {llm or 'default local model'} (loaded on the first question) · Ctrl+C stops")
    server = uvicorn.Server(uvicorn.Config(service, log_level="warning", timeout_graceful_shutdown=5))
    server.run(sockets=[sock])


def _bound_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` before the server starts, so the URL printed has the real port (``--port
    0``) and a taken port is a usage error rather than a traceback from inside uvicorn."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        raise typer.BadParameter(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock
