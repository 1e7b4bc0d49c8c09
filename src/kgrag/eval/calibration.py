"""Is the confidence worth reading? Calibration error and risk–coverage over evaluated questions.

A confidence of 0.8 should be right about 8 times in 10 (expected calibration error, ECE: the gap between
stated confidence and observed Hit@1, averaged over equal-width bins weighted by their size). And it should
rank: answering only the questions above a threshold should raise Hit@1 on those answered — the risk–coverage
curve shows what a user gives up (coverage) for what they gain (Hit@1 of what is still answered).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

COVERAGES = (1.0, 0.8, 0.6, 0.4, 0.2)
TARGET_HIT = 0.95


def _arrays(rows: Sequence[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, top answer right) of rows that carry a confidence and did not fail."""
    scored = [r for r in rows if "confidence" in r and not r.get("error")]
    return (
        np.array([float(r["confidence"]) for r in scored]),
        np.array([float(r["hit@1"]) for r in scored]),
    )


def expected_calibration_error(confidence: np.ndarray, right: np.ndarray, bins: int = 10) -> float:
    """ECE over ``bins`` equal-width confidence bins: per bin, the gap between the confidences stated and the
    answers right, summed (a bin's size times the gap of its means), over the number of answers."""
    if not len(confidence):
        return 0.0
    member = _bin_members(confidence, bins)
    return float(np.abs(member @ right - member @ confidence).sum() / len(confidence))


def _bin_members(confidence: np.ndarray, bins: int) -> np.ndarray:
    """A ``bins`` × answers 0/1 matrix: which equal-width confidence bin each answer falls in (1.0 in the last)."""
    member = np.zeros((bins, len(confidence)))
    member[np.minimum((confidence * bins).astype(int), bins - 1), np.arange(len(confidence))] = 1.0
    return member


def ece_floor(confidence: np.ndarray, bins: int = 10, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The ECE a perfectly calibrated confidence would show on these questions: (mean, 90th percentile) over
    ``draws`` outcomes drawn right with the stated probabilities.

    On 100 questions ECE is far from 0 even when every confidence is exactly right (a bin of 12 questions at 0.75
    holds 9 right only on average), so an ECE is read against this floor: an observed ECE inside the floor's
    range says the sample is too small to show miscalibration, one well above it says the confidence is off."""
    if not len(confidence):
        return 0.0, 0.0
    member = _bin_members(confidence, bins)
    outcomes = (np.random.default_rng(seed).random((draws, len(confidence))) < confidence).astype(float)
    gaps = np.abs(outcomes @ member.T - member @ confidence).sum(axis=1) / len(confidence)
    return float(gaps.mean()), float(np.quantile(gaps, 0.9))


def risk_coverage(confidence: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Answering the k most confident questions, for every k: (coverage, Hit@1 on those answered, the
    confidence of the k-th, i.e. the threshold that answers them). Ties are answered together."""
    order = np.argsort(-confidence, kind="stable")
    conf, hits = confidence[order], right[order]
    k = np.arange(1, len(conf) + 1)
    last = np.r_[conf[1:] != conf[:-1], True]  # a threshold cannot split questions of equal confidence
    return (k / len(conf))[last], (np.cumsum(hits) / k)[last], conf[last]


def calibration_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """ECE (with the floor a calibrated confidence would show here, :func:`ece_floor`), Hit@1 at fixed coverages,
    and the lowest threshold whose answered questions reach Hit@1 ≥ 0.95 (with its coverage; none when no
    threshold does). Empty when no row has a confidence."""
    confidence, right = _arrays(rows)
    if not len(confidence):
        return {}
    coverage, hit, threshold = risk_coverage(confidence, right)
    points = sorted({int(np.searchsorted(coverage, c - 1e-9)) for c in COVERAGES} - {len(coverage)}, reverse=True)
    out: dict[str, Any] = {
        "ece": round(expected_calibration_error(confidence, right), 4),
        "ece_floor": [_r(v) for v in ece_floor(confidence)],  # a calibrated confidence's ECE here: mean, 90th pct
        "mean_confidence": round(float(confidence.mean()), 4),
        "risk_coverage": [  # at about COVERAGES (ties of confidence may answer more), each point once
            {"coverage": _r(coverage[i]), "hit@1": _r(hit[i]), "threshold": _r(threshold[i])} for i in points
        ],
    }
    good = np.flatnonzero(hit >= TARGET_HIT)
    if len(good):
        best = good[-1]  # the most questions answered at that Hit@1
        out[f"threshold_for_hit@1_{TARGET_HIT}"] = round(float(threshold[best]), 4)
        out[f"coverage_at_hit@1_{TARGET_HIT}"] = round(float(coverage[best]), 4)
    return out


def _r(value: float) -> float:
    return round(float(value), 4)
