"""Graph backends that answer Cypher: ``ladybug`` (embedded, default for Cypher) and ``bolt`` (servers).

The in-memory :class:`~kgrag.graph.kg.KnowledgeGraph` with :mod:`kgrag.graph.algorithms` is the default
backend for everything that is not Cypher; these backends declare what they support (``supports_cypher``).
One registry, :data:`cypher_backends`, maps a spec's name or URL scheme to the factory that opens it, so a new
backend is one module and one registration; the backend modules (and their extras) load only when opened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kgrag.graph.kg import KnowledgeGraph
from kgrag.registry import Registry

if TYPE_CHECKING:
    from kgrag.graph.backends.base import CypherBackend

#: spec name (``ladybug``) or URL scheme (``bolt://``) → factory(kg, spec)
cypher_backends: Registry[Callable[[KnowledgeGraph, str], CypherBackend]] = Registry("Cypher backend")


@cypher_backends.register("ladybug")
def _ladybug(kg: KnowledgeGraph, spec: str) -> CypherBackend:
    """Embedded Ladybug, built next to the KG store on first use."""
    from kgrag.graph.backends.ladybug import LadybugBackend

    return LadybugBackend(kg)


@cypher_backends.register("bolt://")
@cypher_backends.register("neo4j://")
def _bolt(kg: KnowledgeGraph, spec: str) -> CypherBackend:
    """A Neo4j-protocol server that already holds the graph (load one with ``BoltBackend.load``)."""
    from kgrag.graph.backends.bolt import BoltBackend

    return BoltBackend(spec)


def open_cypher_backend(kg: KnowledgeGraph, spec: str = "ladybug") -> CypherBackend:
    """A Cypher backend for ``kg``: ``ladybug`` (built next to the store on first use) or ``bolt://host:port``
    (a server that already holds the graph; load one with ``BoltBackend.load``)."""
    key = spec.split("://", 1)[0] + "://" if "://" in spec else spec
    if key not in cypher_backends:
        raise ValueError(f"unknown Cypher backend {spec!r} (ladybug | bolt://host:port)")
    return cypher_backends.get(key)(kg, spec)
