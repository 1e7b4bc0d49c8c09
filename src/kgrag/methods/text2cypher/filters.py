"""Filters the question never asked for, dropped.

Asked for "the 5 categories with the most expensive products on average", the 1.5B model writes ``WHERE
p.unitsOnOrder > 0`` before the average, and for "the 3 categories with the least number of products" ``WHERE
p.unitsOnOrder IS NOT NULL AND p.unitsOnOrder > 0``: plausible conditions copied from the schema that change
the answer. A condition of a WHERE that compares a node's property with a literal (or tests it for null) is
dropped when the question names no word of the property ("units", "order") and does not contain the literal,
and so is a list of numbers the question does not say or of booleans (``s.supplierID IN [1, 2, 3]`` for "the
3 suppliers from London", ``pr.productID IN [true, true, true]``: Northwind dev, without examples),
and so is one on a property the node does not have ("Show all products with a reorderLevel of 25 or higher":
``WHERE c.region = 'OR' AND p.reorderLevel >= 25`` on a Category ``c``, which the engine refuses).
Conditions on aggregates, on two properties, or inside OR / NOT are left alone: they are the query's logic,
not a borrowed filter.

A node's property map gets the same treatment for values made up (:func:`invented_map_values`): asked for
"suppliers of products with a unit price less than $10", the 1.5B model wrote ``(p:Product {productID:
'P001'})``, and for "discontinued products under 10" ``{discontinued: true, quantityPerUnit: 'unitPrice'}``. A
text value the question does not contain and the database does not store under that property can only empty
the result, so the entry goes. So does a text the database stores that the question says no word of: with
examples in the prompt the model copies an example's value into a question that has none ("Which 3 products
have the highest units on order?" → ``(c:Category {categoryName: 'Beverages'})``, "the product names of the
top 5 most expensive products" → ``(s:Supplier {companyName: 'Exotic Liquids'})``). And so does a text the
question does say that the database does not store there and that no value of the property could be: another
property's name (``{quantityPerUnit: 'unitsInStock'}``) or a bare number the question compares with.
"""

from __future__ import annotations

import re

from kgrag.graph.backends.guard import Token, serialise
from kgrag.methods.text2cypher.joins import identifier_words, said
from kgrag.methods.text2cypher.patterns import Node, patterns, property_read
from kgrag.methods.text2cypher.scope import clauses, is_word, keep_conditions, split_at
from kgrag.methods.text2cypher.values import ValueIndex

_COMPARISONS = {"=", "<>", "<", ">", "<=", ">="}
_LITERALS = {"str", "num"}
_NUMERIC = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_MEANINGFUL = 3  # property words shorter than this ("on" of unitsOnOrder, "id") name nothing


def unasked_filters(tokens: list[Token], question: str, typed: dict[str, dict]) -> tuple[list[Token], list[str]]:
    """``tokens`` without the WHERE conditions the question does not ask for (module docstring), and what went;
    nothing without a question."""
    if not question.strip():
        return tokens, []
    words, asked = _question_words(question), question.lower()
    done: list[str] = []
    for clause in reversed([c for c in clauses(tokens) if c.keyword == "WHERE"]):
        parts = split_at(tokens, clause.start + 1, clause.end, "AND")
        if any(_joins_otherwise(tokens, k) for k in range(clause.start + 1, clause.end)):
            continue
        dropped = [(a, b) for a, b in parts if _unasked(tokens[a:b], words, asked, typed)]
        if not dropped:
            continue
        done += [f"a filter the question does not ask for: {_text(tokens[a:b])} dropped" for a, b in dropped]
        tokens = keep_conditions(tokens, clause, [(a, b) for a, b in parts if (a, b) not in dropped])
    return tokens, done


def _unasked(part: list[Token], words: set[str], asked: str, typed: dict[str, dict]) -> bool:
    read = property_read(part, 0) if len(part) >= 4 else None
    if read is None or read[0] not in typed:  # the property may not even exist
        return False
    rest = part[3:]
    if _invented_list(rest, words):
        return True
    null_test = [t.value.upper() for t in rest] in (["IS", "NULL"], ["IS", "NOT", "NULL"])
    literal = len(rest) == 2 and rest[0].value in _COMPARISONS and rest[1].kind in _LITERALS
    if not (null_test or literal):
        return False
    var, prop = read
    known = prop in typed[var]  # an unknown property fails whatever the question says
    if literal and known and _says(rest[1], words, asked):
        return False
    meaningful = [w for w in identifier_words(prop) if len(w) >= _MEANINGFUL]
    return bool(meaningful) and not any(said(w, words) for w in meaningful)


def _invented_list(rest: list[Token], words: set[str]) -> bool:
    """``IN [1, 2, 3]`` or ``IN [true, false]`` with a number the question does not say or a boolean (which no
    question lists): values made up, which empty the answer or fail on a text property."""
    if len(rest) < 4 or not is_word(rest[0], "IN") or rest[1].value != "[" or rest[-1].value != "]":
        return False
    listed = rest[2:-1:2]
    if any(t.kind not in _LITERALS and t.value.lower() not in ("true", "false") for t in listed):
        return False
    return any(t.kind != "str" and t.value.lower() not in words for t in listed)


