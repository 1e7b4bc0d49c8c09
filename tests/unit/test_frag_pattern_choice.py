"""Zero-shot frag's pattern choice (``pattern_choice``): the reply is read defensively, the answer call reads
only the chosen pattern, and ``answer`` mode answers from its ends without a second call. Plumbing only: the
scripted LLM says which option it picks; whether the local model picks well is measured by ``kgrag bench``."""

from __future__ import annotations

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods.frag.pattern_choice import read_choice, walk_grammar
from kgrag.models.embeddings import load_embedder
from kgrag.models.llm.scripted import ScriptedLLM
from tests.conftest import MOVIES

QUESTION = "which directors made films with actors of Heat"


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> KnowledgeGraph:
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("kg") / "kg"))


def test_the_reply_copies_a_walk_or_names_its_number_else_none():
    lines = ["Heat -[directed by]-> Michael Mann", 'Heat -[starred actors]-> Al "Pacino"']
    assert read_choice("Heat  -[directed by]->\nMichael Mann", "", lines) == 0
    assert read_choice(None, "walk 2.", lines) == 1
    assert read_choice(None, "walk 7", lines) is None
    assert read_choice("Heat -[directed by]-> Ridley Scott", "", lines) is None
    assert read_choice(None, "I would take the one with Al Pacino, 2 of them", lines) is None
    assert walk_grammar(lines) == (
        'root ::= "<walk>" ("Heat -[directed by]-> Michael Mann" | '
        '"Heat -[starred actors]-> Al \\"Pacino\\"") "</walk>"'
    )


def _frag(kg: KnowledgeGraph, reply: str, mode: str, answer: str = "<answers>Michael Mann"):
    rules = [{"prompt": "frag_pattern", "response": reply}, {"prompt": "frag_answer", "response": answer}]
    llm = ScriptedLLM({"rules": rules})
    settings = {"grounding": "none", "pattern_choice": mode, "choose_answers": "on"}
    frag = get_method("frag")(kg, llm=llm, embedder=load_embedder("static"), **settings)
    return frag, llm


def _choice(answer) -> dict:
    return next(s for s in answer.trace if s.name == "rank_paths").outputs["pattern_choice"]


def test_the_answer_call_reads_only_the_chosen_pattern(kg):
    frag, _ = _frag(kg, "<walk>Heat -[starred actors]-> Al Pacino <-[starred actors]- answer: The Insider</walk>", "narrow")
    answer = frag.answer(QUESTION, ["Heat"])
    choice = _choice(answer)
    assert choice["chosen"] == 2 and len(choice["walks"]) >= 2
    assert all(w.startswith("Heat ") for w in choice["walks"])
    patterns = {tuple(ev.relations) for ev in answer.evidence}
    assert len(patterns) == 1
    assert answer.usage.llm_calls == 2
    # the answer call chooses among the chosen pattern's ends only (Michael Mann is on no path of it)
    ends = {ev.entities[-1] for ev in answer.evidence}
    assert next(s for s in answer.trace if s.name == "answer").outputs["choices"] == len(ends)
    assert answer.answers == []
    # the second walk shown is the pattern the evidence follows
    assert patterns == {("starred_actors", "starred_actors")}
    assert choice["walks"][1].count("[starred actors]") == 2


def test_answer_mode_answers_with_the_chosen_patterns_ends(kg):
    frag, _ = _frag(kg, "<walk>1</walk>", "answer", answer="<answers>Nobody")
    answer = frag.answer(QUESTION, ["Heat"])
    assert answer.usage.llm_calls == 1
    assert answer.answers and answer.answers == list(dict.fromkeys(ev.entities[-1] for ev in answer.evidence))
    assert "Heat" not in answer.answers


def test_a_reply_naming_no_option_leaves_the_ranking_alone(kg):
    frag, _ = _frag(kg, "<walk>I cannot tell</walk>", "answer")
    plain, _ = _frag(kg, "<walk>1</walk>", "none")
    answer = frag.answer(QUESTION, ["Heat"])
    assert _choice(answer)["chosen"] is None
    assert answer.usage.llm_calls == 2  # no pattern chosen: the answer call decides
    assert [e.text for e in answer.evidence] == [e.text for e in plain.answer(QUESTION, ["Heat"]).evidence]
