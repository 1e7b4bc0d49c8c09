"""LLM backends, chosen by a spec string.

=================================  ==============================================================
``llamacpp:<name or file.gguf>``   local model (extra ``[local]``); names: ``kgrag models list``
``openai:<model>@<base_url>``      any OpenAI-compatible endpoint; key from ``$OPENAI_API_KEY``
``scripted:<file>``                canned responses, for plumbing tests only
=================================  ==============================================================

>>> llm = load_llm("scripted:tests/fixtures/echo.json")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kgrag.models.cache import ResponseCache
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages
from kgrag.models.manager import DEFAULT_MODEL
from kgrag.registry import Registry

DEFAULT_LLM = f"llamacpp:{DEFAULT_MODEL}"

backends: Registry[Callable[..., LLM]] = Registry("LLM backend")


def default_llm_spec() -> str:
    """The LLM used when none is named: ``$KGRAG_LLM`` (set once per shell or service), else the local default
    model."""
    return os.environ.get("KGRAG_LLM") or DEFAULT_LLM


@backends.register("llamacpp")
def _llamacpp(arg: str, **kwargs: Any) -> LLM:
    from kgrag.models.llm.llamacpp import LlamaCppLLM

    return LlamaCppLLM(arg or DEFAULT_MODEL, **kwargs)


@backends.register("openai")
def _openai(arg: str, **kwargs: Any) -> LLM:
    from kgrag.models.llm.openai_compat import OpenAICompatLLM

    model, _, base_url = arg.partition("@")
    if not model:
        raise ValueError("openai spec is openai:<model>@<base_url>, e.g. openai:gpt-4o-mini@https://api.openai.com/v1")
    return OpenAICompatLLM(model, base_url or None, **kwargs)


@backends.register("scripted")
def _scripted(arg: str, **kwargs: Any) -> LLM:
    from kgrag.models.llm.scripted import ScriptedLLM

    return ScriptedLLM(arg, **kwargs)


def load_llm(spec: str | None = None, *, cache: str | Path | ResponseCache | None = None, **kwargs: Any) -> LLM:
    """Build an LLM from a spec string (default: ``$KGRAG_LLM`` when set, else the local default model).

    ``cache`` (a path or a :class:`ResponseCache`) turns on the on-disk response cache.
    """
    spec = spec or default_llm_spec()
    kind, _, arg = spec.partition(":")
    factory = backends.get(kind)
    if cache is not None and not isinstance(cache, ResponseCache):
        cache = ResponseCache(cache)
    return factory(arg, cache=cache, **kwargs)


__all__ = [
    "DEFAULT_LLM",
    "LLM",
    "Generation",
    "GenerationParams",
    "Messages",
    "backends",
    "default_llm_spec",
    "load_llm",
]
