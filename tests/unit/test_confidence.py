"""Answer confidence: signals every method has, a fitted logistic function, abstention, calibration measures."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.eval.calibration import calibration_summary, ece_floor, expected_calibration_error, risk_coverage
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import confidence
from kgrag.types import Evidence
from tests.conftest import MOVIES


def test_signals_read_support_mentions_rank_and_the_models_order():
    path = Evidence(text="p", entities=["Heat", "Michael Mann", "Collateral"], triples=[0, 1], source="path")
    fact = Evidence(text="f", entities=["Heat", "Al Pacino"], triples=[2], source="triple")
    signals = confidence.answer_signals(["Collateral", "Alien"], [path, fact], {"Collateral": [0, 1]})
    sure, unsure = signals["Collateral"], signals["Alien"]
    assert sure["supported"] == 1.0 and sure["hops"] == 0.5 and sure["first"] == 1.0 and sure["rank"] == 1.0
    assert sure["mentions"] > 0
    assert unsure == {**unsure, "supported": 0.0, "hops": 0.0, "mentions": 0.0, "rank": 0.0, "first": 0.0}
    assert sure["answers"] == unsure["answers"] and sure["options"] == unsure["options"]


def test_confidence_follows_the_fitted_weights_and_is_neutral_without_them(monkeypatch):
    signals = {"a": {"supported": 1.0, "first": 1.0}, "b": {"supported": 0.0, "first": 0.0}}
    monkeypatch.setattr(confidence, "_weights", lambda: {})
    assert confidence.confidences("frag", signals) == {"a": 0.5, "b": 0.5}
    weights = {"*": {"bias": -1.0, "supported": 3.0, "first": 0.5}}
    monkeypatch.setattr(confidence, "_weights", lambda: weights)
    got = confidence.confidences("frag", signals)  # no frag entry: the pooled weights
    assert got["a"] == pytest.approx(1 / (1 + np.exp(-2.5)), abs=1e-4)
    assert got["b"] == pytest.approx(1 / (1 + np.exp(1.0)), abs=1e-4)


def test_weights_fitted_with_a_trained_artefact_are_used_only_with_it(monkeypatch):
    from kgrag.methods import get

    kg = KnowledgeGraph.from_triples(MOVIES)
    trained = get("frag")(kg, patterns="builtin")  # the shipped MetaQA scorer, named explicitly
    key = "frag:" + confidence.artefact_key(trained.pattern_classifier.provenance)
    monkeypatch.setattr(confidence, "_weights", lambda: {"frag": {"bias": 0.0}})
    assert trained.confidence_weights() == "frag"  # nothing fitted with it: frag's own weights
    monkeypatch.setattr(confidence, "_weights", lambda: {"frag": {"bias": 0.0}, key: {"bias": 2.0}})
    assert trained.confidence_weights() == key
    assert get("frag")(kg).confidence_weights() == "frag"  # zero-shot on this KG: not the artefact's weights
    assert confidence.confidences(key, {"a": {}}) == {"a": pytest.approx(1 / (1 + np.exp(-2.0)), abs=1e-4)}


def test_shipped_weights_rank_a_supported_answer_above_an_unsupported_one():
    signals = confidence.answer_signals(
        ["Michael Mann", "Ridley Scott"],
        [Evidence(text="f", entities=["Heat", "Michael Mann"], triples=[0], source="triple")],
        {"Michael Mann": [0]},
    )
    got = confidence.confidences("frag", signals)
    assert 0 <= got["Ridley Scott"] < got["Michael Mann"] <= 1


def test_abstain_drops_answers_below_the_threshold_and_says_why():
    from kgrag.methods import get as get_method
    from kgrag.models.embeddings import load_embedder
    from kgrag.models.llm.scripted import ScriptedLLM

    kg = KnowledgeGraph.from_triples(MOVIES)
    question = "Who directed Heat?"
    make = get_method("kaping")
    kept = make(kg, llm=ScriptedLLM({"default": "<answers>Michael Mann</answers>"}), embedder=load_embedder("static"))
    answer = kept.answer(question)
    assert answer.answers == ["Michael Mann"] and 0 < answer.confidence["Michael Mann"] < 1
    assert set(answer.signals["Michael Mann"]) == set(confidence.SIGNALS)
    strict = make(
        kg,
        llm=ScriptedLLM({"default": "<answers>Michael Mann</answers>"}),
        embedder=load_embedder("static"),
        abstain=1.0,
    )
    answer = strict.answer(question)
    assert answer.answers == [] and not answer.grounded and answer.confidence == {}
    assert "abstain=1" in (answer.abstained or "")


def test_calibration_error_and_risk_coverage_on_known_cases():
    right = np.array([1, 1, 1, 0, 1, 0, 0, 0], dtype=float)
    perfect = np.array([1, 1, 1, 0, 1, 0, 0, 0], dtype=float)
    assert expected_calibration_error(perfect, right) == 0.0
    assert expected_calibration_error(np.full(8, 0.9), right) == pytest.approx(0.4)
    conf = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    coverage, hit, threshold = risk_coverage(conf, right)
    assert list(coverage[:3]) == [0.125, 0.25, 0.375] and list(hit[:3]) == [1, 1, 1] and hit[-1] == 0.5
    assert threshold[2] == 0.7
    tied = risk_coverage(np.array([0.5, 0.5, 0.1]), np.array([1.0, 0.0, 0.0]))
    assert list(tied[0]) == pytest.approx([2 / 3, 1.0])  # a threshold cannot split equal confidences
    rows = [{"confidence": c, "hit@1": h} for c, h in zip(conf, right)]
    summary = calibration_summary(rows)
    assert summary["threshold_for_hit@1_0.95"] == 0.7 and summary["coverage_at_hit@1_0.95"] == 0.375
    assert summary["risk_coverage"][0] == {"coverage": 1.0, "hit@1": 0.5, "threshold": 0.2}
    assert calibration_summary([{"hit@1": 1.0}]) == {}


def test_ece_floor_is_the_ece_of_a_calibrated_confidence_on_as_many_questions():
    """100 answers at 0.5 that are right with probability 0.5: the ECE is |right - 50| / 100, whose mean is
    E|Binomial(100, 0.5) - 50| / 100 = 0.0398; a thousand questions halve it and more; certainty has no floor."""
    mean, p90 = ece_floor(np.full(100, 0.5))
    assert mean == pytest.approx(0.0398, abs=0.004) and p90 > mean
    assert ece_floor(np.full(1000, 0.5))[0] < mean / 2.5
    assert ece_floor(np.ones(50)) == (0.0, 0.0) and ece_floor(np.array([])) == (0.0, 0.0)
    rows = [{"confidence": 0.5, "hit@1": float(i % 2)} for i in range(100)]
    assert calibration_summary(rows)["ece_floor"] == [round(mean, 4), round(p90, 4)]


def test_a_zeroed_signal_gets_no_weight_in_the_fit():
    from tests.conftest import load_benchmark

    fit_script = load_benchmark("confidence_fit")
    rng = np.random.default_rng(0)
    rows = [  # first predicts the answer here, so an unconstrained fit weighs it
        {"hit@1": float(h), "signals": {"first": float(h), "misfit": float(m)}}
        for h, m in zip(rng.integers(0, 2, 200), rng.random(200))
    ]
    first = 1 + confidence.SIGNALS.index("first")
    assert abs(fit_script.fit(*fit_script.design(rows))[first]) > 0.5
    fit_script.ZEROED.add("first")
    try:
        assert fit_script.fit(*fit_script.design(rows))[first] == 0.0
    finally:
        fit_script.ZEROED.clear()


def test_less_sure_answers_after_the_first_are_moved_out():
    from kgrag.methods.confidence import less_sure

    sure = {"Maria Lopez": 0.84, "Intro to Databases": 0.64, "Peter Novak": 0.34, "Turing Building": 0.41}
    answers = list(sure)
    assert less_sure(answers, sure, 0.5) == (["Maria Lopez", "Intro to Databases"], ["Peter Novak", "Turing Building"])
    assert less_sure(answers, sure, None) == (answers, [])
    # the first answer stays however unsure: Hit@1 reads it, and dropping it is abstain's job
    assert less_sure(["a", "b"], {"a": 0.1, "b": 0.9}, 0.5) == (["a", "b"], [])
    assert less_sure(["a", "b"], {"a": 0.1, "b": 0.9}, 1.0) == (["a", "b"], [])
    assert less_sure(["a", "b", "c"], {"a": 0.1, "b": 0.9, "c": 0.2}, 0.5) == (["a", "b"], ["c"])
