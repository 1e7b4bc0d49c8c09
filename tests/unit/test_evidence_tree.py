"""The tree layout of evidence paths: every path is still there, each shared prefix written once."""

from __future__ import annotations

import itertools

from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.verbalize import short_relation_names, verbalize_path
from kgrag.retrieval.evidence_tree import answer_options, compact_paths_text, rooted_paths
from kgrag.retrieval.paths import paths_as_evidence
from kgrag.types import Evidence


def _paths(kg: KnowledgeGraph, *walks: list[str]) -> tuple[list[list[int]], list[list[int]]]:
    """Node and triple ids of walks given as entity names (each consecutive pair joined by some triple)."""
    nodes_list, edges_list = [], []
    for walk in walks:
        nodes = [kg.entity_id(name) for name in walk]
        edges = []
        for a, b in itertools.pairwise(nodes):
            edges.append(next(t for t in range(kg.num_triples) if {int(kg.heads[t]), int(kg.tails[t])} == {a, b}))
        nodes_list.append(nodes)
        edges_list.append(edges)
    return nodes_list, edges_list


def _evidence(kg: KnowledgeGraph, *walks: list[str]) -> list[Evidence]:
    nodes_list, edges_list = _paths(kg, *walks)
    return paths_as_evidence(kg, list(zip(nodes_list, edges_list)))  # type: ignore[arg-type]


def test_shared_prefixes_are_written_once(movies_kg):
    evidence = _evidence(
        movies_kg,
        ["Heat", "Michael Mann", "The Insider"],
        ["Heat", "Al Pacino", "The Insider"],
        ["Heat", "Robert De Niro"],
        ["Heat", "Al Pacino"],
        ["Heat", "Michael Mann"],
    )
    text = compact_paths_text(movies_kg, evidence)
    lines = text.splitlines()
    assert lines[0] == "Heat"
    assert text.count("Al Pacino") == 1 and text.count("Michael Mann") == 1
    # a path that goes on without branching stays on one line, the path that stops on its way included
    assert lines[1:] == [
        "  -[directed by]-> Michael Mann <-[directed by]- The Insider",
        "  -[starred actors]-> Al Pacino <-[starred actors]- The Insider",
        "  -[starred actors]-> Robert De Niro",
    ]
    # shorter than one line per path, and no path lost: each one's words appear in order on its branch
    assert len(text) < len("\n".join(ev.text for ev in evidence))


def test_leaves_reached_the_same_way_share_a_line_and_chains_stay_on_one(movies_kg):
    evidence = _evidence(movies_kg, ["Michael Mann", "Heat", "Robert De Niro"], ["Ridley Scott", "Alien", "1979"])
    evidence += _evidence(movies_kg, ["Michael Mann", "Heat", "Al Pacino"])
    text = compact_paths_text(movies_kg, evidence)
    assert text.splitlines() == [
        "Michael Mann",
        "  <-[directed by]- Heat",
        "    -[starred actors]-> Robert De Niro; Al Pacino",
        "Ridley Scott",
        "  <-[directed by]- Alien -[release year]-> 1979",
    ]


def test_unnamed_nodes_and_non_path_evidence():
    kg = KnowledgeGraph.from_triples(
        [
            ("Richard Nixon", "people.person.spouse_s", "m.02h98gq"),
            ("m.02h98gq", "people.marriage.spouse", "Pat Nixon"),
            ("Pat Nixon", "film.film.genre", "Drama"),
        ]
    )
    evidence = _evidence(kg, ["Richard Nixon", "m.02h98gq", "Pat Nixon"])
    evidence.append(Evidence(text="count: 3", source="cypher"))
    text = compact_paths_text(kg, evidence)
    assert text.splitlines() == [
        "Richard Nixon",
        "  -[spouse s]-> · -[spouse]-> Pat Nixon",
        "count: 3",
    ]
    assert verbalize_path(kg, *_paths(kg, ["Richard Nixon", "m.02h98gq"])[0][0:1], [0]) == (
        "Richard Nixon -[people.person.spouse s]-> m.02h98gq"
    )
    assert compact_paths_text(kg, []) == "(no facts found)"
    # an answer names what the tree shows: every named node, never an unnamed one, labels as written
    assert answer_options(evidence) == {"Richard Nixon": "Richard Nixon", "Pat Nixon": "Pat Nixon"}


def test_relation_ids_keep_the_segments_that_tell_them_apart():
    short = short_relation_names(["film.film.genre", "music.artist.genre", "people.person.place_of_birth", "likes"])
    assert short == {
        "film.film.genre": "film.genre",
        "music.artist.genre": "artist.genre",
        "people.person.place_of_birth": "place of birth",
        "likes": "likes",
    }
    # the same last two segments: the whole id
    assert short_relation_names(["a.film.genre", "b.film.genre"]) == {
        "a.film.genre": "a.film.genre",
        "b.film.genre": "b.film.genre",
    }


def test_facts_are_re_read_as_paths_from_the_question_entities():
    written = [
        ("Linear Algebra", "taught by", "Peter Novak"),
        ("Operating Systems", "taught by", "Kenji Sato"),  # the second hop first, as a ranking may have it
        ("Signal Processing", "prerequisite", "Linear Algebra"),  # another course's chain in between
        ("Distributed Systems", "taught by", "Kenji Sato"),
        ("Distributed Systems", "prerequisite", "Operating Systems"),
        ("Kenji Sato", "alma mater", "Kyoto University"),
        ("Kyoto University", "located in", "Kyoto"),
        ("Loop", "same as", "Loop"),
    ]
    kg = KnowledgeGraph.from_triples(written)
    tid = {kg.triple(t): t for t in range(kg.num_triples)}
    facts = [Evidence(text=" ".join(f), entities=[f[0], f[2]], triples=[tid[f]]) for f in written]
    rows = [Evidence(text="count: 2", source="cypher")]
    paths, rest = rooted_paths(kg, facts + rows, [kg.entity_id("Distributed Systems")], max_hops=2)
    texts = [ev.text for ev in paths]
    # every fact the question entity reaches becomes the path from it; a fact reached two ways, from its nearer end
    assert texts == [
        "Distributed Systems -[prerequisite]-> Operating Systems -[taught by]-> Kenji Sato",
        "Distributed Systems -[taught by]-> Kenji Sato",
        "Distributed Systems -[prerequisite]-> Operating Systems",
        "Distributed Systems -[taught by]-> Kenji Sato -[alma mater]-> Kyoto University",
    ]
    assert all(len(ev.entities) == len(ev.triples) + 1 == len(ev.relations) + 1 for ev in paths)
    # the rest keeps non-KG rows first, then facts out of reach (another course's chain, beyond max_hops, a loop)
    assert [ev.text for ev in rest] == [
        "count: 2",
        "Linear Algebra -[taught by]-> Peter Novak",
        "Signal Processing -[prerequisite]-> Linear Algebra",
        "Kyoto University -[located in]-> Kyoto",
        "Loop -[same as]-> Loop",
    ]
    assert compact_paths_text(kg, paths).splitlines() == [
        "Distributed Systems",
        "  -[prerequisite]-> Operating Systems -[taught by]-> Kenji Sato",
        "  -[taught by]-> Kenji Sato -[alma mater]-> Kyoto University",
    ]
    # no anchor, or one the facts never name: nothing is rooted, nothing is lost
    assert rooted_paths(kg, facts, [])[0] == [] and len(rooted_paths(kg, facts, [])[1]) == len(facts)
