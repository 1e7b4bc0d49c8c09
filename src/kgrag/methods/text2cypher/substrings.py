"""A value the question asks to match in part, compared whole: made the string operator the question names.

"Which suppliers have a postal code starting with 'EC'?" — the 1.5B model writes ``{postalCode: 'EC*'}`` or
``s.postalCode = 'EC'``, and "categories with a description including 'sauces'" becomes ``{description:
'sauces'}``. Both run and return nothing: no supplier's postal code *is* 'EC'. When the question puts the
literal right after "starting with" / "ending with" / "containing" (or "including", "involving") and no node
stores it whole under the compared property, the comparison becomes ``STARTS WITH`` / ``ENDS WITH`` /
``CONTAINS``, the literal without the ``*`` or ``%`` wildcards the model borrowed from other query languages.
A literal the database does store whole ("orders containing the product 'Chai'") is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kgrag.graph.backends.guard import Token
from kgrag.methods.text2cypher.patterns import Node, fresh_name, patterns, property_read, variables, word
from kgrag.methods.text2cypher.scope import clauses, split_at, where_holding
from kgrag.methods.text2cypher.values import ValueIndex, quoted_literals

_CUES = (
    ("STARTS WITH", r"(?:start|starts|starting|begin|begins|beginning)\s+with"),
    ("ENDS WITH", r"(?:end|ends|ending)\s+with"),
    ("CONTAINS", r"(?:contain|contains|containing|include|includes|including|involve|involves|involving)"),
)
_WILDCARDS = "*%"


def asked_matches(question: str) -> dict[str, str]:
    """Literal (lower-cased) → the string operator the question puts right before it."""
    out: dict[str, str] = {}
    for op, cue in _CUES:
        for m in re.finditer(rf"\b{cue}\s+(?:'([^']+)'|\"([^\"]+)\")", question, re.IGNORECASE):
            out.setdefault((m.group(1) or m.group(2)).strip().lower(), op)
    return out


def partial_matches(
    tokens: list[Token], question: str, stored: Callable[[str], set[tuple[str, str]]]
) -> tuple[list[Token], list[str]]:
    """Whole-value comparisons of a literal the question asks to match in part, made that string operator."""
    asked = asked_matches(question)
    if not asked:
        return tokens, []
    done: list[str] = []
    while True:
        found = _next_comparison(tokens, asked, stored)
        if found is None:
            return tokens, done
        tokens, said = found
        done.append(said)


def _next_comparison(
    tokens: list[Token], asked: dict[str, str], stored: Callable[[str], set[tuple[str, str]]]
) -> tuple[list[Token], str] | None:
    chains = patterns(tokens)
    nodes = variables(chains)[0]
    for i, tok in enumerate(tokens):
        literal = tok.value.strip(_WILDCARDS).strip() if tok.kind == "str" else ""
        op = asked.get(literal.lower())
        if not op or i < 2:
            continue
        if i >= 4 and tokens[i - 1].value == "=" and tokens[i - 3].value == "." and word(tokens[i - 4]) in nodes:
            label, prop, var = nodes[str(word(tokens[i - 4]))], tokens[i - 2].value, str(word(tokens[i - 4]))
            if (label, prop) in stored(literal):
                continue
            out = [*tokens[: i - 1], *_operator(op), Token("str", literal, gap=True), *tokens[i + 1 :]]
            return out, f"{var}.{prop} = '{tok.value}': the question asks for {op}"
        if tokens[i - 1].value == ":" and word(tokens[i - 2]):
            node = next((n for c in chains for n in c if isinstance(n, Node) and n.start < i < n.end), None)
            if node is None or not node.labels or (node.labels[0], tokens[i - 2].value) in stored(literal):
                continue
            moved = out_of_map(tokens, node, i, op, literal)
            return (
                None
                if moved is None
                else (moved, f"{{{tokens[i - 2].value}: '{tok.value}'}}: the question asks for {op}, in the WHERE")
            )
    return None


_PARTIAL = ("CONTAINS", "STARTS WITH", "ENDS WITH")


def misplaced_substrings(
    tokens: list[Token], nodes: dict[str, str], values: ValueIndex, question: str = ""
) -> tuple[list[Token], list[str]]:
    """A WHERE condition ``v.p CONTAINS 'text'`` (or STARTS / ENDS WITH) that no stored value of ``v``'s
    ``p`` can meet, read where the text is: "products with a quantity per unit involving 'bottles'" came out as
    ``c.description CONTAINS 'bottles'`` on the product's Category, or as that beside the right
    ``p.quantityPerUnit CONTAINS 'bottles'`` (Northwind dev, without examples). When the values of exactly one
    property of a variable of the query meet it, the condition reads that property instead — or goes,
    when the query already makes that comparison. So does ``v.p = 'text'`` for a text the ``question`` quotes
    and the database stores nowhere whole ("products with '20 bags' in their quantity per unit description" →
    ``c.description = '20 bags'``), read as CONTAINS where it is part of a value. Only where the database's
    every value of ``p`` is known (``values.indexed``), only the top-level AND parts of a WHERE; ``nodes``:
    variable → label."""
    done: list[str] = []
    quoted = {text for _, _, text in quoted_literals(question)}
    for clause in reversed([c for c in clauses(tokens) if c.keyword == "WHERE"]):
        parts = [tokens[a:b] for a, b in split_at(tokens, clause.start + 1, clause.end, "AND")]
        found_at = [_partial(part, nodes, values, quoted) for part in parts]
        # the comparisons that can hold, case folded: one of them may already read the text where it is
        standing = {
            tuple(x.casefold() for x in c)
            for part, found in zip(parts, found_at)
            if found is None and (c := _comparison(part)) is not None
        }
        kept, changed = [], False
        for part, found in zip(parts, found_at):
            if found is None:
                kept.append(part)
                continue
            (var, prop, op, literal), owners = found
            said = f"{var}.{prop} {op} '{literal}' holds for no {nodes[var]}"
            wanted = "CONTAINS" if op == "=" else op
            if any(
                (o, x) == (wanted.casefold(), literal.casefold()) and (v, p) != (var.casefold(), prop.casefold())
                for v, p, o, x in standing
            ):
                done.append(f"{said}: dropped (the query reads it where it is)")
                changed = True
                continue
            if len(owners) != 1:
                kept.append(part)
                continue
            ((v, p),) = owners
            head = [part[0]._replace(value=v), part[1], part[2]._replace(value=p)]
            kept.append([*head, *_operator(wanted), part[-1]])
            done.append(f"{said}: read from {v}.{p}" + (" as CONTAINS" if op == "=" else ""))
            changed = True
        if changed:
            tokens = where_holding(tokens, clause, kept)
    return tokens, done


def _partial(
    part: list[Token], nodes: dict[str, str], values: ValueIndex, quoted: set[str]
) -> tuple[tuple[str, str, str, str], list[tuple[str, str]]] | None:
    """For ``v.p OP 'text'`` that no stored value of ``v``'s ``p`` meets (for ``=``: a quoted text the database
    stores nowhere whole): (v, p, OP, text) and the (variable, property) pairs of the query's variables whose
    stored values do (contain it, for ``=``); None otherwise."""
    found = _comparison(part)
    if found is None or found[0] not in nodes:
        return None
    var, prop, op, literal = found
    read = (var, prop)
    if (nodes[var], prop) not in values.indexed:
        return None
    if op == "=":
        if literal not in quoted or values.places(literal):
            return None
        places = values.matching("CONTAINS", literal)
    elif op in _PARTIAL:
        places = values.matching(op, literal)
        if (nodes[var], prop) in places:
            return None
    else:
        return None
    # for "=", the compared property itself may hold the text in part (then it reads as CONTAINS where it is)
    owners = sorted(
        (v, p) for v, label in nodes.items() for owner, p in places if owner == label and (op == "=" or (v, p) != read)
    )
    return (var, prop, op, literal), owners


def _comparison(part: list[Token]) -> tuple[str, str, str, str] | None:
    """``(v, p, OP, text)`` for a condition ``v.p OP 'text'`` (OP upper-cased, its words one space apart)."""
    read = property_read(part, 0) if len(part) >= 5 else None
    if read is None or part[-1].kind != "str":
        return None
    return read[0], read[1], " ".join(t.value.upper() for t in part[3:-1]), part[-1].value


def _operator(op: str) -> list[Token]:
    return [Token("word", w, gap=True) for w in op.split()]


def out_of_map(tokens: list[Token], node: Node, i: int, op: str, literal: str) -> list[Token] | None:
    """``(s:Supplier {postalCode: 'EC*'})`` → ``(s:Supplier)`` with ``s.postalCode STARTS WITH 'EC'`` in the
    clause's WHERE (added when it has none): the map entry whose value is ``tokens[i]`` compared by ``op``
    (``=`` keeps its meaning) with ``literal``; None outside a MATCH."""
    prop = tokens[i - 2].value
    parts = clauses(tokens)
    k = next((k for k, c in enumerate(parts) if c.start <= node.start < c.end), None)
    if k is None or parts[k].keyword != "MATCH":
        return None
    clause = parts[k]
    where = parts[k + 1].start if k + 1 < len(parts) and parts[k + 1].keyword == "WHERE" else None
    # the map entry with the comma after it (or, when it is the last entry, the comma before it)
    a, b = i - 2, i + 1
    if tokens[b].value == ",":
        b += 1
    elif tokens[a - 1].value == ",":
        a -= 1
    if tokens[a - 1].value == "{" and tokens[b].value == "}":  # the only entry: the map goes
        a, b = a - 1, b + 1
    var = node.var or fresh_name("n", tokens)
    condition = [Token("word", var, gap=True), Token("punct", "."), Token("word", prop), *_operator(op)]
    condition.append(Token("str", literal, gap=True))
    out = list(tokens)
    if where is not None:
        out[where + 1 : where + 1] = [*condition, Token("word", "AND", gap=True)]
        out[where + len(condition) + 2] = out[where + len(condition) + 2]._replace(gap=True)
    else:
        out[clause.end : clause.end] = [Token("word", "WHERE", gap=True), *condition]
    del out[a:b]
    if node.var is None:  # the node gets a name to be read by
        out.insert(node.start + 1, Token("word", var))
    return out


__all__ = ["asked_matches", "misplaced_substrings", "out_of_map", "partial_matches"]
