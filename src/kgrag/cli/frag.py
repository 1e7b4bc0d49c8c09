"""`kgrag frag-train`: FRAG's router and pattern scorer from a user's questions (methods/frag/training.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgrag.cli.common import JsonOpt, app, console, err_console, load_store, print_json

DataOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--data", "-d", help='JSONL: {"question", "hops"?, "answers"?, "topic_entities"?} per line (repeatable).'
    ),
]
FromResultsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--from-results",
        help="FRAG-F: a `kgrag eval` results.jsonl; hop labels come from the evidence path the LLM's answer ends.",
    ),
]


@app.command("frag-train")
def frag_train(
    out: Annotated[Path, typer.Option("--out", "-o", help="Hop router model to write (.npz).")],
    data: DataOpt = None,
    from_results: FromResultsOpt = None,
    only_correct: Annotated[
        bool, typer.Option(help="With --from-results: keep only questions whose answer was right.")
    ] = False,
    kg_dir: Annotated[
        Path | None, typer.Option("--kg", help="KG store: label relation patterns from the rows' answers.")
    ] = None,
    patterns_out: Annotated[
        Path | None, typer.Option("--patterns-out", help="With --kg: pattern scorer model to write (.npz).")
    ] = None,
    validation: Annotated[float, typer.Option(min=0.0, max=0.9, help="Share held back to report accuracy.")] = 0.2,
    seed: Annotated[int, typer.Option(help="Seed of the validation split.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Train FRAG's hop router (and, with --kg, its pattern scorer); use with `--set router=… patterns=…`."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress

    from kgrag.methods.frag.hop_labels import rows_from_results
    from kgrag.methods.frag.router import read_labelled
    from kgrag.methods.frag.training import train

    if (kg_dir is None) != (patterns_out is None):
        raise typer.BadParameter("--kg and --patterns-out go together")
    rows: list[dict] = []
    for path in data or []:
        rows += read_labelled(path)
    for path in from_results or []:
        rows += rows_from_results(path, only_correct=only_correct)
    kg = load_store(kg_dir) if kg_dir is not None and rows else None
    with Progress(
        "labelling patterns", BarColumn(), MofNCompleteColumn(), console=err_console, disable=as_json or kg is None
    ) as progress:
        task = progress.add_task("rows", total=len(rows))
        summary = train(
            rows,
            out,
            kg=kg,
            patterns_out=patterns_out,
            validation=validation,
            seed=seed,
            progress=lambda: progress.advance(task),
            questions_source=", ".join(str(p) for p in [*(data or []), *(from_results or [])]),
        )
    if as_json:
        print_json(summary)
        return
    _print_trained(summary, out, patterns_out)


def _print_trained(summary: dict, out: Path, patterns_out: Path | None) -> None:
    """What was trained (or why not) and the ``--set`` options that use it."""
    for key, name in (("router", "hop router"), ("patterns", "pattern scorer")):
        if "skipped" in summary.get(key, {}):
            console.print(f"  {name} not trained: {summary[key]['skipped']}")
        elif key in summary:
            s = summary[key]
            acc = "n/a" if s["validation_accuracy"] is None else f"{s['validation_accuracy']:.3f}"
            console.print(
                f"[green]✓[/green] {name}: {s['train']:,} training questions, {s['labels']} labels, "
                f"validation accuracy {acc} on {s['validation']:,} → {s['out']}"
            )
    hint = ("" if "skipped" in summary["router"] else f"--set router={out} ") + (
        f"--set patterns={patterns_out}" if patterns_out else ""
    )
    console.print(f"  use with: --method frag {hint.strip()}")
