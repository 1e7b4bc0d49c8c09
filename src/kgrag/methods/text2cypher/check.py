"""Hold a written Cypher query against the database's schema, and mend what has one meaning, before it runs.

The engine accepts a query with a label, property or relationship direction the database does not have and
returns no rows, which tells the model nothing. This check reads the query's patterns from the guard's tokens
(the same tokens the engine will get, :mod:`.patterns`) and reports each such mistake in words a repair prompt
can use ("Supplier has no property 'name'; it has companyName, contactName, ..."). Mistakes that allow exactly
one reading are mended without asking, each said in ``CheckResult.fixed``: a relationship written against its
only direction is turned round; a property read from the wrong variable moves to the one that has it
(:mod:`.reads`); a value compared on the wrong node is read from its neighbour, and a variable read but never
bound is joined where one join can mean it (:mod:`.joins`), and so is a label the question counts but the
query does not match (:mod:`.counted`); variables are kept in scope across WITH
(:mod:`.scope`); numbers meet text properties as numbers (:mod:`.coercion`); a
ranking question gets its ORDER BY, LIMIT and named rows (:mod:`.ranking`); identifier columns the question
did not ask for become names (:mod:`.columns`); an order the question does not ask for goes (:mod:`.ranking`).
A value, number or kind of node the question states and the query leaves out is a problem for the repair call
(:mod:`.asked`). The check runs again on what it mended until nothing changes.
Measured on 100 Northwind dev questions (README, #25).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kgrag.graph.backends.guard import CypherSyntaxError, Token, serialise, tokenise_cypher
from kgrag.methods.text2cypher.asked import other_rows_returned, unused_question_values
from kgrag.methods.text2cypher.coercion import numbers_against_strings
from kgrag.methods.text2cypher.columns import (
    distinct_entities,
    entity_item,
    names_for_ids,
    ordered_after_distinct,
    quote_keyword_aliases,
)
from kgrag.methods.text2cypher.counted import bind_counted, join_counted_label
from kgrag.methods.text2cypher.dates import years_as_prefixes
from kgrag.methods.text2cypher.filters import invented_map_values, unasked_filters
from kgrag.methods.text2cypher.joins import (
    bind_unbound_reads,
    drop_unused_ends,
    identifier_words,
    join_value_owners,
)
from kgrag.methods.text2cypher.patterns import Node, Rel, patterns, variables, word
from kgrag.methods.text2cypher.ranking import (
    asked_ranking,
    first_by_date,
    name_ranked_nodes,
    rank_rows,
    unasked_limit,
    unasked_order,
)
from kgrag.methods.text2cypher.reads import (
    join_read_owner,
    listing,
    name_relationship_read,
    separate_shared_names,
    wrong_variable_reads,
)
from kgrag.methods.text2cypher.schema import GraphSchema
from kgrag.methods.text2cypher.scope import (
    carry_variables,
    has_aggregate,
    move_filters_before_with,
    reuse_aliases,
    split_at,
)
from kgrag.methods.text2cypher.shown import show_choosing_aggregates
from kgrag.methods.text2cypher.substrings import misplaced_substrings, partial_matches
from kgrag.methods.text2cypher.values import ValueIndex

_NUMBERS = {"INTEGER", "INT64", "INT32", "FLOAT", "DOUBLE", "NUMBER", "LONG"}


@dataclass
class CheckResult:
    """What the check found: the (possibly direction-fixed) query, problems for the model, fixes it made."""

    query: str
    problems: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)


def _label_of(node: Node, nodes: dict[str, str]) -> str | None:
    return node.labels[0] if node.labels else nodes.get(node.var or "")


def _arrow(tokens: list[Token], rel: Rel, direction: str) -> list[Token]:
    inner = tokens[rel.bracket[0] : rel.bracket[1] + 1] if rel.bracket else []
    dash = Token("punct", "-")
    if direction == "in":
        return [Token("punct", "<"), dash, *inner, dash]
    return [dash, *inner, dash, Token("punct", ">")]


def _direction(
    schema: GraphSchema, chain: list[Node | Rel], k: int, nodes: dict[str, str], out: CheckResult, tokens: list[Token]
) -> tuple[Rel, str] | None:
    """Check the direction of relationship ``chain[k]``; returns (rel, new direction) when it must turn. A type
    that joins neither way is replaced (in ``tokens``) by the one type that joins the two labels, if one does."""
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
    joining = {r.name for r in schema.relationships if (r.source, r.target) in ((src, dst), (dst, src))}
    if len(joining) == 1 and (new := _retype(tokens, rel, joining.pop())) is not None:
        out.fixed.append(f"{rel.types[0]} does not join {a} and {b}; {new} does: used instead")
        return None if (src, dst) in schema.directions(new) else (rel, "in" if rel.direction == "out" else "out")
    ways = "; ".join(f"(:{s})-[:{rel.types[0]}]->(:{t})" for s, t in sorted(allowed))
    out.problems.append(f"{rel.types[0]} does not join {a} and {b}; it only joins {ways}")
    return None


def _retype(tokens: list[Token], rel: Rel, new: str) -> str | None:
    """Write type ``new`` for ``rel``'s one type in ``tokens`` (in place, one token for one); None when the type
    is not written as a plain word after ``:``. ``(s:Supplier) ... (s)-[r:ORDERS]->(o:Product)``, where only
    SUPPLIES joins a Supplier and a Product: the 1.5B model took the type from the wrong pair of labels (a
    variable written without its label lets the grammar offer every type), and its repair wrote the same."""
    if rel.bracket is None:
        return None
    for i in range(rel.bracket[0] + 1, rel.bracket[1]):
        if tokens[i].kind == "word" and tokens[i].value == rel.types[0] and tokens[i - 1].value == ":":
            tokens[i] = tokens[i]._replace(value=new)
            return new
    return None


def _literals(tokens: list[Token], nodes: dict[str, str]) -> Iterator[tuple[str, str, str]]:
    """(label, property, string) of each ``var.prop <op> 'string'`` and ``(var:Label {prop: 'string'})``."""
    for i, tok in enumerate(tokens):
        if tok.kind != "str" or i < 2:
            continue
        before = tokens[i - 2]
        if tokens[i - 1].value == ":" and word(before):  # {prop: 'string'} inside a node pattern
            owner = _node_label_before(tokens, i)
            if owner:
                yield owner, before.value, tok.value
            continue
        for op_len in (1, 2):  # "=", "<>", "<=", CONTAINS ...: the operator takes one or two tokens
            k = i - op_len  # tokens[k - 1] is the property, tokens[k - 2] the ".", tokens[k - 3] the variable
            if k >= 3 and tokens[k - 2].value == "." and word(tokens[k - 1]) and word(tokens[k - 3]) in nodes:
                yield nodes[str(word(tokens[k - 3]))], tokens[k - 1].value, tok.value
                break


def _node_label_before(tokens: list[Token], i: int) -> str | None:
    """The label of the node pattern whose ``{...}`` holds ``tokens[i]``."""
    j = i
    while j > 0 and tokens[j].value != "{":
        j -= 1
    k = j - 1
    return tokens[k].value if k > 0 and word(tokens[k]) and tokens[k - 1].value == ":" else None


def misplaced_values(query: str, schema: GraphSchema, stored: Callable[[str], set[tuple[str, str]]]) -> list[str]:
    """A string the query compares with one property that the database stores only under others:
    ``p.categoryID = 'Grains/Cereals'`` where 'Grains/Cereals' is a ``Category.categoryName``. ``stored`` gives
    the (label, property) pairs holding a value; values it does not know are left alone."""
    try:
        tokens = tokenise_cypher(query)
    except CypherSyntaxError:
        return []
    return _misplaced(tokens, variables(patterns(tokens))[0], stored)


def _misplaced(tokens: list[Token], nodes: dict[str, str], stored: Callable[[str], set[tuple[str, str]]]) -> list[str]:
    problems = []
    for label, prop, value in _literals(tokens, nodes):
        where = stored(value)
        if where and (label, prop) not in where:
            places = ", ".join(f"{lab}.{pr}" for lab, pr in sorted(where))
            problems.append(f"'{value}' is stored as {places}, not as {label}.{prop}")
    return list(dict.fromkeys(problems))


def _aggregate_order(tokens: list[Token], nodes: dict[str, str], names: dict[str, str]) -> list[Token] | None:
    """An aggregate the RETURN orders by but does not return, which the engine cannot evaluate, made a column.

    How it groups follows what the RETURN lists. Nodes, or their naming properties, are entities:
    ``RETURN s.companyName ORDER BY count(p) DESC LIMIT 3`` becomes ``WITH s, count(p) AS sort_key RETURN
    s.companyName ORDER BY sort_key DESC LIMIT 3``, counted per supplier node as Cypher is usually
    written (ties then fall as they do for such queries). Any other value is what is counted over:
    ``RETURN o.shipCity ORDER BY count(*)`` becomes ``RETURN o.shipCity, count(*) AS sort_key ORDER BY
    sort_key``, per city (a WITH over ``o`` would count per order). Only for one sort key over a RETURN without
    aggregates; None when the query is not of that shape."""
    upper = [t.value.upper() if t.kind == "word" else t.value for t in tokens]
    if upper.count("RETURN") != 1:
        return None
    ret = upper.index("RETURN")
    order = next((k for k in range(ret, len(upper) - 1) if upper[k] == "ORDER" and upper[k + 1] == "BY"), None)
    if order is None:
        return None
    end = next((k for k in range(order + 2, len(upper)) if upper[k] in ("ASC", "DESC", "LIMIT", "SKIP")), len(upper))
    key, items = tokens[order + 2 : end], tokens[ret + 1 : order]
    if not items or not has_aggregate(key) or has_aggregate(items) or any(t.value == "," for t in key):
        return None
    alias = Token("word", "sort_key", True)
    parts = split_at(tokens, ret + 1, order, ",")
    entities = [entity_item(tokens[a:b], nodes, names) for a, b in parts]
    if all(entities):
        carried: list[Token] = [Token("word", "WITH", True)]
        for var in dict.fromkeys(entities):
            carried += [Token("word", str(var), True), Token("punct", ",")]
        carried += [key[0]._replace(gap=True), *key[1:], Token("word", "AS", True), alias]
        return [*tokens[:ret], *carried, *tokens[ret:order], tokens[order], tokens[order + 1], alias, *tokens[end:]]
    column = [Token("punct", ","), key[0]._replace(gap=True), *key[1:], Token("word", "AS", True), alias]
    return [*tokens[:order], *column, tokens[order], tokens[order + 1], alias, *tokens[end:]]


def check_query(
    query: str,
    schema: GraphSchema,
    question: str = "",
    values: ValueIndex | None = None,
    passes: int = 3,
) -> CheckResult:
    """Problems of ``query`` against ``schema`` (unknown labels, types, properties, directions), with
    relationships written against their only direction turned round, a value compared on the wrong node read
    from the neighbour that stores it (``values``: what the database stores where; :mod:`.joins`), a value
    neither the question nor the database has dropped from a node's map (:mod:`.filters`), a year matched
    against text dates (:mod:`.dates`), variables kept in scope across WITH (:mod:`.scope`), numbers compared
    with text properties as numbers (:mod:`.coercion`), the ORDER BY and LIMIT of a ranking ``question`` added
    where the query has none (:mod:`.ranking`), the aggregate a WITH chose the rows by returned beside them
    (:mod:`.shown`) and identifier columns it did not ask for given by name (:mod:`.columns`).

    One mend can open the way for another (a variable bound by one pass is a node the next can name), so the
    check runs again on what it mended, up to ``passes`` times, until a pass changes nothing; the problems are
    the last pass's, the fixes all passes'."""
    out = _check_once(query, schema, question, values)
    for _ in range(passes - 1):
        if out.query == query:  # nothing was rewritten: another pass would see the same query
            break
        query = out.query
        again = _check_once(query, schema, question, values)
        out.query, out.problems, out.fixed = again.query, again.problems, out.fixed + again.fixed
    return out


def mend_last_try(checked: CheckResult) -> CheckResult:
    """The mends that make a query run by changing what it returns, for the last try only: before it, the
    engine's error goes to the repair call, and the query the model writes then is its own. An ORDER BY key a
    ``RETURN DISTINCT`` leaves out of scope is returned as a column (:func:`.columns.ordered_after_distinct`):
    applied to every try, it made a first query run that lacked the question's filter, where the repair call
    had written the right one (Northwind dev, without examples)."""
    try:
        tokens = tokenise_cypher(checked.query)
    except CypherSyntaxError:
        return checked
    tokens, done = ordered_after_distinct(tokens)
    if not done:
        return checked
    return CheckResult(serialise(tokens), list(checked.problems), [*checked.fixed, *done])


def _check_once(query: str, schema: GraphSchema, question: str, values: ValueIndex | None) -> CheckResult:
    stored = values.places if values is not None else None
    out = CheckResult(query)
    try:
        tokens = tokenise_cypher(query)
    except CypherSyntaxError as exc:
        out.problems.append(f"the query does not parse: {exc}")
        return out
    tokens = _mend_reads(tokens, schema, question, values, out.fixed)
    chains = patterns(tokens)
    nodes, rels = variables(chains)
    turns: list[tuple[Rel, str]] = []
    for chain in chains:
        for k, part in enumerate(chain):
            if isinstance(part, Node):
                out.problems += [
                    f"there is no label {x}; labels are {listing(schema.labels)}"
                    for x in part.labels
                    if x not in schema.labels
                ]
            elif (turn := _direction(schema, chain, k, nodes, out, tokens)) is not None:
                turns.append(turn)
            out.problems += [
                f"there is no relationship type {t}; types are {listing(schema.types())}"
                for t in getattr(part, "types", [])
                if t not in schema.types()
            ]
    out.problems += wrong_variable_reads(schema, tokens, nodes, rels, out.fixed)
    for rel, direction in sorted(turns, key=lambda t: -t[0].start):
        tokens[rel.start : rel.end + 1] = _arrow(tokens, rel, direction)
    tokens, years = years_as_prefixes(tokens, question, nodes, values.dates if values is not None else set())
    out.fixed += years
    tokens = _reshape(tokens, schema, nodes, rels, question, out.fixed)
    if out.fixed:
        out.query = serialise(tokens)
    if stored is not None:  # what no rewrite could place: a value compared with a property that does not store it
        out.problems += _misplaced(tokens, nodes, stored)
    if question:  # what the question states and no literal of the query holds (:mod:`.asked`)
        out.problems += unused_question_values(
            tokens, question, values, _schema_words(schema), _numeric(schema, values)
        )
        out.problems += other_rows_returned(tokens, question, schema.labels, variables(patterns(tokens))[0])
    out.problems = list(dict.fromkeys(out.problems))
    return out


def _numeric(schema: GraphSchema, values: ValueIndex | None) -> list[tuple[str, str]]:
    """``(owner, property)`` of every property that holds numbers: typed so, or text that always reads as one."""
    texts = values.numbers if values is not None else set()
    return list(dict.fromkeys((o, p) for o, p, kind in schema.properties() if kind in _NUMBERS or (o, p) in texts))


def _schema_words(schema: GraphSchema) -> set[str]:
    """The lower-case words of the schema's labels, types and property names."""
    names = [*schema.labels, *schema.types(), *(p for _, p, _ in schema.properties())]
    return {w for name in names for w in identifier_words(name)}


