"""Local GGUF models through llama-cpp-python (extra ``[local]``).

The chat template comes from the GGUF metadata. One ``Llama`` object is shared per (file, settings) in the
process and guarded by a lock (llama.cpp contexts are not thread-safe).  llama-cpp-python keeps the KV cache
of the previous prompt and only evaluates the new suffix, so prompts that share a fixed prefix (schema,
instructions) pay for it once — methods put the fixed part first for that reason.
"""

from __future__ import annotations

import threading
from typing import Any

from kgrag.errors import LLMError, MissingExtraError
from kgrag.models import manager
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages

_MODELS: dict[tuple[str, int, int, int], Any] = {}
_MODELS_LOCK = threading.Lock()


def _load_llama(path: str, n_ctx: int, n_threads: int, seed: int) -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise MissingExtraError("local", "the llamacpp LLM backend", "llama-cpp-python") from exc
    key = (path, n_ctx, n_threads, seed)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                seed=seed,
                verbose=False,
            )
        return _MODELS[key]


class LlamaCppLLM(LLM):
    def __init__(
        self,
        model: str = manager.DEFAULT_MODEL,
        *,
        n_ctx: int = 4096,
        n_threads: int = 2,
        seed: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.path = manager.resolve(model)
        self.model_id = f"llamacpp:{model if model in manager.MODELS else self.path.name}"
        self.n_ctx = n_ctx
        self._llama = _load_llama(str(self.path), n_ctx, n_threads, seed)
        self._lock = threading.Lock()

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        kwargs: dict[str, Any] = {
            "messages": messages,
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "stop": params.stop or None,
        }
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": params.json_schema}
        elif params.grammar is not None:
            from llama_cpp import LlamaGrammar

            kwargs["grammar"] = LlamaGrammar.from_string(params.grammar, verbose=False)
        with self._lock:
            try:
                out = self._llama.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. "Requested tokens (5000) exceed context window of 4096"
                raise LLMError(f"{self.model_id}: {exc}") from exc
        text = out["choices"][0]["message"].get("content") or ""
        usage = out.get("usage") or {}
        return Generation(text, int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False))
