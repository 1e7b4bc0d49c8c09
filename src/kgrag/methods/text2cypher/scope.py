"""Rewrites that keep a query's variables in scope across ``WITH``, where a small model loses track of them.

``WITH`` ends the scope of every variable it does not carry, and the 1.5B model keeps reading them after it.
Two shapes recur (Northwind dev, 13 of 40 queries that failed with "Variable x is not in scope"), and each has
one meaning a reader of the query would give it, so they are fixed here rather than sent back to the model:

- a filter after the ``WITH`` on a variable it dropped —
  ``MATCH (s)-->(p)-->(c) WITH s, count(p) AS n WHERE c.name = 'Beverages'`` — can only have meant to filter
  the matched rows before they were grouped, so the condition moves in front of the ``WITH``;
- an aggregate repeated after the ``WITH`` that computed it —
  ``WITH c, count(DISTINCT p) AS k ... RETURN c.name, count(DISTINCT p)`` — is the alias ``k``.

Anything else out of scope is left for the repair call, with the engine's error.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgrag.graph.backends.guard import Token

_CLAUSES = {"MATCH", "OPTIONAL", "WHERE", "WITH", "RETURN", "ORDER", "SKIP", "LIMIT", "UNWIND", "UNION", "CALL"}
_OPEN, _CLOSE = set("([{"), set(")]}")
_KEYWORDS = {
    "AND", "OR", "NOT", "XOR", "IS", "NULL", "TRUE", "FALSE", "IN", "AS", "DISTINCT", "CONTAINS", "STARTS",
    "ENDS", "WITH", "CASE", "WHEN", "THEN", "ELSE", "END", "ASC", "DESC", "ASCENDING", "DESCENDING",
}  # fmt: skip


AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "collect"})
SCORES = AGGREGATES - {"collect"}  # aggregates a row can be chosen or ranked by: a list is no score


def _upper(tok: Token) -> str:
    return tok.value.upper() if tok.kind == "word" else ""


def is_word(tok: Token, *values: str) -> bool:
    """Whether ``tok`` is a bare word spelling one of the upper-case ``values`` in any case (``distinct``)."""
    return _upper(tok) in values


def has_aggregate(tokens: list[Token], names: frozenset[str] = AGGREGATES) -> bool:
    """Whether ``tokens`` call one of the aggregate functions ``names``."""
    return any(
        t.kind == "word" and t.value.lower() in names and k + 1 < len(tokens) and tokens[k + 1].value == "("
        for k, t in enumerate(tokens)
    )


def aggregate_aliases(tokens: list[Token], start: int = 0, end: int | None = None) -> list[str]:
    """The names the WITH and RETURN items in ``tokens[start:end]`` give to scores (``count(p) AS n`` → n,
    ``toInteger(avg(x)) AS m`` → m), in order; a collected list is no score."""
    end = len(tokens) if end is None else end
    out = []
    for part in clauses(tokens[start:end]):
        if part.keyword not in ("WITH", "RETURN"):
            continue
        for a, b in split_at(tokens, start + part.start, start + part.end, ","):
            if b - a >= 3 and is_word(tokens[b - 2], "AS") and has_aggregate(tokens[a : b - 2], SCORES):
                out.append(tokens[b - 1].value)
    return out


def final_return(tokens: list[Token]) -> tuple[int, int] | None:
    """The index of the query's last RETURN and of its first item (past a DISTINCT); None without a RETURN."""
    returns = [k for k in range(len(tokens)) if is_keyword(tokens, k, "RETURN")]
    if not returns:
        return None
    first = returns[-1] + 1
    return returns[-1], first + int(first < len(tokens) and _upper(tokens[first]) == "DISTINCT")


def is_keyword(tokens: list[Token], k: int, *words: str) -> bool:
    """Whether ``tokens[k]`` is one of the clause keywords ``words`` — not a label, type or property spelled
    the same (``(o:Order)``, ``o.limit``), and ORDER only when BY follows."""
    word = _upper(tokens[k])
    if word not in words or (k and tokens[k - 1].kind == "punct" and tokens[k - 1].value in (".", ":")):
        return False
    return word != "ORDER" or (k + 1 < len(tokens) and _upper(tokens[k + 1]) == "BY")


def _depths(tokens: list[Token]) -> list[int]:
    """Bracket depth at each token (an opening bracket is at the depth outside it)."""
    out, depth = [], 0
    for tok in tokens:
        if tok.kind == "punct" and tok.value in _CLOSE:
            depth -= 1
        out.append(depth)
        if tok.kind == "punct" and tok.value in _OPEN:
            depth += 1
    return out


@dataclass
class Clause:
    keyword: str  # MATCH, WHERE, WITH, RETURN, ORDER, ...
    start: int  # index of the keyword
    end: int  # one past the clause's last token


