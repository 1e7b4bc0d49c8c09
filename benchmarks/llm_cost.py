"""What a question costs the local model, before and after a change, measured back to back (issue #26).

On 2 CPU cores the model reads ~60 prompt tokens a second, so the prompt tokens it actually *reads* (not restored
from a kept KV prefix) set the time per question. For each method this runs two variants over the same questions
in one process, one after the other — ``before`` (settings that reproduce the old behaviour) and ``after`` (the
defaults) — without the response cache (a cached reply costs nothing and would hide the difference), and writes
per set and variant: Hit@1, the medians of evaluated prompt tokens, prompt tokens and seconds, mean completion tokens,
the after/before ratios, and the paired Hit@1 difference (questions gained and lost, McNemar's exact p-value:
:mod:`kgrag.eval.paired`).

    python benchmarks/llm_cost.py --methods frag --limit 100 --out /tmp/llm_cost
    python benchmarks/llm_cost.py --methods frag,kaping --limit 20 --suites webqsp \\
        --before frag:evidence_format=lines,choose_answers=off

Writes ``OUT/llm_cost.json`` (and each run's ``kgrag bench`` output under ``OUT/<variant>/<method>/``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import emit_json, parse_value
from kgrag.eval.paired import compare, total
from kgrag.eval.runner import summarise
from kgrag.eval.suite import RunOptions, run_suite
from kgrag.eval.suite_file import find_suite, load_suite
from kgrag.models.llm import load_llm

BEFORE = {"frag": {"evidence_format": "lines", "choose_answers": "off"}}
"""Settings that give each method's answer call as it was before #26: one full path per line, free-text answers."""

REPO = Path(__file__).resolve().parents[1]
SUITES = ("metaqa", "webqsp")
REPORTED = (
    "n",
    "hit@1",
    "evaluated_prompt_tokens_median",
    "prompt_tokens_median",
    "seconds_median",
    "completion_tokens",
)


def parse_before(specs: list[str]) -> dict[str, dict[str, Any]]:
    """``method:key=value,key=value`` → {method: {key: value}} (over :data:`BEFORE`)."""
    out = {m: dict(s) for m, s in BEFORE.items()}
    for spec in specs:
        method, _, pairs = spec.partition(":")
        settings = out.setdefault(method, {})
        for pair in filter(None, pairs.split(",")):
            key, _, value = pair.partition("=")
            settings[key] = parse_value(value)
    return out


def medians(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Hit@1 and the cost medians of ``rows``, as ``kgrag eval``'s summary has them (completion tokens: mean)."""
    summary = summarise(rows)
    return {key: summary.get(key, 0.0) for key in REPORTED}


def by_set(result: Any) -> dict[str, list[dict[str, Any]]]:
    """Rows per (KG, group) of one suite run: ``metaqa/1hop``, ``webqsp-proxy``."""
    sets: dict[str, list[dict[str, Any]]] = {}
    for kg in result.kgs:
        for rows in kg.rows_by_method.values():
            for row in rows:
                name = f"{kg.entry.name}/{row['group']}" if row.get("group") else kg.entry.name
                sets.setdefault(name, []).append(row)
    return sets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", default="frag", help="comma-separated methods")
    parser.add_argument("--suites", default=",".join(SUITES), help="suites under benchmarks/suites")
    parser.add_argument("--limit", type=int, default=100, help="first N questions per group")
    parser.add_argument("--before", action="append", default=[], help="method:key=value,... (old behaviour)")
    parser.add_argument("--llm", default=None, help="LLM spec (default: the default local model)")
    parser.add_argument("--data", type=Path, default=None, help="benchmark data (default: as kgrag bench)")
    parser.add_argument("--kg-cache", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("/tmp/kgrag_llm_cost"))
    parser.add_argument("--json-out", type=Path, default=None, help="also copy the JSON here")
    args = parser.parse_args(argv)

    llm = load_llm(args.llm) if args.llm else load_llm()
    before = parse_before(args.before)
    report: dict[str, Any] = {
        "command": "python benchmarks/llm_cost.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "llm": llm.model_id,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "note": "medians per question; no response cache; before and after run back to back in one process",
        "before_settings": before,
        "methods": {},
    }
    for method in args.methods.split(","):
        variants = {"before": before.get(method)} if before.get(method) else {}
        variants["after"] = {}
        sets: dict[str, dict[str, Any]] = {}
        answered: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for suite_name in args.suites.split(","):
            suite = load_suite(find_suite(suite_name, REPO), data_dir=args.data)
            for variant, settings in variants.items():
                options = RunOptions(
                    out=args.out / variant / method / suite_name,
                    methods=[method],
                    settings=dict(settings or {}),
                    llm=llm,
                    limit=args.limit,
                    kg_cache=args.kg_cache,
                )
                started = time.perf_counter()
                result = run_suite(suite, options)
                print(f"{method} {variant} {suite_name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
                for name, rows in by_set(result).items():
                    sets.setdefault(name, {})[variant] = medians(rows)
                    answered.setdefault(name, {})[variant] = rows
        for name, entry in sets.items():
            if "before" in entry:
                runs = answered[name]
                entry["paired_hit@1"] = total(compare({("", method): runs["before"]}, {("", method): runs["after"]}))
                b, a = entry["before"], entry["after"]
                entry["ratio_after_over_before"] = {
                    key: round(a[f"{key}_median"] / b[f"{key}_median"], 3) if b[f"{key}_median"] else None
                    for key in ("evaluated_prompt_tokens", "seconds")
                }
        report["methods"][method] = sets
    args.out.mkdir(parents=True, exist_ok=True)
    emit_json(report, args.out / "llm_cost.json", args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
