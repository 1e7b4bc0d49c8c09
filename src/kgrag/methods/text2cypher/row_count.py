"""The number of rows a question asks for ("the top 5 ...", "which 3 suppliers ..."), held to by a LIMIT.

The 1.5B model drops the LIMIT of "list the first 3 orders" in about one query in four (Northwind dev), and
the answer is then every order. The count is plain English, not the database's: a number right after
top / first / last / bottom, or right after the opening verb or question word ("List three customers",
"Which 3 suppliers ..."). "more than 50 units" and years are not counts of rows, so nothing else is read.
"""

from __future__ import annotations

import re

from kgrag.graph.backends.guard import Token

_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
}  # fmt: skip  ("one" is left out: "the one who ...")
_NUMBER = r"(\d{1,3}|" + "|".join(_WORDS) + r")"
_AFTER_RANK = re.compile(r"\b(?:top|first|last|bottom)\s+" + _NUMBER + r"\b", re.I)
_OPENING = re.compile(
    r"^\s*(?:list|name|show|find|give|get|identify|return|retrieve|display|which|what\s+are|who\s+are)"
    r"(?:\s+me)?(?:\s+the)?\s+" + _NUMBER + r"\s+(?!(?:times|units?|percent|years?|days?|of)\b)[a-z]",
    re.I,
)


def stated_row_count(question: str) -> int | None:
    """How many rows the question asks for, when it says so; else None."""
    found = _AFTER_RANK.search(question) or _OPENING.search(question)
    if found is None:
        return None
    word = found.group(1).lower()
    n = int(word) if word.isdigit() else _WORDS[word]
    return n if 0 < n <= 100 else None


def limit_rows(tokens: list[Token], n: int) -> list[Token] | None:
    """``tokens`` with ``LIMIT n`` after the final RETURN when the query has no LIMIT at all; else None."""
    if any(t.kind == "word" and t.value.upper() == "LIMIT" for t in tokens):
        return None
    if not any(t.kind == "word" and t.value.upper() == "RETURN" for t in tokens):
        return None
    return [*tokens, Token("word", "LIMIT", True), Token("num", str(n), True)]


__all__ = ["limit_rows", "stated_row_count"]
