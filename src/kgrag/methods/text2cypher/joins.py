"""A value compared on the wrong node, joined to the node that stores it.

"Suppliers with the most products in the 'Dairy Products' category": the 1.5B model writes
``MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) WHERE p.categoryName = 'Dairy Products'``, but 'Dairy Products' is
a ``Category.categoryName`` and a Product has no such property. When the value is stored under exactly one
other label, and exactly one relationship type joins the two labels, the query can only have meant that
neighbour, so the join is added (``MATCH (p)-[:PART_OF]->(category1:Category)``) and the comparison reads it
(``category1.categoryName``). Anything less certain stays a problem for the repair call.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kgrag.graph.backends.guard import Token
from kgrag.methods.text2cypher.patterns import Node, Rel, fresh_name, patterns, variables, word
from kgrag.methods.text2cypher.schema import GraphSchema
from kgrag.methods.text2cypher.scope import Clause, clauses, is_word
from kgrag.methods.text2cypher.substrings import out_of_map

_COMPARE = {"=", "CONTAINS", "STARTS", "ENDS", "<>"}
_DIGITS = re.compile(r"[0-9.]+")


def _comparisons(tokens: list[Token], nodes: dict[str, str]) -> list[tuple[int, str]]:
    """``(index of var, value)`` for each ``var.prop <op> 'string'`` on a labelled node variable."""
    found = []
    for k in range(len(tokens) - 4):
        var, dot, prop, op = tokens[k : k + 4]
        if var.value not in nodes or dot.value != "." or prop.kind != "word":
            continue
        if (op.value if op.kind == "punct" else op.value.upper()) not in _COMPARE:
            continue
        value = next((t for t in tokens[k + 4 : k + 6] if t.kind == "str"), None)
        if value is not None:
            found.append((k, value.value))
    return found


def join_value_owners(
    tokens: list[Token], schema: GraphSchema, nodes: dict[str, str], stored: Callable[[str], set[tuple[str, str]]]
) -> tuple[list[Token], list[str]]:
    """``tokens`` with each wrongly placed value read from the one neighbour label that stores it (see the
    module docstring); ``nodes``: node variable → label. Returns the tokens and what was done. A node map's
    value stored only elsewhere (``(p:Product {categoryID: 'Beverages'})``) is a comparison in the WHERE first."""
    tokens = _misplaced_out_of_maps(tokens, stored)
    nodes = {**nodes, **variables(patterns(tokens))[0]}
    for k, value in _comparisons(tokens, nodes):
        joined = _join(tokens, k, value, schema, nodes, stored)
        if joined is not None:
            rest, done = join_value_owners(joined[0], schema, {**nodes, **joined[2]}, stored)
            return rest, [joined[1], *done]
    return tokens, []


def _misplaced_out_of_maps(tokens: list[Token], stored: Callable[[str], set[tuple[str, str]]]) -> list[Token]:
    """``tokens`` with each node-map entry whose text the database stores, but not as that label's property,
    moved to the WHERE as an equality (the same rows: none), where :func:`_join` can read it from its owner. Not
    a text of digits: every table stores "10" as some key, and a number in a map is a misplaced comparison
    (:func:`.filters.invented_map_values`), not another node's value."""
    while True:
        for node in (n for chain in patterns(tokens) for n in chain if isinstance(n, Node) and n.labels):
            entry = next(
                (
                    i
                    for i in range(node.start + 3, node.end)
                    if tokens[i].kind == "str"
                    and tokens[i - 1].value == ":"
                    and not _DIGITS.fullmatch(tokens[i].value.strip())
                    and (where := stored(tokens[i].value))
                    and (node.labels[0], tokens[i - 2].value) not in where
                ),
                None,
            )
            moved = out_of_map(tokens, node, entry, "=", tokens[entry].value) if entry is not None else None
            if moved is not None:
                tokens = moved
                break
        else:
            return tokens


def _join(
    tokens: list[Token],
    k: int,
    value: str,
    schema: GraphSchema,
    nodes: dict[str, str],
    stored: Callable[[str], set[tuple[str, str]]],
) -> tuple[list[Token], str, dict[str, str]] | None:
    """The query with the comparison at ``k`` read from the neighbour that stores ``value``, what was done and
    the new variable; None when the value is where it belongs or the neighbour is not certain."""
    var, prop = tokens[k].value, tokens[k + 2].value
    label = nodes[var]
    where = stored(value)
    owners = {lab for lab, _ in where if lab != label}
    if not where or (label, prop) in where or len(owners) != 1:
        return None
    owner = owners.pop()
    props = {p for lab, p in where if lab == owner}
    joins = ways(schema, label, owner)
    binding = binding_match(tokens, var)
    if len(props) != 1 or len(joins) != 1 or binding is None or binding.end > k:
        return None
    (owner_prop,), (rel, direction) = props, joins[0]
    new = fresh_name(owner.lower(), tokens)
    pattern = route_clause(var, [(rel, direction, owner)], new)
    read = [tokens[k]._replace(value=new), tokens[k + 1], tokens[k + 2]._replace(value=owner_prop)]
    out = [*tokens[: binding.end], *pattern, *tokens[binding.end : k], *read, *tokens[k + 3 :]]
    return out, f"'{value}' is a {owner}.{owner_prop}: joined {label} to {owner} by {rel}", {new: owner}


