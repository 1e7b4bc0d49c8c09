"""FRAG retrieval on MetaQA dev: answer recall with ≤ 32 paths, and non-LLM time per question by step.

For each sampled question (topic entity from MetaQA's brackets, as `kgrag eval` does) the method's LLM-free
pipeline runs once — route, PPR-pruned subgraph, relation ranking, paths, path ranking — and we record the
answer recall of the kept paths and the seconds of every step. Caches are warmed on a few questions first
(embedding model load, relation-pattern vectors), which is what a long-running service sees.

    python benchmarks/frag_bench.py [--per-hop 1000] [--kg .kgrag/metaqa] [--set top_paths=32 ...]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench_common import module_version, parse_value
from kgrag.eval.datasets import read_metaqa
from kgrag.eval.metrics import answer_recall
from kgrag.graph.store import load_kg
from kgrag.methods import Trace
from kgrag.methods import get as get_method

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "metaqa"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kg", type=Path, default=ROOT / ".kgrag" / "metaqa")
    parser.add_argument("--per-hop", type=int, default=1000, help="questions per hop file (0 = all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", dest="settings", action="append", default=[], help="method setting KEY=VALUE")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "frag.json")
    args = parser.parse_args()
    settings = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.settings)}

    kg = load_kg(args.kg)
    method = get_method("frag")(kg, **settings)
    files = {1: "qa_1hop_dev.txt", 2: "qa_2hop_dev.txt.gz", 3: "qa_3hop_dev.txt.gz"}
    rng = np.random.default_rng(args.seed)
    warm = read_metaqa(str(DATA / files[1]))[:5]
    for ex in warm:
        method._retrieve(ex.question, ex.topic_entities, Trace())

    results: dict = {"settings": settings, "per_hop": {}}
    for hops, name in files.items():
        examples = read_metaqa(str(DATA / name))
        if args.per_hop and args.per_hop < len(examples):
            examples = [examples[i] for i in sorted(rng.choice(len(examples), args.per_hop, replace=False))]
        recalls, totals, n_paths, routed = [], [], [], []
        steps: dict[str, list[float]] = defaultdict(list)
        for ex in examples:
            trace = Trace()
            start = time.perf_counter()
            evidence = method._retrieve(ex.question, ex.topic_entities, trace)[0]
            totals.append(time.perf_counter() - start)
            for step in trace.steps:
                steps[step.name].append(step.seconds)
                if step.name == "route":
                    routed.append(step.outputs["hops"])
            recalls.append(answer_recall([e for ev in evidence for e in ev.entities[1:]], ex.answers))
            n_paths.append(len(evidence))
        ms = np.asarray(totals) * 1000
        results["per_hop"][f"{hops}hop"] = {
            "questions": len(examples),
            "answer_recall": round(float(np.mean(recalls)), 4),
            "router_accuracy": round(float(np.mean(np.asarray(routed) == hops)), 4) if routed else None,
            "paths_mean": round(float(np.mean(n_paths)), 1),
            "ms_median": round(float(np.median(ms)), 2),
            "ms_p95": round(float(np.percentile(ms, 95)), 2),
            "step_ms_median": {k: round(float(np.median(v)) * 1000, 2) for k, v in steps.items()},
            "step_ms_p95": {k: round(float(np.percentile(v, 95)) * 1000, 2) for k, v in steps.items()},
        }
        print(json.dumps({f"{hops}hop": results["per_hop"][f"{hops}hop"]}), flush=True)
    all_ms = [v["ms_median"] for v in results["per_hop"].values()]
    results["ms_median_over_hops"] = round(float(np.median(all_ms)), 2)
    results["machine"] = {
        "python": platform.python_version(),
        "numpy": module_version("numpy"),
        "cpu_count": __import__("os").cpu_count(),
        "note": "2-core machine shared with other jobs during the run; warm caches",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
