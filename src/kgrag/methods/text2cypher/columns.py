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
from kgrag.methods.text2cypher.patterns import word
from kgrag.methods.text2cypher.scope import comma_joined, final_return, is_keyword, names_read, split_at

_IDENTIFIER = re.compile(r"(^id$|[a-z0-9](ID|Id)$|_id$)")
_ASKS_FOR_ID = re.compile(r"\b(ids?|identifiers?|codes?|numbers?|keys?)\b", re.I)


def _final_items(tokens: list[Token]) -> tuple[int, int, int, list[tuple[int, int]]] | None:
    """The final RETURN's index, where its items start (past a DISTINCT) and end (before ORDER BY, SKIP or
    LIMIT), and the items' token ranges; None without a RETURN."""
    found = final_return(tokens)
    if found is None:
        return None
    ret, start = found
    end = next((k for k in range(start, len(tokens)) if is_keyword(tokens, k, "ORDER", "SKIP", "LIMIT")), len(tokens))
    return ret, start, end, split_at(tokens, start, end, ",")


def entity_item(item: list[Token], nodes: dict[str, str], names: dict[str, str]) -> str | None:
    """The node variable an expression stands for — the node itself (``s``) or its naming property
    (``s.companyName``) — else None. ``nodes``: node variable → label; ``names``: label → naming property."""
    var = (word(item[0]) if item else None) or ""
    if var not in nodes:
        return None
    if len(item) == 1 or (len(item) == 3 and item[1].value == "." and item[2].value == names.get(nodes[var])):
        return var
    return None


def names_for_ids(
    tokens: list[Token], question: str, labels: dict[str, str], names: dict[str, str]
) -> tuple[list[Token], list[str]]:
    """The final RETURN with identifier columns given by name (see the module docstring)."""
    if _ASKS_FOR_ID.search(question):
        return tokens, []
    found = _final_items(tokens)
    if found is None:
        return tokens, []
    _, start, end, items = found
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
    return [*tokens[:start], *comma_joined(kept), *tokens[end:]], done


def distinct_entities(
    tokens: list[Token], nodes: dict[str, str], names: dict[str, str]
) -> tuple[list[Token], list[str]]:
    """``RETURN DISTINCT`` for a final RETURN that lists one node, or its naming property, through a join.

    "Which categories have products under $10": ``MATCH (c:Category)<-[:PART_OF]-(p:Product) WHERE p.unitPrice <
    10 RETURN c.categoryName`` lists a category once per matching product. A question asking which entities
    wants each once; when the RETURN is that entity alone (the node or its name, nothing aggregated) and the
    pattern binds another node it fans out over, DISTINCT says so. A value column (a price, a date) is left as
    written: equal values of different nodes are rows of their own. Nor is DISTINCT added when ORDER BY reads
    another variable (``RETURN o ORDER BY r.quantity``): after DISTINCT only what is returned is in scope, and the
    engine would reject a query that runs without it."""
    found = _final_items(tokens)
    if found is None or found[1] != found[0] + 1 or len(found[3]) != 1:  # DISTINCT already, or several items
        return tokens, []
    ret, start, end, ((a, b),) = found
    alias = b - a > 2 and is_keyword(tokens, b - 2, "AS")
    var = entity_item(tokens[a : b - 2 if alias else b], nodes, names)
    others = [v for v in nodes if v != var]
    anonymous = any(tokens[k].value == "(" and k + 1 < len(tokens) and tokens[k + 1].value == ":" for k in range(ret))
    if var is None or not (others or anonymous):
        return tokens, []
    if names_read(tokens, end, len(tokens)) - {var, tokens[b - 1].value if alias else var}:
        return tokens, []
    return [*tokens[:start], Token("word", "DISTINCT", True), *tokens[start:]], [f"{var} listed once each: DISTINCT"]


def ordered_after_distinct(tokens: list[Token]) -> tuple[list[Token], list[str]]:
    """``RETURN DISTINCT s.companyName ORDER BY s.supplierID``: after DISTINCT only what is returned is in scope
    ("Variable s is not in scope", Northwind dev without examples), so an ORDER BY key the RETURN does not list
    (nor name by an alias, nor read from a returned node: ``RETURN DISTINCT o ORDER BY o.freight`` runs) is returned
    as well. The rows stay those the query meant, each distinct with its key."""
    found = _final_items(tokens)
    if (
        found is None
        or found[1] == found[0] + 1
        or found[2] == len(tokens)
        or not is_keyword(tokens, found[2], "ORDER")
    ):
        return tokens, []  # no DISTINCT, or no ORDER BY
    _, _, end, items = found
    stop = ("ASC", "DESC", "SKIP", "LIMIT")
    key_end = next((k for k in range(end + 2, len(tokens)) if is_keyword(tokens, k, *stop)), len(tokens))
    shown = {_spelled(tokens[a:b]) for a, b in items}
    shown |= {tokens[b - 1].value for a, b in items if b - a > 2 and is_keyword(tokens, b - 2, "AS")}
    keys = split_at(tokens, end + 2, key_end, ",")  # a key over returned nodes stays in scope: o.freight after o
    missing = [tokens[a:b] for a, b in keys if _spelled(tokens[a:b]) not in shown and names_read(tokens, a, b) - shown]
    if not missing:
        return tokens, []
    added = [tok for key in missing for tok in (Token("punct", ","), key[0]._replace(gap=True), *key[1:])]
    done = [f"ordered by {_spelled(key)} after DISTINCT without returning it: returned" for key in missing]
    return [*tokens[:end], *added, *tokens[end:]], done


def _spelled(item: list[Token]) -> str:
    return "".join(tok.text for tok in item)


# words a parser takes for clause or operator keywords wherever they stand: an alias spelled so must be quoted
_RESERVED = frozenset(
    """ORDER LIMIT SKIP MATCH OPTIONAL WHERE WITH RETURN UNION UNWIND AND OR NOT XOR IN IS NULL TRUE FALSE DISTINCT
    CASE WHEN THEN ELSE END ASC DESC EXISTS CREATE DELETE SET MERGE REMOVE DETACH CALL YIELD STARTS ENDS CONTAINS AS
    BY""".split()
)


def quote_keyword_aliases(tokens: list[Token]) -> tuple[list[Token], list[str]]:
    """``RETURN o AS order``: an alias spelled like a keyword does not parse ("mismatched input 'order'"), and
    meant only the column's name, so it is quoted (`` AS `order` ``), as are later uses spelled the same way."""
    out, done = list(tokens), []
    for k in range(1, len(out)):
        tok = out[k]
        if tok.kind != "word" or tok.value.upper() not in _RESERVED:
            continue
        if out[k - 1].kind != "word" or out[k - 1].value.upper() != "AS":
            continue
        for j in range(k, len(out)):
            if out[j].kind == "word" and out[j].value == tok.value and (j == k or not is_keyword(out, j, *_RESERVED)):
                out[j] = Token("name", tok.value, out[j].gap)
        done.append(f"the alias {tok.value!r} is a keyword: quoted")
    return out, done


__all__ = ["distinct_entities", "entity_item", "names_for_ids", "ordered_after_distinct", "quote_keyword_aliases"]
