"""Which topic entities kgrag links from a question's text alone, against the topics the dataset gives.

Benchmarks hand the methods their topic entities; a user asking `kgrag ask KG "question"` does not, and the
methods then link the question's mentions themselves (`retrieval.topics.resolve_topics`). This measures that
step without an LLM, in seconds: per set, the share of questions whose given topic is among the linked ones,
how many entities are linked a question, and every question's linked names (to diff two revisions).

    python benchmarks/topic_linking.py --pair KGDIR=SPEC [--pair KGDIR=SPEC ...] [--limit N] [--out FILE.json]

SPEC is a `kgrag eval` dataset (`metaqa:FILE`, `jsonl:FILE`, `webqsp:FILE`, ...). Sets without topics (the
user-style KGs' questions) report only the linked names.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import emit_json
from kgrag.eval.datasets import load_dataset, select
from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.hybrid import HybridLinker
from kgrag.linking.normalize import normalize
from kgrag.retrieval.topics import resolve_topics


def link_set(kg_dir: str, spec: str, limit: int | None) -> dict:
    """The linking report of one (KG, dataset) pair."""
    kg = KnowledgeGraph.load(kg_dir)
    linker = HybridLinker(kg)
    examples = select(load_dataset(spec), limit=limit)
    rows, found, given = [], 0, 0
    for ex in examples:
        linked = [kg.entities[i] for i in resolve_topics(kg, ex.question, [], linker=linker)]
        rows.append({"question": ex.question, "given": ex.topic_entities, "linked": linked})
        if ex.topic_entities:
            given += 1
            found += bool({normalize(t) for t in ex.topic_entities} & {normalize(n) for n in linked})
    return {
        "kg": kg_dir,
        "dataset": spec,
        "n": len(rows),
        "given_topic_linked": round(found / given, 4) if given else None,
        "linked_per_question": round(statistics.mean(len(r["linked"]) for r in rows), 3) if rows else 0,
        "questions": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", action="append", required=True, metavar="KGDIR=SPEC")
    parser.add_argument("--limit", type=int, default=None, help="first N questions per group")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    sets = {}
    for pair in args.pair:
        kg_dir, sep, spec = pair.partition("=")
        if not sep:
            parser.error(f"--pair is KGDIR=SPEC, got {pair!r}")
        report = link_set(kg_dir, spec, args.limit)
        sets[pair] = report
        print(f"{pair}: n={report['n']} given topic linked={report['given_topic_linked']}", file=sys.stderr)
    emit_json({"command": " ".join(["python benchmarks/topic_linking.py", *sys.argv[1:]]), "sets": sets}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
