"""``kgrag bench SUITE``: methods over several (KG, question set) pairs from a suite file, one report.

The suite logic (reading the file, building the KGs, running, the report) is :mod:`kgrag.eval.suite` and the
modules it names; this command parses options, shows progress and prints the side-by-side table.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from kgrag.cli.common import (
    JsonOpt,
    LLMOpt,
    LLMTimeoutOpt,
    SetOpt,
    app,
    check_llm_failures,
    console,
    err_console,
    open_llm,
    parse_settings,
    print_json,
    question_progress,
)

if TYPE_CHECKING:
    from kgrag.eval.suite import RunOptions, Suite, SuiteResult


@app.command()
def bench(
    suite: Annotated[str, typer.Argument(help="Suite file (TOML), or a suite's name under benchmarks/suites/.")],
    methods: Annotated[
        str | None, typer.Option("--methods", "-m", help="Comma-separated methods for every KG (default: the suite's).")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output directory (default bench-out/SUITE).")] = None,
    llm: LLMOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    retrieval_only: Annotated[bool, typer.Option("--retrieval-only", help="No LLM: evaluate the evidence.")] = False,
    limit: Annotated[int | None, typer.Option(min=1, help="First N questions per group of each KG.")] = None,
    sample: Annotated[int | None, typer.Option(min=1, help="N random questions per group of each KG.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    workers: Annotated[int, typer.Option(min=1, help="Questions in parallel.")] = 1,
    processes: Annotated[bool, typer.Option(help="Use processes (CPU-bound retrieval) instead of threads.")] = False,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data", help="What ${data} stands for in the suite (default: $KGRAG_DATA, else ../shared/data)."
        ),
    ] = None,
    kg_cache: Annotated[
        Path | None, typer.Option("--kg-cache", help="Built KG stores, reused across runs (default OUT/kgs).")
    ] = None,
    only: Annotated[str | None, typer.Option("--only", help="Comma-separated names of the suite's KGs to run.")] = None,
    cache: Annotated[Path | None, typer.Option(help="LLM response cache (default: OUT/llm-cache.sqlite).")] = None,
    settings: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a benchmark suite: writes OUT/report.md (a table per KG and per group, cost, time, plots),
    OUT/summary.json and OUT/<kg>/<method>/results.jsonl. A re-run over the same OUT resumes."""
    from kgrag.eval.suite import RunOptions, find_suite, load_suite

    if limit is not None and sample is not None:
        raise typer.BadParameter("give --limit or --sample, not both")
    loaded = load_suite(find_suite(suite), data_dir=data.resolve() if data is not None else None)
    names = [m.strip() for m in methods.split(",") if m.strip()] if methods else None
    chosen = _chosen_methods(loaded, names)
    config = _checked_settings(settings, chosen)
    out = out or Path("bench-out") / loaded.name
    options = RunOptions(
        out=out,
        methods=names,
        settings=config,
        llm=None if retrieval_only else _llm_if_needed(chosen, llm, cache or out / "llm-cache.sqlite", llm_timeout),
        retrieval_only=retrieval_only,
        limit=limit,
        sample=sample,
        seed=seed,
        workers=workers,
        processes=processes,
        kg_cache=kg_cache,
        only=[k.strip() for k in only.split(",") if k.strip()] if only else None,
    )
    result = _run(loaded, options, quiet=as_json)
    if as_json:
        print_json(result.to_json())
        return
    console.print(_table(result))
    console.print(f"wrote {out / 'report.md'} and {out / 'summary.json'} ({result.seconds:.0f} s)")


def _llm_if_needed(chosen: list[str], llm: str | None, cache: Path, timeout: float | None) -> Any:
    """The LLM, opened only when a chosen method calls one: a retrieval-only suite needs no model or key."""
    from kgrag.methods import get as get_method

    if any(get_method(name).needs_llm for name in chosen):
        return open_llm(llm, cache=cache, timeout=timeout)
    return None


def _run(loaded: Suite, options: RunOptions, *, quiet: bool) -> SuiteResult:
    """Run the suite with a progress bar per (KG, method) and a spinner over slow set-up (neither with
    ``--json``, whose output is the summary alone); stop with an error when LLM calls failed."""
    from kgrag.eval.suite import run_suite
    from kgrag.eval.suite_report import main_metric

    metric = main_metric(options.retrieval_only)

    def progress(label: str, total: int) -> AbstractContextManager[Callable[[dict[str, Any]], None]]:
        return question_progress(label, total, metric, disable=quiet)

    def status(text: str) -> AbstractContextManager[Any]:
        return err_console.status(text, spinner="dots") if not quiet else nullcontext()

    result = run_suite(loaded, options, progress=progress, status=status)
    check_llm_failures({f"{r.entry.name}/{m}": rows for r in result.kgs for m, rows in r.rows_by_method.items()})
    return result


def _chosen_methods(loaded: Suite, names: list[str] | None) -> list[str]:
    """The methods that will run: ``--methods`` (each name checked before any KG is built), else every
    method the suite names."""
    from kgrag.methods import get as get_method

    for name in names or []:
        get_method(name)  # an unknown name fails before any KG is built
    return names or list(dict.fromkeys(m for entry in loaded.kgs for m in entry.methods))


def _checked_settings(settings: list[str] | None, chosen: list[str]) -> dict[str, Any]:
    """``--set`` values; a key no chosen method has is a typo, refused rather than silently ignored."""
    from kgrag.methods import get as get_method

    config = parse_settings(settings)
    unknown = set(config) - {f for name in chosen for f in get_method(name).setting_names()}
    if unknown:
        raise typer.BadParameter(f"no method of {', '.join(chosen)} has setting(s): {', '.join(sorted(unknown))}")
    return config


def _table(result: SuiteResult) -> Table:
    """The side-by-side table: the main metric of every method on every KG."""
    from kgrag.eval.suite_report import main_metric

    metric = main_metric(result.options.retrieval_only)
    shown = list(dict.fromkeys(m for r in result.kgs for m in r.summary))
    table = Table("KG", "n", *shown, title=f"{metric} ({result.options.selection})")
    for r in result.kgs:
        n = max((s.get("n", 0) for s in r.summary.values()), default=0)
        table.add_row(r.entry.name, str(n), *(_cell(r.summary.get(m), metric) for m in shown))
    return table


def _cell(summary: dict[str, Any] | None, metric: str) -> str:
    if not summary or not summary.get("n"):
        return "–"
    return f"{summary[metric]:.3f}"
