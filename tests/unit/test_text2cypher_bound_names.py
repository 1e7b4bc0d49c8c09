"""text2cypher's token check: a query under the grammar reads only names it bound (no LLM: the check is read
here piece by piece, as the llama.cpp backend reads it token by token)."""

from __future__ import annotations

import pytest

from kgrag.methods.text2cypher.bound_names import (
    MAX_DEPTH,
    MAX_DIGITS,
    MAX_LIST,
    MAX_MATCHES,
    MAX_REPEATS,
    NAME,
    BoundNames,
)
from kgrag.models.llm.base import GenerationParams
from kgrag.models.llm.token_checks import new_check


def first_refused(text: str, step: int = 1) -> str | None:
    """The text up to the first piece (``step`` characters) the check refuses; None when it refuses none."""
    check = BoundNames()
    for k in range(0, len(text), step):
        piece = text[k : k + step]
        if not check.allows(piece):
            return text[: k + step]
        check.accept(piece)
    return None


@pytest.mark.parametrize("step", [1, 3, 7])
@pytest.mark.parametrize(
    "query",
    [
        "MATCH (p:Product {productName: 'Chai'})<-[r:ORDERS]-(o:Order) WITH o, count(DISTINCT p) AS n "
        "WHERE n > 3 AND o.shipCity STARTS WITH 'Be' RETURN o.orderID, n ORDER BY n DESC LIMIT 5",
        "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product)\nWHERE p.unitPrice < 10.5 AND NOT p.discontinued = true\n"
        "RETURN s.companyName, toFloat(p.unitPrice) * 2 AS x",
        "MATCH (p:Product) WHERE p.name IN ['a b', 'it\\'s x'] AND p.x IS NOT NULL RETURN p",
        "OPTIONAL MATCH (c:Customer {country: 'Germany', city: 'x y z'}) RETURN c.companyName, count(*) AS k",
        # an alias after a property read is bound (the check once read every word after a "." as a property)
        "MATCH (p:Product) WITH p.unitPrice AS x WHERE x > 1 RETURN p.productName AS name, x ORDER BY name",
    ],
)
def test_a_query_that_reads_what_it_bound_passes(query, step):
    assert first_refused(f"<cypher>{query}</cypher>", step) is None


@pytest.mark.parametrize(
    ("query", "refused"),
    [  # what the 1.5B model wrote where the grammar had no subquery, no shortestPath, no label test in count()
        ("MATCH (p:Product)\nWHERE p.reorderLevel > (selectavgReorderLevel)", "(se"),
        ("MATCH (e:Employee) RETURN countemployeeID", "RETURN counte"),
        ("MATCH (a:Person) RETURN shortestPath", "RETURN sh"),
        ("MATCH (p:Product) RETURN c.categoryName", "RETURN c."),  # c begins count(): refused when it ends
        ("MATCH (p:Product) RETURN (avg)", "(avg)"),  # a function's name, not called
        ("MATCH (p:Product) RETURN p.productName AS name ORDER BY nom", "BY no"),  # read after a property
        ("MATCH (p:Product) WHERE p.reorderLevel > (avg", "(av"),  # the grammar has no aggregate in WHERE
    ],
)
def test_a_name_no_pattern_or_alias_bound_is_refused(query, refused):
    assert first_refused(f"<cypher>{query}") == f"<cypher>{query}"[: f"<cypher>{query}".index(refused) + len(refused)]


