"""The neural executor's pieces: relation graph, checkpoint loading (strict, sha256), CPU inference."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.ultrag.neural.graph import HH, HT, TH, TT, build_local_graph

torch = pytest.importorskip("torch", reason="torch is not installed (pip install 'kgrag[neural]')")


def _brute_force_relation_graph(kg: KnowledgeGraph) -> set[tuple[int, int, int]]:
    """Relation-graph edges straight from the definition, over directed relations (with inverses)."""
    n_rel = kg.num_relations
    heads: dict[int, set[int]] = {r: set() for r in range(2 * n_rel)}
    tails: dict[int, set[int]] = {r: set() for r in range(2 * n_rel)}
    for h, r, t in zip(kg.heads.tolist(), kg.rels.tolist(), kg.tails.tolist()):
        heads[r].add(h)
        tails[r].add(t)
        heads[r + n_rel].add(t)
        tails[r + n_rel].add(h)
    edges = set()
    for a in range(2 * n_rel):
        for b in range(2 * n_rel):
            if heads[a] & heads[b]:
                edges.add((a, b, HH))
            if tails[a] & tails[b]:
                edges.add((a, b, TT))
            if heads[a] & tails[b]:
                edges.add((a, b, HT))
            if tails[a] & heads[b]:
                edges.add((a, b, TH))
    return edges


def test_relation_graph_matches_its_definition(movies_kg):
    g = build_local_graph(movies_kg)
    got = set(zip(g.rel_receiver.tolist(), g.rel_sender.tolist(), g.rel_type.tolist()))
    assert got == _brute_force_relation_graph(movies_kg)
    assert g.num_relations == 2 * movies_kg.num_relations
    assert g.num_edges == 2 * movies_kg.num_triples


def test_entity_graph_orientation(movies_kg):
    """Fact (h, r, t): h receives from t under r, t receives from h under r_inv (the trained orientation)."""
    kg = movies_kg
    g = build_local_graph(kg)
    edges = set(zip(g.receiver.tolist(), g.sender.tolist(), g.edge_type.tolist()))
    heat, mann, r = kg.entity_id("Heat"), kg.entity_id("Michael Mann"), kg.relation_id("directed_by")
    assert (heat, mann, r) in edges and (mann, heat, r + kg.num_relations) in edges


def test_subgraph_keeps_only_facts_inside(movies_kg):
    kg = movies_kg
    nodes = kg.entity_ids(["Heat", "Michael Mann", "Al Pacino"])
    g = build_local_graph(kg, nodes)
    assert g.num_nodes == 3 and g.num_edges == 2 * 3  # directed_by, written_by, starred_actors
    assert g.local_ids(np.array([kg.entity_id("Gladiator"), int(nodes.max())])).tolist()[0] == -1


def test_checkpoint_loads_strictly_with_the_published_parameter_count():
    from kgrag.methods.ultrag.neural.checkpoint import load_state_dict, load_ultraquery

    model = load_ultraquery()
    assert sum(p.numel() for p in model.parameters()) == 168_705
    state = load_state_dict()
    assert set(state) == set(model.state_dict())


def test_altered_checkpoint_is_refused(tmp_path):
    from kgrag.methods.ultrag.neural.checkpoint import CheckpointError, checkpoint_path, load_state_dict

    copy = tmp_path / "ultraquery.pth"
    shutil.copy(checkpoint_path(), copy)
    with copy.open("r+b") as f:
        f.seek(1000)
        byte = f.read(1)
        f.seek(1000)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(CheckpointError, match="sha256"):
        load_state_dict(copy)


def test_neural_projection_on_cpu_ranks_the_true_tail_first(movies_kg):
    from kgrag.methods.ultrag.dsl import SymbolicExecutor, parse
    from kgrag.methods.ultrag.neural import NeuralExecutor

    kg = movies_kg
    neural, symbolic = NeuralExecutor(kg), SymbolicExecutor(kg)
    for text, source in [
        ('"Gladiator" -> directed_by', "Gladiator"),
        ('"Ridley Scott" -> directed_by_inv', "Ridley Scott"),
        ('"Russell Crowe" -> starred_actors_inv', "Russell Crowe"),
    ]:
        query, anchors = parse(text), {source: {kg.entity_id(source): 1.0}}
        out = neural.execute(query, anchors)
        assert out.scores.shape == (kg.num_entities,)
        assert np.all((out.scores >= 0) & (out.scores <= 1))
        gold = set(np.flatnonzero(symbolic.execute(query, anchors).scores).tolist())
        top = out.top(len(gold))[0].tolist()
        assert set(top) == gold, (text, [kg.entities[i] for i in top])


def test_neural_executor_is_registered():
    from kgrag.methods.ultrag.dsl import executors
    from kgrag.methods.ultrag.neural import NeuralExecutor

    assert executors.get("neural") is NeuralExecutor
