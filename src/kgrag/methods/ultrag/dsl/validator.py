"""Check a parsed query against a KG: relation names must exist (base name or ``<base>_inv``, or their alias).

Small slips are repaired, not rejected — case, spaces or hyphens for underscores, ``.inv`` / ``^-1`` /
``_inverse`` for ``_inv``, a doubled ``_inv_inv`` — and reported as notes.  Anything else becomes an error
message written for the query writer: it names the bad relation, suggests close names and, when re-prompting,
:func:`feedback` adds the rule it broke, so one retry can fix it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.ultrag.dsl.aliases import relation_aliases
from kgrag.methods.ultrag.dsl.nodes import INVERSE_SUFFIX, Entity, Query, leaves, map_relations, size
from kgrag.methods.ultrag.dsl.parser import DSLSyntaxError, parse

MAX_NODES = 64
MAX_ENTITY_CHARS = 300

_INVERSE_MARKERS = re.compile(r"(?:[_.\- ]?inv(?:erse)?|\^-1|⁻¹|\s*\(inverse\))$", re.I)


@dataclass
class Validation:
    """Outcome of :func:`validate`: the repaired query (``None`` when unusable), errors and repair notes."""

    query: Query | None
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.query is not None and not self.errors


def _normal(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


class RelationResolver:
    """Maps the relation names a query writer produces to the KG's (cached per KG)."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        self.names = list(kg.relations)
        self.exact = set(self.names)
        by_normal: dict[str, list[str]] = {}
        for name in self.names:
            by_normal.setdefault(_normal(name), []).append(name)
        self.by_normal = by_normal
        self.choices = self.names + [n + INVERSE_SUFFIX for n in self.names]
        self.by_alias = {alias: name for name, alias in zip(self.names, relation_aliases(kg)) if alias != name}

    @classmethod
    def of(cls, kg: KnowledgeGraph) -> RelationResolver:
        return kg.resources.get("dsl_relation_resolver", lambda: cls(kg))

    def resolve(self, written: str) -> str | None:
        """The KG's spelling of ``written`` (with ``_inv`` when it walks backwards), or ``None``."""
        plain = self._plain(written)
        if plain is not None:
            return plain
        marker = _INVERSE_MARKERS.search(written.strip())
        if marker is None or marker.start() == 0:
            return None
        inner = self.resolve(written.strip()[: marker.start()])
        if inner is None:
            return None
        if inner.endswith(INVERSE_SUFFIX) and inner[: -len(INVERSE_SUFFIX)] in self.exact:
            return inner[: -len(INVERSE_SUFFIX)]  # r_inv_inv is r
        return inner + INVERSE_SUFFIX

    def is_alias(self, written: str) -> bool:
        """Whether ``written`` is a relation's alias (:mod:`.aliases`), forwards or backwards."""
        return written in self.by_alias or written.removesuffix(INVERSE_SUFFIX) in self.by_alias

    def _plain(self, written: str) -> str | None:
        if written in self.exact:
            return written
        if written in self.by_alias:
            return self.by_alias[written]
        found = self.by_normal.get(_normal(written), [])
        return found[0] if len(found) == 1 else None

    def suggest(self, written: str, limit: int = 3) -> list[str]:
        from rapidfuzz import fuzz, process

        hits = process.extract(written, self.choices, scorer=fuzz.WRatio, limit=limit, score_cutoff=50)
        return [name for name, _, _ in hits]


def validate(query: Query, kg: KnowledgeGraph) -> Validation:
    """Resolve every relation of ``query`` against ``kg``; collect errors instead of raising."""
    resolver = RelationResolver.of(kg)
    errors: list[str] = []
    notes: list[str] = []
    if size(query) > MAX_NODES:
        errors.append(f"the query is too large ({size(query)} parts, at most {MAX_NODES}); write a simpler one")
    for name in leaves(query):
        if len(name) > MAX_ENTITY_CHARS:
            errors.append(f"entity name too long ({len(name)} characters): {name[:40]!r}...")
    seen: dict[str, str | None] = {}

    def fix(name: str) -> str:
        if name not in seen:
            seen[name] = resolver.resolve(name)
            if seen[name] is None:
                close = resolver.suggest(name)
                hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                errors.append(f"unknown relation {name!r}{hint}")
            elif seen[name] != name and not resolver.is_alias(name):
                notes.append(f"relation {name!r} read as {seen[name]!r}")
        return seen[name] or name

    if isinstance(query, Entity):  # prose from a chatty model also parses as a bare name
        errors.append(f'the query follows no relation; write "entity name" -> relation (got {query.name[:60]!r})')
    repaired = map_relations(query, fix)
    return Validation(None if errors else repaired, errors, notes)


def parse_and_validate(text: str, kg: KnowledgeGraph) -> Validation:
    """:func:`parse` then :func:`validate`; a syntax error becomes the (only) error."""
    try:
        query = parse(text)
    except DSLSyntaxError as exc:
        return Validation(None, [str(exc)])
    return validate(query, kg)


def feedback(text: str, validation: Validation) -> str:
    """What to tell the query writer about a rejected query (used to re-prompt it once)."""
    problems = "; ".join(validation.errors) or "it could not be read"
    return (
        f"Your previous query was: {text.strip()[:300]}\n"
        f"It cannot be executed: {problems}{'' if problems.endswith(('?', '.')) else '.'}\n"
        "Use only relation names from the list (add _inv to follow a relation backwards), put entity names in "
        'double quotes, and write exactly one query, e.g. "Entity name" -> relation.'
    )
