"""FRAG's zero-shot pattern alignment: mentions, spans, the assignment, and the ranking it gives on a small KG."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods.frag.alignment import (
    AlignmentCosts,
    QuestionSpans,
    RelationText,
    SpanSimilarities,
    aligned_pattern_scores,
    frequent_tails,
    mentions,
    relation_phrase_vectors,
)
from kgrag.methods.frag.patterns import PatternReach, pattern_label, reachable_patterns
from kgrag.methods.frag.router import mask_topics
from kgrag.models.embeddings import load_embedder
from kgrag.models.embeddings.base import Embedder


class Stems(Embedder):
    """Bag of 5-letter word stems: 'directed' and 'director' meet, nothing else does. Deterministic, so the
    structural tests below do not depend on what a language model thinks of a word."""

    id = "stems"
    dim = 1024

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        out = np.full((len(texts), self.dim), 1e-3, np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace("_", " ").split():
                out[i, zlib.crc32(word[:5].encode()) % self.dim] += 1.0
        return out


FILMS = [
    ("Heat", "director", "Michael Mann"),
    ("Heat", "cast member", "Al Pacino"),
    ("Heat", "cast member", "Robert De Niro"),
    ("The Insider", "director", "Michael Mann"),
    ("The Insider", "cast member", "Al Pacino"),
    ("Scarface", "cast member", "Al Pacino"),
    ("Scarface", "director", "Brian De Palma"),
    ("Casino", "cast member", "Robert De Niro"),
    ("Casino", "director", "Martin Scorsese"),
    ("Heat", "publication date", "1995"),
    ("Casino", "publication date", "1995"),
    ("Scarface", "publication date", "1983"),
    ("Heat", "genre", "Crime"),
    ("Casino", "genre", "Crime"),
    ("Heat", "screenwriter", "Michael Mann"),
    ("Scarface", "screenwriter", "Oliver Stone"),
    ("Casino", "original language", "English"),
    ("The Insider", "main subject", "tobacco"),
]


@pytest.fixture(scope="module")
def minilm():
    return load_embedder("minilm")


def _scores(
    kg: KnowledgeGraph, question: str, topic: str, embedder, hops: int = 3, costs: AlignmentCosts | None = None
) -> dict[str, float]:
    reach = reachable_patterns(kg, [kg.entity_id(topic)], hops)
    sims = SpanSimilarities.of(kg, embedder, mask_topics(question, [topic]))
    assert sims is not None
    scores = aligned_pattern_scores(kg, sims, reach, costs or AlignmentCosts())
    return {pattern_label(kg, reach.patterns[k]): float(scores[k]) for k in range(len(reach))}


def test_spans_skip_the_topic_and_know_how_far_they_are_from_it():
    spans = QuestionSpans.of(mask_topics("who directed the films of Heat", ["Heat"]))
    texts = [t for t, _, _ in spans.spans]
    assert "who directed" in texts and "films of" in texts and not any("ent" in t.split() for t in texts)
    assert spans.topic_positions == (5,)
    start, end = next((s, e) for t, s, e in spans.spans if t == "directed")
    assert spans.distance(start, end) == 4


def test_mentions_join_out_and_back_pairs_and_hops_through_unnamed_nodes():
    kg = KnowledgeGraph.from_triples(
        [
            ("Heat", "cast member", "Al Pacino"),
            ("The Insider", "cast member", "Al Pacino"),
            ("The Insider", "director", "Michael Mann"),
            ("Heat", "starring", "m.0abc12"),
            ("m.0abc12", "actor", "Robert De Niro"),
        ]
    )
    reach = reachable_patterns(kg, [kg.entity_id("Heat")], 3)
    prefix = {tuple(int(x) for x in reach.patterns[k] if x >= 0): k for k in range(len(reach))}
    through = np.array([kg.entities[int(e)].startswith("m.") for e in _first_end(reach)])
    got = {
        pattern_label(kg, reach.patterns[k]): mentions(reach, k, kg.num_relations, prefix, through)
        for k in range(len(reach))
    }
    cast, director, starring, actor = (kg.relation_id(r) for r in ("cast member", "director", "starring", "actor"))
    # "share actors", then director: the pair is mention 0
    assert got["cast member>cast member_inv>director"] == (((cast,), (director,)), (0,))
    assert got["starring>actor"] == (((starring, actor),), ())  # one fact behind a CVT node
    assert got["cast member"] == (((cast,),), ())


def _first_end(reach: PatternReach) -> list[int]:
    return [int(reach.endpoints(k)[0]) for k in range(len(reach))]


def _best(scores: dict[str, float]) -> str:
    return max(scores, key=scores.get)


def test_alignment_tells_which_relation_was_shared_from_which_was_asked():
    """The mean similarity scored [director, director⁻¹, director] like [cast, cast⁻¹, director]; aligned,
    'cast' must be accounted for by a relation of its own."""
    kg = KnowledgeGraph.from_triples(FILMS)
    scores = _scores(kg, "who directed the films that share cast members with Heat", "Heat", Stems())
    assert _best(scores) == "cast member>cast member_inv>director", sorted(scores.items(), key=lambda x: -x[1])[:4]
    assert scores["cast member>cast member_inv>director"] > scores["director>director_inv>director"]


def test_alignment_keeps_one_hop_questions_short():
    """A 3-hop search must not bury a 1-hop question: every extra mention has to align with words of its own."""
    kg = KnowledgeGraph.from_triples(FILMS)
    assert _best(_scores(kg, "who directed Heat", "Heat", Stems())) == "director"
    assert _best(_scores(kg, "what is the publication year of Scarface", "Scarface", Stems())) == "publication date"


def test_an_out_and_back_pair_may_be_named_twice():
    """'the director of X also directed which films' names the pair's relation twice; read as one mention, the
    second 'directed' went to a third hop (director, director⁻¹, director) and that pattern won. The pair may take
    one span or two, each reading paying its own mention costs; 'share' questions keep their one-mention reading."""
    kg = KnowledgeGraph.from_triples(FILMS)
    scores = _scores(kg, "the director of Heat also directed which films", "Heat", Stems())
    assert _best(scores) == "director>director_inv", sorted(scores.items(), key=lambda x: -x[1])[:4]
    shared = _scores(kg, "who directed the films that share cast members with Heat", "Heat", Stems())
    assert _best(shared) == "cast member>cast member_inv>director"


def test_a_shared_word_frees_the_hops_of_the_pair_beside_it():
    """ "which films share the director with Heat" asks for Heat's director's other films, though no relation is
    called "share": the word stands by the pair's span, so the pair's two hops cost nothing. Without that the
    pair's extra hop cost more than the word could earn, and the question read as Heat's director."""
    kg = KnowledgeGraph.from_triples(FILMS)
    question = "which films share the director with Heat"
    assert _best(_scores(kg, question, "Heat", Stems())) == "director>director_inv"
    assert _best(_scores(kg, question, "Heat", Stems(), costs=AlignmentCosts(shared_pairs=False))) == "director"
    # a shared word far from the pair's span frees nothing
    far = QuestionSpans.of("which films share the long running and much loved director with ENT")
    assert far.shared_positions == (2,)
    assert not far.near_shared(next(i for i, (t, _, _) in enumerate(far.spans) if t == "director"))
    assert QuestionSpans.of("who are the co-stars of ENT").shared_positions == (3,)


def test_alignment_follows_the_order_the_question_names_its_hops():
    """'publication dates of the films that share cast members with X': the hop nearest the topic comes first."""
    kg = KnowledgeGraph.from_triples(FILMS)
    question = "what are the publication dates of the films that share cast members with Heat"
    scores = _scores(kg, question, "Heat", Stems())
    forward = "cast member>cast member_inv>publication date"
    backward = "publication date>publication date_inv>cast member"
    assert scores[forward] > scores[backward]
    sims = SpanSimilarities.of(kg, Stems(), mask_topics(question, ["Heat"]))
    reach = reachable_patterns(kg, [kg.entity_id("Heat")], 3)
    # (both read their pair as one mention; only the forward one's stands by "share", which frees its hops)
    unordered = aligned_pattern_scores(kg, sims, reach, AlignmentCosts(order=0.0, shared_pairs=False))
    labels = [pattern_label(kg, p) for p in reach.patterns]
    assert unordered[labels.index(forward)] == pytest.approx(unordered[labels.index(backward)])


def test_frag_zero_shot_answers_a_three_hop_question_with_minilm(minilm):
    """With the default embedder the 3-hop pattern ranks first: "share" names its out-and-back pair, whose hops
    are then free. Without that rule the 1-hop ``director`` pattern won (MiniLM also rates "who directed"
    closer to "screenwriter" than to "director", so not every wording works)."""
    kg = KnowledgeGraph.from_triples(FILMS)
    frag = get_method("frag")(kg, embedder=minilm)
    assert frag.router is None and frag.config.zero_shot_scoring == "align"
    question = "who are the directors of the films that share actors with Heat"
    evidence = frag.retrieve(question, ["Heat"])
    pattern = ["cast member", "cast member", "director"]
    assert evidence[0].relations == pattern
    # The Insider shares Al Pacino with Heat, so its director Michael Mann is a 3-hop answer too
    three_hop = {ev.entities[-1] for ev in evidence if ev.relations == pattern}
    assert three_hop == {"Brian De Palma", "Martin Scorsese", "Michael Mann"}
    unshared = get_method("frag")(kg, embedder=minilm, shared_pairs=False).retrieve(question, ["Heat"])
    assert unshared[0].relations == ["director"]
    mean = get_method("frag")(kg, embedder=minilm, zero_shot_scoring="mean")
    assert mean.retrieve("who directed the films that share actors with Heat", ["Heat"])  # the old score still runs


def test_relation_relevance_needs_one_word_not_the_whole_question():
    """'born' alone asks for the place of birth, however much of the question is about films."""
    kg = KnowledgeGraph.from_triples(
        [("Wynton Marsalis", "people.person.place_of_birth", "New Orleans"), ("Heat", "film.film.genre", "Crime")]
    )
    sims = SpanSimilarities.of(kg, Stems(), "what genre of film is set where ENT was born")
    assert sims is not None and sims.relevance().shape == (2,)
    assert SpanSimilarities.of(kg, Stems(), "ENT") is None


def test_frequent_tails_are_named_and_counted_per_relation():
    kg = KnowledgeGraph.from_triples([*FILMS, ("Heat", "cast member", "m.0abc12"), ("Ali", "cast member", "m.0abc12")])
    tails = dict(zip(kg.relations, frequent_tails(kg, 2), strict=True))
    assert tails["cast member"] == ["Al Pacino", "Robert De Niro"]  # 3 and 2 films; the unnamed node never
    assert tails["publication date"] == ["1995", "1983"]
    assert tails["main subject"] == ["tobacco"]


def test_a_relation_is_described_by_its_words_and_the_names_it_leads_to(minilm):
    """A relation named by an opaque id (Wikidata's P57 director, P577 publication date) says nothing in its
    words; the names it leads to say what it is."""
    ids = {"director": "P57", "publication date": "P577", "cast member": "P161"}
    kg = KnowledgeGraph.from_triples([(h, ids[r], t) for h, r, t in FILMS if r in ids])
    words = relation_phrase_vectors(kg, minilm, RelationText(examples=0))
    assert np.allclose(words, minilm.encode([r.lower() for r in kg.relations]), atol=1e-5)
    described = relation_phrase_vectors(kg, minilm)
    assert np.allclose(np.linalg.norm(described, axis=1), 1.0, atol=1e-5)
    for question, relation in [("which years", "P577"), ("who directed", "P57")]:
        v = minilm.encode([question])[0]
        assert kg.relations[int(np.argmax(described @ v))] == relation, question
