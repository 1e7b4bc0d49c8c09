"""What every Cypher backend shares: the result type and the guarded ``run`` (template method).

A backend implements ``_execute(query, params, timeout, row_cap) -> (columns, rows, truncated)`` and may
override ``_rewrite`` for its dialect; ``run`` owns the guard, the extra row that detects truncation, timing
and turning engine errors into results.  The dialect rewrite works on the guard's tokens and the engine gets
the text serialised from them, so nothing the engine runs was skipped by the guard.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from kgrag.graph.backends.guard import (
    DEFAULT_ROW_CAP,
    CypherSyntaxError,
    Token,
    check_tokens,
    guard_cypher,
    serialise,
    tokenise_cypher,
)
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.property_graph import stored_mapping

# How a triples KG is laid out in a Cypher database, by every backend that stores one (Ladybug builds it, Bolt
# loads it): one node table of entities and one relationship table per KG relation, named by ``table_names``.
NODE_TABLE = "Entity"
# What an LLM writing a query over a triples KG is told: the layout, not the schema, which lists every relation.
TRIPLES_QUERY_SCHEMA = (
    "nodes have the label Entity and a name property; relationship types are the relations listed "
    "above with every character other than letters, digits and _ replaced by _; write "
    "(:Entity {name: '...'}) to match an entity"
)


def table_names(relations: list[str]) -> list[str]:
    """Ladybug table name per relation: characters other than letters, digits and ``_`` become ``_``.

    Ladybug reads ``a.b`` in a pattern as database ``a``, table ``b`` even inside backticks, so Freebase-style
    names (``people.person.place_of_birth``) are stored as ``people_person_place_of_birth``.  Table names are
    case-insensitive, so clashes get a numeric suffix.
    """
    out: list[str] = []
    seen: set[str] = {NODE_TABLE.lower()}
    for rel in relations:
        base = re.sub(r"\W", "_", rel, flags=re.ASCII).strip("_") or "rel"
        if base[0].isdigit():
            base = "r_" + base
        name, n = base, 1
        while name.lower() in seen:
            n += 1
            name = f"{base}_{n}"
        seen.add(name.lower())
        out.append(name)
    return out


@dataclass
class CypherResult:
    """Rows of a query, or why it was rejected (``rejected``) or failed (``error``)."""

    query: str
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    error: str | None = None
    rejected: bool = False
    truncated: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "ok": self.ok,
            "rejected": self.rejected,
            "error": self.error,
            "columns": self.columns,
            "rows": self.rows,
            "truncated": self.truncated,
            "seconds": round(self.seconds, 4),
        }


def plain_value(value: Any) -> Any:
    """Engine values as JSON-friendly Python values (Decimal sums, dates, nested nodes and lists)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


class CypherBackend:
    """Base class of the Cypher backends (Ladybug, Bolt)."""

    supports_cypher = True
    supports_paths = True
    name = "cypher"

    def run(
        self,
        query: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float = 10.0,
        row_cap: int = DEFAULT_ROW_CAP,
        trusted: bool = False,
    ) -> CypherResult:
        """Run a query (guarded unless ``trusted``) read-only, with a timeout and a row cap; never raises."""
        start = time.perf_counter()
        if trusted:
            try:
                tokens = tokenise_cypher(query)
            except CypherSyntaxError as exc:
                return CypherResult(query=query, error=str(exc))
        else:
            guard = guard_cypher(query, row_cap=row_cap + 1)  # one extra row tells us about truncation
            if not guard.ok:
                return CypherResult(query=query, error=guard.reason, rejected=True)
            tokens = guard.tokens
        tokens, params = self._rewrite(tokens, params)
        if not trusted and (reason := check_tokens(tokens)):
            return CypherResult(query=query, error=reason, rejected=True)
        query = serialise(tokens)
        try:
            columns, rows, truncated = self._execute(query, params, timeout, row_cap)
        except Exception as exc:  # the engine's parse/bind/runtime/timeout/connection errors
            return CypherResult(query=query, error=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - start)
        return CypherResult(
            query=query, columns=columns, rows=rows, truncated=truncated, seconds=time.perf_counter() - start
        )

    def _rewrite(self, tokens: list[Token], params: dict[str, Any] | None) -> tuple[list[Token], dict[str, Any] | None]:
        """Dialect adjustments of the checked tokens before execution (none by default)."""
        return tokens, params

    def _execute(
        self, query: str, params: dict[str, Any] | None, timeout: float, row_cap: int
    ) -> tuple[list[str], list[list[Any]], bool]:
        raise NotImplementedError

    def schema(self) -> str:
        """Schema description for prompts (labels, relationship types, properties)."""
        raise NotImplementedError

    def query_schema(self, kg: KnowledgeGraph) -> str:
        """What an LLM is told before it writes a query over ``kg`` on this backend.

        A property graph keeps its own labels and typed properties, so it gets :meth:`schema`; a triples KG is
        stored in the layout every backend shares (:data:`NODE_TABLE`, :func:`table_names`), which one
        sentence describes where the schema would list every relation again.
        """
        return self.schema() if stored_mapping(kg) is not None else TRIPLES_QUERY_SCHEMA

    def relation_types(self, kg: KnowledgeGraph) -> list[str] | None:
        """The relationship type storing each of ``kg``'s relations (``kg.relations[i]`` → ``[i]``), so names an
        LLM wrote the KG's way can be fitted to them; ``None`` for a property graph, whose types are its own."""
        return table_names(kg.relations) if stored_mapping(kg) is None else None
