"""KnowledgeGraph core: interning, canonical order, CSR indexes, virtual inverses, lookups."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.errors import UnknownEntityError
from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import MOVIES


def test_counts_and_dedup():
    kg = KnowledgeGraph.from_triples([*MOVIES, MOVIES[0], MOVIES[3]])
    assert kg.num_triples == len(MOVIES)
    assert kg.num_relations == 4
    assert set(kg.iter_triples()) == set(MOVIES)
    assert kg.heads.dtype == np.int32 and kg.rels.dtype == np.int32 and kg.tails.dtype == np.int32


def test_triples_sorted_and_csr_consistent(movies_kg):
    kg = movies_kg
    key = list(zip(kg.heads.tolist(), kg.rels.tolist(), kg.tails.tolist()))
    assert key == sorted(key)
    for e in range(kg.num_entities):
        out = kg.out_edge_ids(e)
        assert (kg.heads[out] == e).all()
        assert len(out) == int((kg.heads == e).sum())
        inc = kg.in_edge_ids(e)
        assert (kg.tails[inc] == e).all()
        assert len(inc) == int((kg.tails == e).sum())
    assert kg.degree("both").sum() == 2 * kg.num_triples


def test_virtual_inverse_relations(movies_kg):
    kg = movies_kg
    rid = kg.relation_id("directed_by")
    inv = kg.relation_id("directed_by_inv")
    assert inv == rid + kg.num_relations
    assert kg.relation_name(inv) == "directed_by_inv"
    heat, mann = kg.entity_id("Heat"), kg.entity_id("Michael Mann")
    assert kg.has_triple(heat, rid, mann)
    assert kg.has_triple(mann, inv, heat)
    assert not kg.has_triple(mann, rid, heat)


def test_unknown_names_suggest_close_matches(movies_kg):
    with pytest.raises(UnknownEntityError, match="did you mean 'Michael Mann'"):
        movies_kg.entity_id("Micheal Mann")
    with pytest.raises(UnknownEntityError, match="unknown relation 'directed'"):
        movies_kg.relation_id("directed")


def test_aliases_resolve():
    kg = KnowledgeGraph.from_triples(MOVIES, aliases={"Michael Mann": ["Michael Kenneth Mann"]})
    assert kg.entity_id("Michael Kenneth Mann") == kg.entity_id("Michael Mann")
    assert kg.stats()["aliases"] == 1


def test_constructor_validates_ids():
    with pytest.raises(ValueError, match="out of range"):
        KnowledgeGraph(["a"], ["r"], np.array([0]), np.array([0]), np.array([3]))
    with pytest.raises(ValueError, match="same length"):
        KnowledgeGraph(["a"], ["r"], np.array([0, 0]), np.array([0]), np.array([0]))


def test_adjacency_counts_parallel_edges(movies_kg):
    kg = movies_kg
    adj = kg.adjacency("out")
    heat, mann = kg.entity_id("Heat"), kg.entity_id("Michael Mann")
    assert adj[heat, mann] == 2  # directed_by and written_by
    both = kg.adjacency("both")
    assert (both != both.T).nnz == 0
    only_dir = kg.adjacency("out", relations=np.array([kg.relation_id("directed_by")]))
    assert only_dir[heat, mann] == 1


def test_stats(movies_kg):
    stats = movies_kg.stats()
    assert stats["entities"] == movies_kg.num_entities
    assert stats["triples"] == len(MOVIES)
    assert stats["top_relations"]["starred_actors"] == 5
    assert stats["degree"]["max"] == 5  # Heat
    assert next(iter(stats["hubs"].items())) == ("Heat", 5)
    first = next(t for t in MOVIES if t[1] == "starred_actors")  # each relation's first triple is its example
    assert stats["relation_examples"]["starred_actors"] == f"{first[0]} → {first[2]}"


def test_cypher_backend_registry_names_and_errors(movies_kg):
    from kgrag.graph.backends import cypher_backends, open_cypher_backend

    assert list(cypher_backends) == ["bolt://", "ladybug", "neo4j://"]
    for spec in ("bolt", "mysql://x", "sqlite"):
        with pytest.raises(ValueError, match="unknown Cypher backend"):
            open_cypher_backend(movies_kg, spec)


def test_resources_build_once_and_invalidate(movies_kg):
    built = []
    first = movies_kg.resources.get("probe", lambda: built.append(1) or [1])
    assert movies_kg.resources.get("probe", lambda: built.append(2) or [2]) is first and built == [1]
    movies_kg.resources.invalidate("probe")
    assert movies_kg.resources.get("probe", lambda: [3]) == [3] and "probe" in movies_kg.resources
