"""text2cypher's rewrites of what a small model writes out of scope after WITH, and the row count a question
asks for (no LLM: the rewrites are plain token work)."""

from __future__ import annotations

import pytest

from kgrag.graph.backends.guard import serialise, tokenise_cypher
from kgrag.methods.text2cypher.ranking import Ranking, asked_ranking, rank_rows
from kgrag.methods.text2cypher.scope import clauses, move_filters_before_with, reuse_aliases


def _run(fix, query: str) -> tuple[str, bool]:
    tokens, changed = fix(tokenise_cypher(query))
    return serialise(tokens), changed


def test_clauses_are_top_level_and_keep_optional_match_and_starts_with_whole():
    query = "OPTIONAL MATCH (a) WHERE a.n STARTS WITH 'x' AND exists { MATCH (a)-->(b) } WITH a RETURN a"
    tokens = tokenise_cypher(query)
    assert [c.keyword for c in clauses(tokens)] == ["MATCH", "WHERE", "WITH", "RETURN"]


def test_a_filter_on_a_dropped_variable_moves_before_the_with():
    moved, changed = _run(
        move_filters_before_with,
        "MATCH (s:S)-[:R]->(p:P)-[:Q]->(c:C) WITH s, count(p) AS n WHERE c.name = 'B' RETURN s.name, n",
    )
    assert changed
    assert moved == "MATCH (s:S)-[:R]->(p:P)-[:Q]->(c:C) WHERE c.name = 'B' WITH s, count(p) AS n RETURN s.name, n"
    # joined to an existing WHERE; a condition on what the WITH carries stays behind it
    query = "MATCH (a)-->(b) WHERE a.x = 1 WITH a, count(b) AS n WHERE n > 2 AND b.y = 'q' RETURN a"
    moved, _ = _run(move_filters_before_with, query)
    assert moved == "MATCH (a)-->(b) WHERE a.x = 1 AND b.y = 'q' WITH a, count(b) AS n WHERE n > 2 RETURN a"


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (a)-->(b) WITH a, count(b) AS n WHERE n > 2 OR b.y = 'q' RETURN a",  # OR: not separable
        "MATCH (a)-->(b) WITH * WHERE b.y = 'q' RETURN a",  # WITH * carries everything
        "MATCH (a)-->(b) WITH a, b WHERE b.y = 'q' RETURN a",  # b is carried: in scope
        "MATCH (a)-->(b) WITH a, count(b) AS n WHERE n > 2 RETURN a",
    ],
)
def test_filters_in_scope_or_not_separable_stay(query):
    assert _run(move_filters_before_with, query) == (serialise(tokenise_cypher(query)), False)


def test_an_aggregate_repeated_after_its_with_is_the_alias():
    fixed, changed = _run(
        reuse_aliases,
        "MATCH (c:C)-->(o)-->(p) WITH c, count(DISTINCT p) AS k WHERE k > 10 RETURN c.name, count(DISTINCT p)",
    )
    assert changed and fixed == "MATCH (c:C)-->(o)-->(p) WITH c, count(DISTINCT p) AS k WHERE k > 10 RETURN c.name, k"
    # a later MATCH binds p again: the aggregate is a new one
    again = "MATCH (c)-->(p) WITH c, count(p) AS k MATCH (c)-->(p) RETURN c, count(p)"
    assert _run(reuse_aliases, again) == (serialise(tokenise_cypher(again)), False)
    # a property of a variable the WITH dropped, named by the WITH (the engine: "Variable c is not in scope")
    dropped = "MATCH (p:P)-->(c:C) WITH c.name AS category, count(p) AS n ORDER BY n DESC RETURN c.name, n"
    assert _run(reuse_aliases, dropped) == (dropped.replace("RETURN c.name", "RETURN category"), True)
    carried = "MATCH (p:P)-->(c:C) WITH c, c.name AS category RETURN c.name"  # c is in scope: left as written
    assert _run(reuse_aliases, carried) == (carried, False)


@pytest.mark.parametrize(
    ("question", "rows", "order"),
    [
        ("List three customers who have purchased products ordered on '1996-07-04'.", 3, None),
        ("Which 3 suppliers supply products with more than 50 units in stock?", 3, None),
        ("List the first 3 orders shipped to France.", 3, None),
        ("What are the top 5 most frequently ordered products?", 5, "DESC"),
        ("Find the top 5 orders with the lowest freight charges.", 5, "ASC"),
        ("Which customers ordered more than 10 different products?", None, None),
        ("List 1997 orders", None, None),
        ("Which one of the employees reports to Fuller?", None, None),
        ("Which 2 times did the order ship?", None, None),
    ],
)
def test_the_rows_and_order_a_question_asks_for(question, rows, order):
    assert asked_ranking(question) == Ranking(rows, order)


