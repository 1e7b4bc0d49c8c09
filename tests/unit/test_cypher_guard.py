"""The Cypher guard: every attack in the corpus is rejected, every legitimate read passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.graph.backends.guard import MAX_NESTING, guard_cypher, normalise_unicode, tokenise_cypher

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _corpus(name: str) -> list[str]:
    lines = (FIXTURES / name).read_text("utf-8").split("\n")
    return [line.replace("\\n", "\n") for line in lines if line.strip() and not line.startswith("# ")]


ATTACKS = _corpus("attacks/cypher_guard.txt")
LEGIT = _corpus("cypher_legit.txt")


def test_corpus_sizes():
    assert len(ATTACKS) >= 60 and len(LEGIT) >= 30


@pytest.mark.parametrize("query", ATTACKS)
def test_attack_rejected(query):
    result = guard_cypher(query)
    assert not result.ok, f"accepted: {query!r}"
    assert result.reason


@pytest.mark.parametrize("query", LEGIT)
def test_legit_accepted_with_limit(query):
    result = guard_cypher(query)
    assert result.ok, result.reason
    assert "limit" in result.query.lower()
    assert not result.query.endswith(";")


def test_empty_and_non_string():
    assert guard_cypher("").reason == "empty query"
    assert not guard_cypher("   ").ok
    assert not guard_cypher(None).ok  # type: ignore[arg-type]


def test_limit_kept_when_present_and_added_otherwise():
    assert guard_cypher("MATCH (n) RETURN n LIMIT 5").query == "MATCH (n) RETURN n LIMIT 5"
    assert guard_cypher("MATCH (n) RETURN n", row_cap=7).query == "MATCH (n) RETURN n LIMIT 7"


def test_a_property_or_map_key_named_limit_is_no_limit_clause():
    assert guard_cypher("MATCH (n) RETURN n.limit", row_cap=7).query == "MATCH (n) RETURN n.limit LIMIT 7"
    assert guard_cypher("RETURN {limit: 1} AS m", row_cap=7).query == "RETURN {limit: 1} AS m LIMIT 7"


def test_guard_reads_hex_numbers_and_properties_named_like_keywords():
    """Guard-only (neither runs on Ladybug, which has no hex literals and reserves END, so they are not in the
    legit corpus every engine runs): a hex number is one token, a property after a dot is no keyword."""
    assert guard_cypher("RETURN 0x1F + 0o17 AS x").ok
    assert guard_cypher("MATCH (n) RETURN n.end, n.case, n.limit").query.endswith("LIMIT 100")


def test_nesting_is_capped_at_max_nesting():
    def nested(depth: int) -> str:
        return "RETURN " + "(" * depth + "1" + ")" * depth + " AS x"

    assert guard_cypher(nested(MAX_NESTING)).ok
    assert "nested more than" in guard_cypher(nested(MAX_NESTING + 1)).reason
    # brackets that close do not add up: a long flat query is fine
    assert guard_cypher("RETURN " + " + ".join(["(1)"] * 200) + " AS x").ok


def test_unicode_normalisation():
    assert normalise_unicode("DEL\u200bETE") == "DELETE"
    assert normalise_unicode("\uff24\uff25\uff2c") == "DEL"
    assert "non-ASCII" in guard_cypher("MATCH (n) \u0421REATE (m)").reason


# --- the engine runs the guard's tokens, not the text it was given (issue #22) ---------------------------------
def test_comment_the_engine_ends_elsewhere_cannot_hide_code():
    # Ladybug does not end `/* **/` where the guard does: the guard's reading must be the only one sent.
    attack = 'UNWIND [1] AS x /* **/ \'x /* */ LOAD FROM "/etc/passwd" (file_format="csv") RETURN * //\''
    result = guard_cypher(attack)
    kinds = [tok.kind for tok in result.tokens]
    assert kinds[-3:] == ["str", "word", "num"]  # one string literal, then the appended LIMIT n
    assert "/*" not in result.query.split("'")[0] and not result.query.rstrip().endswith("//'")
    assert result.query.startswith("UNWIND [1] AS x 'x /* */ LOAD FROM")


def test_comments_are_dropped_and_whitespace_kept_as_one_space():
    result = guard_cypher("MATCH (n)/* a */RETURN n.name // tail\n")
    assert result.query == "MATCH (n) RETURN n.name LIMIT 100"


def test_string_literals_are_written_in_one_spelling():
    result = guard_cypher("RETURN \"it's\" AS a, '\\u0041\\n' AS b, 'back\\\\slash' AS c")
    assert result.query == "RETURN 'it\\'s' AS a, 'A\\n' AS b, 'back\\\\slash' AS c LIMIT 100"
    assert [t.value for t in result.tokens if t.kind == "str"] == ["it's", "A\n", "back\\slash"]


@pytest.mark.parametrize(
    "query",
    [
        "RETURN `apoc`.cypher.runFirstColumnSingle('MATCH (n) DETACH DELETE n RETURN 1', {})",
        "RETURN apoc.`cypher`.runFirstColumnSingle('x', {})",
        "CALL `apoc`.`load`.json('file:///etc/passwd')",
        "RETURN custom.evil('x')",
        "RETURN `dbms`.`components`()",
    ],
)
def test_quoted_and_unknown_namespaces_are_checked(query):
    assert not guard_cypher(query).ok


@pytest.mark.parametrize(
    "query",
    ["RETURN 'a\x00b'", "RETURN 1\x00", "RETURN '\\uD800'", "RETURN `a``b`", "RETURN '\\u12'", "RETURN 1 \\ 2"],
)
def test_control_characters_and_broken_escapes_are_refused(query):
    assert not guard_cypher(query).ok


def test_namespaced_builtins_and_properties_still_pass():
    assert guard_cypher("MATCH (n) RETURN n.name, date.truncate('day', date())").ok
    assert guard_cypher("CALL db.labels()").ok


_text = st.text(alphabet="MATCHRETURN ()[]{}:.,'\"`\\/*;\n\t$-><=ab1éÅ\u2028", max_size=60)


@settings(max_examples=400, deadline=None)
@given(query=_text)
def test_accepted_output_is_a_fixpoint(query):
    """Whatever the guard accepts, re-reading its output gives the same tokens and the same output."""
    first = guard_cypher(query)
    if not first.ok:
        return
    second = guard_cypher(first.query)
    assert second.ok and second.query == first.query
    assert [(t.kind, t.value) for t in tokenise_cypher(first.query)] == [(t.kind, t.value) for t in first.tokens]
