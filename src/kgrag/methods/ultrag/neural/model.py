"""ULTRA / ULTRAQUERY in plain torch: conditional message passing on the relation graph, then on the entities.

Architecture (Galkin et al. 2024a/b), with the checkpoint's sizes (6 layers, 64 dimensions):

* **Relation network** — an NBFNet over the relation graph (4 interaction kinds).  Conditioned on the query
  relation ``q``: the boundary state is all-ones at ``q`` and zero elsewhere; each layer sends DistMult
  messages ``state[sender] ⊙ kind_embedding``, sums them at the receiver together with the boundary, and
  updates ``ReLU(LayerNorm(W·[state ‖ sum]))`` with a residual connection.  Its output is a 64-d vector per
  relation, specific to this query: relations are never looked up in a table, which is what lets the model
  run on any KG.
* **Entity network** — the same layer over the KG's edges, with each layer projecting the relation vectors
  through its own 2-layer MLP to get the DistMult edge weights.  ULTRAQUERY's projection starts from a fuzzy
  set ``x``: the boundary state of entity ``v`` is ``x[v]·rel(q)``.  A final MLP reads
  ``[state ‖ rel(q)]`` and gives one logit per entity; ``sigmoid`` makes it a membership in [0, 1].

Sums over edges are ``index_add_`` (no torch-scatter, no compiled kernel).  Module names follow the
published checkpoint's parameter names so that it loads with ``strict=True``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

DIM = 64
LAYERS = 6
KINDS = 4  # relation-graph interaction kinds: h2h, t2t, h2t, t2h


class ConditionalConv(nn.Module):
    """One message-passing layer: DistMult messages, sum aggregation plus the boundary, linear+LN+ReLU."""

    def __init__(self, dim: int = DIM, num_kinds: int | None = None) -> None:
        super().__init__()
        self.linear = nn.Linear(2 * dim, dim)
        self.layer_norm = nn.LayerNorm(dim)
        if num_kinds is not None:  # relation graph: a fixed embedding per interaction kind
            self.relation = nn.Embedding(num_kinds, dim)
        else:  # entity graph: edge weights projected from the query-conditioned relation vectors
            self.relation_projection = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def edge_weights(self, relations: torch.Tensor | None) -> torch.Tensor:
        """``(batch or 1, num_types, dim)`` weights for each edge type."""
        if relations is None:
            return self.relation.weight.unsqueeze(0)
        return self.relation_projection(relations)

    def forward(
        self,
        state: torch.Tensor,
        boundary: torch.Tensor,
        receiver: torch.Tensor,
        sender: torch.Tensor,
        edge_type: torch.Tensor,
        relations: torch.Tensor | None = None,
    ) -> torch.Tensor:
        weights = self.edge_weights(relations)  # (B|1, types, d)
        messages = state.index_select(1, sender) * weights.index_select(1, edge_type)  # (B, E, d)
        total = boundary.clone().index_add_(1, receiver, messages)
        return F.relu(self.layer_norm(self.linear(torch.cat([state, total], dim=-1))))


class RelationNet(nn.Module):
    """NBFNet over the relation graph: query-conditioned vectors for every relation."""

    def __init__(self, dim: int = DIM, layers: int = LAYERS) -> None:
        super().__init__()
        self.layers = nn.ModuleList(ConditionalConv(dim, num_kinds=KINDS) for _ in range(layers))
        self.dim = dim

    def forward(
        self, query: torch.Tensor, num_relations: int, receiver: torch.Tensor, sender: torch.Tensor, kind: torch.Tensor
    ) -> torch.Tensor:
        """``(B, num_relations, dim)`` for query relations ``query`` (shape ``(B,)``)."""
        batch = len(query)
        boundary = torch.zeros(batch, num_relations, self.dim, dtype=torch.float32)
        boundary[torch.arange(batch), query] = 1.0
        state = boundary
        for layer in self.layers:
            state = layer(state, boundary, receiver, sender, kind) + state
        return state


class EntityNet(nn.Module):
    """NBFNet over the KG from a fuzzy boundary: one logit per entity."""

    def __init__(self, dim: int = DIM, layers: int = LAYERS) -> None:
        super().__init__()
        self.layers = nn.ModuleList(ConditionalConv(dim) for _ in range(layers))
        self.mlp = nn.Sequential(nn.Linear(2 * dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, 1))

    def forward(
        self,
        boundary: torch.Tensor,
        query_vector: torch.Tensor,
        relations: torch.Tensor,
        receiver: torch.Tensor,
        sender: torch.Tensor,
        edge_type: torch.Tensor,
    ) -> torch.Tensor:
        state = boundary
        for layer in self.layers:
            state = layer(state, boundary, receiver, sender, edge_type, relations) + state
        query = query_vector.unsqueeze(1).expand(-1, state.shape[1], -1)
        return self.mlp(torch.cat([state, query], dim=-1)).squeeze(-1)


class Ultra(nn.Module):
    """Relation network + entity network; :meth:`project` is ULTRAQUERY's relation projection."""

    def __init__(self, dim: int = DIM, layers: int = LAYERS) -> None:
        super().__init__()
        self.relation_model = RelationNet(dim, layers)
        self.entity_model = EntityNet(dim, layers)

    def project(
        self,
        fuzzy: torch.Tensor,
        query: torch.Tensor,
        *,
        num_relations: int,
        edges: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
        relation_edges: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    ) -> torch.Tensor:
        """Memberships ``(B, N)`` of the entities reached from fuzzy sets ``fuzzy`` ``(B, N)`` over ``query``."""
        relations = self.relation_model(query, num_relations, *relation_edges)  # (B, R, d)
        query_vector = relations[torch.arange(len(query)), query]  # (B, d)
        boundary = fuzzy.unsqueeze(-1) * query_vector.unsqueeze(1)  # (B, N, d)
        logits = self.entity_model(boundary, query_vector, relations, *edges)
        return torch.sigmoid(logits)
