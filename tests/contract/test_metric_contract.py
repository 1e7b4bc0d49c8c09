"""The contract every registered answer metric keeps: a score in [0, 1], 1 for the gold answers themselves, 0 for
nothing or for wrong answers, blind to the case and spacing of names and to the order of the gold answers, and
the values its formula gives on one fixed example (a new metric states its row in ``KNOWN``)."""

from __future__ import annotations

import math

import pytest

from kgrag.eval.metrics import metrics

GOLD = ["Michael Mann", "Robert De Niro"]
PREDICTED = ["Ridley Scott", "Michael Mann", "Al Pacino"]  # one right answer, second of three

KNOWN = {  # score(PREDICTED, GOLD) from each metric's formula
    "hit": 1.0,  # some prediction is gold
    "hit@1": 0.0,  # the first is not
    "hit@10": 1.0,
    "em": 0.0,  # the sets differ
    "precision": 1 / 3,  # |P∩G| / |P|
    "recall": 1 / 2,  # |P∩G| / |G|
    "f1": 0.4,  # 2PR / (P + R)
    "mrr": 1 / 2,  # 1 / rank of the first gold answer
}

CASES = [
    ([], []),
    ([], GOLD),
    (PREDICTED, []),
    (PREDICTED, GOLD),
    (["x"] * 20, ["x"]),
    ([f"e{i}" for i in range(30)], ["e29", "e0"]),
    (["", "  "], [""]),
]


@pytest.fixture(params=list(metrics))
def name(request) -> str:
    return request.param


class TestMetricContract:
    def test_the_known_values_cover_every_metric(self):
        assert sorted(KNOWN) == sorted(metrics), "state each new metric's value on the fixed example in KNOWN"

    def test_value_on_the_fixed_example(self, name):
        assert math.isclose(metrics.get(name)(PREDICTED, GOLD), KNOWN[name])

    @pytest.mark.parametrize(("pred", "gold"), CASES)
    def test_score_is_a_float_in_the_unit_interval(self, name, pred, gold):
        score = metrics.get(name)(pred, gold)
        assert isinstance(score, float) and 0.0 <= score <= 1.0

    def test_the_gold_answers_score_one(self, name):
        assert metrics.get(name)(GOLD, GOLD) == 1.0

    def test_no_prediction_and_wrong_predictions_score_zero(self, name):
        assert metrics.get(name)([], GOLD) == 0.0
        assert metrics.get(name)(["Ridley Scott", "Alien"], GOLD) == 0.0

    def test_case_and_spacing_do_not_count(self, name):
        shouted = [" MICHAEL  mann ", "robert de niro"]
        assert metrics.get(name)(shouted, GOLD) == metrics.get(name)(GOLD, GOLD)
        assert metrics.get(name)(["ridley SCOTT", " michael mann"], GOLD) == metrics.get(name)(PREDICTED[:2], GOLD)

    def test_the_order_of_the_gold_answers_does_not_count(self, name):
        assert metrics.get(name)(PREDICTED, GOLD) == metrics.get(name)(PREDICTED, GOLD[::-1])
