"""text2cypher's token check: a query under the grammar reads only names it bound (no LLM: the check is read
here piece by piece, as the llama.cpp backend reads it token by token)."""

from __future__ import annotations

import pytest

from kgrag.methods.text2cypher.bound_names import MAX_DEPTH, MAX_DIGITS, MAX_MATCHES, NAME, BoundNames
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
        ("MATCH (p:Product) WHERE p.reorderLevel > (avg", "(av"),  # the grammar has no aggregate in WHERE
    ],
)
def test_a_name_no_pattern_or_alias_bound_is_refused(query, refused):
    assert first_refused(f"<cypher>{query}") == f"<cypher>{query}"[: f"<cypher>{query}".index(refused) + len(refused)]


def test_runaway_brackets_and_numbers_are_refused():
    # what the 1.5B model wrote, with examples, until its token budget ran out
    nested = "MATCH (p:Product) WHERE p.unitPrice < " + "(p IN " * 8
    assert (
        first_refused(f"<cypher>{nested}")
        == f"<cypher>{'MATCH (p:Product) WHERE p.unitPrice < ' + '(p IN ' * MAX_DEPTH}("
    )
    digits = "MATCH (s:Supplier) WHERE s.supplierID IN (1" + "0" * 40
    assert first_refused(f"<cypher>{digits}") == f"<cypher>{digits[: digits.index('(1') + 2 + MAX_DIGITS]}"
    deep_enough = "MATCH (p:Product) RETURN round(toFloat(avg(p.unitPrice + (p.unitsInStock * 2))))"
    assert first_refused(f"<cypher>{deep_enough}</cypher>") is None  # 4 open at once
    assert first_refused("<cypher>MATCH (p:Product) WHERE p.name = '100000000000000000000' RETURN p") is None
    repeated = "MATCH (p:Product)-[:PART_OF]->(c:Category) " * (MAX_MATCHES + 2)
    cut = len("<cypher>") + len("MATCH (p:Product)-[:PART_OF]->(c:Category) ") * MAX_MATCHES + len("MATCH ")
    assert first_refused(f"<cypher>{repeated}") == f"<cypher>{repeated}"[:cut]
    optional = "MATCH (p:Product) OPTIONAL MATCH (p)-[:PART_OF]->(c:Category) MATCH (s:Supplier) RETURN p, c, s"
    assert first_refused(f"<cypher>{optional}</cypher>") is None


def test_the_check_is_registered_and_keyed():
    assert isinstance(new_check(NAME), BoundNames)
    with pytest.raises(ValueError, match="unknown token check 'nope'"):
        new_check("nope")
    assert "token_check" not in GenerationParams().as_dict()  # cache keys of calls without one are unchanged
    assert GenerationParams(token_check=NAME).as_dict()["token_check"] == NAME
