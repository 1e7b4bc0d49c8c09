"""`kgrag adapt`'s last step: bias the router towards more hops and keep only the models that help frag.

Both are judged on fresh synthetic questions worded with templates held out of training — answers known,
wordings the models never saw — by running frag itself on them.

Real questions look to the router like templates whose content words it never saw, and without them it falls
back on short-question habits (on MetaQA with renamed relations it sent 23% of the real questions one hop or
more too short, 6% of the held-out synthetic ones). A question routed short loses its answers; routed long, it
keeps the shorter patterns among crowded candidates, which costs little on a sparse KG and much on a dense
one. So frag retrieves every calibration question at every hop count, the router reads it with all content
words unknown, and ``intercept[h] += b * (h - 1)`` takes the ``b`` on a grid whose routing keeps the largest
share of answers, each hop count weighed as in a question mix (``AdaptSettings.hop_mix``).

Then frag's three ways to run are compared on the same questions: zero-shot (no model), unrouted with the
pattern scorer, and routed with both. A model is kept (its file left in place) only when the way that uses it
keeps ``keep_margin`` more of the answers than zero-shot frag: synthetic questions use the KG's own words,
which flatters models trained on them (WebQSP proxy: routed 0.84 vs zero-shot 0.81 on held-out synthetic
questions, 0.58 vs 0.81 on real ones; renamed MetaQA: 0.82 vs 0.58, and better on real ones too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag.router import HopRouter
from kgrag.methods.frag.sampling import (
    AdaptSettings,
    Progress,
    Silent,
    SyntheticQuestion,
    sample_questions,
    with_unseen_words,
)
from kgrag.methods.frag.synthetic import RelationLexicon

ZERO_SHOT, PATTERNS_ONLY, ROUTED = "zero-shot", "pattern scorer", "router and pattern scorer"
_BIASES = np.arange(0.0, 2.01, 0.125)


def answer_recall(
    kg: KnowledgeGraph, questions: Sequence[SyntheticQuestion], progress: Progress, **config: Any
) -> np.ndarray:
    """Share of each question's answers in frag's evidence with this configuration (brackets removed: real
    questions have none)."""
    from kgrag.linking.normalize import normalize_answer
    from kgrag.methods.frag import Frag

    frag = Frag(kg, **config)
    out = np.zeros(len(questions))
    for i, q in enumerate(questions):
        evidence = frag.retrieve(q.question.replace("[", "").replace("]", ""), [q.topic])
        found = {normalize_answer(name) for ev in evidence for name in ev.entities}
        gold = {normalize_answer(a) for a in q.answers}
        out[i] = len(gold & found) / len(gold)
        progress.advance()
    return out


def _mix_weights(hop_counts: np.ndarray, mix: Sequence[float]) -> np.ndarray:
    """Per-question weights (sum 1) under which each hop count weighs as in ``mix``, not as sampled."""
    share = np.array([mix[min(h, len(mix)) - 1] for h in hop_counts], dtype=np.float64)
    weight = share / np.bincount(hop_counts)[hop_counts]
    return weight / weight.sum()


def _best_bias(logits: np.ndarray, labels: np.ndarray, by_hops: np.ndarray, weight: np.ndarray) -> tuple[float, float]:
    """The bias on each extra hop whose routing keeps the most answers, and that share (smallest bias on ties)."""
    rows = np.arange(len(logits))
    best_bias, best = 0.0, -1.0
    for bias in _BIASES:
        recall = float(weight @ by_hops[rows, np.argmax(logits + bias * (labels - 1), axis=1)])
        if recall > best + 1e-9:
            best_bias, best = float(bias), recall
    return best_bias, best


def calibrate(
    kg: KnowledgeGraph,
    router_path: Path,
    patterns_path: Path,
    lexicons: Sequence[RelationLexicon],
    settings: AdaptSettings,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Bias the router at ``router_path`` and delete the model files frag does better without (module doc).

    Returns what was measured: answer recall of each way to run frag, which was kept, the bias and how the
    biased router routed the calibration questions.
    """
    progress = progress or Silent()
    router = HopRouter.load(router_path)
    labels = router.labels.astype(np.int64)
    calibration = AdaptSettings(**{**asdict(settings), "questions": settings.calibration, "seed": settings.seed + 4})
    questions = sample_questions(kg, calibration, lexicons, templates="held-out")
    rng = np.random.default_rng(settings.seed + 5)
    unknown = [with_unseen_words(q.question, rng, 1.0) for q in questions]
    logits = np.log(np.maximum(router.predict_proba(unknown), 1e-300))
    hop_counts = np.array([q.hops for q in questions])
    weight = _mix_weights(hop_counts, settings.hop_mix)

    progress.stage("calibrating", len(questions) * (len(labels) + 2))
    zero_shot = answer_recall(kg, questions, progress, router="none", patterns="none")
    unrouted = answer_recall(kg, questions, progress, router="none", patterns=str(patterns_path))
    by_hops = np.stack(
        [
            answer_recall(kg, questions, progress, router=str(router_path), patterns=str(patterns_path), hops=int(h))
            for h in labels
        ],
        axis=1,
    )
    bias, routed = _best_bias(logits, labels, by_hops, weight)
    options = {ZERO_SHOT: float(weight @ zero_shot), PATTERNS_ONLY: float(weight @ unrouted), ROUTED: routed}
    # a model must beat frag without models by a clear margin (module doc); zero-shot wins ties
    kept = max(options, key=lambda k: options[k] - (settings.keep_margin if k != ZERO_SHOT else -1e-6))
    if kept == ROUTED:
        router.intercept = router.intercept + bias * (labels - 1)
        router.save(router_path)
    else:
        router_path.unlink()
        if kept == ZERO_SHOT:
            patterns_path.unlink()
    truth = np.searchsorted(labels, hop_counts)
    choice = np.argmax(logits + bias * (labels - 1), axis=1)
    return {
        "questions": len(questions),
        "answer_recall": {k: round(v, 4) for k, v in options.items()},
        "kept": kept,
        "router_bias": bias,
        "routed_too_short": round(float(np.mean(choice < truth)), 4),
        "routed_too_long": round(float(np.mean(choice > truth)), 4),
        "answer_recall_right_hops": round(float(weight @ by_hops[np.arange(len(questions)), truth]), 4),
        "hop_mix": list(settings.hop_mix),
    }
