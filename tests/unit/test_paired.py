"""kgrag.eval.paired and `kgrag compare`: two runs compared question by question."""

from __future__ import annotations

import json
from math import comb

import pytest

from kgrag.eval.paired import RunFileError, compare, mcnemar_p, read_run
from tests.conftest import run_cli


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _row(qid, hit, group="1hop", **extra):
    return {"id": qid, "group": group, "question": f"q {qid}", "hit@1": hit, "gold": ["g"], "predicted": ["p"]} | extra


def test_mcnemar_exact_values():
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(4, 4) == 1.0
    assert mcnemar_p(5, 0) == pytest.approx(2 / 32)
    assert mcnemar_p(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_p(1, 3) == pytest.approx(2 * (comb(4, 0) + comb(4, 1)) / 16)
    assert mcnemar_p(5, 8) == mcnemar_p(8, 5) > 0.5  # the kaping choose_answers split: noise


def test_same_score_is_not_no_change(tmp_path):
    """Two runs with one Hit@1 can differ on four questions: the pairing shows it, the means cannot."""
    a = [_row("a", 1), _row("b", 1), _row("c", 0), _row("d", 0), _row("e", 1)]
    b = [_row("a", 0), _row("b", 0), _row("c", 1), _row("d", 1), _row("e", 1)]
    _write(tmp_path / "x" / "frag" / "results.jsonl", a)
    _write(tmp_path / "y" / "frag" / "results.jsonl", b)
    [p] = compare(read_run(tmp_path / "x"), read_run(tmp_path / "y"))
    assert (p.kg, p.method, p.group, p.n) == ("", "frag", "1hop", 5)
    assert p.a.score == p.b.score == 0.6
    assert (p.gains, p.losses) == (2, 2) and p.p == 1.0
    assert sorted(q["id"] for q in p.changed) == ["a", "b", "c", "d"]


def test_pairs_by_group_and_id_and_counts_the_unpaired(tmp_path):
    a = [
        _row("1", 0, grounded=False, evaluated_prompt_tokens=300, seconds=9.0, llm_calls=1),
        _row("2", 1, grounded=True, evaluated_prompt_tokens=100, seconds=3.0, llm_calls=1),
        _row("1", 1, group="2hop", grounded=False),  # the same id in another group is another question
        _row("only-a", 1),
    ]
    b = [
        _row("2", 1, grounded=True, evaluated_prompt_tokens=50, seconds=1.0, llm_calls=2),
        _row("1", 1, grounded=True, evaluated_prompt_tokens=70, seconds=2.0, llm_calls=2),
        _row("1", 0, group="2hop", grounded=True),
    ]
    _write(tmp_path / "a.jsonl", a)
    _write(tmp_path / "b.jsonl", b)
    one, two = compare(read_run(tmp_path / "a.jsonl"), read_run(tmp_path / "b.jsonl"))
    assert (one.group, one.n, one.gains, one.losses, one.only_a, one.only_b) == ("1hop", 2, 1, 0, 1, 0)
    assert (one.a.score, one.b.score) == (0.5, 1.0)
    assert (one.a.right_grounded, one.b.right_grounded) == (1.0, 1.0)
    assert (one.a.evaluated_prompt_tokens, one.b.evaluated_prompt_tokens) == (200.0, 60.0)
    assert (one.a.seconds, one.b.llm_calls) == (6.0, 2.0)
    assert (two.group, two.gains, two.losses) == ("2hop", 0, 1)
    assert two.b.right_grounded is None  # no right answer to be grounded


def test_bench_layout_and_one_method_against_another(tmp_path):
    _write(tmp_path / "run" / "webqsp" / "frag" / "results.jsonl", [_row("q1", 1, group=""), _row("q2", 1, group="")])
    _write(tmp_path / "run" / "webqsp" / "ultrag" / "results.jsonl", [_row("q1", 0, group=""), _row("q2", 1, group="")])
    run = read_run(tmp_path / "run")
    assert sorted(run) == [("webqsp", "frag"), ("webqsp", "ultrag")]
    [p] = compare(run, run, methods=("frag", "ultrag"))
    assert (p.kg, p.method, p.gains, p.losses) == ("webqsp", "frag → ultrag", 0, 1)
    assert len(compare(run, run)) == 2  # like with like: each method against itself
    with pytest.raises(RunFileError, match="share no KG and method"):
        compare(run, run, methods=("frag", "byokg"))
    with pytest.raises(RunFileError, match="no row of either run has 'answer_recall'"):
        compare(run, run, metric="answer_recall")


def test_a_bad_line_names_its_place(tmp_path):
    path = tmp_path / "r" / "frag" / "results.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(_row("1", 1)) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(RunFileError, match=r"results\.jsonl:2: not a JSON line"):
        read_run(tmp_path / "r")
    with pytest.raises(RunFileError, match="no such file"):
        read_run(tmp_path / "missing")
    (tmp_path / "r" / "frag" / "empty").mkdir()
    with pytest.raises(RunFileError, match=r"no results\.jsonl"):
        read_run(tmp_path / "r" / "frag" / "empty")


def test_cli_compare(tmp_path):
    _write(tmp_path / "a" / "frag" / "results.jsonl", [_row(str(i), int(i < 2)) for i in range(8)])
    _write(tmp_path / "b" / "frag" / "results.jsonl", [_row(str(i), int(i >= 2)) for i in range(8)])
    report = json.loads(run_cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json").stdout)
    assert report["total"] == {"n": 8, "gains": 6, "losses": 2, "p": round(mcnemar_p(6, 2), 4)}
    assert "changed" not in report["compared"][0]
    out = tmp_path / "cmp.json"
    text = run_cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--changed", "--out", str(out)).stdout
    assert "+6 / −2" in text and "q 3" in text
    assert len(json.loads(out.read_text())["compared"][0]["changed"]) == 8
    bad = run_cli("compare", str(tmp_path / "a"), str(tmp_path / "nothing"), ok=False)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "no such file" in bad.stderr
