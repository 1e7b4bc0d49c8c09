"""Benchmark suites: several (KG, question set) pairs, the same methods on each, one report (``kgrag bench``).

A method tuned on one KG can look fine there and fall apart on the next one; judging a change on one KG at a
time hides that. A suite file names every pair once, so "every method on every KG" is one command and one
report. This module runs a suite; the file format and its checks are :mod:`kgrag.eval.suite_file`, building
and caching the KGs :mod:`kgrag.eval.suite_build`, the report :mod:`kgrag.eval.suite_report`. The names a
caller needs from those are importable from here too, so ``kgrag.eval.suite`` stays the one entry point.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgrag import __version__
from kgrag.eval.datasets import Example, load_dataset, select
from kgrag.eval.runner import evaluate_method, fill_gold_from_cypher, summarise
from kgrag.eval.suite_build import BuiltKG, build_kg, source_digest
from kgrag.eval.suite_file import KGEntry, Suite, SuiteError, default_data_dir, find_suite, load_suite

if TYPE_CHECKING:
    from kgrag.graph.kg import KnowledgeGraph

__all__ = [
    "BuiltKG",
    "KGEntry",
    "KGResult",
    "RunOptions",
    "Suite",
    "SuiteError",
    "SuiteResult",
    "build_kg",
    "default_data_dir",
    "display_path",
    "find_suite",
    "load_questions",
    "load_suite",
    "methods_of",
    "run_suite",
    "source_digest",
]


# ---------------------------------------------------------------------- running
ProgressFactory = Callable[[str, int], AbstractContextManager[Callable[[dict[str, Any]], None] | None]]


@dataclass
class RunOptions:
    """How ``run_suite`` runs: the same meaning as ``kgrag bench``'s options."""

    out: Path
    methods: list[str] | None = None  # replaces every KG's methods
    settings: dict[str, Any] = field(default_factory=dict)  # --set: over the suite's, for every method having it
    llm: Any = None
    retrieval_only: bool = False
    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    workers: int = 1
    processes: bool = False
    kg_cache: Path | None = None
    only: list[str] | None = None

    @property
    def selection(self) -> str:
        if self.sample:
            return f"sample {self.sample} per group (seed {self.seed})"
        return f"first {self.limit} per group" if self.limit else "all"


@dataclass
class KGResult:
    """One KG's run: its rows per method (the scored questions) and what they cost."""

    entry: KGEntry
    stats: dict[str, Any]
    build: dict[str, Any]
    questions: int
    unanswerable: list[dict[str, Any]]
    rows_by_method: dict[str, list[dict[str, Any]]]
    summary: dict[str, dict[str, Any]]


@dataclass
class SuiteResult:
    suite: Suite
    options: RunOptions
    kgs: list[KGResult]
    seconds: float
    llm_id: str

    def to_json(self) -> dict[str, Any]:
        """summary.json: machine-independent (paths as the suite file writes them)."""
        return {
            "suite": display_path(self.suite.path),
            "description": self.suite.description,
            "kgrag": __version__,
            "llm": self.llm_id,
            "retrieval_only": self.options.retrieval_only,
            "selection": self.options.selection,
            "seconds": round(self.seconds, 1),
            "kgs": {
                r.entry.name: {
                    "description": r.entry.description,
                    "source": r.entry.source_text,
                    "rename_relations": r.entry.rename_relations,
                    "datasets": r.entry.datasets_text,
                    "kg": {k: r.stats[k] for k in ("entities", "relations", "triples")},
                    "build": r.build,
                    "questions": r.questions,
                    "unanswerable": len(r.unanswerable),
                    "methods": r.summary,
                }
                for r in self.kgs
            },
        }


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when below it, else its file name: a summary that is
    committed must not carry the machine's directories."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.name


def methods_of(entry: KGEntry, options: RunOptions) -> list[str]:
    methods = options.methods or entry.methods
    if not methods:
        raise SuiteError(
            str(entry.suite_file),
            entry.line,
            f"no methods for KG {entry.name!r}: add methods = [...] or pass --methods",
        )
    return methods


def run_suite(
    suite: Suite,
    options: RunOptions,
    *,
    progress: ProgressFactory | None = None,
    status: Callable[[str], AbstractContextManager[Any]] | None = None,
) -> SuiteResult:
    """Run every KG of ``suite`` (or ``options.only``) and write ``OUT/<kg>/…``, ``OUT/summary.json`` and
    ``OUT/report.md``. ``progress(label, total)`` gives a per-question callback (a progress bar);
    ``status(text)`` wraps slow set-up work (a spinner). A re-run over the same OUT resumes."""
    from kgrag.eval.suite_report import write_suite_report

    start = time.perf_counter()
    entries = suite.kgs
    if options.only:
        unknown = sorted(set(options.only) - {e.name for e in entries})
        if unknown:
            raise SuiteError(
                str(suite.path), None, f"no KG named {', '.join(unknown)}; KGs: {', '.join(e.name for e in entries)}"
            )
        entries = [e for e in entries if e.name in options.only]
    for entry in entries:
        methods_of(entry, options)  # every KG has methods before the first one runs
    options.out.mkdir(parents=True, exist_ok=True)
    results = [_run_kg(entry, options, progress, status or (lambda _: nullcontext())) for entry in entries]
    result = SuiteResult(
        suite=suite,
        options=options,
        kgs=results,
        seconds=time.perf_counter() - start,
        llm_id="none" if options.llm is None or options.retrieval_only else str(options.llm.model_id),
    )
    (options.out / "summary.json").write_text(json.dumps(result.to_json(), indent=2) + "\n", "utf-8")
    write_suite_report(options.out, result)
    return result


