"""The HTTP API and the web page (``kgrag serve``).

Methods are synchronous and CPU- or LLM-bound, so each request runs its method on the service's worker
pool and the event loop only waits (with the request timeout) — the server keeps answering ``/health`` and
autocomplete while a question is being answered. ``POST /ask/stream`` sends the method's steps as
server-sent events while it runs (``start``, one ``step`` per finished step, then ``answer`` or ``error``).

Errors are JSON ``{"error": "..."}``: 400 malformed JSON, 403 a setting only the operator sets, 413 oversized
body, 421 foreign Host header (DNS rebinding), 422 invalid input (empty or oversized question, unknown method,
entity or setting, a number outside its client bounds), 404 unknown entity in a path-like lookup, 503 LLM not
available, 504 timeout, 500 a bug (logged; the server keeps serving).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from kgrag.errors import MissingExtraError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.models.llm.base import LLM
from kgrag.service import question_routes, read_routes
from kgrag.service.guards import BodyLimit, HostCheck, allowed_host_names
from kgrag.service.responses import ApiError, error_message, error_status, log
from kgrag.service.state import ServiceConfig, ServiceState

try:
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, JSONResponse
    from fastapi.staticfiles import StaticFiles
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingExtraError("serve", "the kgrag service", "fastapi") from exc

STATIC = Path(__file__).parent / "static"
MAX_BODY_BYTES = 64 * 1024


def create_app(
    kg: KnowledgeGraph | str | Path, config: ServiceConfig | None = None, *, llm: LLM | None = None
) -> FastAPI:
    """The service for one KG (a loaded KnowledgeGraph or a store directory). ``llm`` overrides ``config.llm``."""
    if not isinstance(kg, KnowledgeGraph):
        from kgrag.graph.store import load_kg

        kg = load_kg(Path(kg))
    state = ServiceState(kg, config, llm=llm)
    cfg = state.config

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        warm = asyncio.ensure_future(asyncio.to_thread(lambda: state.completer))  # autocomplete ready early
        yield
        warm.cancel()
        state.close()

    app = FastAPI(title="kgrag", summary=f"question answering over {state.kg_name()}", version="1", lifespan=lifespan)
    app.state.kgrag = state

    # ------------------------------------------------------------------ errors
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            ctx = next((e.get("ctx") or {} for e in errors if e.get("type") == "json_invalid"), {})
            return JSONResponse({"error": f"malformed JSON body: {ctx.get('error', 'cannot parse')}"}, status_code=400)
        parts = []
        for e in errors:
            loc = ".".join(str(x) for x in e.get("loc", ()) if x not in ("body", "query"))
            parts.append(f"{loc}: {e.get('msg')}" if loc else str(e.get("msg")))
        return JSONResponse({"error": "; ".join(parts) or "invalid request"}, status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("error serving %s %s", request.method, request.url.path)
        return JSONResponse({"error": error_message(exc)}, status_code=error_status(exc))

    # the last added runs first: a foreign Host is refused before any of its body is read
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    app.add_middleware(HostCheck, allowed=allowed_host_names(cfg.bind_host, cfg.allowed_hosts))

    # ------------------------------------------------------------------ page
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    app.include_router(read_routes.router)
    app.include_router(question_routes.router)
    return app
