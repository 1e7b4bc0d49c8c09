"""Which topic entities kgrag links from a question's text alone, against the topics the dataset gives.

Benchmarks hand the methods their topic entities; a user asking `kgrag ask KG "question"` does not, and the
methods then link the question's mentions themselves (`retrieval.topics.resolve_topics`). This measures that
step without an LLM, in seconds: per set, the share of questions whose given topic is among the linked ones,
how many entities are linked a question, and every question's linked names (to diff two revisions).

    python benchmarks/topic_linking.py --pair KGDIR=SPEC [--pair KGDIR=SPEC ...] [--limit N] [--out FILE.json]
        [--absent lower|capitalised|hyphenated]

SPEC is a `kgrag eval` dataset (`metaqa:FILE`, `jsonl:FILE`, `webqsp:FILE`, ...). Sets without topics (the
user-style KGs' questions) report only the linked names.

`--absent STYLE` asks about things the KG does not have: in each question that spells its given topic out (in
a set without topics: each entity its text links), the topic becomes a made-up name ("what movies did velmor
quandish star in", "... Velmor Quandish ...", "... velmor-quandish ..."), and `nothing_linked` is the share of
those questions that link no entity, so that every method withholds its answer (the other linked names are the
entities such a question is wrongly taken to be about).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import re
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

SYLLABLES = "vel mor quan dish tra bek sul non zar pix lo fen gri dov ast ul".split()


def made_up_name(rng: random.Random, style: str) -> str:
    """Two made-up words of two or three syllables each, written lower case, capitalised or hyphenated."""
    words = ["".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3)))) for _ in range(2)]
    if style == "capitalised":
        return " ".join(w.capitalize() for w in words)
    return ("-" if style == "hyphenated" else " ").join(words)


def absent_topic(ex, rng: random.Random, style: str, linker: HybridLinker):
    """``ex`` with its given topic, where the question spells it out, replaced by a made-up name; without given
    topics, every entity the question's text links replaced (else None)."""
    spans = [(s.start, s.end) for s in linker.find_mentions(ex.question)] if not ex.topic_entities else []
    for topic in ex.topic_entities:
        found = re.search(rf"(?<!\w){re.escape(topic)}(?!\w)", ex.question, flags=re.IGNORECASE)
        if found:
            spans = [found.span()]
            break
    if not spans:
        return None
    question = ex.question
    for start, end in sorted(spans, reverse=True):
        question = question[:start] + made_up_name(rng, style) + question[end:]
    return dataclasses.replace(ex, question=question, answers=[], topic_entities=[])


def link_set(kg_dir: str, spec: str, limit: int | None, absent: str | None = None) -> dict:
    """The linking report of one (KG, dataset) pair."""
    kg = KnowledgeGraph.load(kg_dir)
    linker = HybridLinker(kg)
    examples = select(load_dataset(spec), limit=limit)
    if absent:
        rng = random.Random(0)
        examples = [x for x in (absent_topic(ex, rng, absent, linker) for ex in examples) if x is not None]
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
        "nothing_linked": round(sum(not r["linked"] for r in rows) / len(rows), 4) if rows else None,
        "questions": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", action="append", required=True, metavar="KGDIR=SPEC")
    parser.add_argument("--limit", type=int, default=None, help="first N questions per group")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--absent", choices=("lower", "capitalised", "hyphenated"), default=None)
    args = parser.parse_args(argv)
    sets = {}
    for pair in args.pair:
        kg_dir, sep, spec = pair.partition("=")
        if not sep:
            parser.error(f"--pair is KGDIR=SPEC, got {pair!r}")
        report = link_set(kg_dir, spec, args.limit, args.absent)
        sets[pair] = report
        shares = f"given topic linked={report['given_topic_linked']} nothing linked={report['nothing_linked']}"
        print(f"{pair}: n={report['n']} {shares}", file=sys.stderr)
    emit_json({"command": " ".join(["python benchmarks/topic_linking.py", *sys.argv[1:]]), "sets": sets}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
