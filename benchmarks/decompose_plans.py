"""How often the decomposition prompt splits a MetaQA question into as many sub-questions as it has hops.

decompose's end-to-end Hit@1 on 1-hop questions is held back mostly by plans with too many steps: with the
default 1.5B model, 42 of the 100 sampled 1-hop questions got two sub-questions, and those were answered right
20 times out of 42 against 52 of 58 for one-step plans. This script measures only the planning call (one
LLM call per question, no retrieval), on dev questions *outside* the seeded end-to-end sample, so a prompt
variant can be tried in minutes without tuning on the questions the e2e numbers come from.

    python benchmarks/decompose_plans.py [--per-hop 30] [--seed 1] [--prompt-dir DIR] [--llm SPEC] [--cache F]

``--prompt-dir`` holds a variant ``decompose_questions.toml`` (same variables and tags as the packaged one).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path

from kgrag.eval.datasets import load_dataset, select
from kgrag.methods.decompose import parse_decomposition
from kgrag.models.llm import load_llm
from kgrag.prompts import load_prompt

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "metaqa"
FILES = {1: "qa_1hop_dev.txt", 2: "qa_2hop_dev.txt.gz", 3: "qa_3hop_dev.txt.gz"}


def held_out(hop: int, per_hop: int, seed: int, e2e_sample: int, e2e_seed: int):
    """``per_hop`` questions of one hop file, none of them in the end-to-end sample (``e2e_sample``, ``e2e_seed``)."""
    examples = load_dataset(f"metaqa:{DATA / FILES[hop]}")
    taken = {ex.id for ex in select(examples, sample=e2e_sample, seed=e2e_seed)}
    rest = [ex for ex in examples if ex.id not in taken]
    return random.Random(seed).sample(rest, min(per_hop, len(rest)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-hop", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--e2e-sample", type=int, default=100, help="size of the e2e sample to keep out")
    ap.add_argument("--e2e-seed", type=int, default=0)
    ap.add_argument("--prompt-dir", default=None)
    ap.add_argument("--llm", default=None)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--out", default="benchmarks/results/decompose_plans.json")
    args = ap.parse_args()

    prompt = load_prompt("decompose_questions", args.prompt_dir)
    llm = load_llm(args.llm, cache=args.cache)
    report: dict = {
        "what": "decomposition plans vs MetaQA hop count, dev questions outside the e2e sample",
        "prompt": args.prompt_dir or "kgrag/prompts/decompose_questions.toml",
        "llm": getattr(llm, "model_id", str(llm)),
        "per_hop": args.per_hop,
        "seed": args.seed,
        "hops": {},
        "rows": [],
    }
    for hop in (1, 2, 3):
        counts: Counter[int] = Counter()
        seconds = []
        for ex in held_out(hop, args.per_hop, args.seed, args.e2e_sample, args.e2e_seed):
            started = time.perf_counter()
            gen = llm.run_prompt(prompt, question=ex.question)
            seconds.append(time.perf_counter() - started)
            plan = parse_decomposition(gen.text, ex.question)
            counts[len(plan.subquestions)] += 1
            report["rows"].append({"hop": hop, "question": ex.question, "subquestions": plan.subquestions})
        n = sum(counts.values())
        report["hops"][f"{hop}hop"] = {
            "n": n,
            "steps_equal_hops": round(counts[hop] / n, 3) if n else None,
            "steps": {str(k): v for k, v in sorted(counts.items())},
            "seconds_median": round(sorted(seconds)[len(seconds) // 2], 2) if seconds else None,
        }
        print(f"{hop}-hop: {report['hops'][f'{hop}hop']}", flush=True)
        Path(args.out).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