def clauses(tokens: list[Token]) -> list[Clause]:
    """The query's top-level clauses in order (``OPTIONAL MATCH`` is one MATCH clause, ``ORDER BY`` one ORDER)."""
    depth = _depths(tokens)
    starts = []
    for i, tok in enumerate(tokens):
        word = _upper(tok)
        if depth[i] or not is_keyword(tokens, i, *_CLAUSES):
            continue
        if word == "MATCH" and starts and tokens[starts[-1]].value.upper() == "OPTIONAL" and starts[-1] == i - 1:
            continue
        if word == "WITH" and i and _upper(tokens[i - 1]) in ("STARTS", "ENDS"):
            continue  # the string operators STARTS WITH / ENDS WITH
        starts.append(i)
    bounds = [*starts, len(tokens)]
    out = []
    for k, s in enumerate(starts):
        word = tokens[s].value.upper()
        out.append(Clause("MATCH" if word == "OPTIONAL" else word, s, bounds[k + 1]))
    return out


def split_at(tokens: list[Token], start: int, end: int, separator: str) -> list[tuple[int, int]]:
    """Top-level parts of ``tokens[start:end]`` between ``separator`` tokens (a punct or a keyword)."""
    depth = _depths(tokens[start:end])
    parts, first = [], start
    for k in range(start, end):
        tok = tokens[k]
        if depth[k - start] == 0 and (tok.value == separator if tok.kind == "punct" else _upper(tok) == separator):
            parts.append((first, k))
            first = k + 1
    parts.append((first, end))
    return [(a, b) for a, b in parts if a < b]


def keep_conditions(tokens: list[Token], clause: Clause, kept: list[tuple[int, int]]) -> list[Token]:
    """``tokens`` with the WHERE ``clause`` holding only the ``kept`` parts of its AND list (token spans, as
    :func:`split_at` gives them), joined by AND again; no WHERE when none is kept."""
    return where_holding(tokens, clause, [tokens[a:b] for a, b in kept])


def where_holding(tokens: list[Token], clause: Clause, conditions: list[list[Token]]) -> list[Token]:
    """``tokens`` with the WHERE ``clause`` holding ``conditions`` joined by AND; no WHERE when there are none."""
    out: list[Token] = []
    for n, condition in enumerate(conditions):
        if n:
            out.append(Token("word", "AND", True))
        out += [condition[0]._replace(gap=True), *condition[1:]]
    head = [tokens[clause.start]] if conditions else []
    return [*tokens[: clause.start], *head, *out, *tokens[clause.end :]]


def names_read(tokens: list[Token], start: int, end: int) -> set[str]:
    """Variables an expression reads: words not after a ``.`` or ``:``, not called, not keywords — nor the
    ORDER BY / SKIP / LIMIT that may end a RETURN or WITH body (a quoted alias spelled so is a name)."""
    out = set()
    for k in range(start, end):
        tok = tokens[k]
        if tok.kind not in ("word", "name") or tok.value.upper() in _KEYWORDS:
            continue
        if is_keyword(tokens, k, "ORDER", "BY", "SKIP", "LIMIT"):
            continue
        if k and tokens[k - 1].kind == "punct" and tokens[k - 1].value in (".", ":"):
            continue
        if k + 1 < len(tokens) and tokens[k + 1].kind == "punct" and tokens[k + 1].value == "(":
            continue
        out.add(tok.value)
    return out


def _item_bounds(tokens: list[Token], clause: Clause) -> tuple[int, int]:
    """Where a WITH clause's items start (past a DISTINCT) and end (before its ORDER BY, SKIP or LIMIT)."""
    end = next(
        (c for c in range(clause.start + 1, clause.end) if is_keyword(tokens, c, "ORDER", "SKIP", "LIMIT")),
        clause.end,
    )
    start = clause.start + 1
    return start + int(start < clause.end and _upper(tokens[start]) == "DISTINCT"), end


def comma_joined(items: list[list[Token]]) -> list[Token]:
    """Expression items written as a comma-separated list, each after a space (a RETURN's or a WITH's)."""
    out: list[Token] = []
    for n, item in enumerate(items):
        out += ([Token("punct", ",")] if n else []) + [item[0]._replace(gap=True), *item[1:]]
    return out


def _projection(tokens: list[Token], clause: Clause) -> tuple[set[str], dict[tuple[str, ...], str]] | None:
    """What a WITH carries: its names, and its aliased expressions by their tokens; None for ``WITH *``."""
    carried: set[str] = set()
    aliases: dict[tuple[str, ...], str] = {}
    start, end = _item_bounds(tokens, clause)
    for a, b in split_at(tokens, start, end, ","):
        if tokens[a].value == "*":
            return None
        if b - a >= 3 and _upper(tokens[b - 2]) == "AS":
            carried.add(tokens[b - 1].value)
            aliases[_key(tokens[a : b - 2])] = tokens[b - 1].value
        elif b - a == 1:
            carried.add(tokens[a].value)
    return carried, aliases


def _key(tokens: list[Token]) -> tuple[str, ...]:
    return tuple(t.value.lower() if t.kind == "word" else t.value for t in tokens)


def _bound_before(tokens: list[Token], parts: list[Clause], index: int) -> set[str]:
    """Variables the MATCH clauses before clause ``index`` bind (names in their patterns)."""
    out: set[str] = set()
    for clause in parts[:index]:
        if clause.keyword == "MATCH":
            out |= names_read(tokens, clause.start + 1, clause.end)
    return out


