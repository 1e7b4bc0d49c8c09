"""benchmarks/llm_cost.py: before and after over the same questions, with the paired Hit@1 difference."""

from __future__ import annotations

import json

from tests.conftest import load_benchmark


def test_before_after_is_paired(tmp_path):
    """Both variants answer the same questions, and the paired gains and losses account for the difference of
    their Hit@1 (a scripted model: the plumbing, not an accuracy)."""
    script = tmp_path / "llm.json"
    script.write_text(json.dumps({"default": "<answers>\nHeat\n</answers>"}))
    cost = load_benchmark("llm_cost")
    out = tmp_path / "out"
    argv = ["--methods", "frag", "--suites", "smoke", "--limit", "2", "--llm", f"scripted:{script}"]
    assert cost.main([*argv, "--out", str(out), "--before", "frag:evidence_format=lines"]) == 0
    report = json.loads((out / "llm_cost.json").read_text())
    sets = report["methods"]["frag"]
    assert "tiny-metaqa/1hop" in sets
    for entry in sets.values():
        assert set(entry) == {"before", "after", "ratio_after_over_before", "paired_hit@1"}
        paired = entry["paired_hit@1"]
        assert paired["n"] == entry["after"]["n"] > 0
        assert paired["gains"] - paired["losses"] == round(
            (entry["after"]["hit@1"] - entry["before"]["hit@1"]) * paired["n"]
        )
