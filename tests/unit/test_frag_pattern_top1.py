"""benchmarks/frag_pattern_top1.py: two reports over the same questions are paired question by question."""

from __future__ import annotations

from tests.conftest import load_benchmark


def _report(ranks: dict[str, int | None]) -> dict:
    return {"questions": {"kg": [{"question": q, "group": "1-hop", "best": "r", "rank": r} for q, r in ranks.items()]}}


def test_paired_names_the_questions_one_run_gets_and_the_other_does_not():
    bench = load_benchmark("frag_pattern_top1")
    before = _report({"a": 1, "b": 2, "c": None, "d": 1})
    after = _report({"a": 1, "b": 1, "c": 3, "d": None, "e": 1})  # "e" was not asked before: not paired
    assert bench.paired(before, after) == {"kg": {"gains": ["b"], "losses": ["d"]}}
    assert bench.paired(after, after) == {"kg": {"gains": [], "losses": []}}
