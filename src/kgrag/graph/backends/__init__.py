"""Graph backends that answer Cypher: ``ladybug`` (embedded, default for Cypher); Bolt servers come next.

The in-memory :class:`~kgrag.graph.kg.KnowledgeGraph` with :mod:`kgrag.graph.algorithms` is the default
backend for everything that is not Cypher; these backends declare what they support (``supports_cypher``).
"""

from __future__ import annotations

from typing import Any

from kgrag.graph.kg import KnowledgeGraph


def open_cypher_backend(kg: KnowledgeGraph, spec: str = "ladybug") -> Any:
    """A Cypher backend for ``kg``: ``ladybug`` (built next to the store on first use)."""
    if spec == "ladybug":
        from kgrag.graph.backends.ladybug import LadybugBackend

        return LadybugBackend(kg)
    raise ValueError(f"unknown Cypher backend {spec!r} (available: ladybug)")
