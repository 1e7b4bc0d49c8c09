"""Zero-shot FRAG, second opinion: how likely the LLM finds the question after each best-ranked pattern.

The alignment scorer (:mod:`kgrag.methods.frag.alignment`) reads a pattern's relations against the question's
words, one embedding similarity at a time. It cannot tell "what types are the movies directed by X" (the genres
of X's films) from "what movies did X direct" when "types" sits far from ``genre`` under MiniLM, and the 1-hop
prefix wins; three-hop questions suffer most (renamed MetaQA: its best pattern reaches a gold answer for 0.58 /
0.54 of 2- / 3-hop dev questions).

A language model reads the whole question at once. Asked to *choose* among patterns the 1.5B default model does
badly (DESIGN: it picks the first or last line), and asked to *write* a relation path it prefers short ones.
Here it does neither: each of the ``k`` best patterns is written as a query with variables, the entity asked
for marked ``?``::

    x1 | director | Quentin Tarantino        (each fact in the KG's own direction)
    x1 | genre | ?

and the model scores the user's question as the reply to "write the question asking for ?" — the question's
tokens, identical for every pattern, so the log-probabilities compare directly (the noisy-channel reading of a
question). A pattern whose extra hop the question never asks for, or that stops short of what it asks for,
makes the question less likely. The score that orders the patterns is the alignment score plus ``weight`` times
that log-probability, relative to the best of the ``k``; patterns below the ``k`` best keep their order after
them. One scoring pass over ``k`` short prompts that share their instructions (a kept prefix), no generation.

Trained models (a `kgrag adapt` pattern scorer) rank on their own scale; set ``question_fit``, the model re-reads
their best patterns the same way, weighted ``question_fit_trained_weight``. A scorer trained on a question log
learns most wordings but is unsure of rare ones, where the re-reading decides (renamed MetaQA, models from
``--asked``: best pattern 0.87 / 0.87 / 0.83 -> 0.93 / 0.93 / 0.90 per hop on dev questions the weight was not
chosen on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag.patterns import PatternReach, paths_to
from kgrag.methods.frag.synthetic import humanise
from kgrag.models.llm.base import LLM
from kgrag.prompts import load_prompt

if TYPE_CHECKING:
    from kgrag.methods.frag import Frag

PROMPT = "frag_pattern_question"
TRACE_KEY = "question_fit"  # the ranking step's output listing the scored patterns (frag/grounding.py reads it)


def query_lines(kg: KnowledgeGraph, pattern: np.ndarray, nodes: np.ndarray) -> str:
    """``pattern`` along one walk of it (``nodes``, the topic first) as query lines ``subject | relation |
    object`` in the KG's own direction, the entities between as ``x1, x2, …`` and the end as ``?``; relation ids
    read as words (:func:`humanise`). Two hops the same way through an unnamed node (a Freebase CVT: ``film →
    starring → (performance) → actor → person``) are one fact, one line (``starring / actor``), as the alignment
    reads them."""
    r = kg.num_relations
    unnamed = unnamed_entities(kg)
    steps = [(humanise(kg.relations[p % r]).words, p >= r) for p in pattern if p >= 0]
    merged: list[tuple[str, bool]] = []
    for i, (words, backwards) in enumerate(steps):
        if i and unnamed[int(nodes[i])] and merged[-1][1] == backwards and "/" not in merged[-1][0]:
            before, after = (words, merged[-1][0]) if backwards else (merged[-1][0], words)
            merged[-1] = (f"{before} / {after}", backwards)
        else:
            merged.append((words, backwards))
    names = [kg.entities[int(nodes[0])], *(f"x{i + 1}" for i in range(len(merged) - 1)), "?"]
    lines = []
    for i, (words, backwards) in enumerate(merged):
        a, b = names[i], names[i + 1]
        lines.append(f"{b} | {words} | {a}" if backwards else f"{a} | {words} | {b}")
    return "\n".join(lines)


def question_fit(
    kg: KnowledgeGraph,
    llm: LLM,
    question: str,
    topics: list[int],
    reach: PatternReach,
    scores: np.ndarray,
    *,
    k: int,
    weight: float,
    walk_limits: dict,
) -> tuple[np.ndarray, list[dict]]:
    """``scores`` with the ``k`` best patterns re-ordered by the question's log-probability after each (see the
    module doc), and a record per scored pattern for the trace. Unchanged when the backend cannot score text,
    or fewer than two patterns can be written from a topic."""
    order = np.argsort(-scores, kind="stable")
    unnamed = unnamed_entities(kg)
    chosen, queries = [], []
    for idx in order[: 4 * k]:  # a pattern whose every walk turns back has no query: look a little further
        ends = reach.endpoints(int(idx))
        ends = ends[~np.isin(ends, topics) & ~unnamed[ends]][:5]  # unnamed nodes are never answers
        walked = paths_to(kg, topics, reach.patterns[idx], ends, **walk_limits) if len(ends) else None
        if walked is None or not len(walked):
            continue
        chosen.append(int(idx))
        queries.append(query_lines(kg, reach.patterns[idx], walked.nodes[0]))
        if len(chosen) == k:
            break
    if len(chosen) < 2:
        return scores, []
    prompt = load_prompt(PROMPT)
    logprobs = llm.score_reply([prompt.render(query=q) for q in queries], question, name=PROMPT)
    if logprobs is None:
        return scores, []
    fit = np.asarray(logprobs) - max(logprobs)
    out = scores.copy()
    out[chosen] = scores[chosen] + weight * fit
    rest = np.setdiff1d(np.arange(len(scores)), chosen)
    out[rest] = scores[rest] + weight * fit.min()  # below the scored ones by at least what they lost
    record = [
        {"query": q, "logprob": round(float(lp), 2), "score": round(float(out[i]), 4)}
        for q, lp, i in zip(queries, logprobs, chosen)
    ]
    return out, record


def fit_patterns(
    frag: Frag, question: str, topics: list[int], reach: PatternReach, scores: np.ndarray, outputs: dict
) -> np.ndarray:
    """:func:`question_fit` with frag's settings (``question_fit`` patterns, ``question_fit_weight``), the scored
    patterns recorded in the trace step's ``outputs``; the scores as they were when it is off or frag has no
    LLM."""
    cfg = frag.config
    if cfg.question_fit < 2 or frag.llm is None:
        return scores
    fitted, record = question_fit(
        frag.kg,
        frag.llm,
        question,
        topics,
        reach,
        scores,
        k=cfg.question_fit,
        weight=cfg.question_fit_weight if frag.pattern_classifier is None else cfg.question_fit_trained_weight,
        walk_limits=frag._walk_limits,
    )
    if record:
        outputs[TRACE_KEY] = record
    return fitted
