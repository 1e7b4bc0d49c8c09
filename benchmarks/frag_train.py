"""Train and validate FRAG's hop router on MetaQA dev, and write the model kgrag ships.

Only the MetaQA *dev* sets are shared, so each hop file is split (seeded) into a training part and a held-back
validation part; the validation accuracy is the number to report, and the shipped model is the one fitted on
the training part only (so the reported number is what users get). Questions keep MetaQA's ``[entity]``
brackets, which the router masks; a second validation pass strips the brackets' *names* entirely to check
that the model does not lean on them.

    python benchmarks/frag_router_train.py [--data ../shared/data/metaqa] [--out src/kgrag/data/frag_router.npz]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np

from kgrag.retrieval.router import HopRouter

ROOT = Path(__file__).resolve().parents[1]


def read_hop_file(data: Path, hops: int) -> tuple[list[str], list[str]]:
    name = f"qa_{hops}hop_dev.txt"
    path = data / name if (data / name).exists() else data / f"{name}.gz"
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        questions = [line.split("\t")[0] for line in fh if line.strip()]
    qtypes = (data / f"qa_{hops}hop_dev_qtype.txt").read_text(encoding="utf-8").split()
    return questions, qtypes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "metaqa")
    parser.add_argument("--out", type=Path, default=ROOT / "src" / "kgrag" / "data" / "frag_router.npz")
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results" / "frag_router.json")
    parser.add_argument("--validation", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    train_q, train_y, val_q, val_y, val_types = [], [], [], [], []
    for hops in (1, 2, 3):
        questions, qtypes = read_hop_file(args.data, hops)
        order = rng.permutation(len(questions))
        n_val = int(len(questions) * args.validation)
        for rank, i in enumerate(order):
            if rank < n_val:
                val_q.append(questions[i])
                val_y.append(hops)
                val_types.append(qtypes[i] if i < len(qtypes) else "?")
            else:
                train_q.append(questions[i])
                train_y.append(hops)

    start = time.perf_counter()
    router = HopRouter.fit(train_q, train_y)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    pred = router.predict(val_q)
    predict_us = (time.perf_counter() - start) / len(val_q) * 1e6
    val_y_arr = np.asarray(val_y)
    accuracy = float(np.mean(pred == val_y_arr))
    per_hop = {f"{h}hop": float(np.mean(pred[val_y_arr == h] == h)) for h in (1, 2, 3)}
    confusion = {f"{h}->{p}": int(((val_y_arr == h) & (pred == p)).sum()) for h in (1, 2, 3) for p in (1, 2, 3)}
    errors = Counter(t for t, p, y in zip(val_types, pred, val_y) if p != y)
    # Without entity names at all (as when a user's question has no brackets and linking masks nothing).
    import re

    stripped = [re.sub(r"\[([^\]]*)\]", r"\1", q) for q in val_q]
    accuracy_no_brackets = float(np.mean(router.predict(stripped) == val_y_arr))

    args.out.parent.mkdir(parents=True, exist_ok=True)
    router.save(args.out)
    result = {
        "train_questions": len(train_q),
        "validation_questions": len(val_q),
        "validation_accuracy": round(accuracy, 5),
        "validation_accuracy_per_hop": {k: round(v, 5) for k, v in per_hop.items()},
        "validation_accuracy_entity_names_unmasked": round(accuracy_no_brackets, 5),
        "confusion": confusion,
        "errors_by_question_type": dict(errors.most_common(10)),
        "features": len(router.vocab),
        "fit_seconds": round(fit_seconds, 2),
        "predict_us_per_question": round(predict_us, 1),
        "model_bytes": args.out.stat().st_size,
        "seed": args.seed,
    }
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
