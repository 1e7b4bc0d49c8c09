"""Execution accuracy for Text2Cypher: does a predicted query return what the gold query returns?

Two questions of different strength, both about result *values* (a question fixes what is asked for, not
what the columns are called):

- :func:`strict_match` — the rows are the same multiset of value tuples. Column names are ignored and so is
  column order (``RETURN name, n`` and ``RETURN n, name`` answer the same question), but every column must
  be there and nothing else, and every row as often as in the gold result.
- :func:`relaxed_match` — every value in the gold rows appears somewhere in the predicted rows. Extra columns
  (an id next to the name), extra rows and a different shape (a list instead of rows) are forgiven; a
  missing value is not.

Cells are compared after :func:`cell_key`: numbers by value with a small tolerance (an average computed in
another order differs in the last digits; ``5`` equals ``5.0``), strings stripped, nodes by their properties
(not the engine's internal id, which differs between databases), lists element by element. ``rows_match`` in
:mod:`kgrag.eval.metrics` is the older, order-aware check ``kgrag eval`` and byokg's benchmark use.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from kgrag.retrieval.graph_query import value_text

Rows = Sequence[Sequence[Any]]
SIGNIFICANT_DIGITS = 6  # numbers equal to 6 significant digits are equal
MAX_COLUMNS = 12  # wider results are compared in their given column order only


def cell_key(value: Any) -> Any:
    """A hashable, normalised form of one result cell (see the module docstring for what counts as equal)."""
    if value is None:
        return None
    if isinstance(value, bool):  # before numbers: True is not 1 in a result
        return ("bool", value)
    if isinstance(value, int | float):
        return ("num", _number(value))
    if isinstance(value, str):
        return ("str", value.strip())
    if isinstance(value, dict):
        props = {str(k): v for k, v in value.items() if not str(k).startswith("_")}
        return ("node", tuple(sorted((k, cell_key(v)) for k, v in props.items())))
    if isinstance(value, list | tuple):
        return ("list", tuple(cell_key(v) for v in value))
    return ("str", str(value).strip())


def _number(value: float) -> float | int | str:
    """Integral numbers exactly; others rounded to ``SIGNIFICANT_DIGITS`` (then integral ones as ints)."""
    if isinstance(value, int):
        return value
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if value.is_integer():
        return int(value)
    rounded = float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    return int(rounded) if rounded.is_integer() else rounded


def strict_match(pred_rows: Rows, gold_rows: Rows) -> bool:
    """True when the predicted rows equal the gold rows as multisets of normalised value tuples, for some
    order of the predicted columns. Different column counts never match; two empty results do."""
    pred = [tuple(cell_key(v) for v in row) for row in pred_rows]
    gold = [tuple(cell_key(v) for v in row) for row in gold_rows]
    if len(pred) != len(gold):
        return False
    if not gold:
        return True
    width = len(gold[0])
    if any(len(row) != width for row in pred + gold):
        return False
    want = Counter(gold)
    if width > MAX_COLUMNS:
        return Counter(pred) == want
    return any(Counter(tuple(row[i] for i in order) for row in pred) == want for order in _orders(pred, gold))


def _orders(pred: list[tuple], gold: list[tuple]) -> Iterator[tuple[int, ...]]:
    """Orders of the predicted columns worth trying: gold column ``j`` may only take a predicted column that
    holds the same multiset of values (so the search is tiny unless columns repeat each other)."""
    width = len(gold[0])
    pred_cols = [Counter(row[i] for row in pred) for i in range(width)]
    gold_cols = [Counter(row[j] for row in gold) for j in range(width)]
    options = [[i for i in range(width) if pred_cols[i] == gold_cols[j]] for j in range(width)]

    def extend(chosen: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if len(chosen) == width:
            yield chosen
            return
        for i in options[len(chosen)]:
            if i not in chosen:
                yield from extend((*chosen, i))

    return extend(())


def relaxed_match(pred_rows: Rows, gold_rows: Rows) -> bool:
    """True when every non-null value of the gold rows appears somewhere in the predicted rows.

    A gold node is found as the same node or as its name (``RETURN s`` answered by ``RETURN s.companyName``);
    a gold list is looked at element by element. Column names, column order, extra columns and extra rows
    are ignored. When the gold rows hold no value at all (only nulls, or no rows), this is :func:`strict_match`.
    """
    wanted = {key for row in gold_rows for value in row for key in _gold_values(value)}
    if not wanted:
        return strict_match(pred_rows, gold_rows)
    found = {key for row in pred_rows for value in row for key in _pred_values(value)}
    return wanted <= found


def _gold_values(value: Any) -> Iterator[Any]:
    if value is None:
        return
    if isinstance(value, list | tuple):
        for item in value:
            yield from _gold_values(item)
    elif isinstance(value, dict):
        has_name = "name" in value or any(str(k).lower().endswith("name") for k in value)
        yield cell_key(value_text(value)) if has_name else cell_key(value)
    else:
        yield cell_key(value)


def _pred_values(value: Any) -> Iterator[Any]:
    """Every form in which a predicted cell can supply a gold value: itself, its elements, a node's
    properties."""
    if value is None:
        return
    yield cell_key(value)
    if isinstance(value, list | tuple):
        for item in value:
            yield from _pred_values(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if not str(key).startswith("_"):
                yield from _pred_values(item)
