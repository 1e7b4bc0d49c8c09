"""Time to a user's first answer: `kgrag ask` from a fresh process, two source trees side by side.

A newcomer's first question pays for everything a long-running service pays once: starting Python, loading the
KG, the embedder and the model, then linking, retrieval and the LLM call. This script runs the same ``kgrag
ask`` (no response cache, so the model is really called) alternately with two source trees — e.g. a git
worktree at the commit before a change and the working tree after it — so both see the same machine state, and
writes the wall seconds of each run, their medians and the ratio to ``benchmarks/results/first_answer.json``.

Usage: python benchmarks/first_answer.py KG_DIR "question" --before SRC_DIR [--after SRC_DIR] [--runs 4]
           [--method frag] [--label TEXT]
``SRC_DIR`` is a tree's ``src`` directory (put first on PYTHONPATH); ``--after`` defaults to this checkout's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "first_answer.json"


def timed_ask(src: Path, kg: str, question: str, method: str) -> dict:
    """One ``kgrag ask --json`` in a fresh interpreter with ``src`` first on the path: wall seconds, and the
    seconds the answer itself reports (from the method's start, so without start-up and KG load)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "kgrag", "ask", kg, question, "--method", method, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"kgrag ask failed with {src}: {proc.stderr.strip()[-500:]}")
    answer = json.loads(proc.stdout)
    seconds = round(answer["usage"]["seconds"], 3)
    return {"wall": round(wall, 3), "answer_seconds": seconds, "answers": answer["answers"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kg")
    parser.add_argument("question")
    parser.add_argument("--before", type=Path, required=True, help="src directory of the baseline tree")
    parser.add_argument("--after", type=Path, default=ROOT / "src", help="src directory of the changed tree")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--method", default="frag")
    parser.add_argument("--label", default="", help="what differs between the trees (recorded)")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    timed_ask(trees["after"], args.kg, args.question, args.method)  # warm the page cache for both: not recorded
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for i in range(args.runs):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        for name in order:
            runs[name].append(timed_ask(trees[name], args.kg, args.question, args.method))
            print(name, runs[name][-1], flush=True)
    medians = {name: statistics.median(r["wall"] for r in rows) for name, rows in runs.items()}
    result = {
        "what": "wall seconds of `kgrag ask --json` from a fresh process, no response cache, trees alternated",
        "label": args.label,
        "kg": args.kg,
        "question": args.question,
        "method": args.method,
        "trees": {name: str(path) for name, path in trees.items()},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "runs": runs,
        "median_wall": medians,
        "speedup_before_over_after": round(medians["before"] / medians["after"], 3),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"median_wall": medians, "speedup": result["speedup_before_over_after"]}))


if __name__ == "__main__":
    main()
