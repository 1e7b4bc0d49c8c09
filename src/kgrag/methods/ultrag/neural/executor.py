"""The neural ULTRAG executor: projections by ULTRAQUERY, intersections by the product t-norm.

It runs on the (SEPPR) entity subset given at construction: the entity and relation graphs of that subset
are built once per executor (:mod:`kgrag.methods.ultrag.neural.graph`) and every projection of the query is one
forward pass of the network from the current fuzzy set.  Scores are memberships in [0, 1] for every entity of
the subset (0 outside it), so the neural executor is a drop-in for the symbolic one.
"""

from __future__ import annotations

import numpy as np

from kgrag.errors import MissingExtraError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.ultrag.dsl.executor import FuzzyExecutor, executors
from kgrag.methods.ultrag.neural.graph import LocalGraph, build_local_graph

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("neural", "the neural ULTRAG executor", "torch") from exc


class NeuralExecutor(FuzzyExecutor):
    """ULTRAQUERY projection over the KG (or an entity subset of it)."""

    name = "neural"

    def __init__(self, kg: KnowledgeGraph, nodes: np.ndarray | None = None, *, model=None, threads: int = 1) -> None:  # type: ignore[no-untyped-def]
        super().__init__(kg, nodes)
        # One intra-op thread: on a small shared machine torch's OpenMP threads oversubscribe the cores
        # (measured on MetaQA, load ~12 on 2 cores: 2.3 s with 2 threads vs 0.1 s with 1 on a 2,000-entity
        # subgraph).  torch's setting is process-wide, so it is restored after each projection.
        self.threads = threads
        from kgrag.methods.ultrag.neural.checkpoint import load_ultraquery

        self.model = model if model is not None else load_ultraquery()
        self.graph: LocalGraph = build_local_graph(kg, self.nodes)
        g = self.graph
        self._edges = tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in (g.receiver, g.sender, g.edge_type))
        self._relation_edges = tuple(
            torch.from_numpy(np.ascontiguousarray(a)) for a in (g.rel_receiver, g.rel_sender, g.rel_type)
        )

    def project(self, x: np.ndarray, relation: int) -> np.ndarray:
        g = self.graph
        fuzzy = torch.from_numpy(x[g.nodes].astype(np.float32)).unsqueeze(0)
        y = np.zeros_like(x)
        if not g.num_nodes or not fuzzy.any():
            return y
        previous = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            with torch.inference_mode():
                out = self.model.project(
                    fuzzy,
                    torch.tensor([relation]),
                    num_relations=g.num_relations,
                    edges=self._edges,
                    relation_edges=self._relation_edges,
                )
        finally:
            torch.set_num_threads(previous)
        y[g.nodes] = out[0].numpy()
        return y


executors.register("neural")(NeuralExecutor)
