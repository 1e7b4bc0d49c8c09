"""The symbolic fuzzy-set executor: crisp answers on a tiny KG, fuzzy memberships, restriction, explanations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.graph.algorithms import follow_relation_path
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.ultrag.dsl import ExecutionError, SymbolicExecutor, parse, supporting_triples
from kgrag.methods.ultrag.dsl.nodes import Entity, Projection
from tests.conftest import MOVIES


def _names(kg, execution, k=20):
    ids, scores = execution.top(k)
    return {kg.entities[i]: round(float(s), 6) for i, s in zip(ids, scores)}


def _crisp(kg, *names):
    return {n: {kg.entity_id(n): 1.0} for n in names}


def test_projection_and_inverse(movies_kg):
    ex = SymbolicExecutor(movies_kg)
    out = ex.execute(parse('"Heat" -> starred_actors'), _crisp(movies_kg, "Heat"))
    assert _names(movies_kg, out) == {"Al Pacino": 1.0, "Robert De Niro": 1.0}
    out = ex.execute(parse('"Michael Mann" -> directed_by_inv'), _crisp(movies_kg, "Michael Mann"))
    assert _names(movies_kg, out) == {"Heat": 1.0, "The Insider": 1.0}


def test_chain_and_intersection(movies_kg):
    ex = SymbolicExecutor(movies_kg)
    # films with Russell Crowe -> their directors
    q = parse('"Russell Crowe" -> starred_actors_inv -> directed_by')
    assert _names(movies_kg, ex.execute(q, _crisp(movies_kg, "Russell Crowe"))) == {
        "Michael Mann": 1.0,
        "Ridley Scott": 1.0,
    }
    # films directed by Michael Mann AND starring Russell Crowe -> their actors
    q = parse('AND("Michael Mann" -> directed_by_inv, "Russell Crowe" -> starred_actors_inv) -> starred_actors')
    out = ex.execute(q, _crisp(movies_kg, "Michael Mann", "Russell Crowe"))
    assert _names(movies_kg, out) == {"Al Pacino": 1.0, "Russell Crowe": 1.0}


def test_fuzzy_memberships_follow_product_logic(movies_kg):
    ex = SymbolicExecutor(movies_kg)
    kg = movies_kg
    anchors = {"Mann": {kg.entity_id("Michael Mann"): 0.8, kg.entity_id("Ridley Scott"): 0.2}}
    out = ex.execute(parse("Mann -> directed_by_inv"), anchors)
    assert _names(kg, out) == {"Heat": 0.8, "The Insider": 0.8, "Gladiator": 0.2, "Alien": 0.2}
    # projection is max-product: Al Pacino is reached from Heat and The Insider (both 0.8) -> 0.8, not 1.6
    out = ex.execute(parse("Mann -> directed_by_inv -> starred_actors"), anchors)
    assert _names(kg, out)["Al Pacino"] == 0.8
    assert _names(kg, out)["Russell Crowe"] == 0.8  # max(The Insider 0.8, Gladiator 0.2)
    # AND is the product of memberships
    anchors["Crowe"] = {kg.entity_id("Russell Crowe"): 0.5}
    out = ex.execute(parse("AND(Mann -> directed_by_inv, Crowe -> starred_actors_inv)"), anchors)
    assert _names(kg, out) == {"The Insider": 0.4, "Gladiator": 0.1}
    assert np.all((out.scores >= 0) & (out.scores <= 1))


def test_restriction_to_a_subgraph(movies_kg):
    kg = movies_kg
    keep = kg.entity_ids(["Michael Mann", "Heat", "Al Pacino"])
    ex = SymbolicExecutor(kg, nodes=keep)
    out = ex.execute(parse('"Michael Mann" -> directed_by_inv -> starred_actors'), _crisp(kg, "Michael Mann"))
    assert _names(kg, out) == {"Al Pacino": 1.0}  # The Insider and Robert De Niro are outside


def test_unlinked_leaf_and_unknown_relation_are_execution_errors(movies_kg):
    ex = SymbolicExecutor(movies_kg)
    with pytest.raises(ExecutionError, match="not linked"):
        ex.execute(parse("Heat -> directed_by"), {})
    with pytest.raises(ExecutionError, match="unknown relation"):
        ex.execute(parse("Heat -> director"), _crisp(movies_kg, "Heat"))


def test_supporting_triples_walk_the_projection_chain(movies_kg):
    kg = movies_kg
    q = parse('AND("Michael Mann" -> directed_by_inv, "Russell Crowe" -> starred_actors_inv) -> starred_actors')
    out = SymbolicExecutor(kg).execute(q, _crisp(kg, "Michael Mann", "Russell Crowe"))
    triples = {kg.triple(t) for t in supporting_triples(kg, q, out, kg.entity_id("Al Pacino"))}
    assert triples == {
        ("The Insider", "starred_actors", "Al Pacino"),
        ("The Insider", "directed_by", "Michael Mann"),
        ("The Insider", "starred_actors", "Russell Crowe"),
    }
    assert supporting_triples(kg, q, out, kg.entity_id("Alien")) == []


def test_repair_flips_dead_end_projections_only(movies_kg):
    from kgrag.methods.ultrag.dsl import format_query
    from kgrag.methods.ultrag.dsl.repair import repair_directions

    kg = movies_kg
    anchors = _crisp(kg, "Russell Crowe", "Ridley Scott")
    fixed, notes = repair_directions(kg, parse('"Russell Crowe" -> starred_actors -> directed_by'), anchors)
    assert format_query(fixed) == '"Russell Crowe" -> starred_actors_inv -> directed_by' and len(notes) == 1
    # nothing to repair
    fine = parse('"Russell Crowe" -> starred_actors_inv -> directed_by')
    assert repair_directions(kg, fine, anchors) == (fine, [])
    # dead ends both ways stay as they are (the query then runs empty)
    dead = parse('"Russell Crowe" -> release_year')
    assert repair_directions(kg, dead, anchors) == (dead, [])
    # inside an intersection, only the broken branch changes
    q = parse('AND("Russell Crowe" -> starred_actors, "Ridley Scott" -> directed_by_inv)')
    fixed, notes = repair_directions(kg, q, anchors)
    assert format_query(fixed) == 'AND("Russell Crowe" -> starred_actors_inv, "Ridley Scott" -> directed_by_inv)'
    out = SymbolicExecutor(kg).execute(fixed, anchors)
    assert _names(kg, out) == {"Gladiator": 1.0}


# A random KG and random relation paths: crisp symbolic execution must reach exactly what the graph
# algorithm ``follow_relation_path`` reaches (an independent implementation).
def _random_kg(seed: int) -> KnowledgeGraph:
    rng = np.random.default_rng(seed)
    n, m = 30, 90
    triples = [(f"e{rng.integers(n)}", f"r{rng.integers(3)}", f"e{rng.integers(n)}") for _ in range(m)]
    return KnowledgeGraph.from_triples(triples + MOVIES)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.lists(st.integers(0, 2 * 3 + 7), min_size=1, max_size=4))
def test_crisp_execution_matches_relation_path_following(seed, rel_choices):
    kg = _random_kg(seed % 7)
    rels = [c % (2 * kg.num_relations) for c in rel_choices]
    source = seed % kg.num_entities
    query = Entity("s")
    for r in rels:
        query = Projection(query, kg.relation_name(r))
    out = SymbolicExecutor(kg).execute(query, {"s": {source: 1.0}})
    reached = set(follow_relation_path(kg, [source], rels).reached.tolist())
    assert set(np.flatnonzero(out.scores).tolist()) == reached
    assert set(np.unique(out.scores[out.scores > 0]).tolist()) <= {1.0}
