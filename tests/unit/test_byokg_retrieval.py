"""The retrieval steps BYOKG-RAG is built from: written relation paths, graph queries, scoring, agentic
traversal, schema text.  Tiny KGs; the LLM is replaced by plain functions (plumbing only, no accuracy)."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.byokg.agentic import agentic_traversal
from kgrag.methods.byokg.relation_paths import (
    RelationResolver,
    follow_written_path,
    follow_written_paths,
    orientations,
    relations_named,
    soft_follow,
)
from kgrag.methods.byokg.schema import example_triples, relation_schema, select_relations
from kgrag.methods.byokg.triple_scoring import best_triples, decomposed_scores, graph_rerank, text_retrieval
from kgrag.models.embeddings import load_embedder
from kgrag.retrieval.graph_query import extract_query, fit_relation_types, rows_as_evidence

FREEBASE = [
    ("Wynton Marsalis", "people.person.place_of_birth", "New Orleans"),
    ("New Orleans", "film.film.genre", "Backstage Musical"),
    ("Wynton Marsalis", "music.artist.genre", "Jazz"),
    ("Louis Armstrong", "people.person.place_of_birth", "New Orleans"),
]


@pytest.fixture
def fb() -> KnowledgeGraph:
    return KnowledgeGraph.from_triples(FREEBASE)


@pytest.fixture(scope="module")
def static():
    return load_embedder("static")


def names(kg: KnowledgeGraph, ids) -> list[str]:
    return sorted(kg.entities[int(i)] for i in ids)


# ---------------------------------------------------------------------- relation names as LLMs write them
@pytest.mark.parametrize(
    ("text", "relation", "inverse"),
    [
        ("people.person.place_of_birth", "people.person.place_of_birth", False),
        ("place_of_birth", "people.person.place_of_birth", False),  # Freebase prefix missing
        ("people_person_place_of_birth", "people.person.place_of_birth", False),  # Cypher-safe spelling
        ("/people/person/place_of_birth", "people.person.place_of_birth", False),
        ("place of birth", "people.person.place_of_birth", False),
        ("people.person.place_of_birth_inv", "people.person.place_of_birth", True),
        ("~film.film.genre", "film.film.genre", True),
        ("film.film.genre (reverse)", "film.film.genre", True),
        ("`film.film.genre`", "film.film.genre", False),
        ("people.person.place_of_brith", "people.person.place_of_birth", False),  # typo
    ],
)
def test_relation_names_resolve(fb, text, relation, inverse):
    hop = RelationResolver.of(fb).resolve(text)
    assert hop is not None and fb.relations[hop.relation] == relation and hop.inverse is inverse


def test_ambiguous_or_unknown_relation_names_do_not_resolve(fb):
    resolver = RelationResolver.of(fb)
    assert resolver.resolve("genre") is None  # two relations end in "genre": no guess
    assert resolver.resolve("spouse") is None
    assert resolver.resolve("   ") is None


def test_written_path_drops_entities_and_keeps_relations(fb):
    hops = RelationResolver.of(fb).parse("Wynton Marsalis -> people.person.place_of_birth -> film.film.genre")
    assert [fb.relations[h.relation] for h in hops] == ["people.person.place_of_birth", "film.film.genre"]
    assert RelationResolver.of(fb).parse("no relation here") == []


def test_orientations_try_as_written_then_reversed_then_flips():
    from kgrag.methods.byokg.relation_paths import Hop

    got = list(orientations([Hop(0), Hop(1, inverse=True)]))
    assert got[0] == ("as_written", [0, 1], [False, True])
    assert got[1] == ("reversed", [1, 0], [True, False])
    assert got[2] == ("flipped", [0, 1], [False, False]) or got[2] == ("flipped", [0, 1], [True, True])
    assert [v for v, _, _ in got].count("flipped") == 3 and len(got) == 8
    assert len({(tuple(b), tuple(i)) for _, b, i in got}) == 8  # every orientation once
    assert [v for v, _, _ in orientations([Hop(2)])] == ["as_written", "flipped"]


def test_follow_path_as_written(fb):
    res = follow_written_path(fb, [fb.entity_id("Wynton Marsalis")], "people.person.place_of_birth -> film.film.genre")
    assert res.variant == "as_written" and names(fb, res.reached) == ["Backstage Musical"]
    assert len(res.paths) == 1


def test_follow_path_with_wrong_direction_and_order(fb):
    src = [fb.entity_id("Wynton Marsalis")]
    # the model wrote the chain from the answer end: genre first, then place of birth
    res = follow_written_path(fb, src, "film.film.genre -> people.person.place_of_birth")
    assert res.variant == "reversed" and names(fb, res.reached) == ["Backstage Musical"]
    # one hop pointed the wrong way: from a city, place_of_birth only leads backwards, to people
    res = follow_written_path(fb, [fb.entity_id("New Orleans")], "place_of_birth")
    assert res.variant == "flipped" and names(fb, res.reached) == ["Louis Armstrong", "Wynton Marsalis"]
    # without orientation retries the same path reaches nothing
    res = follow_written_path(fb, src, "film.film.genre -> people.person.place_of_birth", try_orientations=False)
    assert res.variant == "none" and not len(res.reached)


def test_follow_paths_skips_repeats_and_junk(fb):
    src = [fb.entity_id("Wynton Marsalis")]
    out = follow_written_paths(fb, src, ["place_of_birth", "people.person.place_of_birth", "junk", ""])
    assert [len(r.reached) for r in out] == [1, 0, 0, 0]
    assert follow_written_path(fb, [], "place_of_birth").variant == "none"


def test_soft_follow_for_relation_names_the_kg_does_not_have(fb, static):
    src = [fb.entity_id("Wynton Marsalis")]
    text = "Wynton Marsalis -> person birth place -> film genre"
    assert follow_written_path(fb, src, text).variant == "none"  # no such relation names
    res = soft_follow(fb, src, text, embedder=static)
    assert res.variant == "soft" and names(fb, res.reached) == ["Backstage Musical"]
    assert [fb.relation_name(r) for r in res.directed] == ["people.person.place_of_birth", "film.film.genre"]
    assert not len(soft_follow(fb, src, "xylophone quartz", embedder=static, min_similarity=0.9).reached)
    both = follow_written_paths(fb, src, ["place_of_birth", text], embedder=static)
    assert [r.variant for r in both] == ["as_written", "soft"]


def test_a_wrong_path_of_known_relations_is_not_cut_short(fb, static):
    # Wynton Marsalis -> New Orleans, then no music.artist.genre there in any orientation: nothing, rather
    # than the first hop alone (which answered "who acted in Kafka" with its writer on MetaQA)
    src = [fb.entity_id("Wynton Marsalis")]
    (res,) = follow_written_paths(fb, src, ["place_of_birth -> music.artist.genre"], embedder=static)
    assert res.variant == "none" and not len(res.reached)
    assert soft_follow(fb, src, "place_of_birth -> music.artist.genre", embedder=static).variant == "soft"


def test_a_path_missing_its_return_hop_is_bridged_when_the_question_names_its_relations(movies_kg):
    # "release years of the films that share directors with Gladiator": the model writes
    # directed_by -> release_year; the path meant is directed_by -> directed_by_inv -> release_year
    kg, text = movies_kg, "directed_by -> release_year"
    named = {kg.relation_id("directed_by"), kg.relation_id("release_year")}
    src = [kg.entity_id("Gladiator")]
    (plain,) = follow_written_paths(kg, src, [text])
    assert plain.variant == "none" and not len(plain.reached)
    (res,) = follow_written_paths(kg, src, [text], bridge=lambda: named)
    assert res.variant == "bridged" and [kg.entities[e] for e in res.reached] == ["1979"]
    assert res.as_json(kg)["relations"] == ["directed_by", "directed_by_inv", "release_year"]
    assert [kg.entities[n] for n in next(iter(res.paths))[0]] == ["Gladiator", "Ridley Scott", "Alien", "1979"]
    # never back to the entity it came from: Heat's director made no other dated film, so not Heat's own 1995
    (heat,) = follow_written_paths(kg, [kg.entity_id("Heat")], [text], bridge=lambda: named)
    assert heat.variant == "none" and not len(heat.reached)
    # a relation the question does not name: no bridge
    (off,) = follow_written_paths(kg, src, [text], bridge=lambda: {kg.relation_id("directed_by")})
    assert off.variant == "none"
    # the question's relations are worked out only when a path needs a return hop
    (direct,) = follow_written_paths(kg, src, ["directed_by"], bridge=lambda: pytest.fail("not needed"))
    assert direct.variant == "as_written"


def test_relations_named_by_the_question(movies_kg):
    minilm = load_embedder("minilm")
    names = lambda q: {movies_kg.relations[r] for r in relations_named(movies_kg, q, minilm, exclude=["Heat"])}  # noqa: E731
    assert names("what were the release years of the films that share directors with Heat") == {
        "directed_by",
        "release_year",
    }
    assert names("who are the actors in the movie Heat") == {"starred_actors"}
    assert names("who wrote Heat") == {"written_by"}
    assert names("Heat") == set()


# ---------------------------------------------------------------------- graph queries
@pytest.mark.parametrize(
    ("section", "raw", "expected"),
    [
        ("MATCH (n) RETURN n.name", "", "MATCH (n) RETURN n.name"),
        ("```cypher\nMATCH (n) RETURN n.name\n```", "", "MATCH (n) RETURN n.name"),
        ("```MATCH (n) RETURN n.name```", "", "MATCH (n) RETURN n.name"),
        ("`MATCH (n) RETURN n`", "", "MATCH (n) RETURN n"),
        (None, "Here:\n```cypher\nMATCH (a)-[:r]->(b) RETURN b.name\n```\nDone", "MATCH (a)-[:r]->(b) RETURN b.name"),
        (None, "<answers>x</answers> MATCH (a) RETURN a.name", "MATCH (a) RETURN a.name"),
        (None, "no query at all", ""),
        (  # several statements: the first one only
            "MATCH (a) RETURN a.name LIMIT 3\nMATCH (b) RETURN b.name\nOPTIONAL MATCH (c) RETURN c",
            "",
            "MATCH (a) RETURN a.name LIMIT 3",
        ),
        ("MATCH (a)\nWITH a\nMATCH (a)-->(b)\nRETURN b.name\nORDER BY b.name", "", None),
        ("", "", ""),
    ],
)
def test_extract_query(section, raw, expected):
    assert extract_query(section, raw) == (section if expected is None else expected)


def test_fit_relation_types_to_table_names(fb):
    from kgrag.graph.backends.base import table_names

    tables = table_names(fb.relations)
    query = (
        "MATCH (p:Entity {name: 'Wynton Marsalis'})-[:people.person.place_of_birth]->(c)"
        "<-[r:`film.film.genre`|place_of_birth]-(x) WHERE x.name <> '[:film.film.genre]' RETURN c.name"
    )
    fitted = fit_relation_types(query, fb, tables)
    assert "[:people_person_place_of_birth]" in fitted
    assert "[r:film_film_genre|place_of_birth]" in fitted  # unknown names stay as written
    assert "'[:film.film.genre]'" in fitted  # strings untouched


def test_rows_as_evidence():
    ev = rows_as_evidence(["d.name", "n"], [["Michael Mann", 2], [{"name": "Heat", "year": 1995}, None]])
    assert ev[0].text == "query result: d.name = Michael Mann; n = 2" and ev[0].entities == ["Michael Mann", "2"]
    assert ev[1].entities == ["Heat"] and ev[0].source == "cypher" and ev[0].triples == []


# ---------------------------------------------------------------------- scoring-based triplet retrieval
def test_decomposed_scores_are_the_sum_of_three_similarities(movies_kg, static):
    from kgrag.retrieval.triples import kg_vectors

    q = "who directed Heat"
    scores = decomposed_scores(movies_kg, q, embedder=static)
    vecs, qv = kg_vectors(movies_kg, static), static.encode([q])[0]
    t = 0
    h, r, tail = movies_kg.heads[t], movies_kg.rels[t], movies_kg.tails[t]
    manual = vecs.entities()[h] @ qv + vecs.relations()[r] @ qv + vecs.entities()[tail] @ qv
    assert scores.shape == (movies_kg.num_triples,) and scores[t] == pytest.approx(manual, abs=1e-5)
    sub = decomposed_scores(movies_kg, q, np.array([t, 3]), embedder=static)
    assert sub == pytest.approx(scores[[t, 3]])


def test_text_retrieval_is_best_first(movies_kg, static):
    tids, scores = text_retrieval(movies_kg, "Ridley Scott directed", embedder=static, top_k=3)
    assert len(tids) == 3 and list(scores) == sorted(scores, reverse=True)
    assert all(np.isclose(decomposed_scores(movies_kg, "Ridley Scott directed", tids, embedder=static), scores))
    empty, _ = text_retrieval(movies_kg, "x", embedder=static, tids=np.empty(0, np.int64))
    assert len(empty) == 0


def test_best_triples_prefilters_large_candidate_sets(movies_kg, static):
    all_ids = np.arange(movies_kg.num_triples)
    prefiltered = set(np.argsort(-decomposed_scores(movies_kg, "release year", embedder=static))[:4].tolist())
    best, _ = best_triples(movies_kg, "release year", all_ids, top_k=2, embedder=static, max_candidates=4)
    assert len(best) == 2 and set(best.tolist()) <= prefiltered


def test_graph_reranker_keeps_k_r_relations_and_top_k(movies_kg, static):
    heat = movies_kg.entity_id("Heat")
    res = graph_rerank(movies_kg, "who acted in Heat", [heat], embedder=static, hops=1, k_r=1, k_t=10, top_k=2)
    assert res.stats["relations"] == 4 and len(res.stats["kept_relations"]) == 1
    kept = {movies_kg.relations[r] for r in movies_kg.rels[res.tids]}
    assert len(kept) == 1 and len(res.tids) <= 2
    assert res.stats["triples"] == 5  # Heat's own edges at L=1
    wide = graph_rerank(movies_kg, "who acted in Heat", [heat], embedder=static, hops=2, k_r=20, k_t=100)
    assert len(wide.tids) > 5  # two hops reach The Insider's edges through Al Pacino and Michael Mann
    assert len(graph_rerank(movies_kg, "q", [], embedder=static).tids) == 0


# ---------------------------------------------------------------------- agentic traversal
def _agent(kg, static, relations_reply, entities_reply, rounds=3):
    calls = {"relations": [], "entities": []}

    def select_relations(q, ents, rels):
        calls["relations"].append((ents, rels))
        return relations_reply(len(calls["relations"]))

    def select_entities(q, lines):
        calls["entities"].append(lines)
        return entities_reply(len(calls["entities"]))

    def rank(q, tids, k):
        return best_triples(kg, q, tids, top_k=k, embedder=static)[0]

    def score(q, rels):
        return np.arange(len(rels), 0, -1, dtype=np.float32)  # the first offered relation looks best

    res = agentic_traversal(
        kg,
        "Who directed the films Al Pacino starred in?",
        [kg.entity_id("Al Pacino")],
        select_relations=select_relations,
        select_entities=select_entities,
        rank_triples=rank,
        score_relations=score,
        rounds=rounds,
    )
    return res, calls


def test_agentic_walks_two_hops_then_finishes(movies_kg, static):
    res, calls = _agent(
        movies_kg,
        static,
        lambda n: ["starred_actors"] if n == 1 else ["directed_by"],
        lambda n: ["Heat", "The Insider"] if n == 1 else ["FINISH"],
    )
    texts = {movies_kg.triple(t) for t in res.tids}
    assert ("Heat", "directed_by", "Michael Mann") in texts and ("Heat", "starred_actors", "Al Pacino") in texts
    assert res.finished and len(res.rounds) == 2 and len(calls["relations"]) == 2
    assert calls["relations"][1][0] == ["Heat", "The Insider"]


def test_agentic_falls_back_when_the_llm_picks_nothing_usable(movies_kg, static):
    res, calls = _agent(movies_kg, static, lambda n: ["no_such_relation"], lambda n: [], rounds=3)
    assert res.rounds[0]["fallback_relations"] and len(res.tids) > 0
    assert res.finished and len(calls["entities"]) == 1  # empty entity selection = self-termination


def test_agentic_stops_after_t_a_rounds_without_a_last_entity_call(movies_kg, static):
    res, calls = _agent(
        movies_kg, static, lambda n: ["starred_actors", "directed_by"], lambda n: ["Heat", "Michael Mann"], rounds=2
    )
    assert len(res.rounds) == 2 and len(calls["entities"]) == 1 and not res.finished


# ---------------------------------------------------------------------- schema text
def test_schema_lists_relations_with_direction_examples(movies_kg, static):
    rels, exemplified = select_relations(movies_kg, "who directed Heat", max_relations=40, embedder=static)
    assert len(rels) == movies_kg.num_relations and list(exemplified) == list(rels)
    text = relation_schema(movies_kg, rels)
    assert "- directed_by (e.g. " in text and " -> " in text
    alien = [movies_kg.entity_id("Alien")]
    few, _ = select_relations(movies_kg, "when was it released", alien, max_relations=2)
    assert set(movies_kg.relations[r] for r in few) == {"directed_by", "release_year"}  # Alien's relations


def test_only_the_likeliest_relations_carry_an_example(movies_kg, static):
    alien = [movies_kg.entity_id("Alien")]
    rels, exemplified = select_relations(movies_kg, "when was it released", alien, max_examples=2, embedder=static)
    assert len(rels) == movies_kg.num_relations  # every relation is still listed
    assert {movies_kg.relations[r] for r in exemplified} == {"directed_by", "release_year"}
    lines = relation_schema(movies_kg, rels, exemplified).splitlines()
    assert [line.split()[1] for line in lines if "(e.g. " in line] == ["directed_by", "release_year"]
    assert len(lines) == movies_kg.num_relations
    none = select_relations(movies_kg, "when was it released", alien, max_examples=0)[1]
    assert len(none) == 0 and "(e.g. " not in relation_schema(movies_kg, rels, none)
    # as many examples as relations, or no limit: all of them, without ranking
    for limit in (movies_kg.num_relations, None):
        assert list(select_relations(movies_kg, "x", max_examples=limit)[1]) == list(range(movies_kg.num_relations))
    ex = example_triples(movies_kg)
    assert all(movies_kg.rels[ex[r]] == r for r in range(movies_kg.num_relations))
