"""Fingerprint every method's retrieved evidence, to prove a refactor changed no behaviour (issue #23).

``snapshot`` runs ``method.retrieve`` (no LLM) for each question and records a sha256 of the evidence list
(text, entities, relations, triple ids, score rounded to 6 digits, source: order matters) per method and
question; ``compare`` reads two snapshots and lists every question whose evidence differs.

    python benchmarks/retrieval_snapshot.py snapshot KG -d metaqa:Q1 -d metaqa:Q2 --sample 300 \
        --methods frag,kaping,byokg-scoring --out before.json
    python benchmarks/retrieval_snapshot.py compare before.json after.json   # exit 1 on any difference

A full dev set takes hours for the slower methods on 2 cores, so ``--shard K/N`` snapshots every N-th question
from the K-th (0-based) into a file of its own, and ``compare`` reads globs (``'before/*.json'``), merging the
shards of each side: a run stopped half-way keeps the shards it finished.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_METHODS = "frag,kaping,byokg-scoring,byokg-agentic,decompose,ultrag"


def fingerprint(evidence: list) -> str:
    """One digest of an evidence list; scores rounded so float noise in the last bits does not count."""
    items = [
        [ev.text, ev.entities, ev.relations, ev.triples, None if ev.score is None else round(ev.score, 6), ev.source]
        for ev in evidence
    ]
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


EMPTY = fingerprint([])


def snapshot(args: argparse.Namespace) -> None:
    from kgrag.eval.datasets import load_datasets, select
    from kgrag.graph.kg import KnowledgeGraph
    from kgrag.methods import registry

    kg = KnowledgeGraph.load(args.kg)
    examples = select(load_datasets(args.dataset), sample=args.sample, seed=args.seed)
    if args.shard:
        k, n = (int(x) for x in args.shard.split("/"))
        examples = examples[k::n]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    out: dict = {"commit": commit, "questions": len(examples), "methods": {}, "seconds": {}}
    for name in args.methods.split(","):
        method = registry.get(name)(kg, llm=None)
        start = time.perf_counter()
        prints = {}
        for k, ex in enumerate(examples, 1):
            prints[ex.id] = fingerprint(method.retrieve(ex.question, ex.topic_entities))
            if k % 100 == 0:
                print(f"{name}: {k}/{len(examples)}", file=sys.stderr, flush=True)
        out["methods"][name] = prints
        out["seconds"][name] = round(time.perf_counter() - start, 1)
        print(f"{name}: {len(prints)} questions in {out['seconds'][name]} s", file=sys.stderr, flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1), "utf-8")


def load_snapshots(pattern: str) -> dict:
    """One snapshot file, or the merge of every file a glob matches (the shards of one side)."""
    files = sorted(glob.glob(pattern)) or [pattern]
    merged: dict = {"commit": None, "questions": 0, "methods": {}}
    for file in files:
        part = json.loads(Path(file).read_text("utf-8"))
        if merged["commit"] not in (None, part["commit"]):
            raise SystemExit(f"{file}: commit {part['commit']}, the other shards are {merged['commit']}")
        merged["commit"] = part["commit"]
        merged["questions"] += part["questions"]
        for name, prints in part["methods"].items():
            merged["methods"].setdefault(name, {}).update(prints)
    return merged


def compare(args: argparse.Namespace) -> int:
    before = load_snapshots(args.before)
    after = load_snapshots(args.after)
    differing = 0
    report: dict = {"before": before["commit"], "after": after["commit"], "questions": before["questions"]}
    for name, prints in before["methods"].items():
        other = after["methods"].get(name)
        if other is None:
            print(f"{name}: missing from {args.after}")
            differing += 1
            continue
        changed = [qid for qid, digest in prints.items() if other.get(qid) != digest]
        differing += len(changed)
        example = f"; e.g. {changed[:5]}" if changed else ""
        print(f"{name}: {len(prints) - len(changed)}/{len(prints)} identical{example}")
        empty = sum(digest == EMPTY for digest in prints.values())
        report[name] = {"identical": len(prints) - len(changed), "of": len(prints), "empty_evidence": empty}
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    return 1 if differing else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot")
    snap.add_argument("kg")
    snap.add_argument("-d", "--dataset", action="append", required=True)
    snap.add_argument("--sample", type=int, default=None, help="questions per group (default: all)")
    snap.add_argument("--seed", type=int, default=0)
    snap.add_argument("--methods", default=DEFAULT_METHODS)
    snap.add_argument("--shard", help="K/N: every N-th question from the K-th (0-based)")
    snap.add_argument("--out", required=True)
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("before", help="a snapshot file or a glob of shard files")
    cmp_.add_argument("after", help="a snapshot file or a glob of shard files")
    cmp_.add_argument("--out", help="write the comparison as JSON")
    args = parser.parse_args()
    if args.command == "snapshot":
        snapshot(args)
    else:
        sys.exit(compare(args))


if __name__ == "__main__":
    main()
