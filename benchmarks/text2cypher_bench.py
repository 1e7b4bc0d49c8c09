"""Text2Cypher on Northwind (issue #25): execution accuracy of the query a method finally executed.

Questions: the dev pairs file, read by the ``text2cypher:`` loader ``kgrag eval`` uses (the file *is* the dev
split: 548 of the 822 upstream Northwind rows; the other 274 are held out and not on this machine), kept
when upstream marks them clean (no syntax error, no timeout, returns results, no false schema) and when
their gold query returns rows here. Each question goes once through the public API (``Method.answer``);
the last Cypher query its trace shows as run is run again, guarded, on the benchmark's own backend with the
same row cap and timeout as the gold query (trusted), and the rows are compared
(:mod:`kgrag.eval.execution`): strict (same rows as multisets of value tuples, column names and order
ignored) and relaxed (every gold value somewhere in the rows), and strict with ties either way (where the
gold ranks and cuts through tied rows, any of them may be kept: :mod:`kgrag.eval.ties`). Also: the share of
generated queries that pass the guard and run, questions with no query at all, LLM calls and seconds per question.

    python benchmarks/text2cypher_bench.py [--kg DIR] [--method cypher] [--llm SPEC] [--cache FILE]
        [--set KEY=VALUE ...] [--limit N | --sample N --seed S] [--types T1,T2] [--backend ladybug|bolt]
        [--pairs FILE] [--out FILE.json]

Writes benchmarks/results/text2cypher.json (after every question, so a slow run can be stopped and still
report) and prints a table per question type.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench_common import parse_value
from kgrag.eval.datasets import load_dataset
from kgrag.eval.execution import relaxed_match, strict_match
from kgrag.eval.ties import match_with_ties, ties_of
from kgrag.graph.kg import KnowledgeGraph
from kgrag.models.accounting import track_usage
from kgrag.models.llm import DEFAULT_LLM
from kgrag.types import Answer

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT.parent / "shared" / "data" / "northwind" / "text2cypher_northwind.jsonl"
MAPPING = ROOT / "src" / "kgrag" / "data" / "northwind" / "mapping.json"
OUT = ROOT / "benchmarks" / "results" / "text2cypher.json"
CLEAN = {"syntax_error": False, "timeout": False, "returns_results": True, "false_schema": ""}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kg", type=Path, help="Northwind KG store to reuse (built there when absent; default: temp)")
    ap.add_argument("--pairs", type=Path, default=PAIRS, help="dev question/Cypher pairs (JSONL)")
    ap.add_argument("--method", default="cypher", help="a kgrag method: cypher, text2cypher, byokg, ...")
    ap.add_argument("--llm", default=DEFAULT_LLM, help=f"LLM spec (default {DEFAULT_LLM})")
    ap.add_argument("--cache", help="LLM response cache file")
    ap.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    pick = ap.add_mutually_exclusive_group()
    pick.add_argument("--limit", type=int, help="the first N questions (in all, not per type)")
    pick.add_argument("--sample", type=int, help="N questions drawn at random (in all) with --seed")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--types", help="comma-separated question types to keep (the pairs' 'type' field)")
    ap.add_argument(
        "--distinct",
        action="store_true",
        help="ask only pairs whose question and Cypher no other clean pair shares (so leave-one-out examples "
        "never hold the asked query under another wording)",
    )
    ap.add_argument(
        "--loo-examples",
        action="store_true",
        help="examples = every clean pair of --pairs, the asked question left out (sets the method's 'examples')",
    )
    ap.add_argument(
        "--exclude",
        type=Path,
        action="append",
        default=[],
        metavar="RUN.json",
        help="leave out the pairs an earlier run asked (its 'questions'), e.g. those rewrites were written from",
    )
    ap.add_argument("--backend", choices=("ladybug", "bolt"), default="ladybug")
    ap.add_argument("--row-cap", type=int, default=5000, help="rows kept of gold and predicted results")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per gold / predicted query")
    ap.add_argument("--out", type=Path, default=OUT)
    return ap.parse_args(argv)


# ------------------------------------------------------------------------------------------------ questions
def clean_pairs(
    path: Path, types: list[str] | None, distinct: bool = False
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The dev pairs as the ``text2cypher:`` loader reads them, kept when upstream's flags say clean (and of
    ``types``, when given; with ``distinct``, when no other clean pair has the same question or Cypher). The
    loader drops the flags, so they are read from the same lines, matched by id."""
    examples = load_dataset(f"text2cypher:{path}")
    flags: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):  # the loader's numbering: ids are q<line number>
            if line.strip():
                obj = json.loads(line)
                flags[str(obj.get("id", f"q{i}"))] = obj
    pairs = []
    for ex in examples:
        obj = flags[ex.id]
        if any(obj.get(key, CLEAN[key]) != value for key, value in CLEAN.items()):
            continue
        if types and ex.group not in types:
            continue
        pairs.append({"id": ex.id, "question": ex.question, "type": ex.group, "cypher": ex.meta["cypher"]})
    counts = {"dev": len(examples), "clean": len(pairs)}
    if distinct:
        questions = Counter(p["question"] for p in pairs)
        queries = Counter(p["cypher"] for p in pairs)
        pairs = [p for p in pairs if questions[p["question"]] == 1 and queries[p["cypher"]] == 1]
        counts["distinct"] = len(pairs)
    return pairs, counts


