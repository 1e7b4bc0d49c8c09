"""A variable only counted and never bound, joined where the question and the schema allow one reading.

"Which 3 products have been ordered by the most distinct customers?" — the 1.5B model writes ``MATCH
(p:Product) WITH p, count(DISTINCT c) AS n ...`` and the engine stops at "Variable c is not in scope".
Nothing is read from ``c``, so :func:`.joins.bind_unbound_reads` has no property to find its label by. Two
cues together give it one: the model names a variable by its label's initial (``c`` for Customer, ``o`` for
Order), and the question names the label it counts ("customers"). When exactly one label not yet bound has
both, and exactly one shortest route of at most two relationships joins it to a bound node variable
(Product ←ORDERS– Order ←PURCHASED– Customer), that route is matched after the clause that binds the
variable. Anything less certain is left to the repair call.

The same cues mend a count of the wrong thing. "List the top 5 categories with the most products" came out as
``MATCH (c:Category) RETURN c.categoryName, count(*)``, and "Identify the top 5 most frequently ordered
products" as ``MATCH (p:Product) RETURN p.productName, count(*)``: each counts its own node, once, because the
label the question counts (products, orders) is in no pattern. When the question names exactly one label the
query does not bind, and one shortest route joins it to a bound node (:func:`join_counted_label`), the route
is matched and the count counts its end. A label is in a pattern when a node of it is, named or not
(``(p)<-[:ORDERS]-(:Order) ... count(*)`` counts orders already; a second Order joined would square the
count), and a label whose words are those of a property the query reads is not asked for ("products on order"
with ``p.unitsOnOrder``).
"""

from __future__ import annotations

from kgrag.graph.backends.guard import Token
from kgrag.methods.text2cypher.joins import (
    Route,
    aliases,
    binding_match,
    identifier_words,
    question_words,
    read_property_words,
    route_clause,
    said,
    told_by_reads,
    ways,
)
from kgrag.methods.text2cypher.patterns import Node, fresh_name, patterns
from kgrag.methods.text2cypher.schema import GraphSchema
from kgrag.methods.text2cypher.scope import is_word

_COUNTING = {"count", "collect"}


def bind_counted(
    tokens: list[Token], schema: GraphSchema, nodes: dict[str, str], rels: dict[str, str], question: str
) -> tuple[list[Token], list[str]]:
    """``tokens`` with the one join a counted, unbound variable can mean (module docstring), and what was done."""
    words = question_words(question)
    named = {label for label in schema.labels if _names(label, words)}
    given = aliases(tokens)
    for k, var in _counted(tokens):
        if var in nodes or var in rels or var in given or not var[0].isalpha():
            continue
        labels = [x for x in named - set(nodes.values()) if x[0].lower() == var[0].lower()]
        if len(labels) != 1:
            continue
        found = [(bound, route) for bound, label in nodes.items() for route in _routes(schema, label, labels[0])]
        if not found:
            continue
        shortest = min(len(r) for _, r in found)
        found = [(b, r) for b, r in found if len(r) == shortest]
        if len(found) != 1:
            continue
        bound, route = found[0]
        binding = binding_match(tokens, bound)
        if binding is None or binding.end > k:
            continue
        out = [*tokens[: binding.end], *route_clause(bound, route, var), *tokens[binding.end :]]
        path = " ".join(f"{rel} {label}" for rel, _, label in route)
        return out, [f"{var} was counted but never bound: joined {nodes[bound]} {bound} to it by {path}"]
    return tokens, []


def join_counted_label(
    tokens: list[Token], schema: GraphSchema, nodes: dict[str, str], rels: dict[str, str], question: str
) -> tuple[list[Token], list[str]]:
    """``tokens`` with ``count(*)`` or ``count(x)`` of a bound node turned into a count of the one label the
    question names and no pattern binds, joined by its one shortest route (module docstring)."""
    words = question_words(question)
    present = {label for chain in patterns(tokens) for part in chain if isinstance(part, Node) for label in part.labels}
    told = read_property_words(tokens, schema)
    missing = [x for x in schema.labels if x not in present and _names(x, words) and not told_by_reads(x, told)]
    counts = [(k, arg) for k, arg in _counted(tokens, star=True) if arg == "*" or arg in nodes]
    if len(missing) != 1 or not counts or rels.keys() & {arg for _, arg in counts}:
        return tokens, []
    goal = missing[0]
    found = [(bound, route) for bound, label in nodes.items() for route in _routes(schema, label, goal)]
    if not found:
        return tokens, []
    shortest = min(len(r) for _, r in found)
    found = [(b, r) for b, r in found if len(r) == shortest]
    binding = binding_match(tokens, found[0][0]) if len(found) == 1 else None
    if binding is None or binding.end > counts[0][0]:
        return tokens, []
    bound, route = found[0]
    var = fresh_name(goal[0].lower(), tokens)
    out = list(tokens)
    for k, arg in reversed(counts):  # the argument sits after ``count (`` and an optional DISTINCT
        j = next(i for i in range(k + 2, k + 4) if out[i].value == arg)
        out[j] = Token("word", var, out[j].gap)
    out[binding.end : binding.end] = route_clause(bound, route, var)
    path = " ".join(f"{rel} {label}" for rel, _, label in route)
    counted = ", ".join(dict.fromkeys(f"count({arg})" for _, arg in counts))
    return out, [f"{counted} did not count the {goal} nodes the question asks about: joined {bound} to them by {path}"]


def _names(label: str, words: set[str]) -> bool:
    return any(said(w, words) for w in identifier_words(label))


def _counted(tokens: list[Token], star: bool = False) -> list[tuple[int, str]]:
    """(index, variable) of each ``count(x)`` / ``count(DISTINCT x)`` / ``collect(x)`` of a bare word; with
    ``star``, only counts, ``count(*)`` among them."""
    out = []
    names = {"count"} if star else _COUNTING
    for k in range(len(tokens) - 3):
        if tokens[k].kind != "word" or tokens[k].value.lower() not in names or tokens[k + 1].value != "(":
            continue
        j = k + 3 if is_word(tokens[k + 2], "DISTINCT") else k + 2
        closed = j + 1 < len(tokens) and tokens[j + 1].value == ")"
        if closed and (tokens[j].kind == "word" or (star and tokens[j].value == "*")):
            out.append((k, tokens[j].value))
    return out


def _routes(schema: GraphSchema, start: str, goal: str) -> list[Route]:
    """Routes of one relationship from ``start`` to ``goal``, or, when there is none, of two through another
    label."""
    direct = [[(rel, way, goal)] for rel, way in ways(schema, start, goal)]
    if direct:
        return direct
    middles = [m for m in schema.labels if m not in (start, goal)]
    return [
        [(r1, w1, m), (r2, w2, goal)]
        for m in middles
        for r1, w1 in ways(schema, start, m)
        for r2, w2 in ways(schema, m, goal)
    ]


__all__ = ["bind_counted", "join_counted_label"]