Route = list[tuple[str, str, str]]  # (relationship type, direction seen from the bound side, label reached)


def route_clause(bound: str, route: Route, var: str, *, name_relationship: bool = False) -> list[Token]:
    """``MATCH (bound)-[:R1]->(:Middle)<-[:R2]-(var:Goal)`` as tokens: the route's last node is named ``var``,
    or with ``name_relationship`` its last relationship (``-[var:R2]-``, the node after it unnamed)."""
    out = [Token("word", "MATCH", True), Token("punct", "(", True), Token("word", bound), Token("punct", ")")]
    for n, (rel, way, label) in enumerate(route):
        last = n == len(route) - 1
        inner = [Token("punct", "["), *([Token("word", var)] if last and name_relationship else [])]
        inner += [Token("punct", ":"), Token("word", rel), Token("punct", "]")]
        dash, tip = Token("punct", "-"), Token("punct", "<" if way == "in" else ">")
        out += [dash, *inner, dash, tip] if way == "out" else [tip, dash, *inner, dash]
        name = [Token("word", var)] if last and not name_relationship else []
        out += [Token("punct", "("), *name, Token("punct", ":"), Token("word", label), Token("punct", ")")]
    return out


def ways(schema: GraphSchema, a: str, b: str) -> list[tuple[str, str]]:
    """Relationship types joining labels ``a`` and ``b``, with their direction seen from ``a``."""
    out = [(r.name, "out") for r in schema.relationships if (r.source, r.target) == (a, b)]
    return out + [(r.name, "in") for r in schema.relationships if (r.source, r.target) == (b, a) and a != b]


def bind_unbound_reads(
    tokens: list[Token], schema: GraphSchema, nodes: dict[str, str], rels: dict[str, str]
) -> tuple[list[Token], list[str]]:
    """A variable the query reads properties of but never binds, bound by the one join that can mean it.

    "Categories of the products supplied by Mayumi's": ``MATCH (s:Supplier ...)-[:SUPPLIES]->(p:Product) WITH p,
    c.categoryName``. ``c`` is bound nowhere; only Category has ``categoryName``, and of the variables bound, only
    ``p`` (a Product) is joined to a Category, by one relationship type, so ``MATCH (p)-[:PART_OF]->(c:Category)``
    is added after the MATCH that binds ``p``. With two possible labels or joins the read stays an error for the
    repair call. ``nodes`` and ``rels``: the bound node and relationship variables with their label and type."""
    named = aliases(tokens)
    reads: dict[str, set[str]] = {}
    first: dict[str, int] = {}
    for k in range(len(tokens) - 2):
        var, dot, prop = tokens[k : k + 3]
        if var.kind != "word" or dot.value != "." or prop.kind != "word" or (k and tokens[k - 1].value in (".", ":")):
            continue
        if var.value in nodes or var.value in rels or var.value in named:
            continue
        reads.setdefault(var.value, set()).add(prop.value)
        first.setdefault(var.value, k)
    for var, props in reads.items():
        labels = [label for label, has in schema.labels.items() if props <= set(has)]
        if len(labels) != 1:
            continue
        joins = [(v, way) for v, label in nodes.items() for way in ways(schema, label, labels[0])]
        binding = None
        if len(joins) == 1:
            bound = joins[0][0]
            binding = binding_match(tokens, bound)
        if binding is None or binding.end > first[var]:
            continue
        (bound, (rel, direction)), label = joins[0], labels[0]
        out = [*tokens[: binding.end], *route_clause(bound, [(rel, direction, label)], var), *tokens[binding.end :]]
        rest, done = bind_unbound_reads(out, schema, {**nodes, var: label}, rels)
        return rest, [f"{var} was never bound: joined {nodes[bound]} {bound} to {label} {var} by {rel}", *done]
    return tokens, []


def read_property_words(tokens: list[Token], schema: GraphSchema) -> set[str]:
    """The words of every property the query reads (``p.unitsOnOrder`` or ``{unitsOnOrder: 0}``): "on order" in
    "products on order" is the property's, not a request for the Order nodes."""
    props = {prop for _, prop, _ in schema.properties()}
    read = {str(word(t)) for t in tokens if word(t) in props}
    return {w for prop in read for w in identifier_words(prop)}


