"""A KG's schema as prompt text: its relations, the likeliest with an example triple, cut to what fits.

A triples KG has no declared node types, so an example per relation (``directed_by: Heat -> Michael
Mann``) is what tells a model which way a relation points — the most common mistake small models make when
writing relation paths.  KGs with hundreds of relations (Freebase) do not fit a small model's prompt, so only
the ``max_relations`` most relevant are listed: relations at the linked entities first, then by embedding
similarity of the relation name to the question; and there only the few likeliest keep their example.
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


def relations_by_relevance(
    kg: KnowledgeGraph, question: str, seeds: Sequence[int] = (), *, embedder: Embedder | None = None
) -> np.ndarray:
    """Every relation id, most relevant to ``question`` first: those at ``seeds`` first, then by the embedding
    similarity of the relation's name to the question (ties in id order)."""
    score = np.zeros(kg.num_relations, dtype=np.float32)
    if embedder is not None:
        score += dot_scores(kg_vectors(kg, embedder).relations(), embedder.encode([question])[0])
    if len(seeds):
        _, tids, _, _ = incident_edges(kg, np.asarray(list(seeds), dtype=np.int64), "both")
        score[unique_ints(kg.rels[tids].astype(np.int64))] += 1.0
    return np.argsort(-score, kind="stable")


def select_relations(
    kg: KnowledgeGraph,
    question: str,
    seeds: Sequence[int] = (),
    *,
    max_relations: int = 40,
    max_examples: int | None = None,
    embedder: Embedder | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(relation ids to show, in id order; those of them shown with an example): all relations when they fit,
    else the ``max_relations`` most relevant (:func:`relations_by_relevance`); examples for all shown, or for the
    ``max_examples`` most relevant of them.

    An example fact costs a line's worth of tokens again (on the WebQSP Freebase proxy 40 relations read 377
    tokens bare, 890 with examples, a median), and its only use is to show which way a relation points — for
    the few relations the answer's path is likely to take."""
    fits = kg.num_relations <= max_relations
    some_examples = max_examples is not None and max_examples < min(kg.num_relations, max_relations)
    if fits and not some_examples:  # the whole list, every relation with its example: nothing to rank
        every = np.arange(kg.num_relations)
        return every, every
    order = relations_by_relevance(kg, question, seeds, embedder=embedder)
    shown = np.arange(kg.num_relations) if fits else np.sort(order[:max_relations])
    return shown, np.sort(order[:max_examples]) if some_examples else shown


def relation_schema(kg: KnowledgeGraph, relations: np.ndarray, with_example: np.ndarray | None = None) -> str:
    """``- directed_by (e.g. Heat -> Michael Mann)`` per relation; the example only for ``with_example``
    (default: all)."""
    ex = example_triples(kg)
    keep = None if with_example is None else set(np.asarray(with_example).tolist())
    lines = []
    for rid in np.asarray(relations).tolist():
        line = f"- {kg.relations[rid]}"
        if ex[rid] >= 0 and (keep is None or rid in keep):
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


__all__ = ["example_names", "example_triples", "relation_schema", "relations_by_relevance", "select_relations"]
