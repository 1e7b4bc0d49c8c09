"""Question endpoints (/retrieve, /ask, /ask/stream): a request is checked before any work starts, then its
method runs on the service's worker pool under the request timeout while the event loop only waits."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple, TypeVar

from fastapi import APIRouter
from fastapi.responses import Response, StreamingResponse

from kgrag.cancel import cancel_scope
from kgrag.errors import UnknownEntityError
from kgrag.methods.base import observe_steps
from kgrag.registry import UnknownNameError
from kgrag.service.dependencies import State
from kgrag.service.responses import ApiError, error_message, error_status, json_response, log, sse
from kgrag.service.schemas import QuestionRequest
from kgrag.service.settings import SettingRejected, client_settings
from kgrag.service.state import ServiceState
from kgrag.types import Step

T = TypeVar("T")

router = APIRouter()
"""The endpoints that run a method for a question over the serving app's KG."""


class Checked(NamedTuple):
    """A question request that passed :func:`check`: what the method runs with (operator settings merged in)."""

    question: str
    method: str
    topics: list[str]
    settings: dict[str, Any]


def check(state: ServiceState, req: QuestionRequest) -> Checked:
    """Validate a question request before any work starts."""
    from kgrag.methods import get as get_method

    kg, cfg = state.kg, state.config
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


def _in_worker(
    state: ServiceState, fn: Callable[[], T], on_step: Callable[[Step], None] | None, cancel: threading.Event
) -> Callable[[], T]:
    """``fn`` as the worker runs it: counted in flight, cancellable, reporting its steps to ``on_step``."""

    def run() -> T:
        with state.running(), cancel_scope(cancel):
            if on_step is None:
                return fn()
            with observe_steps(on_step):
                return fn()

    return run


async def run_timed(state: ServiceState, fn: Callable[[], T], on_step: Callable[[Step], None] | None = None) -> T:
    """``fn``'s result from the worker pool within the request timeout; every failure becomes an ``ApiError``."""
    cfg = state.config
    cancel = threading.Event()  # set when nobody waits any more: the worker stops at its next step/LLM call
    future = asyncio.wrap_future(state.executor.submit(_in_worker(state, fn, on_step, cancel)))
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


def _answer_fn(state: ServiceState, req: Checked) -> Callable[[], Any]:
    def work() -> Any:
        method = state.method(req.method, req.settings, with_llm=True)
        return method.answer(req.question, req.topics)  # an LLMError raised here is a 503

    return work


@router.post("/retrieve")
async def retrieve(req: QuestionRequest, state: State) -> Response:
    checked = check(state, req)
    steps: list[Step] = []

    def work() -> Any:
        method = state.method(checked.method, checked.settings, with_llm=False)
        return method.retrieve(checked.question, checked.topics)

    start = time.perf_counter()
    evidence = await run_timed(state, work, steps.append)
    return json_response(
        {
            "question": checked.question,
            "method": checked.method,
            "seconds": round(time.perf_counter() - start, 4),
            "evidence": [ev.model_dump() for ev in evidence],
            "trace": [s.model_dump() for s in steps],
        }
    )


@router.post("/ask")
async def ask(req: QuestionRequest, state: State) -> Response:
    answer = await run_timed(state, _answer_fn(state, check(state, req)))
    return json_response(answer.model_dump())


@router.post("/ask/stream")
async def ask_stream(req: QuestionRequest, state: State) -> StreamingResponse:
    checked = check(state, req)
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(_answer_events(state, checked), media_type="text/event-stream", headers=headers)


async def _answer_events(state: ServiceState, checked: Checked) -> AsyncIterator[str]:
    """Server-sent events of one answer: ``start``, a ``step`` per finished step, then ``answer`` or ``error``."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Step] = asyncio.Queue()

    def on_step(step: Step) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, step.model_copy())

    yield sse("start", {"question": checked.question, "method": checked.method, "topic_entities": checked.topics})
    task = asyncio.ensure_future(run_timed(state, _answer_fn(state, checked), on_step))
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
