"""Ties at a gold query's ranking cut (kgrag.eval.ties): any of the tied rows may be kept, nothing else may."""

from __future__ import annotations

from kgrag.eval.ties import RankedCut, gold_ties, match_with_ties, ranked_cut

# "Which 3 suppliers supply the most products?": two with 5, three tied with 4 for the third place
UNCUT = [["Pavlova", 5], ["Plutzer", 5], ["Cajun", 4], ["Biscuits", 4], ["Tokyo", 4], ["Exotic", 3]]
GOLD = [["Pavlova", 5], ["Plutzer", 5], ["Cajun", 4]]
CUT = RankedCut("", "n", True, 3)


def test_the_shape_read_is_one_order_by_on_a_column_then_limit_and_at_most_a_plain_return():
    with_cut = ranked_cut(
        "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) WITH s, count(p) AS n ORDER BY n DESC LIMIT 3 "
        "RETURN s.companyName, n"
    )
    assert with_cut is not None and (with_cut.key, with_cut.descending, with_cut.limit) == ("n", True, 3)
    assert with_cut.uncut == "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) WITH s, count(p) AS n RETURN s.companyName, n"
    final = ranked_cut("MATCH (p:Product) RETURN p.productName, p.unitPrice ORDER BY p.unitPrice LIMIT 5;")
    assert final is not None and (final.key, final.descending, final.limit) == ("p.unitPrice", False, 5)
    assert final.uncut == "MATCH (p:Product) RETURN p.productName, p.unitPrice"
    for other in [
        "MATCH (p:Product) RETURN p.productName LIMIT 3",  # no ranking
        "MATCH (p:Product) RETURN p ORDER BY p.unitPrice DESC, p.productName LIMIT 3",  # two keys
        "MATCH (p:Product) RETURN p ORDER BY toFloat(p.unitPrice) DESC LIMIT 3",  # an expression
        "MATCH (p:Product) RETURN p ORDER BY p.unitPrice DESC",  # no cut
        # the cut feeds a later MATCH or an aggregate: dropping it changes more than the row count
        "MATCH (p:Product) WITH p ORDER BY p.unitPrice DESC LIMIT 1 MATCH (o)-[:ORDERS]->(p) RETURN o",
        "MATCH (p:Product) WITH p ORDER BY p.unitPrice DESC LIMIT 3 RETURN avg(p.unitPrice)",
        "MATCH (p:Product RETURN",  # does not parse
    ]:
        assert ranked_cut(other) is None, other


def test_the_tied_rows_are_every_row_level_with_the_last_one_kept():
    ties = gold_ties(CUT, ["name", "n"], UNCUT)
    assert ties is not None
    assert sorted(ties.above) == sorted([(("str", "Pavlova"), ("num", 5)), (("str", "Plutzer"), ("num", 5))])
    assert [t[0][1] for t in ties.tied] == ["Cajun", "Biscuits", "Tokyo"]
    # no tie across the cut, the key not returned, fewer rows than the limit: nothing to allow
    assert gold_ties(CUT, ["name", "n"], [*UNCUT[:3], ["Exotic", 3]]) is None
    assert gold_ties(CUT, ["name", "count"], UNCUT) is None
    assert gold_ties(RankedCut("", "n", True, 10), ["name", "n"], UNCUT) is None
    assert gold_ties(CUT, ["name", "n"], [[*row[:1], None] for row in UNCUT]) is None


def test_another_choice_among_the_tied_rows_matches_and_nothing_else_does():
    ties = gold_ties(CUT, ["name", "n"], UNCUT)
    assert match_with_ties([["Plutzer", 5], ["Tokyo", 4], ["Pavlova", 5]], GOLD, ties)
    assert match_with_ties([[4, "Biscuits"], [5, "Pavlova"], [5, "Plutzer"]], GOLD, ties)  # columns swapped
    assert not match_with_ties([["Plutzer", 5], ["Tokyo", 4], ["Biscuits", 4]], GOLD, ties)  # lost one above
    assert not match_with_ties([["Pavlova", 5], ["Plutzer", 5], ["Exotic", 3]], GOLD, ties)  # below the cut
    assert not match_with_ties([["Pavlova", 5], ["Plutzer", 5], ["Tokyo", 4], ["Cajun", 4]], GOLD, ties)  # too many
    assert not match_with_ties([["Pavlova"], ["Plutzer"], ["Tokyo"]], GOLD, ties)  # a column missing
    assert match_with_ties([["Cajun", 4], ["Pavlova", 5], ["Plutzer", 5]], GOLD, None)  # plain strict
    assert not match_with_ties([["Tokyo", 4], ["Pavlova", 5], ["Plutzer", 5]], GOLD, None)
