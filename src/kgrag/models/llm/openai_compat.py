"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, LiteLLM, ``python -m llama_cpp.server``).

One :meth:`~kgrag.models.llm.base.LLM.generate` call has one budget, ``timeout`` seconds, that bounds
everything it does: each attempt may use what is left of it and is abandoned when it is spent (so a hung
endpoint, or one that drips its headers or body, cannot hold the caller longer), and so must the waits between
attempts.  A timed-out attempt therefore ends the call: re-sending
a slow generation to a one-slot local server would only queue a duplicate behind it.

Retried, with exponential backoff: refused or broken connections, 408, 429 and 5xx.  A ``Retry-After`` (or
OpenAI's ``retry-after-ms``) replaces the backoff; when it asks for more than ``max_retry_after`` seconds or
more than the budget left, the call fails at once instead of sleeping for nothing.  Not retried: other 4xx and
200 replies that are not a chat completion (:class:`~kgrag.errors.LLMResponseError`).  The SDK's own retries
are off, so attempts never multiply; a cancelled caller (:mod:`kgrag.cancel`) stops them.  Every error names
the URL and fits on one line.
"""

from __future__ import annotations

import email.utils
import importlib
import json
import math
import os
import random
import re
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from functools import cache
from typing import Any

from kgrag.cancel import check_cancelled
from kgrag.errors import LLMError, LLMResponseError, LLMUnavailableError
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages

DEFAULT_TIMEOUT = 120.0
"""Seconds one LLM call may take, every attempt and wait included (``--llm-timeout``)."""
MAX_RESPONSE_BYTES = 16 << 20
"""A chat completion is a few kB; a reply this large is something else (and would be held in memory)."""
RETRYABLE_STATUS = frozenset({408, 429})  # and every 5xx
ATTEMPT_GRACE = 0.25
"""Seconds past the deadline an attempt's own timeout gets to fire (its error says more) before it is abandoned."""


class _Transient(Exception):
    """One attempt failed in a way a later attempt may not; ``retry_after`` is the server's requested wait."""

    def __init__(self, what: str, retry_after: float | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.retry_after = retry_after


class OpenAICompatLLM(LLM):
    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_retry_after: float = 60.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        import openai

        if not timeout > 0:
            raise ValueError(f"the LLM timeout must be positive, got {timeout}")
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.model_id = f"openai:{model}@{self.base_url}"
        self.where = f"LLM endpoint {self.base_url}"  # how errors name it: a bare URL could be anything
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self.max_response_bytes = max_response_bytes
        self.api_key_env = api_key_env
        # Local servers need no key; the client insists on a non-empty one.
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=os.environ.get(api_key_env) or "no-key",
            timeout=self.timeout,
            max_retries=0,  # retries happen here, once, within the call's budget
        )
        self._openai = openai

    def _request_args(self, messages: Messages, params: GenerationParams) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
        }
        if params.stop:
            kwargs["stop"] = params.stop[:4]
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": params.json_schema},
            }
        extra: dict[str, Any] = {}
        if params.grammar is not None:
            extra["grammar"] = params.grammar  # llama.cpp server extension
        if "api.openai.com" not in str(self.base_url):  # OpenAI rejects these; llama.cpp / vLLM servers take them
            if params.top_k is not None:
                extra["top_k"] = params.top_k
            if params.min_p is not None:
                extra["min_p"] = params.min_p
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        args = self._request_args(messages, params)
        start = time.monotonic()
        deadline = start + self.timeout
        attempt = 0
        while True:
            attempt += 1
            if attempt > 1:
                check_cancelled()  # nobody waits for this call any more (the service's request timed out)
            try:
                return read_completion(self._attempt_within(args, deadline), self.where)
            except _Transient as failure:
                wait, reason = self._retry_wait(failure, attempt, deadline)
                if wait is None:
                    raise LLMUnavailableError(
                        f"{self.where}: {failure.what} ({attempt} attempt{'s' if attempt > 1 else ''} in "
                        f"{time.monotonic() - start:.1f} s; {reason})"
                    ) from failure
                time.sleep(wait)

    def _attempt_within(self, args: dict[str, Any], deadline: float) -> bytes:
        """:meth:`_attempt` in a helper thread that is abandoned at the deadline.

        The HTTP library's timeouts are per read: a server that trickles its status line and headers a byte at
        a time never trips them, and the SDK hands over no response to check the clock on until the headers are
        complete. Waiting on a thread is the one bound that holds; an abandoned attempt ends with its
        connection (the thread is a daemon and only ever touches its own result).
        """
        result: Future[bytes] = Future()

        def run() -> None:
            try:
                result.set_result(self._attempt(args, deadline))
            except BaseException as exc:  # handed to the waiting caller, which raises it
                result.set_exception(exc)

        left = max(deadline - time.monotonic(), 0.0)
        threading.Thread(target=run, name="kgrag-llm-attempt", daemon=True).start()
        try:
            return result.result(timeout=left + ATTEMPT_GRACE)
        except FutureTimeout:  # worded as the attempt's own timeout: which of the two fires first is chance
            raise _Transient(f"no reply within {round(left, 1):g} s") from None

    def _attempt(self, args: dict[str, Any], deadline: float) -> bytes:
        """POST once, with what is left of the budget as the timeout; the raw reply body."""
        oa = self._openai
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Transient("no time left for another attempt")
        try:
            with self._client.chat.completions.with_streaming_response.create(**args, timeout=left) as resp:
                return self._read_body(resp, deadline)
        except oa.APITimeoutError as exc:
            raise _Transient(f"no reply within {round(left, 1):g} s") from exc
        except oa.APIConnectionError as exc:
            raise _Transient(f"connection failed ({_one_line(str(exc.__cause__ or exc), 120)})") from exc
        except oa.APIStatusError as exc:
            what = f"HTTP {exc.status_code}{_server_message(exc.body)}"
            if exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500:
                raise _Transient(what, retry_after_seconds(exc.response.headers, time.time())) from exc
            if exc.status_code in (401, 403):
                raise LLMError(f"{self.where}: authentication failed ({what}); set ${self.api_key_env}") from exc
            raise LLMError(f"{self.where}: {what}") from exc

    def _read_body(self, resp: Any, deadline: float) -> bytes:
        """The body, read within the budget (a per-read timeout alone lets a dripping server go on forever)
        and never beyond ``max_response_bytes``."""
        cap = self.max_response_bytes
        declared = resp.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise LLMResponseError(f"{self.where}: the reply is {int(declared):,} bytes, over the {cap:,} limit")
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in resp.iter_bytes():
                size += len(chunk)
                if size > cap:
                    raise LLMResponseError(f"{self.where}: the reply is over the {cap:,} bytes limit")
                if time.monotonic() > deadline:
                    raise _Transient(f"the reply was still arriving after {self.timeout:g} s")
                chunks.append(chunk)
        except _transport_errors() as exc:
            raise _Transient(f"the reply broke off ({type(exc).__name__})") from exc
        return b"".join(chunks)

    def _retry_wait(self, failure: _Transient, attempt: int, deadline: float) -> tuple[float | None, str]:
        """Seconds to wait before the next attempt, or (None, why not)."""
        if attempt > self.max_retries:
            return None, "no retries left"
        left = deadline - time.monotonic()
        if failure.retry_after is not None:
            limit = min(self.max_retry_after, left)
            if failure.retry_after > limit:
                bound = (
                    f"the {self.max_retry_after:g} s kgrag waits at most"
                    if limit == self.max_retry_after
                    else f"the {max(left, 0):.1f} s left of the {self.timeout:g} s LLM timeout"
                )
                return None, f"the server asks to wait {failure.retry_after:g} s (Retry-After), more than {bound}"
            wait = failure.retry_after
        else:
            wait = self.backoff * 2 ** (attempt - 1) * (1 + 0.25 * random.random())
        if wait >= left:
            return None, f"the {self.timeout:g} s LLM timeout (--llm-timeout) is spent"
        return wait, ""

    def close(self) -> None:
        self._client.close()


