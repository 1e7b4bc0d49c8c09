"""The knowledge graph: core type, loaders, on-disk store, algorithms and verbalisation."""

from kgrag.graph.kg import KnowledgeGraph

__all__ = ["KnowledgeGraph"]
