"""A cap on concurrent LLM calls, shared by every request the service runs.

A local model answers one prompt at a time (and holds a lock while it does); a hosted endpoint has a rate
limit. Requests beyond the cap wait in :meth:`ConcurrencyLimitedLLM.generate` instead of piling onto the
backend. The wrapper delegates whole ``generate`` calls, so the wrapped backend still does its own cache
lookup and accounting (the calls land in the calling thread's ``track_usage`` block as usual).

Being the one door to the LLM, it is also where a backend failing in an unexpected way (an endpoint answering
HTTP 200 with an HTML page made the OpenAI client raise ``AttributeError``) becomes an :class:`LLMError`:
the request is then answered 503 "LLM not available" instead of 500 "a bug in kgrag".
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kgrag.errors import KGRagError, LLMError
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages

log = logging.getLogger("kgrag.service")


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
        self.context_window = inner.context_window
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
            return self._call_inner(prompt, **kwargs)
        finally:
            with self._lock:
                self.active -= 1
            self._slots.release()

    def _call_inner(self, prompt: str | Messages, **kwargs: Any) -> Generation:
        try:
            return self.inner.generate(prompt, **kwargs)
        except KGRagError:  # LLMError, Cancelled: already say what happened
            raise
        except Exception as exc:
            log.warning("%s failed", self.model_id, exc_info=True)
            raise LLMError(f"{self.model_id} gave no usable response ({type(exc).__name__}: {exc})") from exc

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)  # the backend's tokenizer, not the base class's estimate

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:  # pragma: no cover
        raise NotImplementedError("generate() delegates to the wrapped LLM")

    def __getattr__(self, name: str) -> Any:  # count_tokens, n_ctx, ... of the wrapped backend
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def close(self) -> None:
        self.inner.close()
