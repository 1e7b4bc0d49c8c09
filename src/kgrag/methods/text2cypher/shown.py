"""An aggregate a query chooses its rows by is returned beside them.

"Which customers from Germany ordered more than 3 different products?" comes out of the model as
``WITH c, count(DISTINCT p) AS n WHERE n > 3 RETURN c.companyName``, and "the top 3 customers by orders" as
``WITH c, count(o) AS n ORDER BY n DESC LIMIT 3 RETURN c.companyName``: the number each row was chosen by is
computed, still in scope at the RETURN, and dropped there, so the reader cannot see why a row is in the answer.
It is returned after the rows' own columns, and a node the RETURN gives bare is given by its name, as a
ranking's rows are (:func:`.ranking.name_ranked_nodes`, which does the same for a RETURN's own ORDER BY).

Only where the WITH is followed by nothing but its WHERE / ORDER BY / SKIP / LIMIT and the RETURN: a MATCH in
between would repeat each row per match, and the number would no longer describe the row it stands beside.
"""

from __future__ import annotations

from kgrag.graph.backends.guard import Token
from kgrag.methods.text2cypher.scope import aggregate_aliases, clauses, has_aggregate, is_word, split_at

_BETWEEN = {"WHERE", "ORDER", "SKIP", "LIMIT"}


def show_choosing_aggregates(
    tokens: list[Token], labels: dict[str, str], names: dict[str, str]
) -> tuple[list[Token], list[str]]:
    """``tokens`` with the aggregates the last WITH filters or orders by returned (see the module docstring),
    and what was done. ``labels``: node variable → label; ``names``: label → its naming property."""
    parts = clauses(tokens)
    kinds = [c.keyword for c in parts]
    if kinds.count("RETURN") != 1 or "UNION" in kinds:
        return tokens, []
    r = kinds.index("RETURN")
    w = next((k for k in range(r - 1, -1, -1) if kinds[k] not in _BETWEEN), None)
    if w is None or kinds[w] != "WITH":
        return tokens, []
    read = {t.value for c in parts[w + 1 : r] for t in tokens[c.start : c.end] if t.kind == "word"}
    chosen_by = [a for a in aggregate_aliases(tokens, parts[w].start, parts[w].end) if a in read]
    ret = parts[r]
    start = ret.start + 1 + int(is_word(tokens[ret.start + 1], "DISTINCT"))
    items = split_at(tokens, start, ret.end, ",")
    if not chosen_by or not items or has_aggregate(tokens[start : ret.end]):
        return tokens, []
    if any(tokens[a].value == "*" for a, _ in items):
        return tokens, []
    shown = {t.value for t in tokens[start : ret.end] if t.kind == "word"}
    missing = [a for a in chosen_by if a not in shown]
    if not missing:
        return tokens, []
    done: list[str] = []
    out = list(tokens[:start])
    for n, (a, b) in enumerate(items):
        if n:
            out.append(Token("punct", ","))
        var = tokens[a].value if b - a == 1 and tokens[a].kind == "word" else ""
        prop = names.get(labels.get(var, ""))
        if prop:
            out += [tokens[a], Token("punct", "."), Token("word", prop)]
            done.append(f"rows chosen by an aggregate give {var} by its name: {var}.{prop}")
        else:
            out += tokens[a:b]
    for alias in missing:
        out += [Token("punct", ","), Token("word", alias, True)]
    done.append(f"the rows were chosen by {', '.join(missing)}: returned beside them")
    return [*out, *tokens[ret.end :]], done


__all__ = ["show_choosing_aggregates"]
