"""A cap on concurrent LLM calls, shared by every request the service runs.

A local model answers one prompt at a time (and holds a lock while it does); a hosted endpoint has a rate
limit. Requests beyond the cap wait in :meth:`ConcurrencyLimitedLLM.generate` instead of piling onto the
backend. The wrapper delegates whole ``generate`` calls, so the wrapped backend still does its own cache
lookup and accounting (the calls land in the calling thread's ``track_usage`` block as usual).
"""

from __future__ import annotations

import threading
from typing import Any

from kgrag.errors import LLMError
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages


class LLMBusyError(LLMError):
    """No LLM slot became free within the wait limit."""


class ConcurrencyLimitedLLM(LLM):
    """Wraps an LLM so that at most ``limit`` of its calls run at once; others wait up to ``wait`` seconds."""

    def __init__(self, inner: LLM, limit: int = 1, *, wait: float | None = None) -> None:
        if limit < 1:
            raise ValueError("the concurrent LLM call limit must be at least 1")
        super().__init__(cache=None)
        self.inner = inner
        self.limit = limit
        self.wait = wait
        self.model_id = inner.model_id
        self._slots = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self.active = 0
        self.peak = 0

    def generate(self, prompt: str | Messages, **kwargs: Any) -> Generation:  # type: ignore[override]
        if not self._slots.acquire(timeout=self.wait):
            raise LLMBusyError(f"{self.model_id}: all {self.limit} LLM slot(s) stayed busy for {self.wait:g} s")
        try:
            with self._lock:
                self.active += 1
                self.peak = max(self.peak, self.active)
            return self.inner.generate(prompt, **kwargs)
        finally:
            with self._lock:
                self.active -= 1
            self._slots.release()

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:  # pragma: no cover
        raise NotImplementedError("generate() delegates to the wrapped LLM")

    def __getattr__(self, name: str) -> Any:  # count_tokens, n_ctx, ... of the wrapped backend
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def close(self) -> None:
        self.inner.close()
