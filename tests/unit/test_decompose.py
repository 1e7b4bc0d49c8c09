"""decompose (KG-RAG) plumbing with the scripted LLM — parsing, reformulation chain, call counts, trace.

The scripted LLM only replays canned text, so nothing here says anything about accuracy.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.answers import split_listed_names
from kgrag.linking.names import NameIndex
from kgrag.methods import get as get_method
from kgrag.methods.decompose import ChainStep, join_names, parse_decomposition, reformulate, widen
from kgrag.methods.support import answer_links, links_past
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.prompts import load_prompt
from kgrag.retrieval.triples import connected_top, triples_as_evidence
from tests.conftest import MOVIES, RecordingLLM, run_cli

Q = "Which actors starred in the films directed by Michael Mann?"


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("kg") / "kg"))


# ---------------------------------------------------------------- parsing the decomposition
def test_parse_tagged_output():
    text = (
        "<reasoning>First the films of Michael Mann,\n then their actors.</reasoning>\n"
        "<subquestions>\n1. Which films did Michael Mann direct?\n2. Who starred in #1?\n</subquestions>\n"
    )
    plan = parse_decomposition(text, Q)
    assert plan.subquestions == ["Which films did Michael Mann direct?", "Who starred in #1?"]
    assert plan.reasoning == "First the films of Michael Mann, then their actors."
    assert not plan.fallback


def test_parse_untagged_numbered_list_with_labels():
    text = (
        "Reasoning: need the films first.\nSub-question 1: Which films did Michael Mann direct?\n2) Who starred in #1"
    )
    plan = parse_decomposition(text, Q)
    assert plan.subquestions == ["Which films did Michael Mann direct?", "Who starred in #1"]
    assert plan.reasoning == "need the films first."


def test_parse_stops_at_end_and_ignores_a_runaway_next_example():
    text = (
        "```\n<reasoning>one fact</reasoning>\n<subquestions>\n1. Who directed Heat?\n</subquestions>\n<END>\n"
        "Question: Who wrote Emma?\n<subquestions>\n1. Who wrote Emma?\n</subquestions>"
    )
    assert parse_decomposition(text, Q).subquestions == ["Who directed Heat?"]
    # no <END> at all (the stop token was swallowed): the first sub-question block still wins
    runaway = text.replace("<END>", "")
    assert parse_decomposition(runaway, Q).subquestions == ["Who directed Heat?"]


def test_parse_unclosed_tag_dedupes_and_caps():
    text = "<subquestions>\n- Who directed Heat?\n- who directed heat?\n- Who wrote #1?\n- When?\n- Where is #3?"
    plan = parse_decomposition(text, Q, max_subquestions=3)
    assert plan.subquestions == ["Who directed Heat?", "Who wrote #1?", "When?"]


@pytest.mark.parametrize(
    "junk",
    [
        None,
        "",
        "<<<answers>>> ``` </opencypher",
        "<answers>\nMichael Mann\n</answers>",
        "<subquestions></subquestions>",
    ],
)
def test_parse_junk_falls_back_to_the_question(junk):
    plan = parse_decomposition(junk, Q)
    assert plan.subquestions == [Q] and plan.fallback


# ---------------------------------------------------------------- reformulation
def test_reformulate_substitutes_earlier_answers():
    steps = [ChainStep("Which films did Michael Mann direct?", "q1", answers=["Heat", "The Insider"])]
    assert reformulate("Who starred in #1?", steps) == ("Who starred in Heat and The Insider?", [0])
    assert reformulate("Who starred in Heat?", steps) == ("Who starred in Heat?", [])
    assert reformulate("Who starred in #4?", steps) == ("Who starred in #4?", [])  # no such step
    empty = [ChainStep("Which films did X direct?", "Which films did X direct?")]
    assert reformulate("Who starred in #1?", empty) == ("Who starred in the answer to 'Which films did X direct'?", [0])


def test_split_listed_names_uses_the_kg(tmp_path):
    kg = KnowledgeGraph.from_triples(
        [*MOVIES, ("Paris, Texas", "directed_by", "Wim Wenders"), ("Romeo and Juliet", "release_year", "1968")]
    )
    names = NameIndex(kg)
    trio = ["Al Pacino", "Robert De Niro", "Russell Crowe"]
    assert split_listed_names(["Al Pacino, Robert De Niro and Russell Crowe"], names) == trio
    assert split_listed_names(["Al Pacino, Robert De Niro, and Russell Crowe"], names) == trio
    assert split_listed_names(["Romeo and Juliet", "Heat & Alien"], names) == ["Romeo and Juliet", "Heat", "Alien"]
    assert split_listed_names(["Paris, Texas", "heat; alien"], names) == ["Paris, Texas", "heat", "alien"]
    assert split_listed_names(["Rome, Italy, Europe"], names) == ["Rome, Italy, Europe"]  # not KG names
    tagged = NameIndex(KnowledgeGraph.from_triples([*MOVIES, ("Heat", "has_tags", "heat alien")]))
    assert split_listed_names(["Heat, Alien"], tagged) == ["Heat", "Alien"]  # not the tag the words normalise to
    assert split_listed_names(["heat alien"], tagged) == ["heat alien"]


def test_join_names_limits_long_lists():
    assert join_names(["A"]) == "A"
    assert join_names(["A", "B", "C"]) == "A, B and C"
    assert join_names([str(i) for i in range(12)], limit=3) == "0, 1, 2 and 9 more"


# ---------------------------------------------------------------- the method
def _two_step_llm(synthesis: str = "<answers>\nAl Pacino\nRobert De Niro\n</answers>") -> ScriptedLLM:
    return ScriptedLLM(
        {
            "rules": [
                {
                    "prompt": "decompose_questions",
                    "response": "<reasoning>Films of Michael Mann, then their actors.</reasoning>\n<subquestions>\n"
                    "1. Which films did Michael Mann direct?\n2. Which actors starred in #1?\n</subquestions>",
                },
                {
                    "prompt": "decompose_answer",
                    "match": r"Question: Which films did Michael Mann direct\?",
                    "response": "<answers>\nHeat\nThe Insider\n</answers>",
                },
                {  # only matches when #1 was replaced by the first answers
                    "prompt": "decompose_answer",
                    "match": r"Question: Which actors starred in Heat and The Insider\?",
                    "response": "<answers>\nAl Pacino\nRobert De Niro\nRussell Crowe\n</answers>",
                },
                {"prompt": "decompose_synthesis", "match": "Heat and The Insider", "response": synthesis},
            ]
        }
    )


def test_chain_reformulates_ranks_per_subquestion_and_synthesises(kg):
    answer = get_method("decompose")(kg, llm=_two_step_llm(), plan_answers=False, top_k=4).answer(Q, ["Michael Mann"])
    assert answer.error is None
    assert answer.answers == ["Al Pacino", "Robert De Niro"]
    assert answer.usage.llm_calls == 4
    assert [c.prompt for c in answer.usage.calls] == [
        "decompose_questions",
        "decompose_answer",
        "decompose_answer",
        "decompose_synthesis",
    ]
    names = [s.name for s in answer.trace]
    assert names == ["link", "candidates", "decompose", "subquestion", "subquestion", "synthesis"]
    plan = answer.trace[2].outputs
    assert plan["subquestions"] == ["Which films did Michael Mann direct?", "Which actors starred in #1?"]
    assert plan["reasoning"].startswith("Films of Michael Mann") and not plan["fallback"]
    first, second = answer.trace[3].outputs, answer.trace[4].outputs
    assert first["answers"] == ["Heat", "The Insider"]
    # step 1 is anchored at the topic: only its triples, not the best 4 of the whole 3-hop neighbourhood
    assert set(first["facts"]) == {
        "Heat directed by Michael Mann",
        "Heat written by Michael Mann",
        "The Insider directed by Michael Mann",
    }
    assert second["query"] == "Which actors starred in Heat and The Insider?"
    assert first["anchors"] == ["Michael Mann"] and second["anchors"] == ["Heat", "The Insider"]
    assert sum("starred actors" in f for f in second["facts"]) >= 3  # re-ranked against the new query
    assert all(f.startswith(("Heat ", "The Insider ")) for f in second["facts"])
    chain = answer.trace[5].outputs["chain"]
    assert [s["answers"] for s in chain] == [["Heat", "The Insider"], ["Al Pacino", "Robert De Niro", "Russell Crowe"]]
    # evidence: the union of both steps' facts, every triple real
    assert answer.grounded and len({t for ev in answer.evidence for t in ev.triples}) == len(answer.evidence)
    assert {ev.source for ev in answer.evidence} == {"decompose/sub1", "decompose/sub2"}
    json.loads(answer.model_dump_json())


def test_synthesis_without_answers_keeps_the_last_subanswer(kg):
    answer = get_method("decompose")(kg, llm=_two_step_llm("I am not sure.</answers"), plan_answers=False).answer(
        Q, ["Michael Mann"]
    )
    assert answer.answers == ["Al Pacino", "Robert De Niro", "Russell Crowe"]


def test_synthesis_sentence_is_split_and_entity_names_come_first(kg):
    llm = _two_step_llm("<answers>Michael Mann directed Heat | Al Pacino | Robert De Niro</answers>")
    keep_all = {"own_knowledge": "always", "answer_spread": None}  # far less sure than the first: doubtful
    answer = get_method("decompose")(kg, llm=llm, plan_answers=False, **keep_all).answer(Q, ["Michael Mann"])
    assert answer.answers == ["Al Pacino", "Robert De Niro", "Michael Mann directed Heat"]
    # by default the sentence, which nothing supports beside supported names, is set aside
    answer = get_method("decompose")(kg, llm=llm, plan_answers=False).answer(Q, ["Michael Mann"])
    assert answer.answers == ["Al Pacino", "Robert De Niro"] and answer.set_aside == ["Michael Mann directed Heat"]


def test_synthesis_can_be_switched_off(kg):
    answer = get_method("decompose")(kg, llm=_two_step_llm(), plan_answers=False, synthesize=False).answer(
        Q, ["Michael Mann"]
    )
    assert answer.usage.llm_calls == 3 and answer.trace[-1].name == "subquestion"
    assert answer.answers == ["Al Pacino", "Robert De Niro", "Russell Crowe"]


def test_one_subquestion_answers_the_question_directly(kg):
    llm = ScriptedLLM(
        {
            "rules": [
                {
                    "prompt": "decompose_questions",
                    "response": "<reasoning>One fact.</reasoning><subquestions>1. Who directed Heat?</subquestions>",
                },
                {
                    "prompt": "decompose_answer",
                    "match": "Question: who directed the film Heat",
                    "response": "Michael Mann",
                },
            ]
        }
    )
    answer = get_method("decompose")(kg, llm=llm, plan_answers=False).answer("who directed the film Heat")
    assert answer.error is None and answer.answers == ["Michael Mann"]  # untagged answer lines still read
    assert answer.usage.llm_calls == 2  # decomposition + one answer, no synthesis
    assert [s.name for s in answer.trace] == ["link", "candidates", "decompose", "subquestion"]
    step = answer.trace[-1].outputs
    assert step["query"] == "who directed the film Heat" and step["facts"][0] == "Heat directed by Michael Mann"


def test_one_subquestion_answer_repeating_the_topic_gives_way(kg):
    # A lone sub-question is ranked unanchored, but its topic still may not stand as the first answer.
    llm = ScriptedLLM(
        {
            "rules": [
                {"prompt": "decompose_questions", "response": "<subquestions>1. Who directed Heat?</subquestions>"},
                {"prompt": "decompose_answer", "response": "<answers>\nHeat\nMichael Mann\n</answers>"},
            ]
        }
    )
    answer = get_method("decompose")(kg, llm=llm, plan_answers=False).answer(
        "who directed the film Heat", topic_entities=["Heat"]
    )
    assert answer.error is None and answer.answers[0] == "Michael Mann"


def test_malformed_decomposition_falls_back_to_the_question(kg):
    llm = ScriptedLLM(
        {
            "rules": [
                {"prompt": "decompose_questions", "response": "Sure! Here is my plan: think hard."},
                {"prompt": "decompose_answer", "response": "<answers>Michael Mann</answers>"},
            ]
        }
    )
    answer = get_method("decompose")(kg, llm=llm, plan_answers=False).answer("who directed Heat")
    assert answer.trace[2].outputs["fallback"] is True
    assert answer.answers == ["Michael Mann"] and answer.usage.llm_calls == 2


def test_unreferenced_earlier_answer_joins_query_and_prompt(kg):
    llm = ScriptedLLM(
        {
            "rules": [
                {
                    "prompt": "decompose_questions",
                    "response": "<subquestions>\n1. Which films did Michael Mann direct?\n"
                    "2. Who starred in those films?\n</subquestions>",
                },
                {
                    "prompt": "decompose_answer",
                    "match": "Question: Which films did Michael Mann direct",
                    "response": "<answers>Heat</answers>",
                },
                {
                    "prompt": "decompose_answer",
                    "match": r"Earlier steps:\n1\. Which films did Michael Mann direct\?\n   answers: Heat\n.*"
                    r"Question: Who starred in those films\? \(Heat\)",
                    "response": "<answers>Al Pacino</answers>",
                },
                {"prompt": "decompose_synthesis", "response": "<answers>Al Pacino</answers>"},
            ]
        }
    )
    answer = get_method("decompose")(kg, llm=llm, plan_answers=False).answer(Q, ["Michael Mann"])
    assert answer.error is None and answer.answers == ["Al Pacino"]
    assert answer.trace[4].outputs["query"] == "Who starred in those films? (Heat)"


# ---------------------------------------------------------------- the plan that answers its first step
_PLAN_ONE = "<reasoning>1 link.</reasoning>\n<subquestions>\n1. Who directed Heat?\n</subquestions>\n"


def test_one_step_plan_is_answered_in_the_planning_call(kg):
    llm = ScriptedLLM(
        {
            "rules": [
                {
                    "prompt": "decompose_plan_answer",
                    "match": r"Facts:\n1\. .*Question: who directed the film Heat",
                    "response": _PLAN_ONE + "<answers>\nMichael Mann\n</answers>",
                }
            ]
        }
    )
    answer = get_method("decompose")(kg, llm=llm, plan_answers=True).answer("who directed the film Heat", ["Heat"])
    assert answer.error is None and answer.answers == ["Michael Mann"]
    assert answer.usage.llm_calls == 1 and [c.prompt for c in answer.usage.calls] == ["decompose_plan_answer"]
    assert [s.name for s in answer.trace] == ["link", "candidates", "decompose"]
    plan = answer.trace[-1].outputs
    assert plan["subquestions"] == ["Who directed Heat?"] and plan["answers"] == ["Michael Mann"]
    # the facts shown are the topic's own, ranked against the whole question
    assert answer.evidence and all("Heat" in ev.entities for ev in answer.evidence)
    assert answer.grounded and {ev.source for ev in answer.evidence} == {"decompose/sub1"}


def test_longer_plan_takes_its_first_answers_from_the_planning_call(kg):
    plan = (
        "<reasoning>Films, then actors.</reasoning>\n<subquestions>\n1. Which films did Michael Mann direct?\n"
        "2. Which actors starred in #1?\n</subquestions>\n<answers>\nHeat\nThe Insider\n</answers>"
    )
    llm = ScriptedLLM(
        {
            "rules": [
                {"prompt": "decompose_plan_answer", "response": plan},
                {
                    "prompt": "decompose_answer",
                    "match": r"Question: Which actors starred in Heat and The Insider\?",
                    "response": "<answers>\nAl Pacino\nRussell Crowe\n</answers>",
                },
                {"prompt": "decompose_synthesis", "response": "<answers>\nAl Pacino\nRussell Crowe\n</answers>"},
            ]
        }
    )
    answer = get_method("decompose")(kg, llm=llm, plan_answers=True).answer(Q, ["Michael Mann"])
    assert answer.answers == ["Al Pacino", "Russell Crowe"]
    assert [c.prompt for c in answer.usage.calls] == [
        "decompose_plan_answer",
        "decompose_answer",
        "decompose_synthesis",
    ]
    assert [s.name for s in answer.trace] == ["link", "candidates", "decompose", "subquestion", "synthesis"]
    chain = answer.trace[-1].outputs["chain"]
    assert chain[0]["subquestion"] == "Which films did Michael Mann direct?"
    assert chain[0]["answers"] == ["Heat", "The Insider"] and answer.trace[3].inputs["index"] == 2


def test_a_plan_that_answers_nothing_gets_a_call_for_its_first_step(kg):
    llm = ScriptedLLM(
        {
            "rules": [
                {"prompt": "decompose_plan_answer", "response": _PLAN_ONE + "<answers>\n</answers>"},
                {"prompt": "decompose_answer", "response": "<answers>Michael Mann</answers>"},
            ]
        }
    )
    answer = get_method("decompose")(kg, llm=llm, plan_answers=True).answer("who directed the film Heat", ["Heat"])
    assert answer.answers == ["Michael Mann"] and answer.usage.llm_calls == 2
    assert [s.name for s in answer.trace] == ["link", "candidates", "decompose", "subquestion"]


def test_first_hop_anchors_reach_through_unnamed_nodes(tmp_path):
    triples = [
        ("Barack Obama", "spouse_s", "m.02h98gq"),
        ("m.02h98gq", "spouse", "Michelle Obama"),
        ("Barack Obama", "born in", "Honolulu"),
        ("Honolulu", "located in", "Hawaii"),
    ]
    small = KnowledgeGraph.load(KnowledgeGraph.from_triples(triples).save(tmp_path / "kg"))
    method = get_method("decompose")(small)
    pool = method._pool(np.arange(small.num_triples))
    obama = small.entity_id("Barack Obama")
    anchors = method._first_hop_anchors([obama], pool)
    assert [small.entities[e] for e in anchors] == ["Barack Obama", "m.02h98gq"]  # not Honolulu: it has a name


def test_anchored_steps_rank_only_the_triples_of_their_entities(kg):
    heat = kg.entity_id("Heat")
    tids = np.arange(kg.num_triples)
    pure_method = get_method("decompose")(kg, top_k=2, anchored=False)
    pure = pure_method._rank("Who starred in Gladiator?", pure_method._pool(tids), "x", [heat])
    assert all("Gladiator" in ev.entities for ev in pure)
    method = get_method("decompose")(kg, top_k=2)
    anchored = method._rank("Who starred in Gladiator?", method._pool(tids), "x", [heat])
    assert {ev.text for ev in anchored} == {"Heat starred actors Al Pacino", "Heat starred actors Robert De Niro"}
    # no candidate touches the anchors: rank all candidates
    alien = kg.entity_id("Alien")
    rest = np.array([t for t in tids if alien not in (kg.heads[t], kg.tails[t])])
    outside = method._rank("Who starred in Gladiator?", method._pool(rest), "x", [alien])
    assert all("Gladiator" in ev.entities for ev in outside)


def test_retrieve_ranks_against_the_whole_question_without_llm(kg):
    method = get_method("decompose")(kg, llm=None, top_k=3)
    assert method.config.hops == 3 and method.config.top_k == 3
    evidence = method.retrieve("who directed Heat", ["Heat"])
    assert len(evidence) == 3 and evidence[0].text == "Heat directed by Michael Mann"
    assert all(ev.source == "decompose" for ev in evidence)
    assert evidence[0].score >= evidence[1].score >= evidence[2].score


def test_prompts_declare_paper_settings_and_tags():
    plan = load_prompt("decompose_questions")
    assert plan.tags == ("reasoning", "subquestions") and plan.stop == ("<END>",)
    answering = load_prompt("decompose_plan_answer")
    assert answering.tags == ("reasoning", "subquestions", "answers") and answering.stop == ("<END>",)
    assert answering.temperature == plan.temperature and "{{facts}}" in answering.user
    assert plan.temperature == 0.3 and plan.max_tokens == 256
    assert plan.system.count("<END>") >= 4  # the in-context examples end with it
    assert load_prompt("decompose_answer").max_tokens == 256
    synthesis = load_prompt("decompose_synthesis")
    assert synthesis.max_tokens == 512 and synthesis.temperature == 0.3 and synthesis.tags == ("answers",)


def test_cli_retrieve_with_settings(tmp_path):
    store = KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg")
    proc = run_cli("retrieve", str(store), "who directed Heat", "--method", "decompose", "--set", "top_k=2", "--json")
    out = json.loads(proc.stdout)
    assert out["method"] == "decompose" and len(out["evidence"]) == 2
    bad = run_cli("retrieve", str(store), "who directed Heat", "--method", "decompose", "--set", "hops=x", ok=False)
    assert bad.returncode == 2 and "hops" in bad.stderr


def test_plan_facts_put_the_topics_own_first_then_the_best_of_the_rest(kg):
    method = get_method("decompose")(kg, top_k=6, plan_facts="first_hop_first")
    heat = kg.entity_id("Heat")
    pool = method._pool(np.arange(kg.num_triples))
    first_hop = method._rank("who acted in the films of Heat's director", pool, "x", [heat])
    facts = method._plan_facts("who acted in the films of Heat's director", pool, [heat])
    own = [ev for ev in facts if "Heat" in ev.entities]
    assert facts[: len(own)] == own and len(facts) == 6 and len(own) < 6  # the rest fills up to top_k
    assert {ev.triples[0] for ev in own} == {ev.triples[0] for ev in first_hop}
    only = get_method("decompose")(kg, top_k=6)._plan_facts("who acted", pool, [heat])
    assert all("Heat" in ev.entities for ev in only)


def _one_film_llm() -> ScriptedLLM:
    return ScriptedLLM(
        {
            "rules": [
                {
                    "prompt": "decompose_questions",
                    "response": "<subquestions>\n1. Which films did Michael Mann direct?\n"
                    "2. Which actors starred in #1?\n</subquestions>",
                },
                {
                    "prompt": "decompose_answer",
                    "match": r"Question: Which films did",
                    "response": "<answers>Heat</answers>",
                },
                {"prompt": "decompose_answer", "response": "<answers>Al Pacino</answers>"},
                {"prompt": "decompose_synthesis", "response": "<answers>Al Pacino</answers>"},
            ]
        }
    )


@pytest.mark.parametrize("widen_steps", [False, True])
def test_a_later_step_reads_every_entity_reached_the_way_an_answer_was(kg, widen_steps):
    method = get_method("decompose")(kg, llm=_one_film_llm(), plan_answers=False, top_k=4, widen_steps=widen_steps)
    answer = method.answer(Q, ["Michael Mann"])
    first, second = answer.trace[3].outputs, answer.trace[4].outputs
    assert first["answers"] == ["Heat"] and "The Insider directed by Michael Mann" in first["facts"]
    # "Heat directed by Michael Mann": The Insider is directed by him too, so with widen_steps step 2 reads it
    assert second["anchors"] == (["Heat", "The Insider"] if widen_steps else ["Heat"])
    assert second["query"] == "Which actors starred in Heat?"  # the question the model reads is unchanged


def test_widen_adds_only_what_the_read_facts_reach_the_same_way(kg):
    mann, heat, insider = (kg.entity_id(n) for n in ("Michael Mann", "Heat", "The Insider"))
    facts = [t for t in range(kg.num_triples) if mann in (kg.heads[t], kg.tails[t])]
    evidence = triples_as_evidence(kg, np.array(facts))
    assert widen(kg, [heat], evidence, [mann]) == [heat, insider]
    assert widen(kg, [heat], evidence, []) == [heat]  # no anchor: no way to compare with
    directed = [ev for ev in evidence if kg.rels[ev.triples[0]] == kg.relation_id("directed_by")]
    written_only = [ev for ev in evidence if ev not in directed]
    assert widen(kg, [heat], written_only, [mann]) == [heat]  # The Insider is not written by him in the facts


@pytest.mark.parametrize("last_too", [True, False])
def test_steps_choose_among_the_names_their_facts_show(kg, last_too):
    """``choose_answers``: each sub-question's reply is held to the names of its facts, so a step's answers are
    entities the next step can start from; a name outside them (a backend that ignores grammars) is dropped.
    ``choose_last_step=False`` leaves the last step free."""
    rules = [
        {
            "prompt": "decompose_questions",
            "response": "<subquestions>\n1. Which films did Michael Mann direct?\n2. Which actors starred in #1?"
            "\n</subquestions>",
        },
        {"prompt": "decompose_answer", "match": "direct\\?", "response": "<answers>Heat\n1990s films</answers>"},
        {"prompt": "decompose_answer", "response": "<answers>Al Pacino</answers>"},
        {"prompt": "decompose_synthesis", "response": "<answers>Al Pacino</answers>"},
    ]
    llm = RecordingLLM(*rules)
    method = get_method("decompose")(
        kg, llm=llm, plan_answers=False, top_k=4, choose_answers="on", choose_last_step=last_too
    )
    answer = method.answer(Q, ["Michael Mann"])
    first, second = (g for (name, _, _), g in zip(llm.calls, llm.grammars) if name == "decompose_answer")
    assert first is not None and '"Heat"' in first and '"The Insider"' in first and "1990s" not in first
    assert (second is not None) is last_too and (not last_too or '"Al Pacino"' in second)
    assert answer.trace[3].outputs["answers"] == ["Heat"]  # "1990s films" is no name the facts show
    assert answer.answers == ["Al Pacino"]
    off = RecordingLLM(*rules)
    get_method("decompose")(kg, llm=off, plan_answers=False, top_k=4).answer(Q, ["Michael Mann"])
    assert not any(off.grammars)


@pytest.mark.parametrize("widen_answers", [False, True])
def test_the_last_steps_answers_widen_to_what_its_facts_reach_the_same_way(kg, widen_answers):
    """``widen_answers``: the model names one actor of Heat; the facts the last step read link Robert De Niro
    to Heat the same way, so he is an answer too (after the model's), and the trace keeps what the model said."""
    method = get_method("decompose")(
        kg,
        llm=_one_film_llm(),
        plan_answers=False,
        top_k=4,
        synthesize=False,
        widen_steps=False,
        widen_answers=widen_answers,
    )
    answer = method.answer(Q, ["Michael Mann"])
    last = answer.trace[4].outputs
    assert last["answers"] == ["Al Pacino"] and last["anchors"] == ["Heat"]  # widen_steps off: one film read
    assert answer.answers == (["Al Pacino", "Robert De Niro"] if widen_answers else ["Al Pacino"])
    assert ("widened" in last) is widen_answers


def test_a_plan_longer_than_the_questions_best_reading_keeps_its_first_steps(kg):
    """``cap_plan``: FRAG's zero-shot reading of "Who directed Heat?" is one hop (``directed_by``), so a plan
    that adds "Which films did #1 direct?" keeps its first sub-question only: the question answered as asked."""
    rules = [
        {
            "prompt": "decompose_questions",
            "response": "<subquestions>\n1. Who directed Heat?\n2. Which films did #1 direct?\n</subquestions>",
        },
        {
            "prompt": "decompose_answer",
            "match": "Question: Who directed Heat",
            "response": "<answers>Michael Mann</answers>",
        },
        {"prompt": "decompose_answer", "response": "<answers>The Insider</answers>"},
        {"prompt": "decompose_synthesis", "response": "<answers>The Insider</answers>"},
    ]
    capped = get_method("decompose")(kg, llm=ScriptedLLM({"rules": rules}), plan_answers=False, cap_plan=True)
    answer = capped.answer("Who directed Heat?", ["Heat"])
    assert answer.answers == ["Michael Mann"]
    assert [c.prompt for c in answer.usage.calls] == ["decompose_questions", "decompose_answer"]
    cap = next(s for s in answer.trace if s.name == "cap_plan")
    assert cap.inputs["steps"] == 2 and cap.inputs["hops"] == 1 and cap.inputs["pattern"] == "directed_by"
    # the step left is still step 1 of a decomposition: it reads the facts about the question's entity
    assert next(s for s in answer.trace if s.name == "subquestion").outputs["anchors"] == ["Heat"]
    full = get_method("decompose")(kg, llm=ScriptedLLM({"rules": rules}), plan_answers=False)  # the default
    assert full.answer("Who directed Heat?", ["Heat"]).answers == ["The Insider"]  # the plan as written


def test_connected_top_takes_the_best_fact_that_joins_up_with_what_is_reached(tmp_path):
    triples = [
        ("Alien", "directed_by", "Ridley Scott"),
        ("Gladiator", "directed_by", "Ridley Scott"),
        ("Alien", "release_year", "1979"),
        ("The Insider", "release_year", "1999"),
        ("Heat", "release_year", "1995"),
    ]
    kg = KnowledgeGraph.from_triples(triples)
    tids = np.arange(5)
    scores = np.array([0.5, 0.4, 0.45, 0.9, 0.8])  # the unjoined years rank first by similarity
    taken = connected_top(kg, tids, scores, [kg.entity_id("Ridley Scott")], 3)
    assert taken.tolist() == [0, 2, 1]  # Scott's best film, its year (now reached), then his other film
    assert connected_top(kg, tids, scores, [kg.entity_id("Ridley Scott")], 9).tolist() == [0, 2, 1]  # no more join
    assert connected_top(kg, tids, scores, [kg.entity_id("Heat")], 3).tolist() == [4]


def test_connected_top_does_not_walk_through_a_hub():
    triples = [("96 Minutes", "starred_actors", "Christian Serratos"), ("96 Minutes", "has_genre", "Drama")]
    triples += [(f"Film {i}", "has_genre", "Drama") for i in range(30)]  # Drama: 31 edges, 10x the median is 10
    kg = KnowledgeGraph.from_triples(triples)
    scores = np.array([0.5, 0.4] + [0.9] * 30)
    taken = connected_top(kg, np.arange(len(triples)), scores, [kg.entity_id("Christian Serratos")], 10)
    assert taken.tolist() == [0, 1]  # Drama is reached, its other films are not
    from_drama = connected_top(kg, np.arange(len(triples)), scores, [kg.entity_id("Drama")], 3)
    assert len(from_drama) == 3  # a hub the question names is walked from


@pytest.mark.parametrize("lone_step", ["connected", "similarity"])
def test_a_lone_step_reads_only_facts_that_join_up_with_the_questions_entities(kg, monkeypatch, lone_step):
    import kgrag.methods.decompose as decompose

    joined_to = []
    monkeypatch.setattr(decompose, "connected_top", lambda *a: joined_to.append(a[3]) or connected_top(*a))
    question = "When were the films directed by Ridley Scott released?"
    llm = RecordingLLM(
        {
            "prompt": "decompose_questions",
            "response": "<subquestions>1. When were Scott's films released?</subquestions>",
        },
        {"prompt": "decompose_answer", "response": "<answers>1979</answers>"},
    )
    method = get_method("decompose")(kg, llm=llm, top_k=6, lone_step=lone_step)
    answer = method.answer(question, ["Ridley Scott"])
    assert joined_to == ([[kg.entity_id("Ridley Scott")]] if lone_step == "connected" else [])
    read = str(llm.messages("decompose_answer")[0])
    assert answer.answers == ["1979"] and "Alien release year 1979" in read
    facts = answer.trace[-1].outputs["facts"]
    assert facts[0] == "Alien directed by Ridley Scott" and "The Insider starred actors Russell Crowe" in facts


def test_links_past_takes_the_fact_joining_an_answer_to_what_was_reached(kg):
    ids = {name: kg.find_entity(name) for name in ["Gladiator", "Alien", "Russell Crowe", "Ridley Scott", "Heat"]}
    (tid,) = links_past(kg, [ids["Gladiator"], ids["Alien"]], [ids["Russell Crowe"], ids["Heat"]])
    assert kg.triple(tid) == ("Gladiator", "starred_actors", "Russell Crowe")  # Alien touches neither: skipped
    assert len(links_past(kg, [ids["Alien"], ids["Gladiator"]], [ids["Ridley Scott"]])) == 2
    assert links_past(kg, [ids["Heat"]], [ids["Heat"]]) == []  # an entity does not join itself


@pytest.mark.parametrize("link_answers", [False, True])
def test_an_answer_one_fact_past_what_the_evidence_reached_is_supported_by_it(kg, link_answers):
    llm = _two_step_llm("<answers>\nGladiator\nAlien\n</answers>")
    settings = {"plan_answers": False, "top_k": 4, "link_answers": link_answers, "answer_spread": None}
    answer = get_method("decompose")(kg, llm=llm, **settings).answer(Q, ["Michael Mann"])
    linked = [ev.text for ev in answer.evidence if ev.source == "decompose/link"]
    if link_answers:  # Gladiator stars Russell Crowe, whom the evidence reached; Alien joins nothing reached
        assert linked == ["Gladiator starred actors Russell Crowe"]
        assert answer.answers == ["Gladiator"] and answer.set_aside == ["Alien"] and answer.grounded
        assert answer.trace[-1].name == "link_answers"
    else:
        assert linked == [] and answer.answers == ["Gladiator", "Alien"] and not answer.grounded


def test_answer_links_join_unsupported_answers_to_what_the_evidence_reached(kg):
    tid = {kg.triple(t): t for t in range(kg.num_triples)}
    read = [("Heat", "directed_by", "Michael Mann"), ("Heat", "starred_actors", "Al Pacino")]
    read.append(("Alien", "directed_by", "Ridley Scott"))
    facts = triples_as_evidence(kg, np.array([tid[t] for t in read]))
    loose, links = answer_links(kg, Q, ["The Insider", "Michael Mann", "Alien"], facts, ["Michael Mann"])
    assert [kg.entities[e] for e in loose] == ["The Insider", "Alien"]  # Michael Mann is what the question asks about
    # Alien's fact joins nothing the question names, so Ridley Scott was not reached: Alien stays loose
    assert [kg.triple(t) for t in links] == [("The Insider", "directed_by", "Michael Mann")]
    # beside an answer the facts support (Heat), the others are set aside, not linked
    assert answer_links(kg, Q, ["Heat", "The Insider"], facts, ["Michael Mann"]) == ([], [])


def test_an_answer_written_in_another_case_is_linked_to_the_kgs_entity(kg):
    llm = _two_step_llm("<answers>\ngladiator\n</answers>")
    answer = get_method("decompose")(kg, llm=llm, plan_answers=False, top_k=4, link_answers=True).answer(
        Q, ["Michael Mann"]
    )
    assert [ev.text for ev in answer.evidence if ev.source == "decompose/link"] == [
        "Gladiator starred actors Russell Crowe"
    ]
    assert answer.grounded
