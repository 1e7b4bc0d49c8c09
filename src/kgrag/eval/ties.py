"""Ties at a ranking's cut: when "the 3 suppliers with the most products" has no single right answer.

A gold query that ranks and cuts (``ORDER BY n DESC LIMIT 3``) keeps whichever of the rows tied at the cut its
engine happens to meet first. On Northwind, "Which 3 suppliers supply the most products?" has two suppliers
with 5 products and three with 4: the gold query keeps one of the three, and a predicted query that keeps
another — or the gold query itself written with RETURN instead of WITH — is not the same multiset of rows,
though it answers the question exactly as well. :func:`strict_match` calls it wrong; :func:`match_with_ties`
calls it right when its rows are the gold query's rows ranked above the cut plus as many of the tied rows as
the gold keeps.

Only gold queries of one plain shape are read this way (:func:`ranked_cut`): a single ``ORDER BY`` on one
returned column (an alias or ``var.prop``) followed by ``LIMIT n``, and after it at most a RETURN without
aggregates, ordering or further clauses — so that dropping the cut changes nothing but how many rows come
back. Other queries keep plain strict matching.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import permutations
from typing import Any

from kgrag.eval.execution import Rows, cell_key, strict_match
from kgrag.graph.backends.guard import CypherSyntaxError, Token, serialise, tokenise_cypher

_AGGREGATES = {"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp"}
_AFTER_CUT = {"ORDER", "LIMIT", "SKIP", "MATCH", "OPTIONAL", "WITH", "UNWIND", "WHERE", "UNION", "CALL"}
_DIRECTIONS = {"ASC": False, "ASCENDING": False, "DESC": True, "DESCENDING": True}
MAX_PERMUTED_COLUMNS = 4  # wider results are compared in their given column order


@dataclass(frozen=True)
class RankedCut:
    """A gold query's ranking: the query without its ORDER BY ... LIMIT, the key column, direction, limit."""

    uncut: str
    key: str
    descending: bool
    limit: int


@dataclass(frozen=True)
class Ties:
    """The gold rows ranked strictly above the cut, and every row tied with the last one kept."""

    above: list[tuple[Any, ...]]
    tied: list[tuple[Any, ...]]


def _word(tok: Token, *values: str) -> bool:
    return tok.kind == "word" and tok.value.upper() in values


def ranked_cut(query: str) -> RankedCut | None:
    """The ranking of ``query`` when it has the plain shape of the module docstring, else None."""
    try:
        tokens = [t for t in tokenise_cypher(query) if not (t.kind == "punct" and t.value == ";")]
    except CypherSyntaxError:
        return None
    orders = [i for i in range(len(tokens) - 1) if _word(tokens[i], "ORDER") and _word(tokens[i + 1], "BY")]
    if len(orders) != 1:
        return None
    start = orders[0]
    i = start + 2
    key: list[Token] = []
    while i < len(tokens) and not _word(tokens[i], "LIMIT", "SKIP", *_DIRECTIONS):
        key.append(tokens[i])
        i += 1
    plain = len(key) == 1 and key[0].kind == "word"
    dotted = len(key) == 3 and key[0].kind == "word" and key[1].value == "." and key[2].kind == "word"
    if not (plain or dotted):
        return None
    descending = False
    if i < len(tokens) and tokens[i].value.upper() in _DIRECTIONS:
        descending = _DIRECTIONS[tokens[i].value.upper()]
        i += 1
    if i + 1 >= len(tokens) or not _word(tokens[i], "LIMIT") or tokens[i + 1].kind != "num":
        return None
    limit, rest = int(float(tokens[i + 1].value)), tokens[i + 2 :]
    if rest and not _word(rest[0], "RETURN"):
        return None
    for k, tok in enumerate(rest):
        if k and _word(tok, *_AFTER_CUT):
            return None
        following = rest[k + 1] if k + 1 < len(rest) else None
        if tok.kind == "word" and tok.value.lower() in _AGGREGATES and following is not None and following.value == "(":
            return None
    return RankedCut(serialise(tokens[:start] + rest), "".join(t.value for t in key), descending, limit)


def gold_ties(cut: RankedCut, columns: list[str], rows: Rows) -> Ties | None:
    """The ties at the cut of the uncut query's ``rows`` (``columns`` its column names), or None when the key
    is not a column, cannot be ordered, or no tie crosses the cut (plain strict matching is then exact)."""
    if cut.key not in columns or len(rows) <= cut.limit or cut.limit < 1:
        return None
    j = columns.index(cut.key)
    keyed = [(row[j], tuple(cell_key(v) for v in row)) for row in rows]
    if any(not isinstance(k, int | float | str) or isinstance(k, bool) for k, _ in keyed):
        return None
    try:
        keyed.sort(key=lambda kr: kr[0], reverse=cut.descending)
    except TypeError:  # mixed types
        return None
    last = keyed[cut.limit - 1][0]
    if keyed[cut.limit][0] != last:
        return None
    first = next(i for i, (k, _) in enumerate(keyed) if k == last)
    return Ties([r for _, r in keyed[:first]], [r for k, r in keyed if k == last])


UNCUT_ROWS = 100_000  # the rows an uncut gold query may return and still be read for ties


def ties_of(backend: Any, gold: str, timeout: float) -> Ties | None:
    """The ties at the cut of ``gold`` as ``backend`` runs it (trusted: a gold query is ours), or None when it does
    not rank and cut in the plain shape, the uncut query fails or returns more than :data:`UNCUT_ROWS` rows."""
    cut = ranked_cut(gold)
    if cut is None:
        return None
    uncut = backend.run(cut.uncut, row_cap=UNCUT_ROWS, timeout=timeout, trusted=True)
    return gold_ties(cut, uncut.columns, uncut.rows) if uncut.ok and not uncut.truncated else None


def match_with_ties(pred_rows: Rows, gold_rows: Rows, ties: Ties | None) -> bool:
    """:func:`strict_match`, or, where the gold has ``ties``, rows that are the gold's rows above the cut plus
    as many rows tied at it as the gold keeps, for some order of the predicted columns."""
    if strict_match(pred_rows, gold_rows):
        return True
    if ties is None:
        return False
    pred = [tuple(cell_key(v) for v in row) for row in pred_rows]
    if len(pred) != len(gold_rows) or not pred or any(len(row) != len(ties.tied[0]) for row in pred):
        return False
    width = len(pred[0])
    above, tied = Counter(ties.above), Counter(ties.tied)
    orders = permutations(range(width)) if width <= MAX_PERMUTED_COLUMNS else [tuple(range(width))]
    for order in orders:
        got = Counter(tuple(row[i] for i in order) for row in pred)
        rest = got - above
        if not above - got and not rest - tied:
            return True
    return False


__all__ = ["UNCUT_ROWS", "RankedCut", "Ties", "gold_ties", "match_with_ties", "ranked_cut", "ties_of"]