def told_by_reads(label: str, told: set[str]) -> bool:
    """Whether every word of ``label`` is among ``told``, the words of the properties the query already reads."""
    return all(w in told for w in identifier_words(label))


def drop_unused_ends(tokens: list[Token], question: str, schema: GraphSchema) -> tuple[list[Token], list[str]]:
    """Pattern ends nothing else in the query uses and the question does not name, dropped.

    The 1.5B model copies the schema's shape: "the top 5 most frequently shipped cities for orders" becomes
    ``MATCH (o:Order)-[r:ORDERS]->(p:Product) ... count(*)``, which counts order lines instead of orders. A
    node at the end of a MATCH pattern whose variable appears nowhere else (no filter, no return, no other
    pattern), with no property map, reached by a relationship likewise unused, and whose label the question does
    not name in any form ("products", "ordered"), can only be that copy, so it goes with its relationship.
    Where the question names the label ("customers who have placed orders") the join is the question's and
    stays, unless its words are those of a property the query reads: "the suppliers of the products with the most
    units on order" reading ``p.unitsOnOrder`` asks for no Order node, and one joined unused multiplies a sum."""
    words = question_words(question)
    if not words:
        return tokens, []
    told = read_property_words(tokens, schema)
    for clause in clauses(tokens):
        if clause.keyword != "MATCH":
            continue
        for chain in patterns(tokens[: clause.end]):
            if chain[0].start < clause.start or len(chain) < 3:
                continue
            for node, rel in ((chain[-1], chain[-2]), (chain[0], chain[1])):
                assert isinstance(node, Node) and isinstance(rel, Rel)
                if not _unused(tokens, node, rel, words, told):
                    continue
                left = node is chain[0]
                a, b = (node.start, rel.end) if left else (rel.start, node.end)
                out = [*tokens[:a], *tokens[b + 1 :]]
                if left:  # the next node now opens the pattern: it takes the removed one's spacing
                    out[a] = out[a]._replace(gap=tokens[a].gap)
                rest, done = drop_unused_ends(out, question, schema)
                return rest, [f"a {node.labels[0]} the query never uses and the question does not name: dropped", *done]
    return tokens, []


def _unused(tokens: list[Token], node: Node, rel: Rel, words: set[str], told: set[str]) -> bool:
    """Whether ``node`` (at a pattern's end) and ``rel`` (beside it) are used nowhere else and the node's label
    is not named by the question's ``words`` (or only as the words ``told`` of a property the query reads)."""
    inside = set(range(node.start, node.end + 1)) | set(range(rel.start, rel.end + 1))
    if any(tokens[k].value == "{" for k in inside) or not node.labels:
        return False
    for var in (node.var, rel.var):
        if var and any(t.value == var and k not in inside for k, t in enumerate(tokens) if t.kind == "word"):
            return False
    if told_by_reads(node.labels[0], told):
        return True
    return not any(same_stem(w, x) for w in identifier_words(node.labels[0]) for x in words)


def identifier_words(name: str) -> list[str]:
    """The lower-case words of a label or property name: ``shipPostalCode`` → ship, postal, code; ``orderID`` →
    order, id."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+", name)]


def aliases(tokens: list[Token]) -> set[str]:
    """Names the query gives with AS or UNWIND: bound, though not by a pattern."""
    return {tokens[k + 1].value for k in range(len(tokens) - 1) if is_word(tokens[k], "AS", "UNWIND")}


def question_words(question: str) -> set[str]:
    """The question's lower-case words, to hold label and property words against."""
    return set(re.findall(r"[a-z]+", question.lower()))


def said(word: str, words: set[str]) -> bool:
    """Whether the question's ``words`` say ``word`` (a word of a label or property name): the same word or,
    inflected, the same stem (:func:`same_stem`)."""
    return any(word == q or same_stem(word, q) for q in words)


def same_stem(a: str, b: str) -> bool:
    """Whether two words share all but their last two letters, at least four ("order"/"ordered",
    "category"/"categories", "supplier"/"supplied"): the question names the label, inflected or not."""
    common = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return common >= 4 and common >= min(len(a), len(b)) - 2


def binding_match(tokens: list[Token], var: str) -> Clause | None:
    """The first MATCH clause that binds node variable ``var`` (``(var`` in its pattern), or None: where a join
    for ``var`` goes."""
    return next(
        (
            c
            for c in clauses(tokens)
            if c.keyword == "MATCH"
            and any(tokens[i].value == var and tokens[i - 1].value == "(" for i in range(c.start + 1, c.end))
        ),
        None,
    )


__all__ = [
    "Route",
    "aliases",
    "bind_unbound_reads",
    "binding_match",
    "drop_unused_ends",
    "identifier_words",
    "join_value_owners",
    "question_words",
    "route_clause",
    "said",
    "same_stem",
    "ways",
]
