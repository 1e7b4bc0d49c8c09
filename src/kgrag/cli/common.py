"""What the command modules share: the typer app, consoles, option types and small helpers."""

from __future__ import annotations

import json
import sys
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
    typer.Option("--llm", help="llamacpp:<model|file.gguf> | openai:<model>@<url> | scripted:<file>"),
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
    from kgrag.models.llm import DEFAULT_LLM

    if timeout is None:
        return {}
    if not (spec or DEFAULT_LLM).startswith("openai:"):
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


def config_for(method_cls: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """The settings a method's Config declares (others belong to other methods in the same run)."""
    return {k: v for k, v in settings.items() if k in method_cls.Config.model_fields}


SetOpt = Annotated[
    list[str] | None, typer.Option("--set", help="Method setting KEY=VALUE, e.g. --set top_k=100 (repeatable).")
]


def topic_list(topic: list[str] | None) -> list[str]:
    return [t for t in (topic or []) if t.strip()]
