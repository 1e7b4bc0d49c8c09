"""Training FRAG's two classifiers on a user's questions: the hop router and the relation-pattern scorer.

``kgrag frag-train`` is a thin wrapper around :func:`train`. Labels come from the rows themselves
(``hops``), from which relation pattern reaches a row's answers from its topic entities (weak labels,
:func:`~kgrag.methods.frag.patterns.weak_pattern_labels`), or, for FRAG-F, from the evidence path an LLM's
answer ended in a ``kgrag eval`` run (:func:`~kgrag.methods.frag.hop_labels.rows_from_results`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag.patterns import weak_pattern_labels
from kgrag.methods.frag.router import HopRouter, PatternClassifier, RouterError, TextClassifier


def _fit(
    model_cls: type[TextClassifier],
    questions: list[str],
    labels: list,
    path: Path,
    validation: float,
    seed: int,
    provenance: dict[str, Any],
) -> dict[str, Any]:
    """Fit on a seeded split, report accuracy on the held-back share, save to ``path`` with its provenance."""
    order = np.random.default_rng(seed).permutation(len(questions))
    n_val = int(len(questions) * validation)
    val, train_ids = order[:n_val], order[n_val:]
    model = model_cls.fit([questions[i] for i in train_ids], [labels[i] for i in train_ids])
    model.provenance = dict(provenance)
    acc = model.accuracy([questions[i] for i in val], [labels[i] for i in val]) if n_val else None
    model.save(path)
    return {
        "out": str(path),
        "train": len(train_ids),
        "validation": int(n_val),
        "validation_accuracy": None if acc is None else round(acc, 4),
        "labels": len(model.labels),
    }


def _frequent_labels(
    pattern_rows: list[tuple[str, tuple[str, ...], float, bool]], limit: int
) -> list[tuple[str, tuple[str, ...], float, bool]]:
    """Rows labelled with the ``limit`` most frequent patterns only (a row's tied labels count a share each).

    The scorer's weights are labels × vocabulary: on a KG with hundreds of relations the 3-hop patterns (and
    their ties: Freebase stores many relations in both directions) run into the tens of thousands, most seen
    once, which teaches nothing and does not fit in memory. A row loses the labels that are not kept, and is
    dropped when none is left; the router still trains on it.
    """
    weight: Counter[str] = Counter()
    for _, labels, _, _ in pattern_rows:
        for label in labels:
            weight[label] += 1.0 / len(labels)
    kept = {label for label, _ in weight.most_common(limit)}
    out = []
    for question, labels, f1, no_hops in pattern_rows:
        labels = tuple(label for label in labels if label in kept)
        if labels:
            out.append((question, labels, f1, no_hops))
    return out


def train(
    rows: list[dict[str, Any]],
    out: Path,
    *,
    kg: KnowledgeGraph | None = None,
    patterns_out: Path | None = None,
    validation: float = 0.2,
    seed: int = 0,
    progress: Callable[[], None] | None = None,
    questions_source: str = "",
    max_pattern_labels: int | None = None,
) -> dict[str, Any]:
    """Train the hop router into ``out`` and, with ``kg``, the pattern scorer into ``patterns_out``.

    Returns the summary (``questions``, and per model ``out``/``train``/``validation``/
    ``validation_accuracy``/``labels``, or ``skipped`` with the reason); ``progress`` ticks once per row
    while patterns are labelled. The models record ``kg``'s store checksum and ``questions_source``: frag
    uses them by default only on that KG. ``max_pattern_labels`` keeps the pattern scorer to the most
    frequent patterns (see :func:`_frequent_labels`).
    """
    provenance = {"kg_checksum": kg.checksum if kg is not None else None, "questions": questions_source}
    if not rows:
        raise RouterError("no labelled questions: give --data FILE or --from-results results.jsonl")
    summary: dict[str, Any] = {"questions": len(rows)}
    pattern_rows: list[tuple[str, tuple[str, ...], float, bool]] = []
    if kg is not None and patterns_out is not None:
        pattern_rows = weak_pattern_labels(kg, rows, progress=progress)
        if max_pattern_labels is not None:
            pattern_rows = _frequent_labels(pattern_rows, max_pattern_labels)
    router_q = [r["question"] for r in rows if r["hops"]]
    router_y = [int(r["hops"]) for r in rows if r["hops"]]
    for question, labels, _, no_hops in pattern_rows:  # rows without hops: the pattern's length
        if no_hops:
            router_q.append(question)
            router_y.append(labels[0].count(">") + 1)
    if len(set(router_y)) >= 2 or patterns_out is None:
        summary["router"] = _fit(HopRouter, router_q, router_y, out, validation, seed, provenance)
    else:  # one hop count only: nothing for a router to learn, the pattern scorer still trains
        summary["router"] = {"skipped": f"every question has {router_y[0] if router_y else '?'} hop(s)"}
    if patterns_out is not None:
        if not pattern_rows:
            raise RouterError("no row's answers are reachable from its topic entities: cannot train the pattern scorer")
        questions, labels = [row[0] for row in pattern_rows], [row[1] for row in pattern_rows]
        summary["patterns"] = _fit(PatternClassifier, questions, labels, patterns_out, validation, seed, provenance)
        summary["patterns"]["weak_label_f1"] = round(float(np.mean([row[2] for row in pattern_rows])), 4)
    return summary
