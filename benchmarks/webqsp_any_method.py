"""The share of the WebQSP proxy's first dev questions that some recorded run answered right.

It bounds what choosing among the methods and settings kgrag has tried could reach with the default local model.

Issue #24 asks Hit@1 >= 0.80 of frag, ultrag and byokg on the proxy's first 100 dev questions. Every committed
result file in ``benchmarks/results/`` that records a Hit@1 per proxy question (frag, kaping, ultrag, byokg,
decompose, under the settings each file compares) and any ``results.jsonl`` of a fresh ``kgrag bench`` run
given here are read; a question counts when at least one of them answered it right. An oracle that picked the
right run per question after the fact would score that share; no single method can score more without
answering some question no recorded run has answered.

    python benchmarks/webqsp_any_method.py --data ../shared/data [RUN/results.jsonl ...] --out FILE.json
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_common import emit_json

RESULTS = Path(__file__).parent / "results"


def hits(value: Any) -> Iterator[float]:
    """Every Hit@1 number in a recorded value: a number, a list of them, or a dict of runs holding them."""
    if isinstance(value, bool | int | float):
        yield float(value)
    elif isinstance(value, list):
        for v in value:
            yield from hits(v)
    elif isinstance(value, dict):  # a run's record: only its Hit@1, and the runs nested in it
        for k, v in value.items():
            if k == "hit@1" or isinstance(v, dict):
                yield from hits(v)


def questions(tree: Any) -> Iterator[tuple[str, float]]:
    """(question id, best Hit@1 recorded for it) for each per-question record of a proxy question in ``tree``."""
    if isinstance(tree, dict):
        qid = tree.get("id")
        if isinstance(qid, str) and "WebQTest-" in qid:
            recorded = [h for k, v in tree.items() if k.startswith("hit@1") or isinstance(v, dict) for h in hits(v)]
            if recorded:
                yield qid.strip("/"), max(recorded)
            return
        for v in tree.values():
            yield from questions(v)
    elif isinstance(tree, list):
        for v in tree:
            yield from questions(v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, help="results.jsonl files of fresh runs")
    parser.add_argument("--data", type=Path, required=True, help="the shared data directory")
    parser.add_argument("--first", type=int, default=100)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with gzip.open(args.data / "webqsp_gnnrag" / "questions.jsonl.gz", "rt", encoding="utf-8") as f:
        ids = [json.loads(line)["id"] for _, line in zip(range(args.first), f, strict=False)]
    right: dict[str, set[str]] = {qid: set() for qid in ids}
    sources: dict[str, int] = {}
    for path in sorted(RESULTS.glob("*.json")):
        found = [(q, h) for q, h in questions(json.loads(path.read_text("utf-8"))) if q in right]
        if found:
            sources[path.name] = len({q for q, _ in found})
        for q, h in found:
            if h >= 1.0:
                right[q].add(path.name)
    for run in args.runs:
        rows = [json.loads(line) for line in run.read_text("utf-8").splitlines() if line.strip()]
        sources[str(run)] = sum(r["id"].strip("/") in right for r in rows)
        for r in rows:
            if r["id"].strip("/") in right and r["hit@1"] >= 1.0:
                right[r["id"].strip("/")].add(str(run))
    answered = sorted(q for q, s in right.items() if s)
    report = {
        "what": __doc__.splitlines()[0],
        "questions": len(ids),
        "right_in_some_run": len(answered) / len(ids),
        "sources": sources,
        "never_right": sorted(set(ids) - set(answered), key=ids.index),
    }
    emit_json(report, args.out)


if __name__ == "__main__":
    main()
