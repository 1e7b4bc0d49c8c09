"""Execution accuracy for Text2Cypher: does a predicted query return what the gold query returns?

Two questions of different strength, both about result *values* (a question fixes what is asked for, not
what the columns are called):

- :func:`strict_match` — the rows are the same multiset of value tuples. Column names are ignored and so is
  column order (``RETURN name, n`` and ``RETURN n, name`` answer the same question), but every column must
  be there and nothing else, and every row as often as in the gold result.
- :func:`relaxed_match` — every value in the gold rows appears somewhere in the predicted rows. Extra columns
  (an id next to the name), extra rows and a different shape (a list instead of rows) are forgiven; a
  missing value is not.

Cells are compared after :func:`kgrag.retrieval.rows.cell_key` (text2cypher's vote compares rows the same way):
numbers by value with a small tolerance (an average computed in another order differs in the last digits; ``5``
equals ``5.0``), strings stripped, nodes by their properties (not the engine's internal id, which differs between
databases), lists element by element. ``rows_match`` in :mod:`kgrag.eval.metrics` is the older, order-aware
check ``kgrag eval`` and byokg's benchmark use.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kgrag.retrieval.graph_query import value_text
from kgrag.retrieval.rows import Rows, cell_key, strict_match


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


__all__ = ["Rows", "cell_key", "relaxed_match", "strict_match"]
