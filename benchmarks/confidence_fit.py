"""Fit the answer confidence (kgrag.methods.confidence) on evaluated dev questions, and say how well it holds.

Each input is a ``results.jsonl`` of ``kgrag eval`` / ``kgrag bench`` (rows carry the top answer's ``signals``
and whether it was right, ``hit@1``), named by the KG it was run on:

    python benchmarks/confidence_fit.py frag webqsp=RUN/webqsp-proxy/frag/results.jsonl \
        metaqa=RUN/metaqa/frag/results.jsonl ... --write

A logistic regression (L2-regularised, Newton's method: seven weights, a few hundred rows) is fitted per
method on every KG's rows. How well it holds on questions it was not fitted on is measured twice: leave one KG
out (fit on the others, score the one left out: a KG the user brings is always new) and two folds by question
id within the pool. ``--write`` stores the weights in ``src/kgrag/methods/confidence.json`` (one entry per
method and ``"*"``, the pool over methods, for methods never fitted); the measurements go to
``benchmarks/results/confidence.json``.

Weights for answers given with a trained artefact are fitted under ``METHOD:ARTEFACT`` (the key
``kgrag.methods.confidence.artefact_key`` makes of the artefact's provenance), e.g. frag with MetaQA's shipped
pattern scorer: ``python benchmarks/confidence_fit.py frag:b5d578a1589e metaqa=RUN/.../results.jsonl
--held-out metaqa=OTHER_RUN/.../results.jsonl --write``. ``--held-out`` scores rows of another run with the new
weights and, beside them, the confidence the rows were written with.
``--zero SIGNAL`` keeps a signal out of the fit (weight 0): ``first`` is 1 for nearly every top answer, so the
rows cannot say what it is worth (the pooled weights of 2026-12-06 were fitted with ``--zero first``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from kgrag.eval.calibration import calibration_summary
from kgrag.methods.confidence import SIGNALS, WEIGHTS_FILE

RESULTS = Path(__file__).with_name("results") / "confidence.json"


def load(spec: str) -> tuple[str, list[dict]]:
    kg, path = spec.split("=", 1)
    rows = [json.loads(line) for line in Path(path).read_text("utf-8").splitlines() if line.strip()]
    return kg, [r for r in rows if "signals" in r and not r.get("error")]


ZEROED: set[str] = set()  # --zero: signals the fit may not use (their column is 0, so their weight is 0)


def design(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Signals as a matrix (a row of zeros where the method gave no answer; 0 in a ``--zero`` signal's column) and
    the top answer's correctness."""
    x = np.array([[0.0 if s in ZEROED else float(r["signals"].get(s, 0.0)) for s in SIGNALS] for r in rows]).reshape(
        len(rows), len(SIGNALS)
    )
    return x, np.array([float(r["hit@1"]) for r in rows])


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> np.ndarray:
    """Weights ``[bias, *SIGNALS]`` of an L2-regularised logistic regression (the bias not penalised)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -30, 30)))
        grad = a.T @ (p - y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(w[0] + x @ w[1:], -30, 30)))


def flagged(scored: list[dict], thresholds: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8)) -> list[dict]:
    """At each threshold: the share of wrong answers flagged (ungrounded, or confidence below it) and the share of
    right answers kept (grounded and at or above it), issue #27's two sides of an abstention threshold."""
    wrong = [r for r in scored if not r["hit@1"]]
    right = [r for r in scored if r["hit@1"]]
    out = []
    for t in thresholds:
        caught = [not r.get("grounded", True) or r["confidence"] < t for r in wrong]
        kept = [bool(r.get("grounded", True)) and r["confidence"] >= t for r in right]
        out.append(
            {
                "threshold": t,
                "wrong_flagged": round(float(np.mean(caught)), 4) if caught else None,
                "right_kept": round(float(np.mean(kept)), 4) if kept else None,
            }
        )
    return out


def auc(scored: list[dict]) -> float | None:
    """How often a right answer is surer than a wrong one (ties count half): 1 separates them, 0.5 is chance."""
    right = np.array([r["confidence"] for r in scored if r["hit@1"]])
    wrong = np.array([r["confidence"] for r in scored if not r["hit@1"]])
    if not len(right) or not len(wrong):
        return None
    return round(float(((right[:, None] > wrong) + 0.5 * (right[:, None] == wrong)).mean()), 4)


def trust(scored: list[dict]) -> dict:
    """Calibration, separation and both sides of an abstention threshold for rows with a ``confidence``."""
    return {**calibration_summary(scored), "auc": auc(scored), "flagged": flagged(scored)}


