"""Query tree → text, in the canonical form the parser reads back to the same tree.

Entities are always double-quoted (JSON escapes), relations bare when they are plain identifiers and quoted
otherwise; projection chains need no parentheses.  ``indent`` spreads intersections over several lines for
people (traces, the web UI); the single-line form is what prompts and caches use.
"""

from __future__ import annotations

import json
import re

from kgrag.methods.ultrag.dsl.nodes import Entity, Intersection, Projection, Query

_PLAIN_RELATION = re.compile(r"[^\s\"'(),\[\]→=](?:(?!->|=>)[^\s\"'(),\[\]→])*")


def format_entity(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


def format_relation(name: str) -> str:
    """A relation as the parser reads it: bare when possible, else quoted."""
    return name if _PLAIN_RELATION.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def format_query(query: Query, indent: int | None = None) -> str:
    """Canonical text of ``query``; ``indent`` (spaces) puts each AND operand on its own line."""
    return _format(query, indent, 0)


def _format(query: Query, indent: int | None, level: int) -> str:
    if isinstance(query, Entity):
        return format_entity(query.name)
    if isinstance(query, Projection):
        return f"{_format(query.operand, indent, level)} -> {format_relation(query.relation)}"
    if isinstance(query, Intersection):
        if indent is None:
            return "AND(" + ", ".join(_format(op, None, 0) for op in query.operands) + ")"
        pad = " " * (indent * (level + 1))
        inner = (",\n").join(pad + _format(op, indent, level + 1) for op in query.operands)
        return "AND(\n" + inner + "\n" + " " * (indent * level) + ")"
    raise TypeError(f"not a query node: {query!r}")
