"""A Cypher database's schema as data: labels with typed properties, relationship types with their directions.

The prompt shows it, and the checker (:mod:`kgrag.methods.text2cypher.check`) holds a written query against it,
so that a label, property or relationship direction the database does not have is caught before the query
runs (an unknown label is not an error for the engine: the query just returns nothing). A property graph's
schema is its stored mapping; a triples KG has one node label and one relationship type per relation, in the
layout every backend stores (:data:`kgrag.graph.backends.base.NODE_TABLE`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kgrag.graph.backends.base import NODE_TABLE, table_names
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.property_graph import stored_mapping


@dataclass(frozen=True)
class RelationshipType:
    """``(:source)-[:name]->(:target)`` with the relationship's own properties."""

    name: str
    source: str
    target: str
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class GraphSchema:
    """Node labels → {property: type}; relationship types (a type may join several label pairs)."""

    labels: dict[str, dict[str, str]]
    relationships: list[RelationshipType]
    name_property: dict[str, str] = field(default_factory=dict)  # label → the property naming its nodes

    @classmethod
    def of(cls, kg: KnowledgeGraph) -> GraphSchema:
        """The schema of ``kg`` as its Cypher backend stores it."""
        mapping = stored_mapping(kg)
        if mapping is not None:
            return cls.from_mapping(mapping)
        rels = [RelationshipType(t, NODE_TABLE, NODE_TABLE) for t in table_names(kg.relations)]
        return cls({NODE_TABLE: {"name": "STRING"}}, rels, {NODE_TABLE: "name"})

    @classmethod
    def from_mapping(cls, mapping: dict[str, Any]) -> GraphSchema:
        labels = {n["label"]: dict(n.get("properties", {})) for n in mapping["nodes"]}
        names = {n["label"]: n["name"] for n in mapping["nodes"] if n.get("name")}
        rels = [
            RelationshipType(r["type"], r["from"]["label"], r["to"]["label"], dict(r.get("properties", {})))
            for r in mapping["relationships"]
        ]
        return cls(labels, rels, names)

    def types(self) -> set[str]:
        return {r.name for r in self.relationships}

    def directions(self, rel_type: str) -> set[tuple[str, str]]:
        """The (source label, target label) pairs ``rel_type`` joins."""
        return {(r.source, r.target) for r in self.relationships if r.name == rel_type}

    def properties(self) -> Iterator[tuple[str, str, str]]:
        """``(owner, property, type)`` of every property: the labels' first, then the relationship types' (once
        per label pair a type joins)."""
        for label, props in self.labels.items():
            for prop, kind in props.items():
                yield label, prop, kind
        for r in self.relationships:
            for prop, kind in r.properties.items():
                yield r.name, prop, kind

    def relationship_properties(self, rel_type: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in self.relationships:
            if r.name == rel_type:
                out.update(r.properties)
        return out

    def describe(self, labels: set[str] | None = None) -> str:
        """Prompt text: one line per label with its typed properties, one per relationship pattern. With
        ``labels``, only those labels and the relationships touching them (a repair's schema excerpt)."""
        lines = ["Nodes:"]
        for label, props in self.labels.items():
            if labels is None or label in labels:
                inner = ", ".join(f"{p}: {t}" for p, t in props.items())
                lines.append(f"(:{label} {{{inner}}})")
        lines.append("Relationships (only in this direction):")
        for r in self.relationships:
            if labels is None or r.source in labels or r.target in labels:
                props = ", ".join(f"{p}: {t}" for p, t in r.properties.items())
                lines.append(f"(:{r.source})-[:{r.name}{' {' + props + '}' if props else ''}]->(:{r.target})")
        return "\n".join(lines)


__all__ = ["GraphSchema", "RelationshipType"]