def write_examples(pairs: list[dict[str, Any]], path: Path) -> None:
    """The clean pairs as an examples file ({question, cypher} per line): the method skips the asked question."""
    lines = (json.dumps({"question": p["question"], "cypher": p["cypher"]}, ensure_ascii=False) for p in pairs)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def choose(pairs: list[dict], *, limit: int | None, sample: int | None, seed: int) -> list[dict]:
    """``limit``: the first N; ``sample``: N drawn with ``seed`` (in file order); neither: all."""
    if sample is not None:
        keep = set(random.Random(seed).sample(range(len(pairs)), min(sample, len(pairs))))
        return [p for i, p in enumerate(pairs) if i in keep]
    return pairs[:limit] if limit is not None else pairs


def attach_gold(backend: Any, pairs: list[dict], row_cap: int, timeout: float) -> tuple[list[dict], list[dict]]:
    """Run each gold query (trusted); pairs whose gold query fails or returns no rows here are set aside
    (they cannot be scored) and returned second, with the reason."""
    usable, dropped = [], []
    for pair in pairs:
        result = backend.run(pair["cypher"], row_cap=row_cap, timeout=timeout, trusted=True)
        if result.ok and result.rows:
            ties = ties_of(backend, pair["cypher"], timeout)
            usable.append({**pair, "gold_rows": result.rows, "gold_truncated": result.truncated, "gold_ties": ties})
        else:
            dropped.append({"id": pair["id"], "type": pair["type"], "error": result.error or "no rows"})
    return usable, dropped


# ---------------------------------------------------------------------------------------------- KG, backend
def northwind_store(kg_dir: Path | None, tmp: Path) -> Path:
    """``kg_dir`` when it holds a KG store; else the bundled Northwind property graph saved there (or in
    ``tmp``), as ``kgrag ingest --demo northwind`` saves it."""
    if kg_dir is not None and (kg_dir / "manifest.json").exists():
        return kg_dir
    from kgrag.graph.property_graph import PropertyGraph
    from kgrag.graph.store import check_replaceable, save_kg

    target = kg_dir or tmp / "northwind"
    check_replaceable(target.resolve())
    graph = PropertyGraph.load(MAPPING)
    return save_kg(graph.to_knowledge_graph(), target, derive=graph.save_tables)


def open_backend(kind: str, kg: KnowledgeGraph, store: Path, tmp: Path, stack: ExitStack) -> tuple[Any, str]:
    """The benchmark's own backend and the spec a method's settings name it by (``ladybug`` or the URI of a
    local FalkorDB server loaded with the same property graph)."""
    if kind == "ladybug":
        from kgrag.graph.backends.ladybug import LadybugBackend

        backend = LadybugBackend(kg)
        stack.callback(backend.close)
        return backend, "ladybug"
    from kgrag.graph.backends.bolt import BoltBackend
    from kgrag.graph.backends.falkordb_local import local_falkordb

    uri = stack.enter_context(local_falkordb(tmp / "falkordb"))
    backend = BoltBackend(uri)
    stack.callback(backend.close)
    backend.load_property_graph(store)
    return backend, uri