def move_filters_before_with(tokens: list[Token]) -> tuple[list[Token], bool]:
    """Conditions of a ``WITH ... WHERE`` that read a variable the WITH dropped, moved in front of it."""
    parts = clauses(tokens)
    for index, clause in enumerate(parts):
        if clause.keyword != "WITH" or index + 1 >= len(parts) or parts[index + 1].keyword != "WHERE":
            continue
        projection = _projection(tokens, clause)
        if projection is None:
            continue
        carried, _ = projection
        dropped = _bound_before(tokens, parts, index) - carried
        where = parts[index + 1]
        conjuncts = split_at(tokens, where.start + 1, where.end, "AND")
        if len(split_at(tokens, where.start + 1, where.end, "OR")) > 1:
            continue
        moved = [
            (a, b)
            for a, b in conjuncts
            if names_read(tokens, a, b) & dropped and not names_read(tokens, a, b) & carried
        ]
        if not moved:
            continue
        kept = [(a, b) for a, b in conjuncts if (a, b) not in moved]
        condition = _joined(tokens, moved)
        before = parts[index - 1] if index else None
        if before is not None and before.keyword == "WHERE":
            insert = [Token("word", "AND", True), *condition]
        else:
            insert = [Token("word", "WHERE", True), *condition]
        after_where = [Token("word", "WHERE", True), *_joined(tokens, kept)] if kept else []
        rebuilt = [
            *tokens[: clause.start],
            *insert,
            *tokens[clause.start : clause.end],
            *after_where,
            *tokens[where.end :],
        ]
        return move_filters_before_with(rebuilt)[0], True
    return tokens, False


def _joined(tokens: list[Token], spans: list[tuple[int, int]]) -> list[Token]:
    out: list[Token] = []
    for k, (a, b) in enumerate(spans):
        if k:
            out.append(Token("word", "AND", True))
        out += [tokens[a]._replace(gap=True), *tokens[a + 1 : b]]
    return out


def carry_variables(tokens: list[Token]) -> tuple[list[Token], bool]:
    """``WITH p, c.categoryName RETURN c.categoryName``: a WITH item that reads a property without naming it is
    rejected ("Expression in WITH must be aliased"), and what follows reads ``c``'s properties again. Where the
    WITH groups nothing (no aggregate), carrying the variable itself (``WITH p, c``) keeps the same rows and
    everything after it readable, so that is what the item becomes."""
    for clause in clauses(tokens):
        if clause.keyword != "WITH":
            continue
        start, end = _item_bounds(tokens, clause)  # a WHERE after the items is a clause of its own
        if has_aggregate(tokens[start:end]):
            continue
        items = split_at(tokens, start, end, ",")
        bare = [a for a, b in items if b - a == 3 and tokens[a].kind == "word" and tokens[a + 1].value == "."]
        if not bare:
            continue
        kept: list[list[Token]] = []
        for a, b in items:
            item = tokens[a : a + 1] if a in bare else tokens[a:b]
            if all(_key(item) != _key(other) for other in kept):
                kept.append(item)
        return carry_variables([*tokens[:start], *comma_joined(kept), *tokens[end:]])[0], True
    return tokens, False


def reuse_aliases(tokens: list[Token]) -> tuple[list[Token], bool]:
    """An expression a WITH named, written again after it, replaced by the name: an aggregate
    (``WITH c, count(p) AS n ... RETURN count(p)``) or a property of a variable the WITH did not carry
    (``WITH c.categoryName AS category ... RETURN c.categoryName``, where ``c`` is out of scope)."""
    parts = clauses(tokens)
    changed = False
    for index, clause in enumerate(parts):
        if clause.keyword != "WITH":
            continue
        projection = _projection(tokens, clause)
        if projection is None:
            continue
        carried, aliased = projection
        aggregates = {
            key: alias
            for key, alias in aliased.items()
            if len(key) > 1 and key[1] in "(." and not set(key) & carried  # reads only what the WITH dropped
        }
        nxt = next((c for c in parts[index + 1 :] if c.keyword in ("WITH", "MATCH", "UNWIND")), None)
        stop = nxt.start if nxt else len(tokens)  # a later MATCH may bind the names again
        k = clause.end
        while k < stop:
            hit = next(
                (key for key in aggregates if _key(tokens[k : k + len(key)]) == key and k + len(key) <= stop),
                None,
            )
            if hit is None:
                k += 1
                continue
            tokens = [*tokens[:k], Token("word", aggregates[hit], tokens[k].gap), *tokens[k + len(hit) :]]
            stop -= len(hit) - 1
            changed = True
            k += 1
        if changed:
            return reuse_aliases(tokens)[0], True
    return tokens, changed


__all__ = [
    "AGGREGATES",
    "SCORES",
    "Clause",
    "aggregate_aliases",
    "carry_variables",
    "clauses",
    "comma_joined",
    "final_return",
    "has_aggregate",
    "is_keyword",
    "is_word",
    "move_filters_before_with",
    "names_read",
    "reuse_aliases",
    "split_at",
]