def invented_map_values(
    tokens: list[Token], question: str, values: ValueIndex, properties: frozenset[str] = frozenset()
) -> tuple[list[Token], list[str]]:
    """``tokens`` without the map entries ``prop: 'text'`` of labelled nodes whose text is made up (module
    docstring; :func:`_made_up`), and what went. ``properties``: the schema's property names, lower-cased."""
    asked, words, done = question.lower(), _question_words(question), []
    for node in reversed([n for chain in patterns(tokens) for n in chain if isinstance(n, Node) and n.labels]):
        label = node.labels[0]
        entries = _map_entries(tokens, node.start, node.end)
        reasons = {
            (a, b): why
            for a, b in entries
            if tokens[a + 2].kind == "str"
            and (why := _made_up(label, tokens[a].value, tokens[a + 2], values, properties, words, asked))
        }
        if not reasons:
            continue
        done += [
            f"{label}.{tokens[a].value} = {tokens[a + 2].value!r} {why}: dropped" for (a, _), why in reasons.items()
        ]
        kept = [(a, b) for a, b in entries if (a, b) not in reasons]
        opening, closing = entries[0][0] - 1, entries[-1][1]
        inner: list[Token] = []
        for n, (a, b) in enumerate(kept):
            inner += ([Token("punct", ",")] if n else []) + [tokens[a]._replace(gap=bool(n)), *tokens[a + 1 : b]]
        braces = [tokens[opening], *inner, tokens[closing]] if kept else []
        tokens = [*tokens[:opening], *braces, *tokens[closing + 1 :]]
    return tokens, done


def _made_up(
    label: str,
    prop: str,
    literal: Token,
    values: ValueIndex,
    properties: frozenset[str],
    words: set[str],
    asked: str,
) -> str | None:
    """Why the map entry ``prop: literal`` of a ``label`` node is made up, or None when it may stand: a text the
    question does not contain that the database does not store there, or that the question says no word of; or
    one the question does contain that the database does not store there and that cannot be this property's
    value at all — another property's name ("products with 'unitsInStock' less than 5" → ``{quantityPerUnit:
    'unitsInStock'}``) or a bare number the question compares with ("unit price less than 10 and discontinued" →
    ``{discontinued: true, quantityPerUnit: '10'}``; Northwind dev, without examples)."""
    elsewhere = _stored_elsewhere(label, prop, literal.value, values)
    if not _says(literal, words, asked):
        if elsewhere:
            return "is not asked for and stored nowhere"
        return "is not asked for" if _unsaid(literal, words, asked) else None
    if not elsewhere:
        return None
    if literal.value.lower() in properties:
        return "is a property's name, not a value"
    return "is a number the question compares with, not a stored value" if _NUMERIC.fullmatch(literal.value) else None


def _stored_elsewhere(label: str, prop: str, text: str, values: ValueIndex) -> bool:
    """Whether ``values`` holds every value of ``label.prop`` and ``text`` is not one of them."""
    return (label, prop) in values.indexed and (label, prop) not in values.places(text)


def _unsaid(literal: Token, words: set[str], asked: str) -> bool:
    """Whether the question says no word of the text ``literal``, inflected or not ('Germany' is said by
    "German customers", 'Beverages' by nothing in "the 3 cheapest products in stock"), nor spells it out as
    the initials of its words ('UK' by "the United Kingdom", 'USA' by "the United States of America")."""
    if _spelled_out(literal.value, asked):
        return False
    said_words = [w for w in re.findall(r"[a-z0-9]+", literal.value.lower()) if len(w) >= _MEANINGFUL]
    return not any(said(w, words) for w in said_words)


_LINKING = {"of", "the", "and", "for"}  # words an acronym's letters skip ("United States of America")


def _spelled_out(text: str, asked: str) -> bool:
    """Whether ``text`` is an acronym (2-6 capitals) whose letters are the initials of consecutive words of the
    lower-case question ``asked``, linking words skipped."""
    if not (2 <= len(text) <= 6 and text.isalpha() and text.isupper()):
        return False
    heads = [w[0] for w in re.findall(r"[a-z0-9]+", asked) if w not in _LINKING]
    return any("".join(heads[i : i + len(text)]) == text.lower() for i in range(len(heads)))


def _map_entries(tokens: list[Token], start: int, end: int) -> list[tuple[int, int]]:
    """(first, end) token spans of the ``key: value`` entries of the map inside node ``tokens[start:end]``;
    none unless every value is a literal or a word (``true``)."""
    opening = next((i for i in range(start, end) if tokens[i].value == "{" and tokens[i].kind == "punct"), None)
    if opening is None or tokens[end - 1].value != "}":
        return []
    out, i = [], opening + 1
    while i + 2 < end and tokens[i].kind == "word" and tokens[i + 1].value == ":":
        if tokens[i + 2].kind not in _LITERALS and tokens[i + 2].kind != "word":
            return []
        out.append((i, i + 3))
        i += 3
        if tokens[i].value == ",":
            i += 1
    return out if i == end - 1 else []


def _question_words(question: str) -> set[str]:
    """The question's lower-case words and numbers, to hold property words and numeric literals against."""
    return set(re.findall(r"[a-z0-9]+", question.lower()))


def _says(literal: Token, words: set[str], asked: str) -> bool:
    """Whether the question contains ``literal``: a number as a word, a string as whole words (the state code
    'OR' is not in "25 or higher" as a value)."""
    if literal.kind != "str":
        return literal.value.lower() in words
    return re.search(rf"(?<![a-z0-9]){re.escape(literal.value.lower())}(?![a-z0-9])", asked) is not None


def _joins_otherwise(tokens: list[Token], k: int) -> bool:
    """OR, XOR or a NOT that is not part of IS NOT NULL: the WHERE is logic, not a list of filters."""
    return is_word(tokens[k], "OR", "XOR") or (is_word(tokens[k], "NOT") and not is_word(tokens[k - 1], "IS"))


def _text(part: list[Token]) -> str:
    return serialise(part).strip()


__all__ = ["invented_map_values", "unasked_filters"]
