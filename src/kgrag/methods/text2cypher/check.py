"""Hold a written Cypher query against the database's schema before it runs.

The engine accepts a query with a label, property or relationship direction the database does not have and
returns no rows, which tells the model nothing. This check reads the query's patterns from the guard's tokens
(the same tokens the engine will get) and reports each such mistake in words a repair prompt can use
("Supplier has no property 'name'; it has companyName, contactName, ..."). One mistake is fixed without
asking: a relationship written against its only direction between two labelled nodes
(``(s:Supplier)<-[:SUPPLIES]-(p:Product)``) is turned round, because the schema allows exactly one reading.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kgrag.graph.backends.guard import CypherSyntaxError, Token, serialise, tokenise_cypher
from kgrag.methods.text2cypher.coercion import numbers_against_strings
from kgrag.methods.text2cypher.columns import names_for_ids
from kgrag.methods.text2cypher.joins import join_value_owners
from kgrag.methods.text2cypher.ranking import asked_ranking, name_ranked_nodes, rank_rows
from kgrag.methods.text2cypher.schema import GraphSchema
from kgrag.methods.text2cypher.scope import move_filters_before_with, reuse_aliases

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


@dataclass
class CheckResult:
    """What the check found: the (possibly direction-fixed) query, problems for the model, fixes it made."""

    query: str
    problems: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)


def _word(tok: Token) -> str | None:
    return tok.value if tok.kind in ("word", "name") else None


def _node_at(tokens: list[Token], i: int) -> Node | None:
    """A node pattern ``(var:Label:Other {...})`` opening at ``tokens[i] == "("``, else None."""
    prev = tokens[i - 1].value.upper() if i and tokens[i - 1].kind in ("word", "punct") else "MATCH"
    if prev not in _AFTER_NODE_OPENER:
        return None  # a function call or an expression in parentheses
    j, var, labels = i + 1, None, []
    if j < len(tokens) and _word(tokens[j]) is not None and not (j + 1 < len(tokens) and tokens[j + 1].value == "."):
        var, j = _word(tokens[j]), j + 1
    while j + 1 < len(tokens) and tokens[j].value == ":" and _word(tokens[j + 1]) is not None:
        labels.append(str(_word(tokens[j + 1])))
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
        if inner and _word(inner[0]) is not None:
            var, inner = _word(inner[0]), inner[1:]
        types = [str(_word(t)) for t in inner if _word(t) is not None and t.value.upper() not in ("TRUE", "FALSE")]
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


def _listing(names: object, limit: int = 12) -> str:
    names = sorted(names)  # type: ignore[call-overload]
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _variables(chains: list[list[Node | Rel]]) -> tuple[dict[str, str], dict[str, str]]:
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


def _label_of(node: Node, nodes: dict[str, str]) -> str | None:
    return node.labels[0] if node.labels else nodes.get(node.var or "")


def _arrow(tokens: list[Token], rel: Rel, direction: str) -> list[Token]:
    inner = tokens[rel.bracket[0] : rel.bracket[1] + 1] if rel.bracket else []
    dash = Token("punct", "-")
    if direction == "in":
        return [Token("punct", "<"), dash, *inner, dash]
    return [dash, *inner, dash, Token("punct", ">")]


def _direction(
    schema: GraphSchema, chain: list[Node | Rel], k: int, nodes: dict[str, str], out: CheckResult
) -> tuple[Rel, str] | None:
    """Check the direction of relationship ``chain[k]``; returns (rel, new direction) when it must turn."""
    rel, left, right = chain[k], chain[k - 1], chain[k + 1]
    assert isinstance(rel, Rel) and isinstance(left, Node) and isinstance(right, Node)
    a, b = _label_of(left, nodes), _label_of(right, nodes)
    if rel.direction == "both" or len(rel.types) != 1 or a is None or b is None:
        return None
    allowed = schema.directions(rel.types[0])
    if not allowed:
        return None
    src, dst = (a, b) if rel.direction == "out" else (b, a)
    if (src, dst) in allowed:
        return None
    if (dst, src) in allowed:
        out.fixed.append(f"{rel.types[0]} goes from {dst} to {src}: turned round")
        return rel, "in" if rel.direction == "out" else "out"
    ways = "; ".join(f"(:{s})-[:{rel.types[0]}]->(:{t})" for s, t in sorted(allowed))
    out.problems.append(f"{rel.types[0]} does not join {a} and {b}; it only joins {ways}")
    return None


def _properties(
    schema: GraphSchema, tokens: list[Token], nodes: dict[str, str], rels: dict[str, str], fixed: list[str]
) -> list[str]:
    """``var.prop`` reads of properties the variable's label (or relationship type) does not have. When exactly
    one other variable of the query has the property, the read moves to it (``-[r:ORDERS]->`` then
    ``r.freight``, where only the ``Order`` node ``o`` has ``freight``: ``o.freight``) and ``fixed`` says so;
    otherwise it is a problem for the repair call."""

    def has(name: str) -> dict[str, str] | None:
        if name in nodes and nodes[name] in schema.labels:
            return schema.labels[nodes[name]]
        if name in rels and rels[name] in schema.types():
            return schema.relationship_properties(rels[name])
        return None

    problems = []
    for i in range(len(tokens) - 2):
        var, dot, prop = tokens[i], tokens[i + 1], tokens[i + 2]
        if not (dot.kind == "punct" and dot.value == "." and _word(var) and _word(prop) and not dot.gap):
            continue
        have = has(var.value)
        if have is None or prop.value in have:
            continue
        owners = [v for v in [*nodes, *rels] if v != var.value and prop.value in (has(v) or {})]
        label = nodes.get(var.value) or rels[var.value]
        if len(owners) == 1:
            tokens[i] = var._replace(value=owners[0])
            fixed.append(f"{label} has no property {prop.value!r}: read from {owners[0]}.{prop.value}")
        else:
            problems.append(f"{label} has no property {prop.value!r}; it has {_listing(have)}")
    return list(dict.fromkeys(problems))


def _name_relationship_read(tokens: list[Token], schema: GraphSchema) -> tuple[list[Token], list[str]]:
    """``o.quantity`` where ``o`` is an Order, which has no quantity, but the one unnamed relationship beside
    it (``<-[:ORDERS]-(o:Order)``) does: the relationship is named and read (``-[r1:ORDERS]-`` … ``r1.quantity``),
    the only reading in which the property exists."""
    chains = patterns(tokens)
    nodes, _ = _variables(chains)
    for i in range(len(tokens) - 2):
        var, dot, prop = tokens[i], tokens[i + 1], tokens[i + 2]
        if not (dot.value == "." and not dot.gap and var.value in nodes and _word(prop)):
            continue
        if nodes[var.value] not in schema.labels or prop.value in schema.labels[nodes[var.value]]:
            continue
        beside = [
            chain[j]
            for chain in chains
            for k, part in enumerate(chain)
            if isinstance(part, Node) and part.var == var.value
            for j in (k - 1, k + 1)
            if 0 <= j < len(chain)
        ]
        rels = [
            r
            for r in beside
            if isinstance(r, Rel) and r.var is None and r.bracket and len(r.types) == 1
            if prop.value in schema.relationship_properties(r.types[0])
        ]
        if len({id(r) for r in rels}) != 1:
            continue
        rel, used = rels[0], {t.value for t in tokens if t.kind == "word"}
        name = next(f"r{n}" for n in range(1, 100) if f"r{n}" not in used)
        assert rel.bracket is not None
        out = [*tokens[: rel.bracket[0] + 1], Token("word", name), *tokens[rel.bracket[0] + 1 :]]
        at = i + 1 if i > rel.bracket[0] else i
        out[at] = out[at]._replace(value=name)
        done = f"{nodes[var.value]} has no property {prop.value!r}, {rel.types[0]} has: read from {name}.{prop.value}"
        rest, more = _name_relationship_read(out, schema)
        return rest, [done, *more]
    return tokens, []


def _literals(tokens: list[Token], nodes: dict[str, str]) -> Iterator[tuple[str, str, str]]:
    """(label, property, string) of each ``var.prop <op> 'string'`` and ``(var:Label {prop: 'string'})``."""
    for i, tok in enumerate(tokens):
        if tok.kind != "str" or i < 2:
            continue
        before = tokens[i - 2]
        if tokens[i - 1].value == ":" and _word(before):  # {prop: 'string'} inside a node pattern
            owner = _node_label_before(tokens, i)
            if owner:
                yield owner, before.value, tok.value
            continue
        for op_len in (1, 2):  # "=", "<>", "<=", CONTAINS ...: the operator takes one or two tokens
            k = i - op_len  # tokens[k - 1] is the property, tokens[k - 2] the ".", tokens[k - 3] the variable
            if k >= 3 and tokens[k - 2].value == "." and _word(tokens[k - 1]) and _word(tokens[k - 3]) in nodes:
                yield nodes[str(_word(tokens[k - 3]))], tokens[k - 1].value, tok.value
                break


def _node_label_before(tokens: list[Token], i: int) -> str | None:
    """The label of the node pattern whose ``{...}`` holds ``tokens[i]``."""
    j = i
    while j > 0 and tokens[j].value != "{":
        j -= 1
    k = j - 1
    return tokens[k].value if k > 0 and _word(tokens[k]) and tokens[k - 1].value == ":" else None


def misplaced_values(query: str, schema: GraphSchema, stored: Callable[[str], set[tuple[str, str]]]) -> list[str]:
    """A string the query compares with one property that the database stores only under others:
    ``p.categoryID = 'Grains/Cereals'`` where 'Grains/Cereals' is a ``Category.categoryName``. ``stored`` gives
    the (label, property) pairs holding a value; values it does not know are left alone."""
    try:
        tokens = tokenise_cypher(query)
    except CypherSyntaxError:
        return []
    nodes, _ = _variables(patterns(tokens))
    problems = []
    for label, prop, value in _literals(tokens, nodes):
        where = stored(value)
        if where and (label, prop) not in where:
            places = ", ".join(f"{lab}.{pr}" for lab, pr in sorted(where))
            problems.append(f"'{value}' is stored as {places}, not as {label}.{prop}")
    return list(dict.fromkeys(problems))


AGGREGATES = {"count", "sum", "avg", "min", "max", "collect"}


def _has_aggregate(tokens: list[Token]) -> bool:
    return any(
        t.kind == "word" and t.value.lower() in AGGREGATES and k + 1 < len(tokens) and tokens[k + 1].value == "("
        for k, t in enumerate(tokens)
    )


def _aggregate_order(tokens: list[Token], variables: list[str]) -> list[Token] | None:
    """``RETURN s ORDER BY count(*) DESC LIMIT 3`` as ``WITH s, count(*) AS sort_key RETURN s ORDER BY sort_key DESC
    LIMIT 3``: a small model orders by an aggregate it does not return, which the engine cannot evaluate. Only
    for one sort key over a RETURN without aggregates; None when the query is not of that shape."""
    upper = [t.value.upper() if t.kind == "word" else t.value for t in tokens]
    if upper.count("RETURN") != 1:
        return None
    ret = upper.index("RETURN")
    order = next((k for k in range(ret, len(upper) - 1) if upper[k] == "ORDER" and upper[k + 1] == "BY"), None)
    if order is None:
        return None
    end = next((k for k in range(order + 2, len(upper)) if upper[k] in ("ASC", "DESC", "LIMIT", "SKIP")), len(upper))
    key, items = tokens[order + 2 : end], tokens[ret + 1 : order]
    if not _has_aggregate(key) or _has_aggregate(items) or any(t.value == "," and t.kind == "punct" for t in key):
        return None
    used = [v for v in variables if any(t.kind in ("word", "name") and t.value == v for t in items)]
    if not used:
        return None
    carried: list[Token] = [Token("word", "WITH", True)]
    for v in used:
        carried += [Token("word", v, True), Token("punct", ",")]
    alias = Token("word", "sort_key", True)
    carried += [*key, Token("word", "AS", True), alias]
    key[0] = key[0]._replace(gap=True)
    return [*tokens[:ret], *carried, *tokens[ret:order], tokens[order], tokens[order + 1], alias, *tokens[end:]]


def check_query(
    query: str,
    schema: GraphSchema,
    question: str = "",
    stored: Callable[[str], set[tuple[str, str]]] | None = None,
) -> CheckResult:
    """Problems of ``query`` against ``schema`` (unknown labels, types, properties, directions), with
    relationships written against their only direction turned round, a value compared on the wrong node read
    from the neighbour that stores it (``stored``: value → (label, property) pairs; :mod:`.joins`), variables
    kept in scope across WITH (:mod:`.scope`), numbers compared with text properties as numbers
    (:mod:`.coercion`), the ORDER BY and LIMIT of a ranking ``question`` added where the query has none
    (:mod:`.ranking`) and identifier columns it did not ask for given by name (:mod:`.columns`)."""
    out = CheckResult(query)
    try:
        tokens = tokenise_cypher(query)
    except CypherSyntaxError as exc:
        out.problems.append(f"the query does not parse: {exc}")
        return out
    if stored is not None:
        tokens, joined = join_value_owners(tokens, schema, _variables(patterns(tokens))[0], stored)
        out.fixed += joined
    tokens, named = _name_relationship_read(tokens, schema)
    out.fixed += named
    chains = patterns(tokens)
    nodes, rels = _variables(chains)
    turns: list[tuple[Rel, str]] = []
    for chain in chains:
        for k, part in enumerate(chain):
            if isinstance(part, Node):
                out.problems += [
                    f"there is no label {x}; labels are {_listing(schema.labels)}"
                    for x in part.labels
                    if x not in schema.labels
                ]
            elif (turn := _direction(schema, chain, k, nodes, out)) is not None:
                turns.append(turn)
            out.problems += [
                f"there is no relationship type {t}; types are {_listing(schema.types())}"
                for t in getattr(part, "types", [])
                if t not in schema.types()
            ]
    out.problems += _properties(schema, tokens, nodes, rels, out.fixed)
    for rel, direction in sorted(turns, key=lambda t: -t[0].start):
        tokens[rel.start : rel.end + 1] = _arrow(tokens, rel, direction)
    names = [p.var for chain in chains for p in chain if p.var]
    tokens = _reshape(tokens, schema, list(dict.fromkeys(names)), nodes, rels, question, out.fixed)
    if out.fixed:
        out.query = serialise(tokens)
    out.problems = list(dict.fromkeys(out.problems))
    return out


def _reshape(
    tokens: list[Token],
    schema: GraphSchema,
    names: list[str],
    nodes: dict[str, str],
    rels: dict[str, str],
    question: str,
    fixed: list[str],
) -> list[Token]:
    """The rewrites of a query's shape, in order: aggregates ordered by, scope across WITH, text read as
    numbers, the ranking's ORDER BY / LIMIT and names, identifiers as names. Each says what it did in
    ``fixed``."""
    ordered = _aggregate_order(tokens, names)
    if ordered is not None:
        tokens = ordered
        fixed.append("ordered by an aggregate it did not return: the aggregate moved into a WITH")
    tokens, moved = move_filters_before_with(tokens)
    if moved:
        fixed.append("filtered after a WITH on a variable it dropped: the condition moved before the WITH")
    tokens, reused = reuse_aliases(tokens)
    if reused:
        fixed.append("repeated an aggregate after the WITH that named it: the name is used")
    typed = {v: schema.labels.get(label, {}) for v, label in nodes.items()}
    typed |= {v: schema.relationship_properties(t) for v, t in rels.items()}
    ranking = asked_ranking(question)
    for step in (
        lambda t: numbers_against_strings(t, typed),
        lambda t: rank_rows(t, ranking),
        lambda t: name_ranked_nodes(t, nodes, schema.name_property, ranks=ranking.order is not None),
        lambda t: names_for_ids(t, question, nodes, schema.name_property),
    ):
        tokens, done = step(tokens)
        fixed += done
    return tokens


__all__ = ["CheckResult", "check_query", "misplaced_values", "patterns"]
