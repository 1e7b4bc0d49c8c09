"""ultrag's ``verify_query``: a chain query whose relations frag's zero-shot scorer does not take for the
question's is set aside and the fallback answers (scripted LLM: plumbing, no accuracy claims)."""

from __future__ import annotations

import pytest

from kgrag.methods.ultrag import Ultrag
from kgrag.methods.ultrag.dsl.nodes import Entity
from kgrag.methods.ultrag.dsl.parser import parse
from kgrag.methods.ultrag.verify import chain_pattern
from kgrag.models.embeddings import load_embedder
from kgrag.models.llm.scripted import ScriptedLLM


@pytest.fixture(scope="module")
def static_embedder():
    return load_embedder("static")


def _ultrag(kg, query: str, embedder, **settings) -> Ultrag:
    llm = ScriptedLLM(
        {
            "rules": [
                {"prompt": "ultrag_query", "response": query},
                {"prompt": "ultrag_answer", "response": "<answers>1995</answers>"},
                {"prompt": "frag_answer", "response": "<answers>Michael Mann</answers>"},
            ]
        }
    )
    return Ultrag(kg, llm=llm, embedder=embedder, fallback="frag", **settings)


def test_a_chain_query_is_a_relation_pattern_from_its_leaf(movies_kg):
    n = movies_kg.num_relations
    directed = movies_kg.relation_id("directed_by")
    leaf, pattern = chain_pattern(movies_kg, parse('"Heat" -> directed_by -> directed_by_inv'))
    assert leaf == Entity("Heat") and pattern == (directed, directed + n)
    assert chain_pattern(movies_kg, parse('AND("Heat" -> directed_by, "Alien" -> directed_by)')) is None


def test_a_query_the_question_does_not_ask_for_is_set_aside(movies_kg, static_embedder):
    question = "who directed Heat"
    checked = _ultrag(movies_kg, '"Heat" -> release_year', static_embedder).answer(question)
    steps = {s.name: s.outputs for s in checked.trace}
    assert steps["verify_query"]["agrees"] is False
    assert steps["verify_query"]["pattern"] == "release_year" and steps["verify_query"]["best"] == "directed_by"
    assert "arbitrate" not in steps and steps["fallback"]["method"] == "frag"
    assert checked.answers == ["Michael Mann"]
    unchecked = _ultrag(movies_kg, '"Heat" -> release_year', static_embedder, verify_query=False).answer(question)
    assert "verify_query" not in {s.name for s in unchecked.trace} and unchecked.answers == ["1995"]


def test_the_query_the_question_asks_for_is_kept(movies_kg, static_embedder):
    ans = _ultrag(movies_kg, '"Heat" -> directed_by', static_embedder).answer("who directed Heat")
    steps = {s.name: s.outputs for s in ans.trace}
    assert steps["verify_query"]["agrees"] is True and "arbitrate" in steps and "fallback" not in steps


def test_a_query_with_an_intersection_is_not_checked(movies_kg, static_embedder):
    query = 'AND("Heat" -> starred_actors, "The Insider" -> starred_actors)'
    ans = _ultrag(movies_kg, query, static_embedder).answer("who acted in Heat and The Insider")
    steps = {s.name: s.outputs for s in ans.trace}
    assert steps["verify_query"] == {"checked": False, "agrees": True} and "arbitrate" in steps


def test_frag_scores_patterns_for_another_method_only_where_it_runs_zero_shot(movies_kg, static_embedder):
    """Where a trained router or pattern scorer ranks (MetaQA as shipped), their scores are on another scale, so
    ``zero_shot_pattern_scores`` gives none and ultrag's queries go unchecked there."""
    from kgrag.methods import get
    from kgrag.methods.frag.patterns import pattern_label

    heat = [movies_kg.entity_id("Heat")]
    reach, scores = get("frag")(movies_kg, embedder=static_embedder).zero_shot_pattern_scores("who directed Heat", heat)
    assert pattern_label(movies_kg, reach.patterns[scores.argmax()]) == "directed_by"
    trained = get("frag")(movies_kg, embedder=static_embedder, router="builtin")
    assert trained.zero_shot_pattern_scores("who directed Heat", heat) is None


def test_a_query_one_hop_short_of_frags_best_pattern_is_set_aside(movies_kg, static_embedder):
    question = "which actors starred in the films directed by Michael Mann"
    query = '"Michael Mann" -> directed_by_inv'
    kept = _ultrag(movies_kg, query, static_embedder, verify_shorter=False).answer(question)
    steps = {s.name: s.outputs for s in kept.trace}
    assert steps["verify_query"]["stops_short"] is True and steps["verify_query"]["agrees"] is True
    assert steps["verify_query"]["pattern"] == "directed_by_inv"
    assert steps["verify_query"]["best"].startswith("directed_by_inv>")
    short = _ultrag(movies_kg, query, static_embedder).answer(question)  # on by default
    steps = {s.name: s.outputs for s in short.trace}
    assert steps["verify_query"]["agrees"] is False and "arbitrate" not in steps
    assert steps["fallback"]["method"] == "frag" and "further" in steps["fallback"]["reason"]
