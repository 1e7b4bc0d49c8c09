"""What decompose's one-step plan reads (retrieval only, no LLM): the paper's top-K against facts joined up.

A plan of one sub-question is the question restated, and its facts are ranked against the whole question
(``Decompose.retrieve``). This measures, per KG and question group and per ``lone_step`` setting, the share of
questions whose facts

- ``in``: name a gold answer at all;
- ``joined``: hold a chain from a question entity to a gold answer (what answer support needs: a gold answer the
  facts name but no chain joins is one a model can only guess from unrelated facts);

and the mean number of facts read.

    python benchmarks/decompose_lone_step.py benchmarks/suites/metaqa.toml --limit 40 \\
        --kg-cache /tmp/bench/kgs --data ../shared/data [--out result.json]
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections import defaultdict
from pathlib import Path

from bench_common import emit_json
from kgrag.eval.datasets import select
from kgrag.eval.suite import load_questions
from kgrag.eval.suite_build import build_kg
from kgrag.eval.suite_file import load_suite
from kgrag.methods import get as get_method
from kgrag.methods.support import answer_support

SETTINGS = ("similarity", "connected")


def measure(kg, examples) -> dict[str, dict]:
    """Per question group and setting: n, the shares ``in`` and ``joined`` and the mean number of facts."""
    methods = {s: get_method("decompose")(kg, llm=None, lone_step=s) for s in SETTINGS}
    counts: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for ex in examples:
        gold = [name for name in ex.answers if kg.find_entity(name) is not None]
        for setting, method in methods.items():
            evidence = method.retrieve(ex.question, ex.topic_entities)
            named = {kg.find_entity(n) for ev in evidence for n in ev.entities}
            row = counts[ex.group or "all"]
            row[f"{setting}_in"].append(float(any(kg.find_entity(g) in named for g in gold)))
            joined = answer_support(kg, ex.question, gold, evidence, ex.topic_entities)
            row[f"{setting}_joined"].append(float(any(chain for chain in joined.values())))
            row[f"{setting}_facts"].append(float(len(evidence)))
    return {
        group: {"n": len(row["similarity_in"]), **{k: round(sum(v) / len(v), 3) for k, v in sorted(row.items())}}
        for group, row in sorted(counts.items())
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--limit", type=int, help="the first N questions per group")
    parser.add_argument("--kg-cache", type=Path, default=Path("/tmp/bench/kgs"))
    parser.add_argument("--data", type=Path, help="the shared data directory the suite's ${data} names")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    suite = load_suite(args.suite, data_dir=args.data)
    start = time.perf_counter()
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    report = {
        "what": "decompose, one-step plan, retrieval only: share of questions whose facts name / join a gold answer",
        "command": f"python benchmarks/decompose_lone_step.py {args.suite}"
        + (f" --limit {args.limit}" if args.limit else ""),
        "commit": git.stdout.strip(),
        "kgs": {},
    }
    for entry in suite.kgs:
        kg = build_kg(entry, args.kg_cache).kg
        examples = [ex for ex in select(load_questions(entry), limit=args.limit) if ex.answers]
        report["kgs"][entry.name] = measure(kg, examples)
    report["seconds"] = round(time.perf_counter() - start, 1)
    emit_json(report, *([args.out] if args.out else []))


if __name__ == "__main__":
    main()
