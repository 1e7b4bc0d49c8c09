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
from kgrag.methods.text2cypher.patterns import Node, fresh_name, patterns, variables, word
from kgrag.methods.text2cypher.scope import clauses

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


__all__ = ["asked_matches", "out_of_map", "partial_matches"]
