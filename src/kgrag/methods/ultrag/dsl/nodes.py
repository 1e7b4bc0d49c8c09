"""The syntax tree of ULTRAG's query language: entities, relation projections and n-ary intersections.

A query is a tree whose leaves are entity *mentions* (text, linked to KG entities later) and whose inner
nodes are projections (follow one relation from every member of a fuzzy set) and intersections (members of
all operands).  ``AND(e1 -> r1_inv, e2 -> r2) -> r3`` is
``Projection(Intersection((Projection(Entity("e1"), "r1_inv"), Projection(Entity("e2"), "r2"))), "r3")``.
Nodes are frozen dataclasses, so trees compare by value and can be hashed (round-trip tests rely on it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

INVERSE_SUFFIX = "_inv"


@dataclass(frozen=True)
class Entity:
    """A leaf: an entity mention as the query writer spelled it."""

    name: str


@dataclass(frozen=True)
class Projection:
    """Entities reached from ``operand`` over ``relation`` (``<rel>_inv`` walks ``rel`` backwards)."""

    operand: Query
    relation: str


@dataclass(frozen=True)
class Intersection:
    """Entities in every operand (fuzzy AND); at least two operands."""

    operands: tuple[Query, ...]

    def __post_init__(self) -> None:
        if len(self.operands) < 2:
            raise ValueError("an intersection needs at least two operands")


Query = Entity | Projection | Intersection


def walk(query: Query) -> Iterator[Query]:
    """Every node of the tree, parents before children, operands left to right."""
    stack: list[Query] = [query]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, Projection):
            stack.append(node.operand)
        elif isinstance(node, Intersection):
            stack.extend(reversed(node.operands))


def leaves(query: Query) -> list[str]:
    """Entity mentions in reading order (repeats kept: each leaf is linked on its own)."""
    return [node.name for node in walk(query) if isinstance(node, Entity)]


def relations(query: Query) -> list[str]:
    """Relation names used by the query, outermost projection first."""
    return [node.relation for node in walk(query) if isinstance(node, Projection)]


def size(query: Query) -> int:
    """Number of nodes."""
    return sum(1 for _ in walk(query))


def depth(query: Query) -> int:
    """Longest chain of projections from a leaf to the root (the query's hop count)."""
    if isinstance(query, Entity):
        return 0
    if isinstance(query, Projection):
        return 1 + depth(query.operand)
    return max(depth(op) for op in query.operands)


def map_relations(query: Query, fn) -> Query:  # type: ignore[no-untyped-def]
    """A copy of the tree with every relation name replaced by ``fn(name)``."""
    if isinstance(query, Entity):
        return query
    if isinstance(query, Projection):
        return Projection(map_relations(query.operand, fn), fn(query.relation))
    return Intersection(tuple(map_relations(op, fn) for op in query.operands))


def shape(query: Query) -> str:
    """The query's structure with entities and relations erased, e.g. ``AND(e->r, e->r)->r`` (for reports)."""
    if isinstance(query, Entity):
        return "e"
    if isinstance(query, Projection):
        return f"{shape(query.operand)}->r"
    return "AND(" + ", ".join(shape(op) for op in query.operands) + ")"
