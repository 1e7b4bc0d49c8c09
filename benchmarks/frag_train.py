"""Train and validate FRAG's two question classifiers on MetaQA dev, and write the models kgrag ships.

* the **hop router** (question → hop count), labels from which file a question comes from;
* the **pattern scorer** (question → relation pattern, e.g. ``starred_actors_inv>directed_by``), weakly
  labelled without any MetaQA-specific metadata: for each training question, the pattern of the question's
  hop count whose endpoints best match the gold answers (F1) around the topic entity (FRAG-F style feedback:
  the supervision is "which paths lead to the answers", obtainable for any KG with question/answer pairs).

Only the MetaQA *dev* sets are shared, so each hop file is split (seeded) into a training part and a held-back
validation part. Reported numbers are on the validation part; the shipped models are fitted on the training
part only, so they are what users get.

    python benchmarks/frag_train.py [--data ../shared/data/metaqa] [--kg .kgrag/metaqa] [--pattern-train 4000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np

from kgrag.graph.store import load_kg
from kgrag.methods.frag.patterns import best_patterns
from kgrag.methods.frag.router import HopRouter, PatternClassifier

ROOT = Path(__file__).resolve().parents[1]
_BRACKET = re.compile(r"\[([^\]]*)\]")


def read_hop_file(data: Path, hops: int) -> tuple[list[str], list[list[str]], list[str]]:
    name = f"qa_{hops}hop_dev.txt"
    path = data / name if (data / name).exists() else data / f"{name}.gz"
    opener = gzip.open if path.suffix == ".gz" else open
    questions, answers = [], []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                q, a = line.rstrip("\n").split("\t")
                questions.append(q)
                answers.append(a.split("|"))
    qtypes = (data / f"qa_{hops}hop_dev_qtype.txt").read_text(encoding="utf-8").split()
    return questions, answers, qtypes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "metaqa")
    parser.add_argument("--kg", type=Path, default=ROOT / ".kgrag" / "metaqa")
    parser.add_argument("--models", type=Path, default=ROOT / "src" / "kgrag" / "data")
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results" / "frag_train.json")
    parser.add_argument("--validation", type=float, default=0.2)
    parser.add_argument("--pattern-train", type=int, default=4000, help="training questions per hop for patterns")
    parser.add_argument("--pattern-validation", type=int, default=1000, help="validation questions per hop")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    split: dict[str, list] = {k: [] for k in ("train", "val")}
    for hops in (1, 2, 3):
        questions, answers, qtypes = read_hop_file(args.data, hops)
        order = rng.permutation(len(questions))
        n_val = int(len(questions) * args.validation)
        for rank, i in enumerate(order):
            part = "val" if rank < n_val else "train"
            split[part].append((questions[i], hops, answers[i], qtypes[i] if i < len(qtypes) else "?"))

    # ---------------------------------------------------------------- hop router
    train_q = [r[0] for r in split["train"]]
    train_y = [r[1] for r in split["train"]]
    val_q = [r[0] for r in split["val"]]
    val_y = np.asarray([r[1] for r in split["val"]])
    kg = load_kg(args.kg)
    # the shipped models are used by default only on this KG (frag's router="auto"/patterns="auto")
    provenance = {"kg_checksum": kg.checksum, "questions": "MetaQA dev 1/2/3-hop, seeded training split"}
    start = time.perf_counter()
    router = HopRouter.fit(train_q, train_y)
    router.provenance = provenance
    router_fit = time.perf_counter() - start
    pred = router.predict(val_q)
    unbracketed = router.predict([_BRACKET.sub(r"\1", q) for q in val_q])
    router_path = router.save(args.models / "frag_router.npz")
    router_result = {
        "train_questions": len(train_q),
        "validation_questions": len(val_q),
        "validation_accuracy": round(float(np.mean(pred == val_y)), 5),
        "validation_accuracy_per_hop": {f"{h}hop": round(float(np.mean(pred[val_y == h] == h)), 5) for h in (1, 2, 3)},
        "validation_accuracy_names_not_masked": round(float(np.mean(unbracketed == val_y)), 5),
        "errors_by_question_type": dict(Counter(r[3] for r, p in zip(split["val"], pred) if p != r[1]).most_common(10)),
        "features": len(router.vocab),
        "fit_seconds": round(router_fit, 2),
        "model_bytes": router_path.stat().st_size,
    }
    print(json.dumps({"router": router_result}, indent=2), flush=True)

    # ---------------------------------------------------------------- pattern scorer

    def labelled(rows: list, per_hop: int) -> tuple[list[str], list[tuple[str, ...]], list[float]]:
        qs, labels, f1s = [], [], []
        for hops in (1, 2, 3):
            subset = [r for r in rows if r[1] == hops][:per_hop]
            for question, h, answers, _ in subset:
                topics = [kg.entity_id(name) for name in _BRACKET.findall(question)]
                topics = [t for t in topics if t is not None]
                tied, f1 = best_patterns(kg, topics, answers, h, exact_length=True)
                if tied:
                    qs.append(question)
                    labels.append(tuple(tied))
                    f1s.append(f1)
        return qs, labels, f1s

    start = time.perf_counter()
    p_train_q, p_train_y, p_train_f1 = labelled(split["train"], args.pattern_train)
    p_val_q, p_val_y, _ = labelled(split["val"], args.pattern_validation)
    label_seconds = time.perf_counter() - start
    start = time.perf_counter()
    scorer = PatternClassifier.fit(p_train_q, p_train_y)
    scorer.provenance = provenance
    scorer_fit = time.perf_counter() - start
    scorer_path = scorer.save(args.models / "frag_patterns.npz")
    p_pred = scorer.predict(p_val_q)
    val_hops = np.asarray([labels[0].count(">") + 1 for labels in p_val_y])
    correct = np.asarray([pred in labels for pred, labels in zip(p_pred, p_val_y)])  # any of the tied labels
    scorer_result = {
        "train_questions": len(p_train_q),
        "validation_questions": len(p_val_q),
        "labels": len(scorer.labels),
        "weak_label_f1_mean": round(float(np.mean(p_train_f1)), 4),
        "weak_labels_tied_share": round(float(np.mean([len(t) > 1 for t in p_train_y])), 4),
        "validation_top1_pattern_accuracy": round(float(np.mean(correct)), 5),
        "validation_top1_per_hop": {f"{h}hop": round(float(np.mean(correct[val_hops == h])), 5) for h in (1, 2, 3)},
        "labelling_seconds": round(label_seconds, 1),
        "fit_seconds": round(scorer_fit, 2),
        "features": len(scorer.vocab),
        "model_bytes": scorer_path.stat().st_size,
    }
    print(json.dumps({"pattern_scorer": scorer_result}, indent=2), flush=True)
    result = {"seed": args.seed, "router": router_result, "pattern_scorer": scorer_result}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
