"""The Cypher guard: every attack in the corpus is rejected, every legitimate read passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.retrieval.cypher import guard_cypher, normalise_unicode

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _corpus(name: str) -> list[str]:
    lines = (FIXTURES / name).read_text("utf-8").split("\n")
    return [line.replace("\\n", "\n") for line in lines if line.strip() and not line.startswith("# ")]


ATTACKS = _corpus("cypher_attacks.txt")
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


def test_unicode_normalisation():
    assert normalise_unicode("DEL\u200bETE") == "DELETE"
    assert normalise_unicode("\uff24\uff25\uff2c") == "DEL"
    assert "non-ASCII" in guard_cypher("MATCH (n) \u0421REATE (m)").reason
