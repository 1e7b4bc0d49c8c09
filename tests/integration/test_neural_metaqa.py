"""The neural executor on a real KG: crisp 1-hop queries over SEPPR subgraphs of the MetaQA movie KB.

The true answers of ``"e" -> r`` are the KG's own edges (what the symbolic executor returns, Hit@10 = 1 by
construction); ULTRAQUERY has never seen this KG, so ranking them at the top tests the whole network —
relation graph, conditioning, message passing orientation and the checkpoint — on CPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.graph.io import load_file
from kgrag.methods.ultrag.dsl import SymbolicExecutor
from kgrag.methods.ultrag.dsl.anchors import seppr_subgraph
from kgrag.methods.ultrag.dsl.nodes import Entity, Projection
from tests.conftest import BUNDLED_METAQA

pytest.importorskip("torch", reason="torch is not installed (pip install 'kgrag[neural]')")
pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_neural_hits_close_to_symbolic_on_metaqa_one_hop():
    from kgrag.methods.ultrag.neural import NeuralExecutor

    kg = load_file(BUNDLED_METAQA)
    rng = np.random.default_rng(7)
    ranks = {"neural": [], "symbolic": []}
    for tid in rng.choice(kg.num_triples, 16, replace=False).tolist():
        h, r, t = int(kg.heads[tid]), int(kg.rels[tid]), int(kg.tails[tid])
        source, rel = (t, r + kg.num_relations) if tid % 2 else (h, r)  # half of them inverse
        query, anchors = Projection(Entity("s"), kg.relation_name(rel)), {"s": {source: 1.0}}
        nodes = seppr_subgraph(kg, {source: 1.0}, top_k=3000).nodes
        gold = set(np.flatnonzero(SymbolicExecutor(kg, nodes=nodes).execute(query, anchors).scores).tolist())
        assert gold, "the fact's own tail is always an answer"
        for name, executor in (("neural", NeuralExecutor(kg, nodes=nodes)), ("symbolic", SymbolicExecutor(kg, nodes))):
            order = executor.execute(query, anchors).top(50)[0].tolist()
            hit = [i for i, e in enumerate(order) if e in gold]
            ranks[name].append(hit[0] if hit else 10**6)
    hit10 = {k: float(np.mean(np.asarray(v) < 10)) for k, v in ranks.items()}
    hit1 = {k: float(np.mean(np.asarray(v) == 0)) for k, v in ranks.items()}
    assert hit10["symbolic"] == 1.0
    assert hit10["neural"] >= 0.85, (hit10, hit1)
    assert hit1["neural"] >= 0.7, (hit10, hit1)