def test_runaways_are_refused():
    # what the 1.5B model wrote, with examples, until its token budget ran out
    head = "<cypher>MATCH (p:Product) WHERE p.unitPrice < "
    unit = "(p.unitPrice + "
    nested = first_refused(head + unit * 8)  # the same stretch again (here from the space before)
    assert nested is not None and len(head + unit * MAX_REPEATS) <= len(nested) <= len(head + unit * 4)
    flat = "<cypher>MATCH (p:Product) WITH p.unitPrice AS x WHERE x > x"
    refused = first_refused(flat + " + x" * 6)  # " x +" a fourth time (the first x after ">" counts)
    assert refused == flat + " + x" * (MAX_REPEATS - 1) + " + "
    calls = "<cypher>MATCH (p:Product) RETURN toFloat(abs(round(toInteger(abs(round(p.unitPrice"
    assert first_refused(calls) == calls[: calls.index("round(p") + 1]  # MAX_DEPTH open: no call begins
    assert MAX_DEPTH == 5
    digits = "MATCH (s:Supplier) WHERE s.supplierID IN (1" + "0" * 40
    longest = f"<cypher>{digits[: digits.index('(1') + 2 + MAX_DIGITS]}"  # (here "000" repeats before that)
    assert len(first_refused(f"<cypher>{digits}") or "") <= len(longest)
    assert first_refused("<cypher>MATCH (s:Supplier) WHERE s.id IN (1234567890123456") == (
        "<cypher>MATCH (s:Supplier) WHERE s.id IN (1234567890123"
    )
    deep_enough = "MATCH (p:Product) RETURN round(toFloat(avg(p.unitPrice + (p.unitsInStock * 2))))"
    assert first_refused(f"<cypher>{deep_enough}</cypher>") is None  # 4 open at once
    assert first_refused("<cypher>MATCH (p:Product) WHERE p.name = '100000000000000000000' RETURN p") is None
    repeated = "MATCH (p:Product)-[:PART_OF]->(c:Category) " * (MAX_MATCHES + 2)
    cut = len("<cypher>") + len("MATCH (p:Product)-[:PART_OF]->(c:Category) ") * MAX_MATCHES + len("MATCH ")
    assert len(first_refused(f"<cypher>{repeated}") or "x" * 999) <= cut  # (here as a repeat, sooner)
    distinct = "".join(f"MATCH (p{k}:Product) " for k in range(MAX_MATCHES + 1))
    cut = len("<cypher>") + distinct.index(f"MATCH (p{MAX_MATCHES}") + 1  # at its first letter
    assert first_refused(f"<cypher>{distinct}") == f"<cypher>{distinct}"[:cut]
    listed = "MATCH (c:Customer) WHERE c.customerID IN [" + ", ".join(f"'c{k}'" for k in range(MAX_LIST + 5))
    cut = listed.index(f", 'c{MAX_LIST}'") + 1
    assert first_refused(f"<cypher>{listed}") == f"<cypher>{listed[:cut]}"
    long_unit = " AND p.unitPrice > 1 AND p.unitsInStock > 2 AND p.reorderLevel > 3 AND p.discontinued = true"
    looped = first_refused(f"<cypher>MATCH (p:Product) WHERE p.unitPrice > 0{long_unit * 5}")
    assert looped is not None and looped.endswith(long_unit * 2 + " ")  # the 92 characters a fourth time
    optional = "MATCH (p:Product) OPTIONAL MATCH (p)-[:PART_OF]->(c:Category) MATCH (s:Supplier) RETURN p, c, s"
    assert first_refused(f"<cypher>{optional}</cypher>") is None


@pytest.mark.parametrize(
    ("query", "refused"),
    [  # arithmetic and ordering on a bare node, which the engine rejects
        ("MATCH (p:Product) WITH p, count((p)--1) AS n", "(p)-"),
        ("MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) WHERE size((s)-(c", "(s)"),  # (size wants a value)
        ("MATCH (p:Product) WHERE p.reorderLevel > p + 1", "p "),  # p where a value is wanted
        ("MATCH (p:Product) WITH p, p + 1 AS n", "p +"),
        ("MATCH (p:Product) WHERE p < 0", "p < "),  # (the "<" may begin "<>")
        ("MATCH (p:Product)<-[r:ORDERS]-(o:Order) WHERE r * 2 > 1", "r *"),
    ],
)
def test_a_node_is_no_number(query, refused):
    assert first_refused(f"<cypher>{query}") == f"<cypher>{query}"[: f"<cypher>{query}".index(refused) + len(refused)]


def test_nodes_compare_and_count():
    for query in (
        "MATCH (p:Product)-[:PART_OF]->(c:Category)<-[:PART_OF]-(q:Product) WHERE p <> q AND (p) = (p) RETURN q",
        "MATCH (p:Product) RETURN count(p) + 1 AS n, size(collect(p)) - 1 AS m, p.unitPrice - 2 AS x",
        "MATCH (p:Product) OPTIONAL MATCH (p)<-[r:ORDERS]-(o:Order) WHERE o IS NULL RETURN p",
    ):
        assert first_refused(f"<cypher>{query}</cypher>") is None, query


def test_the_check_is_registered_and_keyed():
    assert isinstance(new_check(NAME), BoundNames)
    with pytest.raises(ValueError, match="unknown token check 'nope'"):
        new_check("nope")
    assert "token_check" not in GenerationParams().as_dict()  # cache keys of calls without one are unchanged
    assert GenerationParams(token_check=NAME).as_dict()["token_check"] == NAME


