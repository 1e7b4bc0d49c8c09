"""benchmarks/text2cypher_misses.py: a strict miss sorted by what differs, on the bundled Northwind graph."""

from __future__ import annotations

import pytest

from tests.conftest import load_benchmark


@pytest.fixture(scope="module")
def misses():
    return load_benchmark("text2cypher_misses")


@pytest.fixture(scope="module")
def backend(northwind):
    from kgrag.graph.backends.ladybug import LadybugBackend

    be = LadybugBackend(northwind)
    yield be
    be.close()


SUPPLIED = "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) "


@pytest.mark.parametrize(
    ("gold", "predicted", "kind"),
    [
        (SUPPLIED + "RETURN s.companyName", SUPPLIED + "RETURN DISTINCT s.companyName", "repeats"),
        ("MATCH (p:Product) RETURN p", "MATCH (p:Product) RETURN p.productName, p.unitPrice", "columns"),
        (SUPPLIED + "WITH s, count(p) AS n ORDER BY n DESC LIMIT 3 RETURN s.companyName, n",
         SUPPLIED + "RETURN s.companyName, count(p) AS n ORDER BY n DESC LIMIT 3", "ties"),
        ("MATCH (p:Product) RETURN p.productName LIMIT 2", "MATCH (p:Product) RETURN p.productName ORDER BY "
         "p.productName DESC LIMIT 2", "limit"),
        ("MATCH (p:Product) RETURN p.productName", "MATCH (p:Product) WHERE p.unitPrice < 0 RETURN p.productName",
         "no rows"),
        ("MATCH (p:Product) RETURN p.productName", "MATCH (c:Category) RETURN c.categoryName", "other rows"),
        ("MATCH (p:Product) RETURN p.productName", "MATCH (p:Product) RETURN p.nope + 1 -", "error"),
    ],
)  # fmt: skip
def test_a_strict_miss_is_sorted_by_what_differs(misses, backend, gold, predicted, kind):
    question = {"id": "q", "gold": gold, "predicted": predicted, "ok": kind != "error", "strict": False}
    assert misses.classify(backend, question, 1000, 20) == kind


def test_the_breakdown_counts_presentation_as_right_only_in_its_bound(misses, backend):
    run = {
        "questions": [
            {"id": "a", "gold": "MATCH (p:Product) RETURN p", "ok": True, "strict": False,
             "predicted": "MATCH (p:Product) RETURN p.productName, p.unitPrice"},
            {"id": "b", "gold": "MATCH (p:Product) RETURN count(p)", "ok": True, "strict": True,
             "predicted": "MATCH (p:Product) RETURN count(p)"},
        ]
    }  # fmt: skip
    result = misses.breakdown(run, backend)
    assert result["strict"] == 0.5 and result["strict_if_presentation_were_free"] == 1.0
    assert result["misses"] == {"columns": 1} and result["by_question"] == {"a": "columns"}
