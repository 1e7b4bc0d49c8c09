"""Which sampler chains the grammar-first greedy chain may replace: only the plain greedy one, whose pick it
reproduces exactly (the real-runtime comparison is tests/integration/test_grammar_first.py)."""

from __future__ import annotations

import pytest

from kgrag.models.llm.grammar_first import plain_greedy

GREEDY = {"grammar": object(), "temp": 0.0, "repeat_penalty": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0}


def test_a_greedy_call_under_a_grammar_takes_the_grammar_first_chain():
    assert plain_greedy(GREEDY)
    assert plain_greedy(GREEDY | {"logits_processor": None, "mirostat_mode": 0})


@pytest.mark.parametrize(
    "change",
    [
        {"grammar": None},  # nothing to check first
        {"temp": 0.7},  # sampling: the likeliest tokens do not bound what may be drawn
        {"repeat_penalty": 1.1},
        {"frequency_penalty": 0.5},
        {"presence_penalty": 0.5},
        {"logits_processor": [lambda ids, logits: logits]},
        {"mirostat_mode": 2},
    ],
)
def test_any_other_chain_stays_llama_cpp_pythons_own(change):
    assert not plain_greedy(GREEDY | change)
