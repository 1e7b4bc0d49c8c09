"""KGQA methods, registered by name: ``kgrag.methods.get("llm")``."""

from __future__ import annotations

from kgrag.methods import auto as _auto  # noqa: F401 - registers auto
from kgrag.methods import baselines as _baselines  # noqa: F401 - registers the baselines
from kgrag.methods import byokg as _byokg  # noqa: F401 - registers byokg, byokg-agentic, byokg-scoring
from kgrag.methods import decompose as _decompose  # noqa: F401 - registers decompose
from kgrag.methods import frag as _frag  # noqa: F401 - registers frag
from kgrag.methods import text2cypher as _text2cypher  # noqa: F401 - registers text2cypher
from kgrag.methods import ultrag as _ultrag  # noqa: F401 - registers ultrag
from kgrag.methods.base import Method, MethodConfig, Trace, registry


def get(name: str) -> type[Method]:
    return registry.get(name)


__all__ = ["Method", "MethodConfig", "Trace", "get", "registry"]
