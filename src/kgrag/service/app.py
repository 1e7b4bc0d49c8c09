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
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from kgrag.cancel import cancel_scope
from kgrag.errors import KGRagError, LLMError, MissingExtraError, ModelSetupError, UnknownEntityError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.base import MethodConfigError, observe_steps
from kgrag.models.llm.base import LLM
from kgrag.registry import UnknownNameError
from kgrag.service.guards import BodyLimit, HostCheck, allowed_host_names
from kgrag.service.schemas import QuestionRequest
from kgrag.service.settings import SettingRejected, client_may_set, client_settings
from kgrag.service.state import ServiceConfig, ServiceState
from kgrag.types import Step

try:
    from fastapi import FastAPI, Query, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
    from fastapi.staticfiles import StaticFiles
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingExtraError("serve", "the kgrag service", "fastapi") from exc

log = logging.getLogger("kgrag.service")
STATIC = Path(__file__).parent / "static"
MAX_BODY_BYTES = 64 * 1024
T = TypeVar("T")


class Checked(NamedTuple):
    """A question request that passed :func:`check`: what the method runs with (operator settings merged in)."""

    question: str
    method: str
    topics: list[str]
    settings: dict[str, Any]


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _jsonable(obj: Any) -> Any:
    """json.dumps fallback for values methods put in step outputs (numpy scalars/arrays, paths, sets)."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if hasattr(obj, "model_dump"):
        return obj.model_dump()
    return str(obj)


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=_jsonable)


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(dumps(obj), status_code=status, media_type="application/json")


def error_status(exc: BaseException) -> int:
    """HTTP status for a library error raised while serving a request."""
    if isinstance(exc, ApiError):
        return exc.status
    if isinstance(exc, MissingExtraError | ModelSetupError | LLMError):
        return 503
    if isinstance(exc, UnknownNameError | UnknownEntityError | MethodConfigError | KGRagError):
        return 422
    return 500


def error_message(exc: BaseException) -> str:
    if isinstance(exc, ApiError):
        return exc.message
    if error_status(exc) == 500:
        return f"internal error ({type(exc).__name__}: {exc}); the server logged the traceback"
    if isinstance(exc, LLMError | MissingExtraError | ModelSetupError):
        return f"the LLM is not available: {exc}"
    return str(exc)


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {dumps(data)}\n\n"


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

    # ------------------------------------------------------------------ helpers
    def check(req: QuestionRequest) -> Checked:
        """Validate a question request before any work starts."""
        from kgrag.methods import get as get_method

        question = req.question.strip()
        if not question:
            raise ApiError(422, "question is empty")
        if len(question) > cfg.max_question_chars:
            raise ApiError(422, f"question is {len(question)} characters long; the limit is {cfg.max_question_chars}")
        name = (req.method or cfg.default_method).strip()
        try:
            cls = get_method(name)
        except UnknownNameError as exc:
            raise ApiError(422, str(exc)) from None
        topics = [t.strip() for t in req.topic_entities if t.strip()]
        if len(topics) > cfg.max_topic_entities:
            raise ApiError(422, f"{len(topics)} topic entities; the limit is {cfg.max_topic_entities}")
        for topic in topics:
            try:
                kg.entity_id(topic)
            except UnknownEntityError as exc:
                raise ApiError(422, f"topic entity: {exc}") from None
        try:  # before any model loads or file opens: a client's settings may not name either
            settings = client_settings(cls, req.settings, cfg.settings)
        except SettingRejected as exc:
            raise ApiError(exc.status, str(exc)) from None
        return Checked(question, name, topics, settings)

    def in_worker(
        fn: Callable[[], T], on_step: Callable[[Step], None] | None, cancel: threading.Event
    ) -> Callable[[], T]:
        def run() -> T:
            with state.running(), cancel_scope(cancel):
                if on_step is None:
                    return fn()
                with observe_steps(on_step):
                    return fn()

        return run

    async def run_timed(fn: Callable[[], T], on_step: Callable[[Step], None] | None = None) -> T:
        cancel = threading.Event()  # set when nobody waits any more: the worker stops at its next step/LLM call
        future = asyncio.wrap_future(state.executor.submit(in_worker(fn, on_step, cancel)))
        try:
            return await asyncio.wait_for(future, cfg.request_timeout)
        except TimeoutError:
            cancel.set()
            raise ApiError(504, f"no result within the {cfg.request_timeout:g} s request timeout") from None
        except asyncio.CancelledError:  # the client went away (e.g. closed the stream)
            cancel.set()
            raise
        except ApiError:
            raise
        except Exception as exc:
            if error_status(exc) == 500:
                log.exception("method failed")
            raise ApiError(error_status(exc), error_message(exc)) from exc

    def answer_fn(req: Checked) -> Callable[[], Any]:
        def work() -> Any:
            method = state.method(req.method, req.settings, with_llm=True)
            answer = method.answer(req.question, req.topics)
            if answer.error is not None:  # the method caught an LLMError: no answer to give, 503 like a raised one
                raise LLMError(answer.error)
            return answer

        return work

    # ------------------------------------------------------------------ page
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # ------------------------------------------------------------------ read-only endpoints
    @app.get("/health")
    async def health() -> dict:
        from kgrag.methods import registry

        return {
            "status": "ok",
            "kg": state.kg_name(),
            "entities": kg.num_entities,
            "triples": kg.num_triples,
            "methods": list(registry),
            "llm": {"spec": state.llm_spec, "loaded": state.llm_loaded, "max_concurrent_calls": cfg.max_llm_calls},
            "in_flight": state.in_flight,
        }

    @app.get("/kg")
    async def kg_info() -> dict:
        import numpy as np

        counts = np.bincount(kg.rels, minlength=kg.num_relations)
        order = np.argsort(-counts, kind="stable")
        stats = {k: v for k, v in state.stats.items() if k != "top_relations"}
        return {
            "name": state.kg_name(),
            "stats": stats,
            "schema": {
                "relations": [{"name": kg.relations[i], "triples": int(counts[i])} for i in order.tolist()],
                "inverse_suffix": "_inv",
            },
        }

    @app.get("/methods")
    async def methods() -> dict:
        from kgrag.methods import get as get_method
        from kgrag.methods import registry

        rows = []
        for name in registry:
            cls = get_method(name)
            fields = cls.Config.model_fields
            rows.append(
                {
                    "name": name,
                    "needs_llm": cls.needs_llm,
                    "doc": (cls.__doc__ or "").strip().split("\n\n")[0],
                    "settings": {f: _jsonable_default(info.default) for f, info in fields.items()},
                    "client_settings": [f for f, info in fields.items() if client_may_set(info)],
                }
            )
        return {"default": cfg.default_method, "methods": rows}

    @app.get("/entities")
    async def entities(
        q: str = Query(..., min_length=1, max_length=200, description="a partial entity name (or text with tail=1)"),
        k: int = Query(8, ge=1, le=50),
        tail: bool = Query(False, description="complete the name being typed at the end of q"),
    ) -> dict:
        # not on the method pool: suggestions must keep coming while questions are being answered
        if tail:
            start, found = await asyncio.to_thread(lambda: state.completer.complete_tail(q, k))
        else:
            start, found = 0, await asyncio.to_thread(lambda: state.completer.complete(q, k))
        return {"query": q, "start": start, "entities": [s.as_json() for s in found]}

    @app.get("/neighbors")
    async def neighbors(
        entity: str = Query(..., min_length=1, max_length=500), limit: int = Query(25, ge=1, le=200)
    ) -> Response:
        """Triples around one entity (the web page expands a clicked graph node with these)."""
        from kgrag.retrieval.triples import triples_as_evidence

        try:
            eid = kg.entity_id(entity)
        except UnknownEntityError as exc:
            raise ApiError(404, str(exc)) from None
        import numpy as np

        tids = np.concatenate([kg.out_edge_ids(eid)[:limit], kg.in_edge_ids(eid)[:limit]])[:limit]
        evidence = triples_as_evidence(kg, tids, None, source="neighbors")
        return json_response({"entity": kg.entities[eid], "evidence": [ev.model_dump() for ev in evidence]})

    # ------------------------------------------------------------------ question endpoints
    @app.post("/retrieve")
    async def retrieve(req: QuestionRequest) -> Response:
        checked = check(req)
        steps: list[Step] = []

        def work() -> Any:
            method = state.method(checked.method, checked.settings, with_llm=False)
            return method.retrieve(checked.question, checked.topics)

        start = time.perf_counter()
        evidence = await run_timed(work, steps.append)
        return json_response(
            {
                "question": checked.question,
                "method": checked.method,
                "seconds": round(time.perf_counter() - start, 4),
                "evidence": [ev.model_dump() for ev in evidence],
                "trace": [s.model_dump() for s in steps],
            }
        )

    @app.post("/ask")
    async def ask(req: QuestionRequest) -> Response:
        answer = await run_timed(answer_fn(check(req)))
        return json_response(answer.model_dump())

    @app.post("/ask/stream")
    async def ask_stream(req: QuestionRequest) -> StreamingResponse:
        checked = check(req)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Step] = asyncio.Queue()

        def on_step(step: Step) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, step.model_copy())

        async def events() -> AsyncIterator[str]:
            yield sse(
                "start", {"question": checked.question, "method": checked.method, "topic_entities": checked.topics}
            )
            task = asyncio.ensure_future(run_timed(answer_fn(checked), on_step))
            index = 0
            try:
                while True:
                    getter = asyncio.ensure_future(queue.get())
                    done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                    if getter in done:
                        yield sse("step", {"index": index, **getter.result().model_dump()})
                        index += 1
                        continue
                    getter.cancel()
                    while not queue.empty():  # steps reported just before the method returned
                        yield sse("step", {"index": index, **queue.get_nowait().model_dump()})
                        index += 1
                    exc = task.exception()
                    if exc is None:
                        yield sse("answer", task.result().model_dump())
                    else:
                        yield sse("error", {"status": error_status(exc), "error": error_message(exc)})
                    return
            finally:
                if not task.done():  # the client went away: stop waiting (the worker finishes on its own)
                    task.cancel()

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(events(), media_type="text/event-stream", headers=headers)

    return app


def _jsonable_default(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except TypeError:
        return str(value)
