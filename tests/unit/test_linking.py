"""Entity linking: normalisation, exact/fuzzy/embedding/soft linking, mention finding, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking import HybridLinker, NameIndex, normalize
from kgrag.linking.embedding import EmbeddingLinker
from tests.conftest import MOVIES, run_cli

TRIPLES = [
    ("Heat", "directed_by", "Michael Mann"),
    ("Heat", "starred_actors", "Al Pacino"),
    ("The Insider", "starred_actors", "Al Pacino"),
    ("The Insider", "directed_by", "Michael Mann"),
    ("Dog Nail Clipper", "starred_actors", "Peter Franzén"),
    ("Police", "directed_by", "Maurice Pialat"),
    ("Some Film", "has_tags", "police"),
    ("Some Mother's Son", "directed_by", "Terry George"),
    ("It", "directed_by", "Andy Muschietti"),
    ("Temuera_Morrison", "starred_in", "Once Were Warriors"),
    ("Moulin Rouge!", "directed_by", "Baz Luhrmann"),
    ("Moulin Rouge", "directed_by", "John Huston"),
]


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    store = KnowledgeGraph.from_triples(TRIPLES).save(tmp_path_factory.mktemp("kg") / "kg")
    return KnowledgeGraph.load(store)


@pytest.fixture(scope="module")
def linker(kg):
    return HybridLinker(kg)


def test_normalize():
    assert normalize("Peter_Franzén!") == "peter franzen"
    assert normalize("Some Mother's Son") == "some mother s son"
    assert normalize("  ") == ""


def test_exact_prefers_verbatim_case(kg):
    names = NameIndex.of(kg)
    assert [c.name for c in names.exact("Police")] == ["Police", "police"]
    assert names.exact("police")[0].name == "police"
    assert names.exact("peter franzen")[0].name == "Peter Franzén"
    assert names.exact("Temuera Morrison")[0].name == "Temuera_Morrison"


def test_find_mentions_without_brackets(linker):
    def first(q):
        spans = linker.find_mentions(q)
        return spans[0].candidates[0].name if spans else None

    assert first("what films did Al Pacino star in") == "Al Pacino"
    assert first("which languages are spoken in the films directed by the director of Some Mother's Son") == (
        "Some Mother's Son"
    )
    assert first("what does Peter Franzen appear in") == "Peter Franzén"
    assert first("who directed Police") == "Police"
    assert first("who directed It") == "It"
    spans = linker.find_mentions("did it rain when Michael Mann shot Heat")
    assert [s.text for s in spans] == ["Michael Mann", "Heat"]  # 'it' is a stop word in lower case
    assert (spans[0].start, spans[0].end) == (17, 29)


def test_part_of_a_hyphenated_word_is_not_a_mention(linker):
    """ "heat" in "heat-proof-service" is not the film; a name spelled with the hyphen is found whole."""
    assert [s.text for s in linker.find_mentions("which team owns the heat-proof-service?")] == []
    assert [s.text for s in linker.find_mentions("who directed the heat-proof Heat")] == ["Heat"]
    assert [s.text for s in linker.find_mentions("who starred in Dog-Nail-Clipper")] == ["Dog-Nail-Clipper"]


def test_the_word_naming_the_kind_of_answer_is_not_a_mention(linker):
    """After which / what / whose one lower-case word says what is asked for: a tag called "police" is not the
    topic of "which police films ...", nor by fuzzy match; written with a capital, or elsewhere, it is a name."""
    assert [s.text for s in linker.find_mentions("which police films did Maurice Pialat direct")] == ["Maurice Pialat"]
    assert [s.text for s in linker.find_mentions("name the films whose police also appear in Heat")] == ["Heat"]
    assert [s.text for s in linker.find_mentions("which polise films are there")] == []
    assert [s.text for s in linker.find_mentions("which Police scene was shot first")] == ["Police"]
    assert [s.text for s in linker.find_mentions("films tagged police")] == ["police"]


def test_a_near_miss_is_not_taken_when_the_name_the_user_wrote_matches_nothing(tmp_path):
    """A KG with a tag "own" and a film "Heat": "owns" is a near miss of the tag, but when the name the question
    spells out (hyphenated, or capitalised) matches nothing, the question is about something the KG lacks, and
    the near miss is not its topic. A near miss of the written name itself still links."""
    kg = KnowledgeGraph.from_triples(
        [
            ("Some Film", "has_tags", "own"),
            ("Heat", "directed_by", "Michael Mann"),
            ("Star!", "starred_actors", "Julie Andrews"),
            ("The Factory", "starred_actors", "John Cusack"),
        ]
    )
    linker = HybridLinker(kg, use_embedding=False)
    assert [s.text for s in linker.find_mentions("which team owns the warp-drive-service")] == []
    assert [s.text for s in linker.find_mentions("Who owns Heet Wave?")] == []
    assert [s.text for s in linker.find_mentions("what films did Velmor Quandish star in")] == []  # not "Star!"
    assert linker.find_mentions("what films did Julie Andrews star in")[0].text == "Julie Andrews"
    assert linker.unmatched_names("what films did Velmor Quandish star in") == ["Velmor Quandish"]
    # a phrase near a name only in its stop words is no near miss ("the actor" ~ "The Factory")
    assert [s.text for s in linker.find_mentions("who was the actor")] == []
    # the written name links (a typo of it) and is the topic, not a lone word beside it; with nothing written,
    # the lone word is all there is
    assert [s.text for s in linker.find_mentions("which films does someone who owns Hheat like")] == ["Hheat"]
    assert [s.text for s in linker.find_mentions("which team owns the service")] == ["owns"]
    # near a part of a written name is another thing ("Hheat Lovel" is not the film "Heat")
    assert [s.text for s in linker.find_mentions("what did Hheat Lovel direct")] == []


def test_written_names_are_capitalised_runs_with_their_particles_and_hyphenated_compounds():
    from kgrag.linking.hybrid import written_names
    from kgrag.linking.normalize import tokens_with_spans

    def names(q: str) -> list[str]:
        return [q[a:b] for a, b in written_names(q, tokens_with_spans(q))]

    assert names("Who is the dean of the Faculty of Arts?") == ["Faculty of Arts"]
    assert names("Who wrote Lord of the Rings and Dave O'Brien's films") == ["Lord of the Rings", "Dave O'Brien"]
    assert names("Did Tom Hanks, Meg Ryan or the warp-drive-service star") == [
        "warp-drive-service",
        "Tom Hanks",
        "Meg Ryan",
    ]
    assert names("Heat was directed by whom") == [] and names("Heat Wave was made by whom") == ["Heat Wave"]
    assert names("what language do ukrainian people speak") == []


def test_a_lone_word_spelled_like_a_relation_is_not_a_mention():
    """A KG with a tag "director" and a film "Actors": the question's "director" / "actor" say how things relate
    (``directed_by``, ``starred_actors``), whatever else the KG calls so."""
    kg = KnowledgeGraph.from_triples(
        [
            ("Heat", "directed_by", "Michael Mann"),
            ("Actors", "starred_actors", "Al Pacino"),
            ("Heat", "has_tags", "director"),
        ]
    )
    linker = HybridLinker(kg, use_embedding=False)
    assert [s.text for s in linker.find_mentions("who is the director of Heat")] == ["Heat"]
    assert [s.text for s in linker.find_mentions("what movies was velmor quandish an actor in")] == []
    assert [s.text for s in linker.find_mentions("what did velmor quandish star in")] == []  # ~ starred_actors
    assert [s.text for s in linker.find_mentions("films tagged heat")] == ["heat"]  # no relation reads "heat"


def test_typos_fall_back_to_fuzzy(linker):
    assert linker.link("Micheal Man")[0].name == "Michael Mann"
    spans = linker.find_mentions("what movies did Temura Morison act in")
    assert spans and spans[0].candidates[0].name == "Temuera_Morrison"
    assert 0.5 < spans[0].candidates[0].score < 0.98


def test_trailing_punctuation_and_short_typos(linker):
    spans = linker.find_mentions("who directed Moulin Rouge!")
    assert spans[0].text == "Moulin Rouge!" and spans[0].candidates[0].name == "Moulin Rouge!"
    assert linker.find_mentions("who directed Moulin Rouge")[0].candidates[0].name == "Moulin Rouge"
    # a typo that changes both ends of the only word: the gram prefilter misses it, the full scan does not
    assert linker.link("Plicoe", 3)[0].name in ("Police", "police")
    assert linker.link("Plicoe", 3)[0].name == "Police"  # capitalised like the mention


def test_link_scores_order_exact_above_fuzzy(linker):
    cands = linker.link("Heat", k=3)
    assert cands[0].name == "Heat" and cands[0].score == 1.0
    assert all(c.score < 1.0 for c in cands[1:])


def test_bad_input_gives_reasons_not_exceptions(linker):
    assert linker.link_text("").reason == "empty text"
    assert linker.link_text("   ").mentions == []
    result = linker.link_text("zzzz qqqq xxxx")
    assert result.mentions == [] and "no entity" in result.reason
    assert "nothing is called 'Zorbix Station'" in linker.link_text("who runs Zorbix Station").reason
    assert linker.link("") == [] and linker.link("   ") == []
    assert result.as_json() == {"text": "zzzz qqqq xxxx", "mentions": [], "reason": result.reason}


def test_embedding_and_soft_linking(kg):
    emb = EmbeddingLinker(kg)
    ids, sims = emb.search("Michael Mann", 3)
    assert kg.entities[ids[0]] == "Michael Mann" and sims[0] > 0.99
    soft = emb.soft_link("Michael Mann", k=5, sigma=0.1)
    assert abs(sum(soft.values()) - 1) < 1e-9
    assert max(soft, key=soft.get) == kg.entity_id("Michael Mann")
    wide = emb.soft_link("Michael Mann", k=5, sigma=10.0)  # a wide kernel spreads the weight
    assert len(wide) == 5 and max(wide.values()) < 0.5
    # the index was saved next to the store and is reused
    assert (kg.store_path / "embeddings" / emb.embedder.id / "entities.faiss").exists()
    again = EmbeddingLinker(kg)
    assert np.array_equal(again.search("Heat", 2)[0], emb.search("Heat", 2)[0])


def test_cli_link_json_contract(kg):
    proc = run_cli("link", str(kg.store_path), "who directed Heat", "--json", ok=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    obj = json.loads(proc.stdout)
    assert obj == {
        "text": "who directed Heat",
        "mentions": [{"text": "Heat", "start": 13, "end": 17, "candidates": [{"entity": "Heat", "score": 1.0}]}],
    }


def test_a_replaced_faiss_index_is_rebuilt_with_a_warning(tmp_path, caplog):
    import faiss

    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    emb = EmbeddingLinker(kg)
    path = kg.store_path / "embeddings" / emb.embedder.id / "entities.faiss"
    forged = faiss.IndexFlatIP(emb.embedder.dim)  # a well-formed index whose vectors are all the wrong ones
    forged.add(np.roll(emb.vectors.entities(), 1, axis=0).astype(np.float32))
    faiss.write_index(forged, str(path))
    ids, _ = EmbeddingLinker(kg).search("Michael Mann", 1)
    assert kg.entities[ids[0]] == "Michael Mann" and "differs from what was written" in caplog.text


def test_names_said_are_whole_names_in_the_question():
    from kgrag.linking.normalize import names_said

    names = ["Heat", "He", "Peter Franzén", "!!", "heat"]
    assert names_said("Who directed HEAT with peter franzen?", names) == ["Heat", "Peter Franzén", "heat"]


@pytest.mark.parametrize(
    ("name", "known", "expected"),
    [
        ("Wynton", ["New Orleans", "Wynton Marsalis"], "Wynton Marsalis"),  # part of a known name
        ("Wynton Marsalis's place of birth", ["Wynton Marsalis"], "Wynton Marsalis"),  # a known name and more
        ("marsalis", ["Wynton Marsalis"], "Wynton Marsalis"),  # compared in normal form
        ("Wynton Marsalis", ["Wynton Marsalis"], None),  # the same name is not a restatement
        ("Wyn", ["Wynton Marsalis"], None),  # whole tokens only
        ("Marsalis Wynton", ["Wynton Marsalis"], None),  # a run of tokens, in order
        ("Orleans Parish", ["New Orleans"], None),  # sharing a word is not enough
        ("", ["Wynton Marsalis"], None),
    ],
)
def test_restated_names(name, known, expected):
    from kgrag.linking.normalize import restated

    assert restated(name, known) == expected
