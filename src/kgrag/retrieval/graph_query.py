"""Graph-query retrieval: getting an LLM's Cypher out of its text, fitting it to the KG, rows as evidence.

Execution itself is the backends' guarded ``run`` (parser-level guard, read-only engine, timeout, row cap);
this module only prepares the query and reads the result.  Models wrap queries in code fences, forget the
tag, or write relation types the way the KG spells them (``people.person.place_of_birth``) while a triples
KG stored in Ladybug names its tables Cypher-safely (``people_person_place_of_birth``); both are fixed
here rather than failing the step.
"""

from __future__ import annotations

import re
from typing import Any

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.normalize import normalize
from kgrag.types import Evidence

_FENCED = re.compile(r"```[ \t]*(?:cypher|opencypher|sql|neo4j)?[ \t]*\n?(.*?)(?:```|$)", re.S | re.I)
_STATEMENT = re.compile(r"\b(?:OPTIONAL\s+MATCH|MATCH|WITH|UNWIND|CALL)\b.*?\bRETURN\b[^\n<]*(?:\n[^\n<]+)*", re.S)
# A relationship type inside a pattern: "[:T]", "[r:T]", "[r:T|U]", "[:`T`*1..2]".
_REL_PATTERN = re.compile(r"\[[^\]\[]*\]")
_REL_TYPE = re.compile(r"([:|]\s*:?\s*)(`[^`]+`|[A-Za-z_][\w.]*)")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


_NEXT_STATEMENT = re.compile(r"\n\s*(?=(?:OPTIONAL\s+MATCH|MATCH|UNWIND|CALL)\b)", re.I)


def first_statement(query: str) -> str:
    """Only the first statement when a model wrote several, one after another (a new ``MATCH`` line after a
    ``RETURN``): the guard would reject them all together."""
    ret = re.search(r"\bRETURN\b", query, re.I)
    if not ret:
        return query
    nxt = _NEXT_STATEMENT.search(query, ret.end())
    return query[: nxt.start()].strip() if nxt else query


def extract_query(section: str | None, raw: str = "") -> str:
    """The query from a parsed ``<opencypher>`` section (fences and stray backticks removed), else the first
    fenced block or ``MATCH ... RETURN ...`` statement in the raw text; ``""`` when there is none.  Of several
    statements written one after another, only the first is kept."""
    return first_statement(_extract(section, raw))


def _extract(section: str | None, raw: str) -> str:
    text = (section or "").strip()
    if text:
        fenced = _FENCED.search(text)
        if fenced and fenced.group(1).strip():
            text = fenced.group(1)
        text = text.strip().strip("`").strip()
        if text.lower().startswith(("cypher\n", "opencypher\n")):
            text = text.split("\n", 1)[1]
        return text.strip()
    for block in _FENCED.findall(raw or ""):
        if re.search(r"\b(MATCH|RETURN)\b", block, re.I):
            return block.strip()
    found = _STATEMENT.search(raw or "")
    return found.group().strip() if found else ""


def fit_relation_types(query: str, kg: KnowledgeGraph, tables: list[str]) -> str:
    """Rewrite relationship types in patterns to the table names of a triples KG (``tables[i]`` stores
    ``kg.relations[i]``): exact KG names, then names equal after normalisation. Strings are left alone."""
    by_name = {**{normalize(r): t for r, t in zip(kg.relations, tables)}, **dict(zip(kg.relations, tables))}
    lowered = {t.lower(): t for t in tables}

    def fix_type(m: re.Match[str]) -> str:
        name = m.group(2).strip("`")
        table = lowered.get(name.lower()) or by_name.get(name) or by_name.get(normalize(name))
        return m.group(1) + table if table else m.group(0)

    def fix_segment(segment: str) -> str:
        return _REL_PATTERN.sub(lambda p: _REL_TYPE.sub(fix_type, p.group()), segment)

    out, last = [], 0
    for m in _STRING.finditer(query):
        out.append(fix_segment(query[last : m.start()]))
        out.append(m.group())
        last = m.end()
    out.append(fix_segment(query[last:]))
    return "".join(out)


def value_text(value: Any) -> str:
    """A result cell as text; a whole node (a dict) as its name property (``name``, else a ``...Name`` key such as
    ``companyName``), else its properties — so ``RETURN s`` answers with names, not with a dict's repr."""
    if isinstance(value, dict):
        name = value.get("name") or next((v for k, v in value.items() if k.lower().endswith("name")), None)
        return str(name) if name is not None else ", ".join(f"{k}: {v}" for k, v in value.items() if k[0] != "_")
    return str(value)


def first_column_answers(rows: list[list[Any]]) -> list[str]:
    """The answers a query result gives: its first column's values as text (nodes by name), each once, in order."""
    return list(dict.fromkeys(value_text(row[0]) for row in rows if row and row[0] is not None))


def run_recorded(backend: Any, query: str, outputs: dict[str, Any], *, row_cap: int, timeout: float) -> Any:
    """Run an untrusted query on ``backend`` (guarded there) and record in a trace step's ``outputs`` what was
    executed and what came back; returns the backend's ``CypherResult``."""
    result = backend.run(query, row_cap=row_cap, timeout=timeout)
    outputs.update(
        executed=result.query,
        ok=result.ok,
        rejected=result.rejected,
        error=result.error,
        rows=len(result.rows),
        result_rows=result.rows if result.ok else [],
    )
    return result


def rows_as_evidence(columns: list[str], rows: list[list[Any]], *, source: str = "cypher") -> list[Evidence]:
    """One :class:`Evidence` per result row (``col = value`` pairs); string and node-name values are its
    entities, so answer recall can see them."""
    out = []
    for row in rows:
        values = [value_text(v) for v in row]
        out.append(
            Evidence(
                text="query result: " + "; ".join(f"{c} = {v}" for c, v in zip(columns, values)),
                entities=[v for v, raw in zip(values, row) if raw is not None and not isinstance(raw, bool)],
                source=source,
            )
        )
    return out


__all__ = [
    "extract_query",
    "first_column_answers",
    "first_statement",
    "fit_relation_types",
    "rows_as_evidence",
    "value_text",
]
