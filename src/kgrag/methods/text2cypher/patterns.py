"""Path patterns read from a Cypher query's tokens: nodes with their variables and labels, relationships with
their variables, types and directions, as the guard tokenised them (the tokens the engine will get)."""

from __future__ import annotations

from dataclasses import dataclass

from kgrag.graph.backends.guard import Token

_AFTER_NODE_OPENER = {"MATCH", "OPTIONAL", ",", "-", ">", "<", "(", "WHERE", "AND", "OR", "NOT", "EXISTS", "{"}


@dataclass
class Node:
    var: str | None
    labels: list[str]
    start: int
    end: int  # index of the closing ")"


@dataclass
class Rel:
    var: str | None
    types: list[str]
    start: int  # first token of the arrow ("<" or "-")
    end: int  # last token of the arrow ("-" or ">")
    direction: str  # "out" (->), "in" (<-) or "both" (-)
    bracket: tuple[int, int] | None = None  # indices of "[" and "]"


def word(tok: Token) -> str | None:
    """The name a word or backticked name token stands for; None for other tokens."""
    return tok.value if tok.kind in ("word", "name") else None


def property_read(tokens: list[Token], i: int) -> tuple[str, str] | None:
    """``(var, prop)`` when the tokens from ``i`` read a property, ``var.prop`` (the dot written right after the
    name, the name not itself after a dot); None otherwise. Every rewrite that looks at reads asks this."""
    if i < 0 or i + 2 >= len(tokens) or (i and tokens[i - 1].value == "."):
        return None
    var, dot, prop = word(tokens[i]), tokens[i + 1], word(tokens[i + 2])
    if var is None or prop is None or dot.kind != "punct" or dot.value != "." or dot.gap:
        return None
    return var, prop


def _node_at(tokens: list[Token], i: int) -> Node | None:
    """A node pattern ``(var:Label:Other {...})`` opening at ``tokens[i] == "("``, else None."""
    prev = tokens[i - 1].value.upper() if i and tokens[i - 1].kind in ("word", "punct") else "MATCH"
    if prev not in _AFTER_NODE_OPENER:
        return None  # a function call or an expression in parentheses
    j, var, labels = i + 1, None, []
    if j < len(tokens) and word(tokens[j]) is not None and not (j + 1 < len(tokens) and tokens[j + 1].value == "."):
        var, j = word(tokens[j]), j + 1
    while j + 1 < len(tokens) and tokens[j].value == ":" and word(tokens[j + 1]) is not None:
        labels.append(str(word(tokens[j + 1])))
        j += 2
    depth = 0
    while j < len(tokens):
        v = tokens[j].value if tokens[j].kind == "punct" else ""
        if v == "{":
            depth += 1
        elif v == "}":
            depth -= 1
        elif v == ")" and depth == 0:
            return Node(var, labels, i, j)
        elif v in ("(", "[") and depth == 0:
            return None
        j += 1
    return None


def _rel_after(tokens: list[Token], i: int) -> Rel | None:
    """A relationship pattern starting at ``tokens[i]`` (just after a node's ``)``), else None."""
    n = len(tokens)

    def punct(k: int, value: str) -> bool:
        return k < n and tokens[k].kind == "punct" and tokens[k].value == value

    j, incoming = i, False
    if punct(j, "<") and punct(j + 1, "-"):
        incoming, j = True, j + 1
    if not punct(j, "-"):
        return None
    j += 1
    var, types, bracket = None, [], None
    if punct(j, "["):
        close = next((k for k in range(j, n) if punct(k, "]")), None)
        if close is None:
            return None
        inner = tokens[j + 1 : close]
        if inner and word(inner[0]) is not None:
            var, inner = word(inner[0]), inner[1:]
        types = [str(word(t)) for t in inner if word(t) is not None and t.value.upper() not in ("TRUE", "FALSE")]
        types = types if inner[:1] and inner[0].value == ":" else []
        bracket, j = (j, close), close + 1
    if not punct(j, "-"):
        return None
    outgoing = punct(j + 1, ">")
    end = j + 1 if outgoing else j
    direction = "out" if outgoing and not incoming else "in" if incoming and not outgoing else "both"
    return Rel(var, types, i, end, direction, bracket)


def patterns(tokens: list[Token]) -> list[list[Node | Rel]]:
    """Every path pattern of the query as alternating nodes and relationships."""
    chains: list[list[Node | Rel]] = []
    i = 0
    while i < len(tokens):
        node = _node_at(tokens, i) if tokens[i].kind == "punct" and tokens[i].value == "(" else None
        if node is None:
            i += 1
            continue
        chain: list[Node | Rel] = [node]
        j = node.end + 1
        while (rel := _rel_after(tokens, j)) is not None:
            nxt = _node_at(tokens, rel.end + 1) if rel.end + 1 < len(tokens) else None
            if nxt is None:
                break
            chain += [rel, nxt]
            j = nxt.end + 1
        chains.append(chain)
        i = j
    return chains


def variables(chains: list[list[Node | Rel]]) -> tuple[dict[str, str], dict[str, str]]:
    """Node variable → its first label; relationship variable → its first type."""
    nodes: dict[str, str] = {}
    rels: dict[str, str] = {}
    for chain in chains:
        for part in chain:
            if isinstance(part, Node) and part.var and part.labels:
                nodes.setdefault(part.var, part.labels[0])
            elif isinstance(part, Rel) and part.var and part.types:
                rels.setdefault(part.var, part.types[0])
    return nodes, rels


def fresh_name(stem: str, tokens: list[Token]) -> str:
    """``stem1``, ``stem2``, ...: the first such name no word of the query uses, for a variable a rewrite adds."""
    used = {t.value for t in tokens if t.kind == "word"}
    n = 1
    while f"{stem}{n}" in used:
        n += 1
    return f"{stem}{n}"


__all__ = ["Node", "Rel", "fresh_name", "patterns", "variables", "word"]