def test_order_and_limit_are_added_only_where_the_query_has_none():
    def ranked(query: str, ranking: Ranking) -> str:
        return serialise(rank_rows(tokenise_cypher(query), ranking)[0])

    top = Ranking(3, "DESC")
    assert ranked("MATCH (o:Order) RETURN o", top) == "MATCH (o:Order) RETURN o LIMIT 3"  # nothing to rank by
    assert ranked("MATCH (o) WITH o LIMIT 5 RETURN o", top) == "MATCH (o) WITH o LIMIT 5 RETURN o"
    assert (
        ranked("MATCH (s)-->(p) WITH s, avg(p.price) AS a RETURN s.name, a", top)
        == "MATCH (s)-->(p) WITH s, avg(p.price) AS a RETURN s.name, a ORDER BY a DESC LIMIT 3"
    )
    assert (
        ranked("MATCH (s)-->(p) RETURN s.name, count(p) AS n LIMIT 3", Ranking(None, "ASC"))
        == "MATCH (s)-->(p) RETURN s.name, count(p) AS n ORDER BY n ASC LIMIT 3"
    )
    two = "MATCH (s)-->(p) RETURN s.name, count(p) AS n, avg(p.x) AS a"  # which one is ranked: not said
    assert ranked(two, Ranking(None, "DESC")) == two
    ordered = "MATCH (s)-->(p) RETURN s.name, count(p) AS n ORDER BY s.name"
    assert ranked(ordered, Ranking(None, "DESC")) == ordered


def test_a_label_spelled_like_a_keyword_is_not_one():
    query = "MATCH (c:Customer)-[:PURCHASED]->(o:Order) WITH c, count(o) AS n RETURN c.companyName, n LIMIT 5"
    tokens, done = rank_rows(tokenise_cypher(query), Ranking(5, "DESC"))
    assert serialise(tokens) == query.replace("LIMIT 5", "ORDER BY n DESC LIMIT 5") and len(done) == 1


def test_a_property_read_is_a_name_a_dot_and_a_name():
    """``property_read``, which every rewrite of reads asks: ``o.freight`` and a backticked name are reads; a dot
    after a space, a number, or the second step of ``a.b.c`` are not."""
    from kgrag.methods.text2cypher.patterns import property_read

    tokens = tokenise_cypher("MATCH (o:Order) RETURN o.freight, `o`.shipCity, m.a.b, 1.5, o . x")
    reads = {property_read(tokens, i) for i in range(len(tokens))} - {None}
    assert reads == {("o", "freight"), ("o", "shipCity"), ("m", "a")}


def test_the_aggregate_rows_are_chosen_by_is_returned_beside_them():
    from kgrag.methods.text2cypher.shown import show_choosing_aggregates

    labels, names = {"c": "Customer", "p": "Product"}, {"Customer": "companyName"}
    match = "MATCH (c:Customer)-->(o:Order)-->(p:Product) "

    def show(query: str) -> tuple[str, list[str]]:
        tokens, done = show_choosing_aggregates(tokenise_cypher(match + query), labels, names)
        return serialise(tokens).removeprefix(match), done

    shown, done = show("WITH c, count(DISTINCT p) AS n WHERE n > 3 RETURN DISTINCT c ORDER BY c.city")
    assert shown == "WITH c, count(DISTINCT p) AS n WHERE n > 3 RETURN DISTINCT c.companyName, n ORDER BY c.city"
    assert len(done) == 2
    ranked, _ = show("WITH c, sum(o.freight) AS f ORDER BY f DESC LIMIT 3 RETURN c.companyName")
    assert ranked == "WITH c, sum(o.freight) AS f ORDER BY f DESC LIMIT 3 RETURN c.companyName, f"
    for untouched in (
        "WITH c, count(p) AS n WHERE n > 3 RETURN c.companyName, n",  # already shown
        "WITH c, count(p) AS n RETURN c.companyName",  # computed, but nothing chose the rows by it
        "WITH c, collect(p) AS ps WHERE size(ps) > 3 RETURN c.companyName",  # a list is no number to show
        "WITH c, count(p) AS n WHERE n > 3 RETURN c.city, count(*) AS k",  # the RETURN aggregates again
        "WITH c, count(p) AS n WHERE n > 3 MATCH (c)-->(x:Order) RETURN x.orderID",  # a MATCH repeats the rows
    ):
        assert show(untouched) == (untouched, [])
