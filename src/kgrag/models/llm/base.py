"""The LLM protocol every backend implements, with accounting and the response cache done once here.

Backends implement :meth:`LLM._generate` only (template method); :meth:`LLM.generate` normalises the input,
consults the cache, times the call and reports it to :mod:`kgrag.models.accounting`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgrag.cancel import check_cancelled
from kgrag.models.accounting import record_call
from kgrag.models.cache import ResponseCache, cache_key
from kgrag.types import LLMCall, TokenLogprob

if TYPE_CHECKING:
    from kgrag.prompts import Prompt

Messages = list[dict[str, str]]

MESSAGE_OVERHEAD = 8
"""Tokens a chat template adds around one message (role markers, separators), on the high side: ChatML,
Qwen's template, takes 5 per message and 3 to open the reply."""


@dataclass
class Generation:
    """One completion: text plus what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    evaluated_prompt_tokens: int | None = None
    """Prompt tokens the model actually read, i.e. not restored from a kept prefix (KV state); ``None`` when the
    backend cannot tell, which counts as all of them. The time a call takes follows this, not ``prompt_tokens``."""
    token_logprobs: list[TokenLogprob] | None = None
    """Each generated token with the model's log-probability of it (among what a grammar allowed), where the
    backend gives them: how sure the model was of what it wrote (:mod:`kgrag.methods.confidence`)."""

    @property
    def evaluated(self) -> int:
        """:attr:`evaluated_prompt_tokens`, or every prompt token when the backend did not say."""
        if self.cached:
            return 0
        return self.prompt_tokens if self.evaluated_prompt_tokens is None else self.evaluated_prompt_tokens


@dataclass
class GenerationParams:
    """Decoding settings; ``json_schema`` / ``grammar`` constrain the output where the backend can."""

    max_tokens: int = 256
    temperature: float = 0.0
    stop: list[str] = field(default_factory=list)
    json_schema: dict[str, Any] | None = None
    grammar: str | None = None
    seed: int | None = 0
    top_k: int | None = None  # sample among the k likeliest tokens (None: the backend's default)
    min_p: float | None = None  # drop tokens below min_p x the likeliest token's probability
    # a registered check held token by token beside the grammar where the backend can (models/llm/token_checks.py)
    token_check: str | None = None

    @classmethod
    def of_call(cls, stop: Sequence[str] | None = None, **decoding: Any) -> GenerationParams:
        """The settings one :meth:`LLM.generate` call decodes with, from the keywords it was given (the rest
        at their defaults): the one place a call's settings, and so its response-cache key, are built."""
        return cls(stop=list(stop or []), **decoding)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stop": list(self.stop),
            "json_schema": self.json_schema,
            "grammar": self.grammar,
            "seed": self.seed,
        }
        # only when set, so response-cache keys of calls that never set them stay what they were
        if self.top_k is not None:
            out["top_k"] = self.top_k
        if self.min_p is not None:
            out["min_p"] = self.min_p
        if self.token_check is not None:
            out["token_check"] = self.token_check
        return out


def to_messages(prompt: str | Messages) -> Messages:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    for msg in prompt:
        if not isinstance(msg, dict) or "role" not in msg or "content" not in msg:
            raise ValueError("messages must be dicts with 'role' and 'content'")
    return [{"role": m["role"], "content": m["content"]} for m in prompt]


