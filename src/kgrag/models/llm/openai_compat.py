"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, LiteLLM, ``python -m llama_cpp.server``).

Retries with exponential backoff on 429, 5xx, connection errors and timeouts; other 4xx fail at once.
When the endpoint stays down, the error names the URL.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from kgrag.errors import LLMError, LLMUnavailableError
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages


class OpenAICompatLLM(LLM):
    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        import openai

        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.model_id = f"openai:{model}@{self.base_url}"
        self.max_retries = max_retries
        self.backoff = backoff
        self.api_key_env = api_key_env
        # Local servers need no key; the client insists on a non-empty one.
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=os.environ.get(api_key_env) or "no-key",
            timeout=timeout,
            max_retries=0,
        )
        self._openai = openai

    def _request(self, messages: Messages, params: GenerationParams) -> Any:
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
        return self._client.chat.completions.create(**kwargs)

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        oa = self._openai
        retryable = (oa.APIConnectionError, oa.APITimeoutError, oa.RateLimitError, oa.InternalServerError)
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            try:
                resp = self._request(messages, params)
                break
            except oa.AuthenticationError as exc:
                raise LLMError(f"{self.base_url}: authentication failed; set ${self.api_key_env}") from exc
            except retryable as exc:
                last = exc
            except oa.APIStatusError as exc:
                if exc.status_code >= 500:
                    last = exc
                else:
                    raise LLMError(f"{self.base_url}: HTTP {exc.status_code}: {exc.message}") from exc
            if attempt < self.max_retries:
                time.sleep(self.backoff * (2**attempt) * (1 + 0.25 * random.random()))
        else:
            raise LLMUnavailableError(
                f"{self.base_url} did not answer after {self.max_retries + 1} attempts ({type(last).__name__}: {last})"
            )
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content if choice and choice.message else None) or ""
        usage = resp.usage
        return Generation(
            text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )

    def close(self) -> None:
        self._client.close()
