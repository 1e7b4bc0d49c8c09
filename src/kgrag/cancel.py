"""Cooperative cancellation: work started for a request that nobody waits for any more stops early.

The service runs each question in a worker thread and gives up waiting after its request timeout; Python
cannot kill that thread, so the work itself checks a per-request flag at the points where it spends time —
before every LLM call and at the start of every traced method step — and raises :class:`Cancelled`.
Outside a :func:`cancel_scope` the checks cost one context-variable lookup and never fire.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from kgrag.errors import KGRagError


class Cancelled(KGRagError):
    """The caller stopped waiting (e.g. the service's request timeout passed); the work was abandoned.

    Deliberately not an :class:`~kgrag.errors.LLMError`: methods that fall back to other retrieval when an LLM
    call fails must not treat a cancellation as a reason to do more work."""

    exit_code = 4


_flag: ContextVar[threading.Event | None] = ContextVar("kgrag_cancel_flag", default=None)


@contextmanager
def cancel_scope(flag: threading.Event) -> Iterator[threading.Event]:
    """Run the block with ``flag`` as its cancel flag: once it is set, the next check raises."""
    token = _flag.set(flag)
    try:
        yield flag
    finally:
        _flag.reset(token)


def check_cancelled() -> None:
    """Raise :class:`Cancelled` if the current scope's flag is set."""
    flag = _flag.get()
    if flag is not None and flag.is_set():
        raise Cancelled("cancelled: the caller stopped waiting for this work")


__all__ = ["Cancelled", "cancel_scope", "check_cancelled"]
