"""How often zero-shot FRAG's best-scored relation pattern reaches a gold answer (retrieval only, no LLM).

Answer recall says whether the evidence *holds* a gold answer; a small model reading that evidence answers
best when the pattern scored first is the question's, since it is written first and (with
``grounding=score``) its ends are put first. This measures that directly, per KG and question group, for the
zero-shot alignment scorer with any settings (``--set mention_cost=0.15``), so changes to the scorer can be
compared without an LLM run:

- ``top1``: the best-scored pattern reaches a gold answer;
- ``any``: some scored pattern does (the ceiling of ``top1``);
- ``rank``: the median rank of the first pattern that does, among the questions where one does.

    python benchmarks/frag_pattern_top1.py benchmarks/suites/metaqa_renamed.toml --limit 100 \\
        --kg-cache /tmp/bench/kgs --data ../shared/data [--set KEY=VALUE ...] [--out result.json]
    python benchmarks/frag_pattern_top1.py SUITE --sample 100 --seed 99 ...   # a seeded draw per group
    python benchmarks/frag_pattern_top1.py SUITE --llm llamacpp:qwen2.5-coder-1.5b --set question_fit=5 ...
    python benchmarks/frag_pattern_top1.py SUITE ... --set X=Y --out after.json --against before.json

The report keeps every question's best pattern and the rank of the first reaching a gold answer, so two runs
over the same questions can be paired: ``--against`` prints, per KG, the questions whose best pattern reaches a
gold answer in one run and not in the other (the paired difference a setting is judged by).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench_common import emit_json, parse_value
from kgrag.eval.datasets import select
from kgrag.eval.suite import load_questions
from kgrag.eval.suite_build import build_kg
from kgrag.eval.suite_file import load_suite
from kgrag.methods.base import Trace
from kgrag.methods.frag import Frag
from kgrag.methods.frag.patterns import pattern_label
from kgrag.models.llm import load_llm


class _Recording(Frag):
    """Frag that keeps the last question's pattern scores (as the paths are chosen by them: with an LLM, after
    ``question_fit``) and the patterns they score."""

    last: tuple | None = None

    def _choose(self, topics, reach, scores, *args, **kwargs):
        self.last = (reach, scores)
        return super()._choose(topics, reach, scores, *args, **kwargs)


def measure(kg, examples, settings: dict, llm=None) -> tuple[dict, list[dict]]:
    """Per question group: top1, any and the median rank of the first pattern reaching a gold answer; and per
    question its best pattern and that rank (None: no pattern reaches a gold answer)."""
    frag = _Recording(kg, llm=llm, **settings)
    if frag.pattern_classifier is not None:
        raise SystemExit(f"{kg}: frag uses a trained pattern scorer here; this measures the zero-shot one")
    found: dict[str, list[int | None]] = defaultdict(list)
    per_question: list[dict] = []
    for ex in examples:
        frag.last = None
        frag._retrieve(ex.question, ex.topic_entities, Trace(), for_answer=True)
        gold = {e for e in map(kg.find_entity, ex.answers) if e is not None}  # a gold answer may not be in the KG
        rank, best = None, None
        if frag.last is not None and len(frag.last[1]):
            reach, scores = frag.last
            order = np.argsort(-scores, kind="stable")
            best = pattern_label(kg, reach.patterns[int(order[0])])
            for i, k in enumerate(order if gold else ()):
                if gold.intersection(int(e) for e in reach.endpoints(int(k))):
                    rank = i + 1
                    break
        found[ex.group or "all"].append(rank)
        per_question.append({"question": ex.question, "group": ex.group or "all", "best": best, "rank": rank})
    groups = {
        group: {
            "n": len(ranks),
            "top1": round(sum(r == 1 for r in ranks) / len(ranks), 3),
            "any": round(sum(r is not None for r in ranks) / len(ranks), 3),
            "rank": statistics.median([r for r in ranks if r is not None] or [0]),
        }
        for group, ranks in sorted(found.items())
    }
    return groups, per_question


def paired(before: dict, after: dict) -> dict[str, dict[str, list[str]]]:
    """Per KG the two reports share, the questions whose best pattern reaches a gold answer only ``after``
    (gains) or only ``before`` (losses), matched by question text and group."""
    out = {}
    for kg, rows in after.get("questions", {}).items():
        earlier = {(q["question"], q["group"]): q["rank"] == 1 for q in before.get("questions", {}).get(kg, [])}
        now = {(q["question"], q["group"]): q["rank"] == 1 for q in rows}
        shared = earlier.keys() & now.keys()
        out[kg] = {
            "gains": sorted(q for q, g in shared if now[(q, g)] and not earlier[(q, g)]),
            "losses": sorted(q for q, g in shared if earlier[(q, g)] and not now[(q, g)]),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--limit", type=int, help="the first N questions per group")
    parser.add_argument("--sample", type=int, help="N questions per group drawn with --seed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kg-cache", type=Path, default=Path("/tmp/bench/kgs"))
    parser.add_argument("--data", type=Path, help="the shared data directory the suite's ${data} names")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--llm", help="an LLM spec: the scores frag answers with, e.g. with --set question_fit=5")
    parser.add_argument("--cache", type=Path, help="the LLM's response cache")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--against", type=Path, help="an earlier report over the same questions: print gains / losses")
    args = parser.parse_args()
    llm = load_llm(args.llm, cache=args.cache) if args.llm else None
    settings = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.settings)}
    suite = load_suite(args.suite, data_dir=args.data)
    start = time.perf_counter()
    command = [str(args.suite), *(["--limit", str(args.limit)] if args.limit else [])]
    command += ["--sample", str(args.sample), "--seed", str(args.seed)] if args.sample else []
    command += [f"--set {s}" for s in args.settings] + ([f"--llm {args.llm}"] if args.llm else [])
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    report = {
        "what": "zero-shot frag: share of questions whose best-scored relation pattern reaches a gold answer",
        "command": "python benchmarks/frag_pattern_top1.py " + " ".join(command),
        "commit": git.stdout.strip(),
        "settings": settings,
        "kgs": {},
        "questions": {},
    }
    for entry in suite.kgs:
        kg = build_kg(entry, args.kg_cache).kg
        chosen = select(load_questions(entry), limit=args.limit, sample=args.sample, seed=args.seed)
        examples = [ex for ex in chosen if ex.answers]
        report["kgs"][entry.name], report["questions"][entry.name] = measure(
            kg, examples, {**entry.settings.get("frag", {}), **settings}, llm
        )
    report["seconds"] = round(time.perf_counter() - start, 1)
    if args.against is not None:
        report["paired"] = paired(json.loads(args.against.read_text(encoding="utf-8")), report)
    if args.out is not None:  # every question in the file; the summary (and any pairing) on the screen
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    emit_json({key: value for key, value in report.items() if key != "questions"})


if __name__ == "__main__":
    main()
