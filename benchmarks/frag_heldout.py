"""Hit@1 of an end-to-end MetaQA run on the questions FRAG's shipped pattern scorer was not trained on.

`frag_train.py` fits the pattern scorer on (at most) the first 4000 training questions per hop of a seeded
80/20 split of MetaQA dev; an end-to-end sample drawn from dev overlaps them. This reproduces that split and
reports Hit@1 on all sampled questions and on those outside the scorer's training set.

    python benchmarks/frag_heldout.py RUN_1HOP RUN_2HOP RUN_3HOP [--method frag]   (kgrag eval --out dirs)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from frag_train import read_hop_file

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "metaqa"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs=3, type=Path, help="the 1-, 2- and 3-hop run directories")
    parser.add_argument("--method", default="frag")
    parser.add_argument("--seed", type=int, default=0, help="frag_train.py's --seed")
    parser.add_argument("--validation", type=float, default=0.2, help="frag_train.py's --validation")
    parser.add_argument("--pattern-train", type=int, default=4000, help="frag_train.py's --pattern-train")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)  # drawn in frag_train.py's order: one permutation per hop file
    out = {}
    for hops, run in zip((1, 2, 3), args.runs):
        questions, _, _ = read_hop_file(DATA, hops)
        order = rng.permutation(len(questions))
        n_val = int(len(questions) * args.validation)
        trained = {int(i) for i in order[n_val:][: args.pattern_train]}
        lines = (run / args.method / "results.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line]
        held = [r for r in rows if int(r["id"].rsplit("-", 1)[1]) - 1 not in trained]  # ids are 1-based lines
        out[f"{hops}hop"] = {
            "n": len(rows),
            "hit@1": round(sum(r["hit@1"] for r in rows) / len(rows), 4),
            "n_not_in_pattern_training": len(held),
            "hit@1_not_in_pattern_training": round(sum(r["hit@1"] for r in held) / max(len(held), 1), 4),
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