def load_questions(entry: KGEntry) -> list[Example]:
    """The KG's questions from all its datasets; ids are prefixed with the dataset's number when two datasets
    share an id (results are stored by id, so a shared one would count as already answered)."""
    per_dataset = [load_dataset(spec) for spec in entry.datasets]
    ids = [ex.id for examples in per_dataset for ex in examples]
    if len(per_dataset) > 1 and len(set(ids)) != len(ids):
        for number, examples in enumerate(per_dataset, start=1):
            for ex in examples:
                ex.id = f"{number}/{ex.id}"
    questions = [ex for examples in per_dataset for ex in examples]
    seen: set[str] = set()
    for ex in questions:
        if ex.id in seen:
            raise SuiteError(str(entry.suite_file), entry.line, f"KG {entry.name!r}: question id {ex.id!r} twice")
        seen.add(ex.id)
    return questions


def _run_kg(
    entry: KGEntry,
    options: RunOptions,
    progress: ProgressFactory | None,
    status: Callable[[str], AbstractContextManager[Any]],
) -> KGResult:
    """One KG: build it, pick its questions, run every method on the ones with a gold answer, write its files."""
    out = options.out / entry.name
    with status(f"{entry.name}: building the KG"):
        built = build_kg(entry, options.kg_cache or options.out / "kgs")
    kg = built.kg
    examples = _questions(entry, options, kg, status)
    scored = [ex for ex in examples if ex.answers]
    unanswerable = [_unanswerable(ex) for ex in examples if not ex.answers]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "unanswerable.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in unanswerable)

    rows_by_method: dict[str, list[dict[str, Any]]] = {}
    summary: dict[str, dict[str, Any]] = {}
    for name in methods_of(entry, options):
        rows_by_method[name], summary[name] = _run_method(kg, name, scored, out, entry, options, progress)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    if any(rows_by_method.values()):  # the KG's own `kgrag eval` report, every metric with its interval
        _write_kg_report(out, entry, options, rows_by_method)
    return KGResult(
        entry=entry,
        stats=kg.stats(),
        build={"built": built.built, "seconds": round(built.seconds, 2)},
        questions=len(examples),
        unanswerable=unanswerable,
        rows_by_method=rows_by_method,
        summary=summary,
    )


def _questions(
    entry: KGEntry, options: RunOptions, kg: KnowledgeGraph, status: Callable[[str], AbstractContextManager[Any]]
) -> list[Example]:
    """The selected questions, with gold answers filled in from gold Cypher queries (run on the KG itself)
    where a question gives a query but no answers."""
    examples = select(load_questions(entry), limit=options.limit, sample=options.sample, seed=options.seed)
    if any("cypher" in ex.meta and not ex.answers for ex in examples):
        from kgrag.graph.backends import open_cypher_backend

        with status(f"{entry.name}: gold answers from the gold Cypher queries"):
            fill_gold_from_cypher(examples, open_cypher_backend(kg))
    return examples


def _run_method(
    kg: KnowledgeGraph,
    name: str,
    scored: list[Example],
    out: Path,
    entry: KGEntry,
    options: RunOptions,
    progress: ProgressFactory | None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One method on one KG: its rows and its summary (means, totals, this run's wall time)."""
    from kgrag.methods import get as get_method

    method_cls = get_method(name)
    config = {**entry.settings.get(name, {}), **method_cls.own_settings(options.settings)}
    bar = progress(f"{entry.name}/{name}", len(scored)) if progress else nullcontext(None)
    started = time.perf_counter()
    with bar as on_result:
        rows = evaluate_method(
            kg,
            name,
            scored,
            out,
            llm=options.llm,
            retrieval_only=options.retrieval_only,
            workers=options.workers,
            processes=options.processes,
            method_config=config,
            on_result=on_result,
        )
    return rows, {**summarise(rows), **_cost(rows), "wall_seconds": round(time.perf_counter() - started, 2)}


def _write_kg_report(
    out: Path, entry: KGEntry, options: RunOptions, rows_by_method: dict[str, list[dict[str, Any]]]
) -> None:
    """``OUT/<kg>/report.md``: the KG's own ``kgrag eval`` report, every metric with its interval."""
    from kgrag.eval.report import write_report

    write_report(
        out,
        rows_by_method,
        {
            "kg": f"{entry.name} ({entry.source_text})",
            "datasets": entry.datasets_text,
            "llm": "none" if options.llm is None or options.retrieval_only else options.llm.model_id,
            "retrieval_only": options.retrieval_only,
            "selection": options.selection,
        },
    )


def _unanswerable(ex: Example) -> dict[str, Any]:
    """Why a question is left out of the scores: it has no gold answer to score against."""
    if ex.meta.get("gold_error"):
        reason = f"the gold query failed: {ex.meta['gold_error']}"
    elif "gold_rows" in ex.meta:
        reason = "the gold query returns no rows"
    else:
        reason = "the question file gives no gold answer"
    return {"id": ex.id, "group": ex.group, "question": ex.question, "reason": reason}


def _cost(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals next to summarise()'s means: what the whole run cost."""
    return {
        "llm_calls_total": int(sum(r["llm_calls"] for r in rows)),
        "prompt_tokens_total": int(sum(r["prompt_tokens"] for r in rows)),
        "completion_tokens_total": int(sum(r["completion_tokens"] for r in rows)),
        "seconds_total": round(float(sum(r["seconds"] for r in rows)), 2),
    }
