"""Count and yes/no questions (methods/answer_kind.py): the kind read from the question, the note and grammar the
answer call gets, and the answer made of the reply (scripted LLM: plumbing only, no accuracy claims)."""

from __future__ import annotations

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods.answer_kind import answer_kind, as_count, kind_on, read_yes_no, with_note
from kgrag.models.embeddings import load_embedder
from tests.conftest import RecordingLLM

FAMILY = [
    ("Thomas Hale", "parent of", "Lucas Hale"),
    ("Thomas Hale", "parent of", "Mia Hale"),
    ("Thomas Hale", "born in", "Leeds"),
    ("Mia Hale", "works as", "software developer"),
    ("Lucas Hale", "works as", "nurse"),
    ("Distributed Systems", "credits", "6"),
]


@pytest.fixture()
def family(tmp_path):
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(FAMILY).save(tmp_path / "kg"))


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many children does Thomas Hale have?", "count"),
        ("What is the number of films Heat's director made?", "count"),
        ("Is Mia Hale a software developer?", "yes_no"),
        ("did Heat win an award", "yes_no"),
        ("Was Thomas Hale born in Leeds or York?", "entities"),  # one of two, not yes or no
        ("Who is Isaac Hale's father?", "entities"),
        ("can you name a film directed by Isaac Florentine", "entities"),  # a request (MetaQA has 2% of these)
        ("Where is the island located?", "entities"),
    ],
)
def test_answer_kind_reads_the_question(question, kind):
    assert answer_kind(question) == kind


def test_only_count_and_yes_no_questions_get_a_note():
    assert with_note("Who directed Heat?", "entities") == "Who directed Heat?"
    assert with_note("Is Heat a film?", "yes_no").startswith("Is Heat a film?\n(") and "yes or no" in with_note(
        "Is Heat a film?", "yes_no"
    )
    assert "list every one" in with_note("How many films?", "count")


def test_as_count_counts_distinct_members_and_keeps_a_value():
    answers, support, sure, member = as_count(["A", "B", "A"], {"A": [1, 2], "B": [2, 3]}, {"A": 0.9, "B": 0.5})
    assert answers == ["2"] and support == {"2": [1, 2, 3]} and sure == {"2": 0.5} and member == "B"
    answers, support, _, _ = as_count(["A", "C"], {"A": [1]}, {"A": 0.9, "C": 0.4})
    assert answers == ["2"] and support == {}  # a member without support: the count has none
    assert as_count(["6"], {"6": [4]}, {"6": 0.8})[:3] == (["6"], {"6": [4]}, {"6": 0.8})  # a value, not a count
    assert as_count([], {}, {})[0] == []


def test_read_yes_no_takes_the_first_line_that_starts_with_either_word():
    assert read_yes_no(["Yes, she is."]) == ["yes"]
    assert read_yes_no(["Perhaps", "no"]) == ["no"]
    assert read_yes_no(["Nobody knows"]) == []


def test_frag_counts_the_members_its_answer_call_lists(family):
    """The answer call is told to list the members and, under a grammar, may name up to 50; the answer is their
    number, supported by the members' chains."""
    llm = RecordingLLM({"prompt": "frag_answer", "response": "<answers>Lucas Hale\nMia Hale\nLucas Hale</answers>"})
    frag = get_method("frag")(family, llm=llm, embedder=load_embedder("static"), hops=1, choose_answers="on")
    answer = frag.answer("How many children does Thomas Hale have?", ["Thomas Hale"])
    assert answer.answers == ["2"] and answer.grounded and len(answer.support["2"]) == 2
    assert "list every one of them" in llm.messages("frag_answer")[-1][-1]["content"]
    assert "{0,49}" in llm.grammars[-1]
    assert set(answer.confidence) == set(answer.signals) == {"2"}


