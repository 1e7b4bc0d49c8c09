"""Summarise end-to-end `kgrag eval` runs that were run per group (one process per MetaQA hop file).

Local-LLM runs are slow on a 2-core machine, so each hop file gets its own `kgrag eval --sample 100 --seed S`
process. The runner answers questions in sample order and a sample of K is a prefix of the sample of 100
(Python's ``random.sample`` draws one by one), so a run stopped early is itself a seeded random sample of its
first K questions. This script reads each run's ``results.jsonl`` and writes per-hop metrics with n and 95%
bootstrap intervals — never mixing in questions that were not answered.

    python benchmarks/e2e_summary.py --method frag /tmp/e2e/frag-1hop /tmp/e2e/frag-2hop ... --out FILE.json \
        [--compare kaping=/tmp/e2e/kaping-1hop ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from kgrag.eval.runner import bootstrap_ci

METRICS = ("hit@1", "hit", "f1", "answer_recall", "llm_calls", "prompt_tokens", "completion_tokens", "seconds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="`kgrag eval --out` directories")
    parser.add_argument("--method", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--note", default="")
    parser.add_argument(
        "--step-share",
        action="append",
        default=[],
        metavar="STEP.KEY",
        help="share of questions whose first STEP has a true KEY in the compact trace (e.g. write_query.valid)",
    )
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="METHOD=RUN_DIR",
        help="another method's run on the same sample: its Hit@1 on exactly the questions answered here",
    )
    args = parser.parse_args()
    groups: dict[str, list[dict]] = {}
    for run in args.runs:
        for row in read_rows(run, args.method):
            groups.setdefault(row["group"], []).append(row)
    others: dict[str, dict[str, dict]] = {}
    for spec in args.compare:
        method, _, run = spec.partition("=")
        for row in read_rows(Path(run), method):
            others.setdefault(method, {})[row["id"]] = row
    summary: dict = {"method": args.method, "note": args.note, "groups": {}}
    for group, rows in sorted(groups.items()):
        entry: dict = {"n": len(rows), "errors": sum(bool(r.get("error")) for r in rows)}
        for metric in METRICS:
            values = [float(r.get(metric) or 0.0) for r in rows]
            entry[metric] = round(float(np.mean(values)), 4)
            if metric in ("hit@1", "hit", "f1"):
                entry[f"{metric}_ci95"] = [round(v, 4) for v in bootstrap_ci(values)]
        entry["seconds_median"] = round(float(np.median([r["seconds"] for r in rows])), 2)
        for spec in args.step_share:
            entry[f"share:{spec}"] = step_share(rows, spec)
        for method, by_id in others.items():
            same = [by_id[r["id"]]["hit@1"] for r in rows if r["id"] in by_id]
            if len(same) == len(rows):  # only a comparison on every question answered here
                entry[f"{method}_hit@1_same_questions"] = round(float(np.mean(same)), 4)
        summary["groups"][group] = entry
    all_rows = [r for rows in groups.values() for r in rows]
    summary["all"] = {
        "n": len(all_rows),
        "hit@1_macro_over_groups": round(float(np.mean([g["hit@1"] for g in summary["groups"].values()])), 4),
        "llm_calls_mean": round(float(np.mean([r["llm_calls"] for r in all_rows])), 3),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2))


def read_rows(run: Path, method: str) -> list[dict]:
    path = run / method / "results.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def step_share(rows: list[dict], spec: str) -> float | None:
    """Share of rows whose first step named STEP has a true KEY (None when no row recorded steps)."""
    step_name, key = spec.split(".", 1)
    flags = []
    for row in rows:
        if "steps" not in row:
            continue
        first = next((s for s in row["steps"] if s["name"] == step_name), None)
        flags.append(bool(first and first.get(key)))
    return round(float(np.mean(flags)), 4) if flags else None


if __name__ == "__main__":
    main()