@pytest.mark.parametrize(
    ("query", "refused"),
    [  # type errors the 1.5B model wrote (Northwind dev), which the engine refuses
        ("MATCH (p:Product) WHERE p.reorderLevel > size((p))", "size((p))"),  # a node is no list
        ("MATCH (p:Product) WITH p, min(p) AS m", "min(p)"),
        ("MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) WHERE NOT (p)<>-1", "(p)<>-"),  # a node is no number
        ("MATCH (p:Product) WHERE p = 'x'", "p = '"),
        ("MATCH (o:Order) WHERE o.shipCity = (coalesce(o.shipVia) - '3')", "- '"),  # nor is a string
        ("MATCH (p:Product) WHERE p.categoryID = '1' --1996", "'1' -"),
        ("MATCH (p:Product) WHERE p.unitPrice < (p IN [1, 2])", "p IN"),  # a node is in no list of values
        ("MATCH (p:Product) WHERE p.unitPrice < (p)", "(p)"),  # nor compared with a value
        # a value's brackets hold no test (the model wanted a subquery: "above its category's average")
        ("MATCH (p:Product)-[:PART_OF]->(c:Category) WHERE p.unitPrice > (c.categoryName IN [1]", "IN"),
        ("MATCH (p:Product) WHERE p.unitPrice > (p.unitsInStock < 3)", " < 3"),
        ("MATCH (p:Product) WHERE p.reorderLevel > (size((p)", "((p)"),
        ("MATCH (s:Supplier) WHERE s.supplierID IN [true, false]", "[t"),  # a list of booleans means nothing
        ("MATCH (o:Order)<-[:PURCHASED]-(p:Customer)-[:PURCHASED]->(o:Order)-[:ORDERS]->(p:Product)", "(p:P"),
        ("MATCH (p:Product) WITH p, count(DISTINCT sum(p.unitPrice)) AS n", "sum"),  # nested aggregation
        ("MATCH (p:Product) WITH p ORDER BY avg(p.unitPrice)", "av"),  # ordered by what the WITH does not group
        ("MATCH (c:Category) WITH c, avg(true) AS x", "true"),  # a boolean only where a test compares with one
        # where the grammar wants a number, no call that gives text: the grammar then allowed only avg(type)
        ("MATCH (c:Category) WITH c, avg(type", "ty"),
        ("MATCH (p:Product) RETURN p.unitPrice * toString(", "toS"),
    ],
)
def test_values_of_the_wrong_kind_are_refused(query, refused):
    text = f"<cypher>{query}"
    cut = first_refused(text)
    assert cut is not None and cut.endswith(refused[: len(cut) - text.index(refused)]), cut
    assert text.index(refused) < len(cut) <= text.index(refused) + len(refused)


def test_values_of_the_right_kind_pass():
    for query in (
        "MATCH (s:Supplier {companyName: 'M'})-[:SUPPLIES]->(p:Product)<-[:SUPPLIES]-(s2:Supplier) WHERE s2 <> s "
        "RETURN p.productName, 'a' + 'b' AS x, p.unitPrice - 1 AS y, p.name IN ['x', 'y'] AS z",
        "MATCH (p:Product) MATCH (p)<-[r:ORDERS]-(o:Order) MATCH (p:Product)-[:PART_OF]->(c) RETURN type(r), "
        "labels(p), coalesce(o, p), count(DISTINCT p), collect(o) ORDER BY count(o) DESC",
        "MATCH (p:Product) WHERE (p) = (p) AND p.unitsInStock > 0 RETURN p, sum(toFloat(p.unitPrice)) AS s",
        "MATCH (p:Product) RETURN avg(coalesce(p.unitPrice)) - count(p) * size(p.productName), 'a' + toString(1)",
        "MATCH (c:Customer)-[:PURCHASED]->(o:Order) WITH c, count(o) AS n ORDER BY count(o) DESC LIMIT 3 "
        "MATCH (c)-[:PURCHASED]->(x:Order) RETURN c.companyName ORDER BY count(x) DESC",
    ):
        assert first_refused(f"<cypher>{query}</cypher>") is None, query


def test_the_check_reads_on_past_a_character_it_refused():
    # set aside where it refuses every token the grammar allows, the check must not refuse all that follows
    text = "<cypher>MATCH (p:Product) WITH p, p - 1 AS n WHERE n > 2 RETURN n, p.productName</cypher>"
    check, refused = BoundNames(), []
    for k, ch in enumerate(text):
        if not check.allows(ch):
            refused.append(text[: k + 1])
        check.accept(ch)
    assert refused == [text[: text.index("p - ") + 3]]
