"""Filters the question never asked for, dropped.

Asked for "the 5 categories with the most expensive products on average", the 1.5B model writes ``WHERE
p.unitsOnOrder > 0`` before the average, and for "the 3 categories with the least number of products" ``WHERE
p.unitsOnOrder IS NOT NULL AND p.unitsOnOrder > 0``: plausible conditions copied from the schema that change
the answer. A condition of a WHERE that compares a node's property with a literal (or tests it for null) is
dropped when the question names no word of the property ("units", "order") and does not contain the literal,
and so is one on a property the node does not have ("Show all products with a reorderLevel of 25 or higher":
``WHERE c.region = 'OR' AND p.reorderLevel >= 25`` on a Category ``c``, which the engine refuses).
Conditions on aggregates, on two properties, or inside OR / NOT are left alone: they are the query's logic,
not a borrowed filter.
"""

from __future__ import annotations

import re

from kgrag.graph.backends.guard import Token, serialise
from kgrag.methods.text2cypher.joins import identifier_words, said
from kgrag.methods.text2cypher.scope import clauses, is_word, split_at

_COMPARISONS = {"=", "<>", "<", ">", "<=", ">="}
_LITERALS = {"str", "num"}
_MEANINGFUL = 3  # property words shorter than this ("on" of unitsOnOrder, "id") name nothing


def unasked_filters(tokens: list[Token], question: str, typed: dict[str, dict]) -> tuple[list[Token], list[str]]:
    """``tokens`` without the WHERE conditions the question does not ask for (module docstring), and what went;
    nothing without a question."""
    if not question.strip():
        return tokens, []
    words = set(re.findall(r"[a-z0-9]+", question.lower()))
    asked = question.lower()
    done: list[str] = []
    for clause in reversed([c for c in clauses(tokens) if c.keyword == "WHERE"]):
        parts = split_at(tokens, clause.start + 1, clause.end, "AND")
        if any(_joins_otherwise(tokens, k) for k in range(clause.start + 1, clause.end)):
            continue
        dropped = [(a, b) for a, b in parts if _unasked(tokens[a:b], words, asked, typed)]
        if not dropped:
            continue
        done += [f"a filter the question does not ask for: {_text(tokens[a:b])} dropped" for a, b in dropped]
        kept = [(a, b) for a, b in parts if (a, b) not in dropped]
        out: list[Token] = []
        for n, (a, b) in enumerate(kept):
            if n:
                out.append(Token("word", "AND", True))
            out += [tokens[a]._replace(gap=True), *tokens[a + 1 : b]]
        head = [tokens[clause.start]] if kept else []
        tokens = [*tokens[: clause.start], *head, *out, *tokens[clause.end :]]
    return tokens, done


def _unasked(part: list[Token], words: set[str], asked: str, typed: dict[str, dict]) -> bool:
    if len(part) < 4 or part[1].value != "." or part[0].value not in typed:  # the property may not even exist
        return False
    rest = part[3:]
    null_test = [t.value.upper() for t in rest] in (["IS", "NULL"], ["IS", "NOT", "NULL"])
    literal = len(rest) == 2 and rest[0].value in _COMPARISONS and rest[1].kind in _LITERALS
    if not (null_test or literal):
        return False
    known = part[2].value in typed[part[0].value]  # an unknown property fails whatever the question says
    if literal and known and _says(rest[1], words, asked):
        return False
    meaningful = [w for w in identifier_words(part[2].value) if len(w) >= _MEANINGFUL]
    return bool(meaningful) and not any(said(w, words) for w in meaningful)


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


__all__ = ["unasked_filters"]