# ---------------------------------------------------------------------- reading replies defensively
def read_completion(body: bytes, where: str) -> Generation:
    """The first choice's text and the token counts of a chat completion body; anything else raises
    :class:`LLMResponseError` naming ``where`` and what was wrong (servers, proxies and captive portals send
    all kinds of 200s, and the SDK parses them without validation)."""
    try:
        data = json.loads(body)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        raise LLMResponseError(f"{where}: the reply is not JSON: {_snippet(body)}") from None
    if not isinstance(data, dict):
        raise LLMResponseError(f"{where}: the reply is not a chat completion (a JSON {type(data).__name__})")
    if "choices" not in data and data.get("error"):
        raise LLMResponseError(f"{where}: the server reports an error{_server_message(data)}")
    choices = data.get("choices")
    if not isinstance(choices, list):
        raise LLMResponseError(f"{where}: the reply is not a chat completion ('choices' is {_kind(choices)})")
    if not choices:
        raise LLMResponseError(f"{where}: the reply has no choices")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise LLMResponseError(f"{where}: the reply's first choice has no message")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    prompt_tokens = _count(usage.get("prompt_tokens"))
    # servers with prefix caching (OpenAI, vLLM, llama.cpp's server) say how many prompt tokens they reused
    details = usage.get("prompt_tokens_details")
    reused = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return Generation(
        _content_text(message.get("content"), where),
        prompt_tokens=prompt_tokens,
        completion_tokens=_count(usage.get("completion_tokens")),
        evaluated_prompt_tokens=max(prompt_tokens - reused, 0),
    )


