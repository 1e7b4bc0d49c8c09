"""Result rows compared as values: one normal form of a cell, and equality of two results as multisets of rows.

Two users need the same answer to "are these the same rows?": the execution accuracy of Text2Cypher runs
(:mod:`kgrag.eval.execution`) and text2cypher's vote over several readings of one question
(:mod:`kgrag.methods.text2cypher.readings`). Cells are compared after :func:`cell_key`: numbers by value with a
small tolerance (an average computed in another order differs in the last digits; ``5`` equals ``5.0``),
strings stripped, nodes by their properties (not the engine's internal id, which differs between databases),
lists element by element; column names and column order are ignored.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

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


__all__ = ["MAX_COLUMNS", "SIGNIFICANT_DIGITS", "Rows", "cell_key", "strict_match"]
