"""Words that ask for no relation: function words, and the answer's kind noun beside a name it only modifies."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag.alignment import AlignmentCosts, QuestionSpans, SpanSimilarities, aligned_pattern_scores
from kgrag.methods.frag.patterns import pattern_label, reachable_patterns
from kgrag.methods.frag.question_words import kind_blocks, kind_position, relation_name_words, stem
from kgrag.methods.frag.router import mask_topics
from kgrag.models.embeddings import load_embedder

LINES = [
    ("Amber Line", "Stops At", "Kelder Quay"),
    ("Teal Line", "Stops At", "Kelder Quay"),
    ("Teal Line", "Stops At", "Brightwater"),
    ("Amber Line", "Line Colour", "amber"),
    ("Teal Line", "Line Colour", "teal"),
    ("Kelder Quay", "Opened In", "1931"),
    ("Brightwater", "Opened In", "1979"),
    ("Kelder Quay", "In District", "Old Harbour"),
    ("Brightwater", "In District", "Brightwater"),
    ("Teal Line", "Operated By", "Varn Metro"),
]


@pytest.fixture(scope="module")
def minilm():
    return load_embedder("minilm")


def _best(kg: KnowledgeGraph, question: str, topic: str, embedder) -> str:
    reach = reachable_patterns(kg, [kg.entity_id(topic)], 2)
    sims = SpanSimilarities.of(kg, embedder, mask_topics(question, [topic]))
    assert sims is not None
    scores = aligned_pattern_scores(kg, sims, reach, AlignmentCosts())
    return pattern_label(kg, reach.patterns[int(np.argmax(scores))])


def test_a_span_of_function_words_is_no_span_unless_that_is_all_there_is():
    spans = [s for s, _, _ in QuestionSpans.of("Which stations are in the ENT district?").spans]
    assert "in" not in spans and "in the" not in spans and "which" not in spans
    assert "stations" in spans and "district" in spans
    assert "when" in [s for s, _, _ in QuestionSpans.of("when did ENT open").spans]  # wh-words ask for a time
    assert [s for s, _, _ in QuestionSpans.of("what does ENT do").spans]  # all function words: all kept


def test_stems_and_the_head_of_a_relation_name():
    assert [stem(w) for w in ("companies", "lines", "classes", "class", "year")] == [
        "company",
        "line",
        "class",
        "class",
        "year",
    ]
    kg = KnowledgeGraph.from_triples(
        [
            ("a", "Line Colour", "b"),
            ("a", "head of department", "b"),
            ("a", "location.country.languages_spoken", "b"),
            ("a", "location.country.currency_formerly_used", "b"),
            ("a", "Stops At", "b"),
        ]
    )
    words = dict(zip(kg.relations, relation_name_words(kg), strict=True))
    assert words["Line Colour"] == ("colour", frozenset({"line"}))
    assert words["head of department"][0] == "head" and "department" in words["head of department"][1]
    assert words["location.country.languages_spoken"][0] == "language"  # a participle after the noun
    assert words["location.country.currency_formerly_used"][0] == "currency"  # ... with its adverb
    assert "country" not in words["location.country.languages_spoken"][1]  # the subject type is not a word of it
    assert words["Stops At"] == ("stop", frozenset())


def test_the_kind_noun_is_the_word_after_which_or_what():
    assert kind_position("Which lines stop at ENT".split()) == 1
    assert kind_position("What colours are the lines that stop at ENT".split()) == 1
    assert kind_position("what does ENT do".split()) is None  # a function word: no kind
    assert kind_position("Who designed ENT".split()) is None


def test_the_kind_noun_does_not_align_with_a_name_it_only_modifies(minilm):
    """'Which lines stop at X': "lines" resembled ``Line Colour`` (its modifier), and the lines' colours beat
    the lines under MiniLM (0.19 against 0.15); "colours" still aligns with it, as its head."""
    kg = KnowledgeGraph.from_triples(LINES)
    question = mask_topics("Which lines stop at Kelder Quay?", ["Kelder Quay"])
    words = QuestionSpans.of(question).spans
    blocked = kind_blocks(kg, ["Which", "lines", "stop", "at", "ENT"], words)
    assert blocked is not None and blocked[:, kg.relations.index("Line Colour")].any()
    assert not blocked[:, kg.relations.index("Stops At")].any()
    assert _best(kg, "Which lines stop at Kelder Quay?", "Kelder Quay", minilm) == "Stops At_inv"
    assert _best(kg, "What colours are the lines that stop at Brightwater?", "Brightwater", minilm) == (
        "Stops At_inv>Line Colour"
    )


def test_a_preposition_does_not_ask_for_the_relation_named_with_it(minilm):
    """ "stations in the Old Harbour district": "in" resembled ``Opened In``, so the stations' opening years
    scored next to the stations (0.21 against 0.25 under MiniLM)."""
    kg = KnowledgeGraph.from_triples(LINES)
    reach = reachable_patterns(kg, [kg.entity_id("Old Harbour")], 2)
    sims = SpanSimilarities.of(
        kg, minilm, mask_topics("Which stations are in the Old Harbour district?", ["Old Harbour"])
    )
    assert sims is not None
    scores = aligned_pattern_scores(kg, sims, reach, AlignmentCosts())
    by_label = {pattern_label(kg, reach.patterns[k]): float(scores[k]) for k in range(len(reach))}
    assert max(by_label, key=by_label.__getitem__) == "In District_inv"
    assert by_label["In District_inv"] - by_label["In District_inv>Opened In"] > 0.1, by_label
