"""Counting every LLM call (prompt name, tokens, seconds) so each answer reports what it cost.

Calls are collected by the innermost active :func:`track_usage` block of the current context (a
``ContextVar``), so concurrent questions on different threads each see only their own calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from kgrag.types import LLMCall

_collector: ContextVar[list[LLMCall] | None] = ContextVar("kgrag_llm_calls", default=None)


def record_call(call: LLMCall) -> None:
    """Called by every LLM backend after each call."""
    calls = _collector.get()
    if calls is not None:
        calls.append(call)


@contextmanager
def track_usage() -> Iterator[list[LLMCall]]:
    """Collect the LLM calls made inside the block (nested blocks also report to their parents)."""
    parent = _collector.get()
    calls: list[LLMCall] = []
    token = _collector.set(calls)
    try:
        yield calls
    finally:
        _collector.reset(token)
        if parent is not None:
            parent.extend(calls)
