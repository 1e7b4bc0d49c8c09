"""Write a question log for `kgrag adapt --asked` from dev question files: N questions per group (hop), drawn
with a seed, none of an evaluation sample (`kgrag bench ... --sample S --seed E` draws the same one), topic
entities kept and answers dropped — what a deployed system's log holds.

    python benchmarks/asked_log.py OUT.jsonl metaqa:DATA/metaqa/qa_1hop_dev.txt ... [--per-group 150]
        [--seed 11] [--exclude-sample 30 --exclude-seed 7]
"""

from __future__ import annotations

import argparse
import json
import random

from kgrag.eval.datasets import load_datasets, select


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--per-group", type=int, default=150)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--exclude-sample", type=int, default=30)
    parser.add_argument("--exclude-seed", type=int, default=7)
    args = parser.parse_args()
    examples = load_datasets(args.datasets)
    held = {(ex.group, ex.id) for ex in select(examples, sample=args.exclude_sample, seed=args.exclude_seed)}
    groups: dict[str, list] = {}
    for ex in examples:
        if (ex.group, ex.id) not in held:
            groups.setdefault(ex.group, []).append(ex)
    rng = random.Random(args.seed)
    with open(args.out, "w", encoding="utf-8") as fh:
        for group, items in groups.items():
            for ex in rng.sample(items, min(args.per_group, len(items))):
                row = {"id": ex.id, "question": ex.question, "topic_entities": ex.topic_entities, "group": group}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