def _content_text(content: Any, where: str) -> str:
    """A message's text: a string, nothing (an empty completion), or a list of ``{"type": "text"}`` parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content
    ):
        return "".join(p["text"] for p in content)
    raise LLMResponseError(f"{where}: the reply's message content is {_kind(content)}, not text")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _kind(value: Any) -> str:
    return "missing" if value is None else f"a {type(value).__name__} ({_one_line(repr(value), 40)})"


def retry_after_seconds(headers: Mapping[str, str], now: float) -> float | None:
    """The wait a 429/503 asks for: ``retry-after-ms``, ``Retry-After`` seconds, or an HTTP date (``now`` is
    the epoch time it is measured from; a date in the past means 0). None when absent or unreadable."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = (headers.get(name) or "").strip()
        try:
            seconds = float(value) / scale
        except ValueError:
            continue
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    date = headers.get("retry-after")
    parsed = email.utils.parsedate_tz(date) if date else None
    if parsed is None:
        return None
    try:
        return max(0.0, email.utils.mktime_tz(parsed) - now)
    except (OverflowError, ValueError):
        return None


def _server_message(body: Any) -> str:
    """``": <the server's own words>"`` from an error body (OpenAI's ``{"error": {"message"}}``, text, HTML)."""
    if isinstance(body, dict):
        error = body.get("error", body)
        body = error.get("message") or error.get("detail") if isinstance(error, dict) else error
    if body is None or body == "":
        return ""
    return f": {_snippet(body if isinstance(body, str | bytes) else json.dumps(body, default=str))}"


def _snippet(text: str | bytes, limit: int = 160) -> str:
    """Text for an error line: decoded, HTML tags dropped, whitespace collapsed, cut at ``limit``."""
    if isinstance(text, bytes):
        text = text[: limit * 8].decode("utf-8", errors="replace")
    if "<" in text and ">" in text:
        text = re.sub(r"<[^>]*>", " ", text)
    return _one_line(text, limit) or "(empty)"


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@cache
def _transport_errors() -> tuple[type[Exception], ...]:
    """The HTTP library's transport errors (the SDK uses ``httpx2`` or, in older releases, ``httpx``): raised
    by a body that breaks off mid-read, which the SDK does not wrap."""
    errors: list[type[Exception]] = []
    for name in ("httpx2", "httpx"):
        try:
            errors.append(importlib.import_module(name).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(errors)
