"""Identifier columns the question did not ask for, given as names.

The 1.5B model pads a RETURN with identifiers (``RETURN p.productName, p.productID``) and groups rankings by
them (``RETURN s.supplierID, avg(p.unitPrice)``): in 9 of 40 Northwind dev queries an id column was the only
difference from the gold rows or stood where the name belonged. Unless the question asks for an id (or a
code or number), an identifier property of a node that has a naming property is replaced by that name, or
dropped when the name is already returned. "Identifier" is read from the property's spelling (``id``,
``…ID``, ``…Id``, ``…_id``), a convention of property graphs rather than of one database.
"""

from __future__ import annotations

import re

from kgrag.graph.backends.guard import Token
from kgrag.methods.text2cypher.scope import final_return, is_keyword, split_at

_IDENTIFIER = re.compile(r"(^id$|[a-z0-9](ID|Id)$|_id$)")
_ASKS_FOR_ID = re.compile(r"\b(ids?|identifiers?|codes?|numbers?|keys?)\b", re.I)


def names_for_ids(
    tokens: list[Token], question: str, labels: dict[str, str], names: dict[str, str]
) -> tuple[list[Token], list[str]]:
    """The final RETURN with identifier columns given by name (see the module docstring)."""
    if _ASKS_FOR_ID.search(question):
        return tokens, []
    found = final_return(tokens)
    if found is None:
        return tokens, []
    start = found[1]
    end = next((k for k in range(start, len(tokens)) if is_keyword(tokens, k, "ORDER", "SKIP", "LIMIT")), len(tokens))
    items = split_at(tokens, start, end, ",")
    shown = {(tokens[a].value, tokens[a + 2].value) for a, b in items if b - a >= 3 and tokens[a + 1].value == "."}
    kept: list[list[Token]] = []
    done: list[str] = []
    for a, b in items:
        item = tokens[a:b]
        var, prop = (item[0].value, item[2].value) if len(item) >= 3 and item[1].value == "." else (None, None)
        name = names.get(labels.get(var or "", ""))
        if var is None or prop is None or not name or prop == name or not _IDENTIFIER.search(prop):
            kept.append(item)
            continue
        if (var, name) in shown:
            done.append(f"{var}.{prop} is an identifier and {var}.{name} is returned: dropped")
            continue
        shown.add((var, name))
        kept.append([item[0], item[1], item[2]._replace(value=name), *item[3:]])
        done.append(f"{var}.{prop} is an identifier: {var}.{name} returned instead")
    if not done or not kept:
        return tokens, []
    out = list(tokens[:start])
    for n, item in enumerate(kept):
        if n:
            out.append(Token("punct", ","))
        out += [item[0]._replace(gap=True), *item[1:]]
    return [*out, *tokens[end:]], done


__all__ = ["names_for_ids"]
