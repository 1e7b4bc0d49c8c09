"""What the question states that the query leaves out: a value it names, a number it says, the nodes it asks for.

The 1.5B model sometimes writes a plausible query that simply forgets part of the question: "the first 3 orders
made by 'Alfreds Futterkiste' with a freight cost greater than 10" became the orders with freight above 10 of
every customer, "products that are discontinued and have less than 10 units in stock" the discontinued products
(Northwind dev). Such a query runs and returns rows, so nothing else sends it back. A value the question names
and the database stores (:meth:`.values.ValueIndex.spans`), or a number it states, that appears nowhere among the
query's literals is a problem the repair call is told about; the query is not changed here, as where the value
belongs is the model's to write. Over the 299 clean Northwind dev pairs the gold queries use every such value and
number of their questions but one (a category named by its description), so the check asks for what a right
query has.

The same holds for the nodes it asks for: "Find all products that have never been reordered" came out as the
categories of such products, and "the top 5 customers by the total freight of their orders" as orders
(:func:`other_rows_returned`).

Values written without quotes count only when the question capitalises them (a name, not a word such as
"produce" that is also a category); numbers are digits outside quoted literals, found in the query as a number
or inside a text literal ("1996" in ``'1996-07-01'``), a percentage also as a fraction ("10%" as ``0.1``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kgrag.graph.backends.guard import Token
from kgrag.methods.text2cypher.joins import identifier_words, same_stem
from kgrag.methods.text2cypher.ranking import NUMBER_WORDS
from kgrag.methods.text2cypher.scope import clauses, final_return, split_at
from kgrag.methods.text2cypher.values import ValueIndex, quoted_literals

_NUMBER = re.compile(r"(?<![\w.'-])\$?([0-9]+(?:\.[0-9]+)?)(%?)(?![\w-])")


def unused_question_values(
    tokens: list[Token],
    question: str,
    values: ValueIndex | None,
    schema_words: set[str] = frozenset(),
    properties: Iterable[tuple[str, str]] = (),
) -> list[str]:
    """Problems for the values and numbers ``question`` states that no literal of the query holds; an unquoted
    span that is a word of the schema's names (``schema_words``: "ID" of ``productID``, stored as Idaho's
    region) names the schema, not a value. A number's problem names the ``properties`` (``(owner, property)``)
    whose every word the question says right beside it, for the repair call to compare ("less than 10 units in
    stock": Product.unitsInStock)."""
    texts = [t.value.strip().lower() for t in tokens if t.kind == "str"]
    numbers = {_as_number(t.value) for t in tokens if t.kind == "num"}
    problems = []
    if values is not None:
        for start, end, hints in values.spans(question):
            quoted = question[start] in "'\""
            named = quoted or (
                question[start].isupper() and start > 0 and question[start:end].lower() not in schema_words
            )
            if not hints or not named:
                continue
            stored = {h.value.strip().lower() for h in hints}
            if not any(v in text for v in stored for text in texts):
                where = ", ".join(dict.fromkeys(f"{h.label}.{h.prop}" for h in hints))
                problems.append(
                    f"the question names '{hints[0].value}' (stored as {where}) but the query does not use it"
                )
    unquoted = question  # each quoted literal blanked, positions kept for the window
    for start, end, _ in quoted_literals(question):
        unquoted = unquoted[:start] + " " * (end - start) + unquoted[end:]
    for m in _NUMBER.finditer(unquoted):
        said = _as_number(m.group(1))
        allowed = {said, said / 100} if m.group(2) else {said}
        if allowed & numbers or any(re.search(rf"(?<![0-9.]){re.escape(m.group(1))}(?![0-9])", t) for t in texts):
            continue
        problem = f"the question says {m.group(0).strip()} but the query does not use {m.group(1)}"
        beside = _properties_beside(question, m.start(), m.end(), properties)
        problems.append(problem + (f"; the question puts it beside {', '.join(beside)}" if beside else ""))
    return problems


def _properties_beside(text: str, start: int, end: int, properties: Iterable[tuple[str, str]]) -> list[str]:
    """``owner.property`` for each property all of whose words (of three letters or more) are among the words of
    the four tokens either side of ``text[start:end]`` (a quoted 'unitsOnOrder' read as its words), the nearest
    first; at most three. A key (a property with the word "id") is not a thing a question compares."""
    before = re.findall(r"[A-Za-z]+", text[:start])[-4:]
    after = re.findall(r"[A-Za-z]+", text[end:])[:4]
    near = [(len(before) - k, w) for k, token in enumerate(before) for w in identifier_words(token)]
    near += [(k + 1, w) for k, token in enumerate(after) for w in identifier_words(token)]
    found = []
    for owner, prop in properties:
        words = identifier_words(prop)
        meaningful = [w for w in words if len(w) >= 3]
        if "id" in words or not meaningful:
            continue
        distances = [min((d for d, x in near if w == x or same_stem(w, x)), default=None) for w in meaningful]
        if None not in distances:
            found.append((max(distances), f"{owner}.{prop}"))
    return [name for _, name in sorted(found)[:3]]


# the words a question opens with before the thing it asks for: "Which 3 suppliers", "List the first 5 orders",
# "What are the names of products", "Find all customers"
_OPENING = re.compile(
    r"^\s*(?:which|what|who|list|find|show|identify|display|get|give|return|name)\b"
    r"(?:\s+(?:are|is|were|was|me|all|the|of|first|top|last|\d+|" + "|".join(NUMBER_WORDS) + r"|names?|details))*"
    r"\s+([a-z]+)",
    re.I,
)


def asked_label(question: str, labels: Iterable[str]) -> str | None:
    """The one label whose name the question's opening asks for ("Which 3 suppliers ..." → Supplier), or None."""
    m = _OPENING.match(question)
    if m is None:
        return None
    asked = m.group(1).lower()
    hits = [label for label in labels if any(w == asked or same_stem(w, asked) for w in identifier_words(label))]
    return hits[0] if len(hits) == 1 else None


def other_rows_returned(tokens: list[Token], question: str, labels: Iterable[str], nodes: dict[str, str]) -> list[str]:
    """A problem when the question's opening asks for one label's nodes and the query's first column is a node of
    another label, or its property ("Find all products never reordered" answered with categories). The gold
    queries of the 299 clean Northwind dev pairs whose question opens this way return the asked label first, all
    265 of them."""
    asked = asked_label(question, labels)
    found = final_return(tokens)
    if asked is None or found is None:
        return []
    end = next((c.start for c in clauses(tokens) if c.start > found[0]), len(tokens))
    items = split_at(tokens, found[1], end, ",")
    first = tokens[items[0][0]] if items else None
    label = nodes.get(first.value) if first is not None and first.kind == "word" else None
    if label is None or label == asked:
        return []
    return [f"the question asks for {asked} nodes, but the query's first column is a {label}"]


def _as_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


__all__ = ["asked_label", "other_rows_returned", "unused_question_values"]
