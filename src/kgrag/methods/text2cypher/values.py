"""Value linking: the literals a question names, found among the database's own property values.

A small model writes ``{categoryName: 'seafood'}`` or ``{name: 'Sea Food'}`` and the query returns nothing.
Matching the question's words against the values actually stored (case-insensitively, longest span first)
gives the prompt exact hints such as ``Category.categoryName = 'Seafood'``. The index holds every distinct
string value of every string property (one query per property, built once per database and kept with the KG);
properties with more than ``max_values`` distinct values (free text, keys of huge tables) are left out, and
purely numeric values match only when the question quotes them, so an ID ``'1'`` does not match "top 1".
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kgrag.graph.backends.guard import quote_name
from kgrag.methods.text2cypher.schema import GraphSchema

_WORD = re.compile(r"[\w'&./-]+", re.UNICODE)
_QUOTED = re.compile(r"'([^']{1,200})'|\"([^\"]{1,200})\"")
MAX_SPAN = 6
_ISO_DATE = re.compile(r"[12][0-9]{3}-[01][0-9]-[0-3][0-9]")
_NUMBER_WORD = re.compile(r"\b[0-9]+(\.[0-9]+)?\b")
_NUMBER = re.compile(r"[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")


def quoted_literals(question: str) -> list[tuple[int, int, str]]:
    """The texts ``question`` quotes ('…' or "…", at most 200 characters), with the span of each quoted literal
    (quotes included): one reading of quotes for the value links, the checks and the mends."""
    return [(m.start(), m.end(), m.group(1) or m.group(2)) for m in _QUOTED.finditer(question)]


def _stored(values: Iterable[Any]) -> list[str]:
    """The text values of a column, without empty ones and the text NULL."""
    return [v for v in values if isinstance(v, str) and v.strip() and v.upper() != "NULL"]


def _key(text: str) -> str:
    return " ".join(text.lower().split()).strip(".,;:!?")


@dataclass(frozen=True)
class ValueHint:
    label: str
    prop: str
    value: str

    def text(self) -> str:
        quoted = "'" + self.value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return f"{self.label}.{self.prop} = {quoted}"


class ValueIndex:
    """Normalised value → where it is stored; built from ``(label, property, values)`` triples."""

    def __init__(
        self,
        columns: Iterable[tuple[str, str, Iterable[Any]]],
        relationship_columns: Iterable[tuple[str, str, Iterable[Any]]] = (),
    ) -> None:
        self.values: dict[str, list[ValueHint]] = {}
        self.dates: set[tuple[str, str]] = set()  # (label, property) whose every stored value is an ISO date
        self.indexed: set[tuple[str, str]] = set()  # (label, property) whose every value is here
        self.numbers: set[tuple[str, str]] = set()  # (label or type, property) whose every value is a number's text
        for label, prop, values in columns:
            self.indexed.add((label, prop))
            kept = _stored(values)
            for value in kept:
                self.values.setdefault(_key(value), []).append(ValueHint(label, prop, value))
            if kept and all(_ISO_DATE.match(v) for v in kept):
                self.dates.add((label, prop))
            self._count_numbers(label, prop, kept)
        for rel_type, prop, values in relationship_columns:  # for the number test only: no hints
            self._count_numbers(rel_type, prop, _stored(values))

    def _count_numbers(self, owner: str, prop: str, kept: list[str]) -> None:
        if kept and all(_NUMBER.fullmatch(v.strip()) for v in kept):
            self.numbers.add((owner, prop))

    @classmethod
    def from_backend(cls, backend: Any, schema: GraphSchema, *, max_values: int = 20_000) -> ValueIndex:
        """Every distinct string value of each string property the backend stores (trusted queries we write);
        a relationship type's, for the number test only."""

        def read(pattern: str, owner: str, props: dict[str, str]) -> list[tuple[str, str, list[Any]]]:
            out = []
            for prop, kind in props.items():
                if kind.upper() != "STRING":
                    continue
                try:  # a name that cannot be quoted safely is left out rather than fail the index
                    query = f"MATCH {pattern.format(quote_name(owner))} RETURN DISTINCT x.{quote_name(prop)} "
                except ValueError:
                    continue
                query += f"LIMIT {max_values + 1}"
                result = backend.run(query, trusted=True, row_cap=max_values + 1)
                if result.ok and len(result.rows) <= max_values:
                    out.append((owner, prop, [row[0] for row in result.rows]))
            return out

        columns = [c for label, props in schema.labels.items() for c in read("(x:{})", label, props)]
        related = [c for r in schema.relationships for c in read("()-[x:{}]->()", r.name, r.properties)]
        return cls(columns, related)

    def places(self, value: str) -> set[tuple[str, str]]:
        """The (label, property) pairs that store ``value`` (compared as :meth:`link` compares)."""
        return {(h.label, h.prop) for h in self.values.get(_key(value), [])}

    def matching(self, operator: str, text: str) -> set[tuple[str, str]]:
        """The (label, property) pairs some stored value of which ``operator`` (``CONTAINS``, ``STARTS WITH`` or
        ``ENDS WITH``) holds for with ``text``, as Cypher compares: case and all."""
        test = {"CONTAINS": str.__contains__, "STARTS WITH": str.startswith, "ENDS WITH": str.endswith}[operator]
        return {(h.label, h.prop) for hints in self.values.values() for h in hints if test(h.value, text)}

    def spans(self, question: str) -> list[tuple[int, int, list[ValueHint]]]:
        """Where the question names values: quoted literals (exact, then close spellings; one the database
        lacks is a span without hints), then the longest word spans equal to a stored value, never two
        overlapping word spans (a word span may lie inside a quoted literal)."""
        found: list[tuple[int, int, list[ValueHint]]] = []
        for start, end, text in quoted_literals(question):
            literal = _key(text)
            hints = self.values.get(literal)
            if hints is None:
                close = difflib.get_close_matches(literal, self.values.keys(), n=1, cutoff=0.85)
                hints = self.values[close[0]] if close else []
            found.append((start, end, hints))
        words = [(m.start(), m.end()) for m in _WORD.finditer(question)]
        taken = [False] * len(words)
        for size in range(min(MAX_SPAN, len(words)), 0, -1):
            for i in range(len(words) - size + 1):
                if any(taken[i : i + size]):
                    continue
                span = _key(question[words[i][0] : words[i + size - 1][1]])
                if len(span) < 2 or span.replace(".", "").isdigit() or span not in self.values:
                    continue
                found.append((words[i][0], words[i + size - 1][1], self.values[span]))
                taken[i : i + size] = [True] * size
        return found

    def link(self, question: str, *, limit: int = 8) -> list[ValueHint]:
        """Hints for the values the question names (:meth:`spans`), quoted literals first."""
        return list(dict.fromkeys(h for _, _, hints in self.spans(question) for h in hints))[:limit]

    def mask(self, question: str) -> str:
        """The question with the values it names and its numbers replaced by ``value`` / ``number``: "orders
        shipped to Germany in 1997" and "orders shipped to France in 1996" then read alike, as questions whose
        queries share a shape should (example retrieval with masked questions, as DAIL-SQL does)."""
        kept: list[tuple[int, int]] = []
        for start, end, _ in sorted(self.spans(question), key=lambda s: (s[0], -s[1])):
            if not kept or start >= kept[-1][1]:
                kept.append((start, end))
        out = question
        for start, end in reversed(kept):
            out = out[:start] + "value" + out[end:]
        return _NUMBER_WORD.sub("number", out)


__all__ = ["ValueHint", "ValueIndex"]
