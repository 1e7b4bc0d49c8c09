"""A year asked for, matched against dates the database stores as text.

A property graph imported from CSV keeps its dates as text (Northwind's ``Order.requiredDate``: '1996-07-24
00:00:00.000'). Asked for "orders with a required date in 1996", the 1.5B model without solved examples writes
``o.requiredDate = '1996-01-01'`` (every earlier dev run did), or ``toFloat(o.orderDate) = 1997``, which the
engine cannot cast. What the question means is every date of that year, and on ISO text that is a prefix:
``o.requiredDate STARTS WITH '1996'``. The rewrite is made only where the question names the year and not the
date the query wrote, on a property whose stored values are all ISO dates (:attr:`ValueIndex.dates`).
"""

from __future__ import annotations

import re

from kgrag.graph.backends.guard import Token
from kgrag.methods.text2cypher.patterns import property_read

_YEAR = re.compile(r"(?<![0-9])([12][0-9]{3})(?![0-9])")
_CASTS = {"tofloat", "tointeger"}


def _read_at(tokens: list[Token], k: int) -> tuple[int, int, str, str] | None:
    """The read starting at ``tokens[k]``, bare (``v.p``) or cast (``toFloat(v.p)``): (start, end, var, prop)."""
    read = property_read(tokens, k)
    if read is not None:
        return k, k + 3, *read
    cast = tokens[k].kind == "word" and tokens[k].value.lower() in _CASTS
    if cast and k + 5 < len(tokens) and tokens[k + 1].value == "(" and tokens[k + 5].value == ")":
        inner = _read_at(tokens, k + 2)
        if inner is not None and inner[1] == k + 5:
            return k, k + 6, inner[2], inner[3]
    return None


def _year_of(literal: Token, years: set[str], asked: str) -> str | None:
    """The asked year a literal stands for: the year itself, or its first of January when the question does
    not name that date."""
    text = literal.value
    if literal.kind not in ("str", "num") or text[:4] not in years:
        return None
    year = text[:4]
    if text == year:
        return year
    first = literal.kind == "str" and text.startswith(f"{year}-01-01") and text.lower() not in asked
    return year if first else None


def years_as_prefixes(
    tokens: list[Token], question: str, nodes: dict[str, str], dates: set[tuple[str, str]]
) -> tuple[list[Token], list[str]]:
    """``tokens`` with each ``date = <the year>`` comparison on a text date made a prefix match (module
    docstring), and what was done."""
    years = set(_YEAR.findall(question))
    if not years or not dates:
        return tokens, []
    out, done, k = list(tokens), [], 0
    while k < len(out):
        read = _read_at(out, k)
        if read is None or (nodes.get(read[2]), read[3]) not in dates:
            k += 1
            continue
        start, end, var, prop = read
        is_equal = end + 1 < len(out) and out[end].value == "=" and out[end].kind == "punct"
        year = _year_of(out[end + 1], years, question.lower()) if is_equal else None
        if year is None:
            k = end
            continue
        match = [Token("word", var, out[start].gap), Token("punct", "."), Token("word", prop)]
        match += [Token("word", "STARTS", True), Token("word", "WITH", True), Token("str", year, True)]
        done.append(f"{var}.{prop} holds dates as text: the year {year} is matched as STARTS WITH '{year}'")
        out[start : end + 2] = match
        k = start + len(match)
    return out, done


__all__ = ["years_as_prefixes"]
