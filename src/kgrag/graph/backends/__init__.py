"""Graph backends that answer Cypher: ``ladybug`` (embedded, default for Cypher) and ``bolt`` (servers).

The in-memory :class:`~kgrag.graph.kg.KnowledgeGraph` with :mod:`kgrag.graph.algorithms` is the default
backend for everything that is not Cypher; these backends declare what they support (``supports_cypher``).
"""

from __future__ import annotations

from typing import Any

from kgrag.graph.kg import KnowledgeGraph


def open_cypher_backend(kg: KnowledgeGraph, spec: str = "ladybug") -> Any:
    """A Cypher backend for ``kg``: ``ladybug`` (built next to the store on first use) or ``bolt://host:port``
    (a server that already holds the graph; load one with ``BoltBackend.load``)."""
    if spec == "ladybug":
        from kgrag.graph.backends.ladybug import LadybugBackend

        return LadybugBackend(kg)
    if spec.startswith(("bolt://", "neo4j://")):
        from kgrag.graph.backends.bolt import BoltBackend

        return BoltBackend(spec)
    raise ValueError(f"unknown Cypher backend {spec!r} (ladybug | bolt://host:port)")