def held_out(by_kg: dict[str, list[dict]]) -> dict:
    """ECE and risk–coverage on rows the weights were not fitted on: each KG left out in turn, and two folds."""
    out: dict = {"leave_one_kg_out": {}}
    pooled_rows: list[dict] = []
    for kg, rows in by_kg.items():
        rest = [r for other, rs in by_kg.items() if other != kg for r in rs]
        if not rest or not rows:
            continue
        x, y = design(rows)
        conf = predict(fit(*design(rest)), x)
        scored = [{**r, "confidence": float(c)} for r, c in zip(rows, conf)]
        out["leave_one_kg_out"][kg] = {
            "n": len(rows),
            "hit@1": round(float(y.mean()), 4),
            **calibration_summary(scored),
        }
        pooled_rows += scored
    if pooled_rows:
        out["leave_one_kg_out_pooled"] = calibration_summary(pooled_rows)
    rows = [r for rs in by_kg.values() for r in rs]
    fold = np.array([int(hashlib.sha256(str(r["id"]).encode()).hexdigest(), 16) % 2 for r in rows])
    scored = []
    for k in (0, 1):
        train = [r for r, f in zip(rows, fold) if f != k]
        test = [r for r, f in zip(rows, fold) if f == k]
        conf = predict(fit(*design(train)), design(test)[0])
        scored += [{**r, "confidence": float(c)} for r, c in zip(test, conf)]
    out["two_folds"] = trust(scored)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("method")
    ap.add_argument("runs", nargs="+", help="KG=results.jsonl")
    ap.add_argument("--write", action="store_true", help="store the fitted weights in the package")
    ap.add_argument("--held-out", action="append", default=[], metavar="KG=results.jsonl", help="rows to score only")
    ap.add_argument(
        "--zero",
        action="append",
        default=[],
        choices=SIGNALS,
        help="a signal the weights may not read, e.g. first: it is 1 for nearly every top answer, so top answers "
        "cannot say what it is worth and a weight on it would only move the other answers' confidence",
    )
    args = ap.parse_args()
    ZEROED.update(args.zero)
    by_kg: dict[str, list[dict]] = {}
    for spec in args.runs:
        kg, rows = load(spec)
        by_kg.setdefault(kg, []).extend(rows)
    rows = [r for rs in by_kg.values() for r in rs]
    if not rows:
        print("no rows with signals: re-run the evaluation with this version of kgrag", file=sys.stderr)
        return 1
    w = fit(*design(rows))
    weights = {"bias": round(float(w[0]), 4), **{s: round(float(v), 4) for s, v in zip(SIGNALS, w[1:])}}
    report = {
        "method": args.method,
        "fitted_on": {kg: len(rs) for kg, rs in by_kg.items()},
        "zeroed": sorted(ZEROED),
        "hit@1": round(float(design(rows)[1].mean()), 4),
        "weights": weights,
        **held_out(by_kg),
    }
    fitted_ids = {(kg, str(r["id"])) for kg, rs in by_kg.items() for r in rs}
    for spec in args.held_out:
        kg, rows = load(spec)
        rows = [r for r in rows if (kg, str(r["id"])) not in fitted_ids]  # a sample may share questions
        groups: dict[str, list[dict]] = {}
        for r in rows:
            groups.setdefault(r.get("group") or "all", []).append(r)
        if len(groups) > 1:
            groups["all"] = rows
        report.setdefault("held_out", {})[spec] = {
            group: {
                "n": len(rs),
                "hit@1": round(float(design(rs)[1].mean()), 4),
                "fitted_now": trust([{**r, "confidence": float(c)} for r, c in zip(rs, predict(w, design(rs)[0]))]),
                "as_written": trust(rs),
            }
            for group, rs in groups.items()
        }
    print(json.dumps(report, indent=1))
    results = json.loads(RESULTS.read_text("utf-8")) if RESULTS.exists() else {}
    results[args.method] = report
    RESULTS.write_text(json.dumps(results, indent=1) + "\n", "utf-8")
    if args.write:
        stored = json.loads(WEIGHTS_FILE.read_text("utf-8")) if WEIGHTS_FILE.exists() else {"weights": {}}
        stored["weights"][args.method] = weights
        stored.setdefault("fitted_on", {})[args.method] = report["fitted_on"]
        about = "written by benchmarks/confidence_fit.py; held-out calibration in benchmarks/results/confidence.json"
        stored.setdefault("about", about)  # an existing note (why a weight set is kept) stays
        WEIGHTS_FILE.write_text(json.dumps(stored, indent=1) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
