"""Execution accuracy for Text2Cypher (kgrag.eval.execution) and the pure parts of
benchmarks/text2cypher_bench.py: which query a method executed, how pairs are filtered, the summary."""

from __future__ import annotations

import json

import pytest

from kgrag.eval.execution import cell_key, relaxed_match, strict_match
from kgrag.types import Answer, Step, Usage
from tests.conftest import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("text2cypher_bench")


NODE = {"_ID": {"offset": 0, "table": 2}, "_LABEL": "Supplier", "companyName": "Exotic Liquids", "country": "UK"}


# ---------------------------------------------------------------------------------------------- strict_match
def test_strict_numbers_compare_by_value_with_a_small_tolerance():
    assert strict_match([[5.0]], [[5]])
    assert strict_match([[28.866363636363637]], [[28.86636363636364]])
    assert strict_match([[2.0000000001]], [[2]])
    assert not strict_match([[28.87]], [[28.866363636363637]])
    assert not strict_match([[True]], [[1]])  # a boolean is not a number
    assert not strict_match([["5"]], [[5]])  # nor is a string


def test_strict_strings_are_stripped_not_case_folded():
    assert strict_match([[" Chai "]], [["Chai"]])
    assert not strict_match([["chai"]], [["Chai"]])


def test_strict_ignores_row_order_and_column_order_but_not_columns():
    gold = [["Chai", 18.0], ["Chang", 19.0]]
    assert strict_match([["Chang", 19], ["Chai", 18]], gold)
    assert strict_match([[18, "Chai"], [19, "Chang"]], gold)  # columns swapped consistently
    assert not strict_match([[18, "Chang"], [19, "Chai"]], gold)  # values re-paired across rows
    assert not strict_match([["Chai"], ["Chang"]], gold)  # a missing column
    assert not strict_match([["Chai", 18, 1], ["Chang", 19, 2]], gold)  # an extra column


def test_strict_counts_duplicates():
    assert strict_match([["a"], ["a"], ["b"]], [["a"], ["b"], ["a"]])
    assert not strict_match([["a"], ["b"]], [["a"], ["a"], ["b"]])
    assert not strict_match([["a"], ["a"], ["b"]], [["a"], ["b"], ["b"]])


def test_strict_nulls_and_empty_results():
    assert strict_match([[None, 1]], [[None, 1.0]])
    assert not strict_match([[None]], [[0]])
    assert strict_match([], [])
    assert not strict_match([], [["x"]]) and not strict_match([["x"]], [])


def test_strict_nodes_compare_by_properties_not_engine_ids():
    other_id = {**NODE, "_ID": {"offset": 9, "table": 2}}
    assert strict_match([[other_id]], [[NODE]])
    assert not strict_match([[{**NODE, "country": "USA"}]], [[NODE]])
    assert not strict_match([["Exotic Liquids"]], [[NODE]])  # a name is not the node, strictly


def test_strict_with_repeated_columns_tries_every_consistent_order():
    gold = [["x", "x", 1], ["y", "y", 2]]
    assert strict_match([[1, "x", "x"], [2, "y", "y"]], gold)


def test_cell_key_lists_and_unknown_types():
    assert cell_key([1.0, " a"]) == cell_key((1, "a"))
    assert cell_key(float("nan")) == ("num", "nan")


# --------------------------------------------------------------------------------------------- relaxed_match
def test_relaxed_every_gold_value_somewhere_extra_columns_and_rows_ignored():
    gold = [["Chai", 18.0], ["Chang", 19.0]]
    assert relaxed_match([[1, "Chai", 18], [2, "Chang", 19], [3, "Tofu", 23.25]], gold)
    assert relaxed_match([[["Chai", "Chang"], [18, 19]]], gold)  # lists instead of rows
    assert not relaxed_match([["Chai", 18]], gold)


def test_relaxed_gold_nodes_are_found_by_name_or_as_nodes():
    assert relaxed_match([["Exotic Liquids"]], [[NODE]])
    assert relaxed_match([[{**NODE, "_ID": 7}]], [[NODE]])
    assert not relaxed_match([["UK"]], [[NODE]])
    nameless = {"_LABEL": "Order", "orderID": "10248", "freight": 32.38}
    assert relaxed_match([[nameless]], [[nameless]])
    assert not relaxed_match([["10248"]], [[nameless]])
    # a predicted node supplies its properties
    assert relaxed_match([[NODE]], [["UK", "Exotic Liquids"]])


def test_relaxed_ignores_gold_nulls_and_falls_back_to_strict_without_values():
    assert relaxed_match([["a"]], [["a", None]])
    assert relaxed_match([[None]], [[None]])
    assert not relaxed_match([], [[None]])
    assert relaxed_match([], [])


def test_relaxed_numbers_use_the_same_tolerance():
    assert relaxed_match([[77, 28.86636363636364]], [[28.866363636363637]])
    assert not relaxed_match([[28.9]], [[28.866363636363637]])


