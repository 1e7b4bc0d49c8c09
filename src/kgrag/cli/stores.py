"""A store's derived data: run Cypher on its graph database, build its linking and embedding indexes."""

from __future__ import annotations

import sys
import time
from contextlib import nullcontext
from typing import Annotated

import typer
from rich.table import Table

from kgrag.cli.common import JsonOpt, KGDir, app, console, err_console, load_store, print_json


@app.command()
def cypher(
    kg_dir: KGDir,
    query: Annotated[str, typer.Argument(help="A read-only Cypher query.")],
    backend: Annotated[str, typer.Option(help="ladybug (embedded) | bolt://host:port")] = "ladybug",
    row_cap: Annotated[int, typer.Option(min=1, help="Most rows to return.")] = 100,
    timeout: Annotated[float, typer.Option(help="Seconds before the query is interrupted.")] = 10.0,
    as_json: JsonOpt = False,
) -> None:
    """Run QUERY through the Cypher guard on a read-only backend; a rejected query exits with status 3."""
    from kgrag.graph.backends import open_cypher_backend

    kg = load_store(kg_dir)
    with err_console.status("opening the graph database", spinner="dots") if not as_json else nullcontext():
        db = open_cypher_backend(kg, backend)
    result = db.run(query, timeout=timeout, row_cap=row_cap)
    if as_json:
        print_json(result.as_json())
    elif result.ok:
        table = Table(*result.columns)
        for row in result.rows:
            table.add_row(*(str(v) for v in row))
        console.print(table)
        console.print(
            f"[dim]{len(result.rows)} row(s){' (truncated)' if result.truncated else ''} · "
            f"{result.seconds * 1000:.1f} ms[/dim]"
        )
    else:
        sys.stderr.write(f"{'rejected' if result.rejected else 'error'}: {result.error}\n")
    if result.rejected:
        raise typer.Exit(3)
    if not result.ok:
        raise typer.Exit(1)


@app.command()
def index(
    kg_dir: KGDir,
    triples: Annotated[bool, typer.Option("--triples", help="Also embed every verbalised triple.")] = False,
    embedder: Annotated[str, typer.Option(help="Embedder for triples (minilm | static | st:MODEL).")] = "minilm",
    as_json: JsonOpt = False,
) -> None:
    """Build the linking indexes (and optionally all triple embeddings) now instead of on first use."""
    import numpy as np
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from kgrag.linking import HybridLinker
    from kgrag.models.embeddings import load_embedder
    from kgrag.models.embeddings.kg_cache import KGEmbeddings

    kg = load_store(kg_dir)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    linker = HybridLinker(kg)
    linker.fuzzy  # noqa: B018 - builds the fuzzy index
    linker.embedding  # noqa: B018 - builds and saves the faiss index
    timings["linking_seconds"] = round(time.perf_counter() - start, 2)
    if triples:
        start = time.perf_counter()
        vectors = KGEmbeddings(kg, load_embedder(embedder))
        step = 4096
        with Progress(
            "embedding triples",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            disable=as_json,
        ) as progress:
            task = progress.add_task("triples", total=kg.num_triples)
            for lo in range(0, kg.num_triples, step):
                vectors.triples(np.arange(lo, min(lo + step, kg.num_triples)))
                progress.update(task, completed=min(lo + step, kg.num_triples))
        timings["triples_seconds"] = round(time.perf_counter() - start, 2)
    if as_json:
        print_json(timings)
    else:
        console.print(f"[green]✓[/green] indexes ready in {kg_dir}: {timings}")
