"""benchmarks/webqsp_any_method.py reads the per-question Hit@1 of every layout the result files use."""

from __future__ import annotations

from tests.conftest import load_benchmark


def test_every_recorded_hit_of_a_proxy_question_is_read():
    script = load_benchmark("webqsp_any_method")
    tree = {
        "runs": {
            "a": {"questions": [{"id": "/WebQTest-1", "hit@1": [0.0, 1.0]}, {"id": "WebQTest-2", "hit@1": 0.0}]},
            "b": [{"id": "WebQTest-3", "variant x": {"predicted": ["A"], "hit@1": 1.0}, "variant y": {"hit@1": 0.0}}],
            "c": [{"id": "WebQTest-4", "hit@1_60": 0.0, "hit@1_28": 1.0}, {"id": "WebQTest-5", "gain": True}],
            "e": [{"id": "WebQTest-6", "run": {"seconds": [1.0, 2.0], "hit@1": 0.0}}],  # other numbers are no hits
            "d": [{"id": "q7", "hit@1": 1.0}],  # not a proxy question
        }
    }
    assert dict(script.questions(tree)) == {
        "WebQTest-1": 1.0,
        "WebQTest-2": 0.0,
        "WebQTest-3": 1.0,
        "WebQTest-4": 1.0,
        "WebQTest-6": 0.0,
    }
