"""A KG's schema as prompt text: its relations, each with one example triple, cut to what fits.

A triples KG has no declared node types, so an example per relation (``directed_by: Heat -> Michael
Mann``) is what tells a model which way a relation points — the most common mistake small models make when
writing relation paths.  KGs with hundreds of relations (Freebase) do not fit a small model's prompt, so only
the ``max_relations`` most relevant are listed: relations at the linked entities first, then by embedding
similarity of the relation name to the question.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kgrag.graph.algorithms.edges import incident_edges
from kgrag.graph.kg import KnowledgeGraph, unique_ints
from kgrag.models.embeddings import Embedder, dot_scores
from kgrag.retrieval.triples import kg_vectors


def example_triples(kg: KnowledgeGraph) -> np.ndarray:
    """One triple id per relation (``-1`` if unused): the one whose head has the most edges (cached per KG)."""
    return kg.resources.get("relation_examples", lambda: _example_triples(kg))


def _example_triples(kg: KnowledgeGraph) -> np.ndarray:
    examples = np.full(kg.num_relations, -1, dtype=np.int64)
    if kg.num_triples:
        degree = kg.degree("both")
        order = np.lexsort((-degree[kg.heads], kg.rels))
        rels = kg.rels[order]
        first = np.ones(len(order), dtype=bool)
        first[1:] = rels[1:] != rels[:-1]
        examples[rels[first]] = order[first]
    return examples


def select_relations(
    kg: KnowledgeGraph,
    question: str,
    seeds: Sequence[int] = (),
    *,
    max_relations: int = 40,
    embedder: Embedder | None = None,
) -> np.ndarray:
    """Relation ids to show for ``question``: all when they fit, else those at ``seeds`` and the most similar."""
    if kg.num_relations <= max_relations:
        return np.arange(kg.num_relations)
    score = np.zeros(kg.num_relations, dtype=np.float32)
    if embedder is not None:
        score += dot_scores(kg_vectors(kg, embedder).relations(), embedder.encode([question])[0])
    if len(seeds):
        _, tids, _, _ = incident_edges(kg, np.asarray(list(seeds), dtype=np.int64), "both")
        score[unique_ints(kg.rels[tids].astype(np.int64))] += 1.0
    return np.sort(np.argsort(-score, kind="stable")[:max_relations])


def relation_schema(kg: KnowledgeGraph, relations: np.ndarray, *, examples: bool = True) -> str:
    """``- directed_by (e.g. Heat -> Michael Mann)`` per relation."""
    ex = example_triples(kg) if examples else None
    lines = []
    for rid in np.asarray(relations).tolist():
        line = f"- {kg.relations[rid]}"
        if ex is not None and ex[rid] >= 0:
            tid = int(ex[rid])
            line += f" (e.g. {kg.entities[int(kg.heads[tid])]} -> {kg.entities[int(kg.tails[tid])]})"
        lines.append(line)
    return "\n".join(lines)


def example_names(kg: KnowledgeGraph, relations: np.ndarray) -> list[str]:
    """The entity names :func:`relation_schema` shows as examples for ``relations`` (heads and tails)."""
    ex = example_triples(kg)[np.asarray(relations, dtype=np.int64)]
    ex = ex[ex >= 0]
    ids = np.concatenate([kg.heads[ex], kg.tails[ex]]).astype(np.int64)
    return [kg.entities[int(e)] for e in dict.fromkeys(ids.tolist())]


__all__ = ["example_names", "example_triples", "relation_schema", "select_relations"]