def _property_names(schema: GraphSchema) -> frozenset[str]:
    """The nodes' property names, lower-cased (a map value spelling one is no value)."""
    return frozenset(p.lower() for props in schema.labels.values() for p in props)


def _mend_reads(
    tokens: list[Token],
    schema: GraphSchema,
    question: str,
    values: ValueIndex | None,
    fixed: list[str],
) -> list[Token]:
    """The rewrites that bind what a query reads to where it is stored, in order: values to the nodes that
    store them, unbound reads and counts joined, unused ends dropped, relationship reads named. Each says what
    it did in ``fixed``."""

    def nodes_of(t: list[Token]) -> tuple[dict[str, str], dict[str, str]]:  # again after each rewrite
        return variables(patterns(t))

    steps: list[Callable[[list[Token]], tuple[list[Token], list[str]]]] = []
    if values is not None:
        stored = values.places
        steps += [
            lambda t: join_value_owners(t, schema, nodes_of(t)[0], stored),
            lambda t: partial_matches(t, question, stored),
            lambda t: misplaced_substrings(t, nodes_of(t)[0], values, question),
            lambda t: invented_map_values(t, question, values, _property_names(schema)),
        ]
    steps += [
        lambda t: bind_unbound_reads(t, schema, *nodes_of(t)),
        lambda t: bind_counted(t, schema, *nodes_of(t), question),
        lambda t: join_counted_label(t, schema, *nodes_of(t), question),
        lambda t: drop_unused_ends(t, question, schema),
        lambda t: separate_shared_names(t, schema),
        lambda t: name_relationship_read(t, schema),
        lambda t: join_read_owner(t, schema),
    ]
    for step in steps:
        tokens, done = step(tokens)
        fixed += done
    return tokens


