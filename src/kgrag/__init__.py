"""kgrag: question answering over the knowledge graph you bring.

>>> from kgrag import KnowledgeGraph
>>> kg = KnowledgeGraph.from_triples([("Heat", "directed_by", "Michael Mann")])
>>> kg
KnowledgeGraph(entities=2, relations=1, triples=1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["KnowledgeGraph", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from kgrag.graph.kg import KnowledgeGraph


def __getattr__(name: str) -> Any:
    # Lazy so that `import kgrag` (e.g. for the CLI's --help) stays cheap.
    if name == "KnowledgeGraph":
        from kgrag.graph.kg import KnowledgeGraph

        return KnowledgeGraph
    raise AttributeError(f"module 'kgrag' has no attribute {name!r}")
