"""Execution accuracy for Text2Cypher (kgrag.eval.execution)."""

from __future__ import annotations

from kgrag.eval.execution import cell_key, relaxed_match, strict_match

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