class LLM(ABC):
    """Chat LLM. ``model_id`` names the model in results and cache keys (e.g. ``llamacpp:smollm2-135m``)."""

    model_id: str = "llm"
    context_window: int | None = None
    """Tokens one call can hold, prompt and completion together; ``None`` when the backend cannot tell (an
    OpenAI-compatible endpoint does not report it). Methods that fill a prompt up to a budget read it."""

    def __init__(self, *, cache: ResponseCache | None = None) -> None:
        self.cache = cache

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` takes. Backends with the model's tokenizer count exactly; this estimate errs high
        (2.5 characters a token: identifiers such as ``m.0abc12`` split into many short tokens)."""
        return (2 * len(text) + 4) // 5

    def count_prompt_tokens(self, prompt: str | Messages) -> int:
        """Tokens ``prompt`` takes once the chat template wraps it, so a caller can check it fits
        :attr:`context_window` before sending it (a backend rejects an oversized prompt with an error)."""
        messages = to_messages(prompt)
        return sum(self.count_tokens(m["content"]) + MESSAGE_OVERHEAD for m in messages) + MESSAGE_OVERHEAD

    def generate(
        self,
        prompt: str | Messages,
        *,
        name: str = "raw",
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
        json_schema: dict[str, Any] | None = None,
        grammar: str | None = None,
        seed: int | None = 0,
        top_k: int | None = None,
        min_p: float | None = None,
        token_check: str | None = None,
    ) -> Generation:
        """Complete ``prompt`` (a string or chat messages). ``name`` is the prompt's name for accounting."""
        check_cancelled()
        messages = to_messages(prompt)
        params = GenerationParams.of_call(
            stop,
            max_tokens=max_tokens,
            temperature=temperature,
            json_schema=json_schema,
            grammar=grammar,
            seed=seed,
            top_k=top_k,
            min_p=min_p,
            token_check=token_check,
        )
        key = None
        if self.cache is not None:
            key = cache_key(self.model_id, messages, params.as_dict())
            hit = self.cache.get(key)
            if hit is not None:
                gen = Generation(hit[0], hit[1], hit[2], 0.0, cached=True, token_logprobs=self.cache.logprobs(key))
                self._record(name, gen)
                return gen
        start = time.perf_counter()
        gen = self._generate(messages, params)
        gen.seconds = time.perf_counter() - start
        if self.cache is not None and key is not None:
            self.cache.put(key, gen.text, gen.prompt_tokens, gen.completion_tokens, gen.token_logprobs)
        self._record(name, gen)
        return gen

    def run_prompt(
        self, prompt: Prompt, *, grammar: str | None = None, token_check: str | None = None, **values: Any
    ) -> Generation:
        """One call on a prompt file, rendered with ``values``, with the file's decoding settings (and an
        optional GBNF ``grammar`` and ``token_check``), accounted under the prompt's name."""
        extra = {"token_check": token_check} if token_check is not None else {}
        return self.generate(
            prompt.render(**values),
            name=prompt.name,
            max_tokens=prompt.max_tokens,
            temperature=prompt.temperature,
            stop=list(prompt.stop),
            grammar=grammar,
            top_k=prompt.top_k,
            min_p=prompt.min_p,
            **extra,
        )

    def score_reply(self, prompts: Sequence[str | Messages], reply: str, *, name: str = "raw") -> list[float] | None:
        """log P(``reply`` | prompt) under the model, for each prompt as a chat whose assistant turn begins with
        ``reply``: how well each prompt explains the same text, the reply's tokens scored and nothing generated.
        Accounted as one call under ``name`` (the prompts' tokens the model read); cached per prompt. ``None``
        when the backend cannot score text (an OpenAI-compatible endpoint does not give prompt log-probabilities
        reliably), and callers then go without."""
        if not prompts:
            return []
        chats = [to_messages(p) for p in prompts]
        keys = [cache_key(self.model_id, m, {"score_reply": reply}) for m in chats] if self.cache is not None else []
        found: dict[int, float] = {}
        prompt_tokens = 0
        for i, key in enumerate(keys):
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                found[i] = float(hit[0])
                prompt_tokens += hit[1]
        todo = [i for i in range(len(chats)) if i not in found]
        check_cancelled()
        start = time.perf_counter()
        scored = self._score_reply([chats[i] for i in todo], reply) if todo else []
        if scored is None:
            return None
        evaluated = 0
        for i, (logprob, tokens, read) in zip(todo, scored):
            found[i] = logprob
            prompt_tokens += tokens
            evaluated += read
            if self.cache is not None:
                self.cache.put(keys[i], repr(logprob), tokens, 0)
        gen = Generation("", prompt_tokens, 0, time.perf_counter() - start, cached=not todo)
        gen.evaluated_prompt_tokens = evaluated
        self._record(name, gen)
        return [found[i] for i in range(len(chats))]

    def _score_reply(self, chats: list[Messages], reply: str) -> list[tuple[float, int, int]] | None:
        """Per chat: (log P(reply | chat), the tokens of chat and reply, the tokens the model read); ``None``: this
        backend cannot score."""
        return None

    def _record(self, name: str, gen: Generation) -> None:
        record_call(
            LLMCall(
                prompt=name,
                model=self.model_id,
                prompt_tokens=gen.prompt_tokens,
                evaluated_prompt_tokens=gen.evaluated,
                completion_tokens=gen.completion_tokens,
                seconds=round(gen.seconds, 4),
                cached=gen.cached,
                token_logprobs=gen.token_logprobs,
            )
        )

    @abstractmethod
    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        """Produce one completion (``seconds`` is filled in by the caller)."""

    def wait_loaded(self) -> None:  # noqa: B027 - optional hook
        """Block until a model that loads in the background is ready; raise :class:`LLMError` if it cannot be.
        Backends that are ready when built do nothing."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (model memory, HTTP pools)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_id!r})"