# ------------------------------------------------------------------------------------------- benchmark pieces
def _answer(*steps: Step) -> Answer:
    return Answer(question="q", method="m", trace=list(steps), usage=Usage(llm_calls=1))


def test_executed_query_is_the_last_cypher_run_in_the_trace(bench):
    write = Step(name="write_cypher", outputs={"cypher": "MATCH (a) RETURN a"})
    first = Step(name="execute", inputs={"cypher": "MATCH (a) RETURN a"}, outputs={"executed": "x", "ok": False})
    repaired = Step(name="repair_execute", inputs={"cypher": "MATCH (b) RETURN b"}, outputs={"executed": "y"})
    assert bench.executed_query(_answer(write, first)) == "MATCH (a) RETURN a"
    assert bench.executed_query(_answer(write, first, repaired)) == "MATCH (b) RETURN b"
    byokg = Step(name="cypher", inputs={"cypher": "MATCH (c) RETURN c"}, outputs={"ok": True, "executed": "z"})
    assert bench.executed_query(_answer(byokg, Step(name="answer"))) == "MATCH (c) RETURN c"
    assert bench.executed_query(_answer(write)) is None  # written, never run
    assert bench.executed_query(_answer(Step(name="execute", inputs={"query": "DSL"}))) is None  # ultrag's DSL


def test_clean_pairs_keep_only_the_clean_ones_of_the_types_asked(bench, tmp_path):
    lines = [
        {"question": "a", "cypher": "RETURN 1", "type": "T1"},
        {"question": "b", "cypher": "RETURN 2", "type": "T1", "syntax_error": True},
        {"question": "c", "cypher": "RETURN 3", "type": "T2"},
        {"question": "d", "cypher": "RETURN 4", "type": "T1", "returns_results": False},
        {"question": "e", "cypher": "RETURN 5", "type": "T1", "false_schema": "Employee"},
        {"question": "f", "cypher": "RETURN 6", "type": "T1", "timeout": True},
    ]
    clean = {"syntax_error": False, "timeout": False, "returns_results": True, "false_schema": ""}
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps({**clean, **x}) for x in lines) + "\n\n")
    pairs, counts = bench.clean_pairs(path, types=None)
    assert [p["question"] for p in pairs] == ["a", "c"] and counts == {"dev": 6, "clean": 2}
    assert [p["question"] for p in bench.clean_pairs(path, types=["T2"])[0]] == ["c"]


def test_distinct_pairs_share_neither_question_nor_cypher(bench, tmp_path):
    clean = {"syntax_error": False, "timeout": False, "returns_results": True, "false_schema": "", "type": "T"}
    lines = [("a", "RETURN 1"), ("b", "RETURN 1"), ("c", "RETURN 3"), ("c", "RETURN 4"), ("e", "RETURN 5")]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps({**clean, "question": q, "cypher": c}) for q, c in lines) + "\n")
    pairs, counts = bench.clean_pairs(path, types=None, distinct=True)
    assert [p["question"] for p in pairs] == ["e"] and counts == {"dev": 5, "clean": 5, "distinct": 1}
    examples = tmp_path / "examples.jsonl"
    bench.write_examples(bench.clean_pairs(path, types=None)[0], examples)
    assert [json.loads(x)["question"] for x in examples.read_text().splitlines()] == ["a", "b", "c", "c", "e"]


def test_choose_limit_and_sample(bench):
    pairs = [{"question": str(i)} for i in range(10)]
    assert [p["question"] for p in bench.choose(pairs, limit=3, sample=None, seed=0)] == ["0", "1", "2"]
    drawn = bench.choose(pairs, limit=None, sample=4, seed=1)
    assert len(drawn) == 4 and drawn == bench.choose(pairs, limit=None, sample=4, seed=1)
    assert bench.choose(pairs, limit=None, sample=None, seed=0) == pairs


def test_summary_overall_and_per_type(bench):
    rows = [
        {"type": "A", "strict": True, "relaxed": True, "ok": True, "predicted": "q", "calls": 1, "seconds": 2.0},
        {"type": "A", "strict": False, "relaxed": True, "ok": True, "predicted": "q", "calls": 2, "seconds": 4.0},
        {"type": "B", "strict": False, "relaxed": False, "ok": False, "predicted": None, "calls": 1, "seconds": 9.0},
    ]
    summary = bench.summarise(rows)
    overall = summary["overall"]
    assert overall["n"] == 3 and overall["strict"] == pytest.approx(1 / 3)
    assert overall["relaxed"] == pytest.approx(2 / 3)
    assert overall["parses_and_runs"] == 1.0 and overall["no_query"] == 1  # of the queries written
    assert overall["seconds_median"] == 4.0 and overall["seconds_mean"] == 5.0 and overall["calls_max"] == 2
    assert summary["by_type"]["A"]["strict"] == 0.5 and summary["by_type"]["B"]["n"] == 1