def test_a_count_question_answered_by_a_value_keeps_the_value(family):
    llm = RecordingLLM({"prompt": "frag_answer", "response": "<answers>6</answers>"})
    frag = get_method("frag")(family, llm=llm, embedder=load_embedder("static"), hops=1)
    answer = frag.answer("How many credits is Distributed Systems worth?", ["Distributed Systems"])
    assert answer.answers == ["6"] and answer.grounded


def test_a_yes_no_question_about_two_entities_is_answered_as_the_entity_question_it_claims(family):
    """ "Is Mia Hale a software developer?" → the method answers "Which X: Is Mia Hale a X?" about Mia Hale; yes
    when its answers include the claimed entity (supported by the chain to it), no when they name others
    (supported by the chain to what was found)."""
    llm = RecordingLLM({"prompt": "frag_answer", "response": "<answers>software developer</answers>"})
    frag = get_method("frag")(family, llm=llm, embedder=load_embedder("static"), hops=1)
    answer = frag.answer("Is Mia Hale a software developer?", ["Mia Hale", "software developer"])
    assert "Which X: Is Mia Hale a X?" in llm.messages("frag_answer")[-1][-1]["content"]
    assert answer.answers == ["yes"] and answer.grounded
    assert [family.triple(t) for t in answer.support["yes"]] == [FAMILY[3]]
    assert answer.trace[-1].name == "yes_no" and answer.trace[-1].outputs["found"] == ["software developer"]
    llm = RecordingLLM({"prompt": "frag_answer", "response": "<answers>nurse</answers>"})
    frag = get_method("frag")(family, llm=llm, embedder=load_embedder("static"), hops=1)
    answer = frag.answer("Is Lucas Hale a software developer?")  # entities linked from the question
    assert answer.answers == ["no"] and [family.triple(t) for t in answer.support["no"]] == [FAMILY[4]]


def test_a_yes_no_question_about_one_entity_chooses_between_yes_and_no(family):
    """With one entity there is no claim to check: the answer call is told to answer yes or no, under a grammar
    only those words; a free reply's first word is read."""
    llm = RecordingLLM({"prompt": "frag_answer", "response": "<answers>yes</answers>"})
    frag = get_method("frag")(family, llm=llm, embedder=load_embedder("static"), hops=1, choose_answers="on")
    answer = frag.answer("Does Thomas Hale have children?", ["Thomas Hale"])
    assert llm.grammars[-1].splitlines()[-1] == 'item ::= "no" | "yes"'
    assert "(Answer yes or no.)" in llm.messages("frag_answer")[-1][-1]["content"]
    assert answer.answers == ["yes"] and not answer.grounded
    llm = RecordingLLM({"prompt": "kaping_answer", "response": "<answers>No, he has none.</answers>"})
    answer = get_method("kaping")(family, llm=llm).answer("Is Thomas Hale retired?", ["Thomas Hale"])
    assert answer.answers == ["no"]


def test_a_count_of_a_relation_s_noun_asks_for_its_value(tmp_path):
    """ "How many credits" names the relation ``credits``: the value is the answer; "how many children" names no
    relation: the members are counted, and a number among the options cannot be chosen for them."""
    family = KnowledgeGraph.from_triples([*FAMILY, ("Thomas Hale", "shoe size", "9")]).save(tmp_path / "kg")
    family = KnowledgeGraph.load(family)
    assert kind_on(family, "How many credits is Distributed Systems worth?") == "entities"
    assert kind_on(family, "How many children does Thomas Hale have?") == "count"
    assert kind_on(family, "How many parents does Mia Hale have?") == "count"  # `parent of` holds no numbers
    llm = RecordingLLM({"prompt": "frag_answer", "response": "<answers>Lucas Hale</answers>"})
    frag = get_method("frag")(family, llm=llm, embedder=load_embedder("static"), hops=2, choose_answers="on")
    frag.answer("How many children does Thomas Hale have?", ["Thomas Hale"])
    assert '"Lucas Hale"' in llm.grammars[-1] and '"9"' not in llm.grammars[-1]
    frag.answer("Who is Thomas Hale?", ["Thomas Hale"])
    assert '"9"' in llm.grammars[-1]