def method_settings(method_name: str, pairs: list[str], backend_spec: str) -> dict[str, Any]:
    """``--set`` pairs as settings; a Bolt run also points the method's backend setting (``backend`` or
    ``cypher_backend``, whichever it has) at the server unless ``--set`` already does."""
    from kgrag.methods import get as get_method

    settings = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set expects KEY=VALUE, got {item!r}")
        settings[key] = parse_value(value)
    fields = get_method(method_name).Config.model_fields
    if backend_spec != "ladybug":
        for key in ("backend", "cypher_backend"):
            if key in fields:
                settings.setdefault(key, backend_spec)
    return settings


# ---------------------------------------------------------------------------------------------- a question
def executed_query(answer: Answer | None) -> str | None:
    """The Cypher query the method's rows came from: the step text2cypher marks ``answered`` (a repair may
    have run worse than the attempt before it), else the one it ran last — the last trace step that executed
    one (it records ``executed`` and ``ok`` in its outputs, as ``run_recorded`` does) and names it in its
    inputs (``cypher``; the ``cypher`` baseline's step "execute", byokg's steps "cypher"). A query written but
    never run is None."""
    if answer is None:
        return None
    answered = [s.inputs.get("cypher") for s in answer.trace if s.outputs.get("answered") is True]
    if answered and isinstance(answered[-1], str):
        return answered[-1].strip()
    for step in reversed(answer.trace):
        query = step.inputs.get("cypher")
        if isinstance(query, str) and query.strip() and ("executed" in step.outputs or step.name == "execute"):
            return query.strip()
    return None


def run_question(method: Any, backend: Any, pair: dict, row_cap: int, timeout: float) -> dict[str, Any]:
    """One question: ask, find the executed query, run it guarded here, compare with the gold rows."""
    error, answer = None, None
    start = time.perf_counter()
    with track_usage() as calls:
        try:
            answer = method.answer(pair["question"])
            error = answer.error
        except Exception as exc:  # an LLM or method failure is one wrong question, not a failed run
            error = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    predicted = executed_query(answer)
    ok = strict = ties = relaxed = False
    n_rows = None
    if predicted:
        result = backend.run(predicted, row_cap=row_cap, timeout=timeout)
        ok, n_rows = result.ok, len(result.rows)
        if ok:
            strict = strict_match(result.rows, pair["gold_rows"])
            ties = match_with_ties(result.rows, pair["gold_rows"], pair.get("gold_ties"))
            relaxed = relaxed_match(result.rows, pair["gold_rows"])
        else:
            error = f"rejected: {result.error}" if result.rejected else result.error
    elif error is None:
        error = "no query executed"
    return {
        "id": pair["id"],
        "question": pair["question"],
        "type": pair["type"],
        "gold": pair["cypher"],
        "predicted": predicted,
        "strict": strict,
        "strict_ties": ties,
        "relaxed": relaxed,
        "ok": ok,
        "error": error,
        "rows": n_rows,
        "gold_rows": len(pair["gold_rows"]),
        "gold_truncated": pair["gold_truncated"],
        "calls": answer.usage.llm_calls if answer is not None else len(calls),
        "seconds": round(seconds, 3),
    }


# ------------------------------------------------------------------------------------------------ summary
def _numbers(rows: list[dict]) -> dict[str, Any]:
    n = len(rows)
    written = [r for r in rows if r["predicted"]]
    seconds = [r["seconds"] for r in rows]
    calls = [r["calls"] for r in rows]
    return {
        "n": n,
        "strict": sum(r["strict"] for r in rows) / n,
        "strict_ties": sum(r.get("strict_ties", r["strict"]) for r in rows) / n,
        "relaxed": sum(r["relaxed"] for r in rows) / n,
        "parses_and_runs": sum(r["ok"] for r in written) / len(written) if written else None,
        "no_query": n - len(written),
        "calls_mean": statistics.fmean(calls),
        "calls_max": max(calls),
        "seconds_median": statistics.median(seconds),
        "seconds_mean": statistics.fmean(seconds),
    }


