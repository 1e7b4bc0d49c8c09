"""Reading answers as KG names: one-line lists split only where the KG says the parts are entities."""

from __future__ import annotations

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.answers import as_kg_answers, prefer_candidates, split_listed_names
from kgrag.linking.names import NameIndex
from kgrag.methods.base import ask_for_answers
from kgrag.methods.baselines import LLMOnly
from kgrag.models.llm.scripted import ScriptedLLM

TRIPLES = [
    ("Paris, Texas", "in_language", "English"),
    ("Paris, Texas", "in_language", "German"),
    ("Romeo and Juliet", "in_language", "French"),
    ("Heat", "starred_actors", "Al Pacino"),
    ("Heat", "starred_actors", "Robert De Niro"),
]


def _names() -> NameIndex:
    return NameIndex.of(KnowledgeGraph.from_triples(TRIPLES))


def test_lists_split_only_into_kg_names():
    names = _names()
    assert split_listed_names(["English, German and French"], names) == ["English", "German", "French"]
    assert split_listed_names(["Paris, Texas"], names) == ["Paris, Texas"]
    assert split_listed_names(["Romeo and Juliet"], names) == ["Romeo and Juliet"]
    assert split_listed_names(["red, green, blue"], names) == ["red, green, blue"]  # not KG names: untouched
    assert as_kg_answers(["Al Pacino starred in it", "Al Pacino; Robert De Niro"], names) == [
        "Al Pacino",
        "Robert De Niro",
        "Al Pacino starred in it",
    ]


def test_ask_for_answers_applies_kg_names():
    kg = KnowledgeGraph.from_triples(TRIPLES)
    method = LLMOnly(kg, llm=ScriptedLLM({"default": "<answers>\nAl Pacino, Robert De Niro\n</answers>"}))
    assert ask_for_answers(method, "llm_answer", question="who starred in Heat") == ["Al Pacino", "Robert De Niro"]
    raw = ask_for_answers(method, "llm_answer", kg_names=False, question="who starred in Heat")
    assert raw == ["Al Pacino, Robert De Niro"]


def test_prefer_candidates_puts_path_ends_first_and_drops_the_topic():
    answers = ["Heat", "Al Pacino", "The Insider"]
    assert prefer_candidates(answers, ["The Insider"], exclude=["Heat"]) == ["The Insider", "Al Pacino"]
    assert prefer_candidates(["Heat"], ["The Insider"], exclude=["heat"]) == ["Heat"]  # nothing else left
