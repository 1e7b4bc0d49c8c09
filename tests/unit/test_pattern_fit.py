"""``fit``: whether the relation path to an answer reads as the question, on FRAG's zero-shot pattern scores."""

from __future__ import annotations

import pytest

from kgrag.methods import get
from kgrag.methods.pattern_fit import pattern_fit, zero_shot_scorer
from kgrag.models.embeddings import load_embedder
from kgrag.models.llm.scripted import ScriptedLLM


@pytest.fixture(scope="module")
def static_embedder():
    return load_embedder("static")


def test_the_answer_at_the_end_of_the_questions_best_reading_fits(movies_kg, static_embedder):
    scorer = zero_shot_scorer(movies_kg, static_embedder)
    heat = [movies_kg.entity_id("Heat")]
    fit = pattern_fit(scorer, "who directed Heat", heat, ["Michael Mann", "Al Pacino", "1995", "Neptune"])
    assert fit["Michael Mann"] == 1.0  # directed_by is the best pattern from Heat
    assert 0.0 <= fit["Al Pacino"] < 1.0 and fit["1995"] < 1.0  # reached by patterns the question asks less for
    assert fit["Neptune"] == 0.0  # not an entity of the KG: no pattern reaches it


def test_fit_is_read_only_where_the_question_has_an_entity(movies_kg, static_embedder):
    scorer = zero_shot_scorer(movies_kg, static_embedder)
    assert pattern_fit(scorer, "who directed Heat", [], ["Michael Mann"]) == {}


def test_every_answer_of_a_method_carries_fit_in_its_signals(movies_kg, static_embedder):
    llm = ScriptedLLM({"default": "<answers>\nAl Pacino\nMichael Mann\n</answers>"})
    ans = get("kaping")(movies_kg, llm=llm, embedder=static_embedder).answer("who directed Heat", ["Heat"])
    signals = ans.signals
    assert signals["Michael Mann"]["misfit"] == 0.0 and signals["Al Pacino"]["misfit"] > 0.0
    no_kg = get("llm")(movies_kg, llm=llm).answer("who directed Heat")  # nothing to read it from: no penalty
    assert no_kg.answers and all(s["misfit"] == 0.0 for s in no_kg.signals.values())


def test_fit_first_puts_the_answer_the_question_asks_for_first(movies_kg, static_embedder):
    llm = ScriptedLLM({"default": "<answers>\nAl Pacino\nMichael Mann\n</answers>"})
    kaping = get("kaping")
    assert kaping.Config().fit_first  # kaping's default
    ordered = kaping(movies_kg, llm=llm, embedder=static_embedder).answer("who directed Heat", ["Heat"])
    assert ordered.answers == ["Michael Mann", "Al Pacino"]
    as_written = kaping(movies_kg, llm=llm, embedder=static_embedder, fit_first=False).answer(
        "who directed Heat", ["Heat"]
    )
    assert as_written.answers == ["Al Pacino", "Michael Mann"]