def summarise(rows: list[dict]) -> dict[str, Any]:
    """Overall and per question type: strict and relaxed execution accuracy, the share of executed queries
    that passed the guard and ran (of the questions with a query), questions with no query, calls, seconds."""
    if not rows:
        return {"overall": {"n": 0}, "by_type": {}}
    types = sorted({r["type"] for r in rows})
    return {"overall": _numbers(rows), "by_type": {t: _numbers([r for r in rows if r["type"] == t]) for t in types}}


def print_table(summary: dict[str, Any]) -> None:
    head = f"{'type':<28} {'n':>4} {'strict':>7} {'ties':>6} {'relaxed':>8} {'runs':>6} {'no q':>5} {'calls':>6}"
    head += f" {'med s':>7}"
    print(head)
    print("-" * len(head))
    lines = [*summary["by_type"].items(), ("overall", summary["overall"])]
    for name, s in lines:
        if not s.get("n"):
            continue
        runs = "-" if s["parses_and_runs"] is None else f"{s['parses_and_runs']:.3f}"
        print(
            f"{name[:28]:<28} {s['n']:>4} {s['strict']:>7.3f} {s['strict_ties']:>6.3f} {s['relaxed']:>8.3f} "
            f"{runs:>6} {s['no_query']:>5} "
            f"{s['calls_mean']:>6.2f} {s['seconds_median']:>7.2f}"
        )


def write(args: argparse.Namespace, header: dict[str, Any], rows: list[dict]) -> None:
    result = {**header, **summarise(rows), "questions": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    from rich.console import Console

    from kgrag.methods import get as get_method
    from kgrag.models.llm import load_llm

    err = Console(stderr=True)
    types = [t.strip() for t in args.types.split(",")] if args.types else None
    pairs, counts = clean_pairs(args.pairs, types, args.distinct)
    with tempfile.TemporaryDirectory(prefix="kgrag-t2c-") as tmp, ExitStack() as stack:
        if args.loo_examples:
            examples = Path(tmp) / "examples.jsonl"
            write_examples(clean_pairs(args.pairs, types)[0], examples)
            args.settings = [*args.settings, f"examples={examples}"]
        store = northwind_store(args.kg, Path(tmp))
        kg = KnowledgeGraph.load(store, verify=False)
        backend, spec = open_backend(args.backend, kg, store, Path(tmp), stack)
        with err.status(f"running {len(pairs)} gold queries on {args.backend}"):
            usable, dropped = attach_gold(backend, pairs, args.row_cap, args.timeout)
        asked = {q["id"] for run in args.exclude for q in json.loads(run.read_text(encoding="utf-8"))["questions"]}
        unseen = [p for p in usable if p["id"] not in asked]
        chosen = choose(unseen, limit=args.limit, sample=args.sample, seed=args.seed)
        settings = method_settings(args.method, args.settings, spec)
        llm = load_llm(args.llm, cache=args.cache)
        method = get_method(args.method)(kg, llm=llm, **settings)
        header = {
            "command": " ".join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "method": args.method,
            "settings": settings,
            "llm": args.llm,
            "llm_model": getattr(llm, "model_id", None),
            "backend": args.backend,
            "pairs": str(args.pairs),
            "selection": {"types": types, "limit": args.limit, "sample": args.sample, "seed": args.seed},
            "counts": {
                **counts,
                "gold_runs_here": len(usable),
                "excluded": len(usable) - len(unseen),
                "chosen": len(chosen),
            },
            "gold_unusable": dropped,
            "row_cap": args.row_cap,
            "timeout": args.timeout,
        }
        rows = ask_all(method, backend, chosen, args, header, err)
    print_table(summarise(rows))
    print(f"→ {args.out}", file=sys.stderr)


def ask_all(method: Any, backend: Any, chosen: list[dict], args: Any, header: dict, err: Any) -> list[dict]:
    """Every chosen question in turn, with a progress bar on stderr; the JSON is rewritten after each."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    rows: list[dict] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err) as progress:
        task = progress.add_task(f"{args.method}: strict 0/0", total=len(chosen))
        for pair in chosen:
            rows.append(run_question(method, backend, pair, args.row_cap, args.timeout))
            write(args, header, rows)
            strict = sum(r["strict"] for r in rows)
            progress.update(task, advance=1, description=f"{args.method}: strict {strict}/{len(rows)}")
    if not chosen:
        write(args, header, rows)
    return rows


if __name__ == "__main__":
    main()