def _reshape(
    tokens: list[Token],
    schema: GraphSchema,
    nodes: dict[str, str],
    rels: dict[str, str],
    question: str,
    fixed: list[str],
) -> list[Token]:
    """The rewrites of a query's shape, in order: aggregates ordered by, scope across WITH, text read as
    numbers, the ranking's ORDER BY / LIMIT and names, the choosing aggregate shown, identifiers as names,
    entities listed once.
    Each says what it did in ``fixed``."""
    ordered = _aggregate_order(tokens, nodes, schema.name_property)
    if ordered is not None:
        tokens = ordered
        fixed.append("ordered by an aggregate it did not return: the aggregate is returned")
    tokens, moved = move_filters_before_with(tokens)
    if moved:
        fixed.append("filtered after a WITH on a variable it dropped: the condition moved before the WITH")
    tokens, reused = reuse_aliases(tokens)
    if reused:
        fixed.append("repeated an expression after the WITH that named it: the name is used")
    tokens, carried = carry_variables(tokens)
    if carried:
        fixed.append("a WITH carried a property without a name: it carries the variable")
    typed = {v: schema.labels.get(label, {}) for v, label in nodes.items()}
    typed |= {v: schema.relationship_properties(t) for v, t in rels.items()}
    ranking = asked_ranking(question)
    for step in (
        lambda t: unasked_filters(t, question, typed),
        lambda t: numbers_against_strings(t, typed),
        lambda t: rank_rows(t, ranking, question, typed),
        lambda t: unasked_limit(t, ranking, question),
        lambda t: unasked_order(t, ranking, question),
        lambda t: first_by_date(t, question, nodes, schema.labels),
        lambda t: name_ranked_nodes(t, nodes, schema.name_property, ranking.order is not None, question),
        lambda t: show_choosing_aggregates(t, nodes, schema.name_property),
        lambda t: names_for_ids(t, question, nodes, schema.name_property),
        lambda t: distinct_entities(t, nodes, schema.name_property),
        quote_keyword_aliases,
    ):
        tokens, done = step(tokens)
        fixed += done
    return tokens


__all__ = ["CheckResult", "check_query", "mend_last_try", "misplaced_values"]
