"""Interning names to ids as triples stream in, with the name checks every reader shares.

Every reader (file formats, DataFrames, networkx graphs, property-graph tables) feeds one
:class:`TripleBuilder`, so ids are assigned the same way (first appearance, head before tail) and a name the
store cannot keep is refused with the same ``path:line`` error whatever the source.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

import numpy as np

from kgrag.errors import KGFormatError
from kgrag.graph.kg import KnowledgeGraph


class TripleBuilder:
    """Interns names to ids as triples stream in, then builds a :class:`KnowledgeGraph`.

    ``source`` names the input in error messages; ``line`` arguments are 1-based.
    """

    def __init__(self, source: str = "<input>") -> None:
        self.source = source
        self.entity_ids: dict[str, int] = {}
        self.relation_ids: dict[str, int] = {}
        self.heads = array("i")
        self.rels = array("i")
        self.tails = array("i")
        self.aliases: dict[int, list[str]] = {}
        self.notes: list[str] = []  # what a reader chose for the user to see ("columns: subject → head, ...")

    def fail(self, line: int | None, problem: str) -> KGFormatError:
        return KGFormatError(self.source, line, problem)

    def check_name(self, value: str, line: int | None, what: str) -> str:
        """``value`` if the store can keep it exactly (see the module doc), else a ``path:line`` error."""
        if not value or value.isspace():
            raise self.fail(line, f"empty {what}")
        if "\n" in value or "\r" in value:
            raise self.fail(line, f"{what} contains a line break: {value[:60]!r}")
        if not value.isascii():  # isascii is O(1); only non-ASCII names can hold a surrogate
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = ord(value[exc.start])
                raise self.fail(
                    line, f"{what} contains a lone surrogate (U+{bad:04X}), which UTF-8 cannot store"
                ) from None
        return value

    def _first_seen(self, ids: dict[str, int], name: str, line: int | None, what: str) -> int:
        """A new id for ``name`` once it passes :meth:`check_name`: each distinct name is checked once."""
        new = ids[self.check_name(name, line, what)] = len(ids)
        return new

    def add(self, head: str, relation: str, tail: str, line: int | None = None) -> None:
        ents, rels = self.entity_ids, self.relation_ids
        h, r, t = ents.get(head), rels.get(relation), ents.get(tail)  # inline: this runs once per triple
        if h is None:
            h = self._first_seen(ents, head, line, "head")
        if r is None:
            r = self._first_seen(rels, relation, line, "relation")
        if t is None:
            t = ents.get(tail)  # tail may equal head
            if t is None:
                t = self._first_seen(ents, tail, line, "tail")
        self.heads.append(h)
        self.rels.append(r)
        self.tails.append(t)

    def add_entity(self, name: str, line: int | None = None) -> int:
        """Intern an entity that may have no triples (e.g. an isolated node of a networkx graph)."""
        known = self.entity_ids.get(name)
        return known if known is not None else self._first_seen(self.entity_ids, name, line, "entity name")

    def add_aliases(self, name: str, aliases: Iterable[str], line: int | None = None) -> None:
        eid = self.entity_ids.get(name)
        if eid is None:
            return
        known = self.aliases.setdefault(eid, [])
        for alias in aliases:
            if alias and alias != name and alias not in known:
                known.append(self.check_name(alias, line, "alias"))

    def build(self) -> KnowledgeGraph:
        if not self.heads:
            raise self.fail(None, "no triples found (the input is empty)")
        return KnowledgeGraph(
            list(self.entity_ids),
            list(self.relation_ids),
            np.frombuffer(self.heads, dtype=np.int32),
            np.frombuffer(self.rels, dtype=np.int32),
            np.frombuffer(self.tails, dtype=np.int32),
            aliases={k: v for k, v in self.aliases.items() if v},
        )
