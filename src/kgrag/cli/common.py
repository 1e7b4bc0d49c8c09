"""What the command modules share: the typer app, consoles, option types and small helpers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

app = typer.Typer(
    name="kgrag",
    help="Question answering over the knowledge graph you bring.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

KGDir = Annotated[Path, typer.Argument(help="KG store directory (made by `kgrag ingest`).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")]


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def load_store(kg_dir: Path):
    from kgrag.graph.store import load_kg

    return load_kg(kg_dir)


LLMOpt = Annotated[
    str | None,
    typer.Option(
        "--llm",
        help="llamacpp:<model|file.gguf> | openai:<model>@<url> | scripted:<file> (default: $KGRAG_LLM, else the "
        "local default model)",
    ),
]
LLMTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--llm-timeout",
        min=0.1,
        help="Most seconds one call to an openai: endpoint may take, retries and waits included (default 120).",
    ),
]


def llm_timeout_kwargs(spec: str | None, timeout: float | None) -> dict[str, float]:
    """``load_llm`` keywords for ``--llm-timeout``, which only an HTTP endpoint can honour: a local model runs
    in this process and cannot be interrupted, so asking for a timeout there is a usage error."""
    from kgrag.models.llm import default_llm_spec

    if timeout is None:
        return {}
    if not (spec or default_llm_spec()).startswith("openai:"):
        raise typer.BadParameter(
            "bounds calls to an openai:MODEL@URL endpoint; a local or scripted LLM takes no timeout",
            param_hint="--llm-timeout",
        )
    return {"timeout": timeout}


def open_llm(spec: str | None, *, cache: Path | None, timeout: float | None) -> Any:
    from kgrag.models.llm import load_llm

    return load_llm(spec, cache=cache, **llm_timeout_kwargs(spec, timeout))


def parse_settings(settings: list[str] | None) -> dict[str, Any]:
    """``["top_k=10", "hops=3"]`` → ``{"top_k": 10, "hops": 3}`` (values read as JSON when they parse)."""
    out: dict[str, Any] = {}
    for item in settings or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"--set expects KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


SetOpt = Annotated[
    list[str] | None, typer.Option("--set", help="Method setting KEY=VALUE, e.g. --set top_k=100 (repeatable).")
]


def topic_list(topic: list[str] | None) -> list[str]:
    return [t for t in (topic or []) if t.strip()]


@contextmanager
def question_progress(
    description: str, total: int, metric: str, *, disable: bool = False
) -> Iterator[Callable[[dict[str, Any]], None]]:
    """A progress bar over a method's questions showing the running mean of ``metric``; yields the callback
    the evaluation runner calls with each result row (``kgrag eval`` and ``kgrag bench`` show the same bar).
    When stderr is not a terminal (a log file, CI) a bar draws nothing until the end, so one line per question
    is written instead."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    running = {"n": 0, "score": 0.0}
    lines = not disable and not err_console.is_terminal
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[metric]}"),
        TimeElapsedColumn(),
        console=err_console,
        disable=disable or lines,
    ) as progress:
        task = progress.add_task(description, total=total, metric="")

        def on_result(row: dict[str, Any]) -> None:
            running["n"] += 1
            running["score"] += row.get(metric, 0.0)
            mean = f"{metric} {running['score'] / running['n']:.3f}"
            progress.update(task, advance=1, metric=mean)
            if lines:
                sys.stderr.write(f"{description}: {running['n']}/{total} {mean} ({row.get('seconds', 0):.1f} s)\n")
                sys.stderr.flush()

        yield on_result


def check_llm_failures(rows_by_method: dict[str, list[dict[str, Any]]]) -> None:
    """Say on stderr how many questions each method lost to LLM errors (their rows score as wrong, so the
    accuracy printed next is not the method's); a method that lost every question ends the run with exit 3."""
    from kgrag.errors import LLMError

    lost = []
    for name, rows in rows_by_method.items():
        failed = [r for r in rows if r.get("llm_failed")]
        if failed and len(failed) == len(rows):
            lost.append(f"{name}: all {len(rows)} questions failed ({failed[-1]['error']})")
        elif failed:
            sys.stderr.write(
                f"warning: {name}: {len(failed)} of {len(rows)} questions failed on LLM errors and score as wrong; "
                f"re-run the same command to ask them again (last: {failed[-1]['error']})\n"
            )
    if lost:
        raise LLMError("; ".join(lost))
