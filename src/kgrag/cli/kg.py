"""KG commands: ingest a KG into a store and look at it (info, neighbours, paths); no LLM."""

from __future__ import annotations

import time
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kgrag.cli.common import JsonOpt, KGDir, app, console, err_console, load_store, print_json


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

    notes: list[str] = []
    with err_console.status(f"reading {path}", spinner="dots") if not as_json else nullcontext():
        picks = {"head": column(head), "relation": column(relation), "tail": column(tail)}
        kg = load_file(path, format=format, notes=notes, **picks)
        store = kg.save(out)
    if not as_json:
        for note in notes:
            err_console.print(f"  {note}", highlight=False, markup=False)
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
        print_json(summary)
    else:
        console.print(
            f"[green]✓[/green] {kg.num_entities:,} entities, {kg.num_relations:,} relations, "
            f"{kg.num_triples:,} triples → {store}  ({seconds:.2f} s)"
        )


@app.command()
def info(kg_dir: KGDir, as_json: JsonOpt = False) -> None:
    """Counts, degree statistics, the most frequent relations with an example each, and the hubs of a KG store."""
    kg = load_store(kg_dir)
    stats = kg.stats()
    if as_json:
        print_json(stats)
        return
    table = Table(title=str(kg_dir), show_header=False)
    for key in ("entities", "relations", "triples", "aliases"):
        table.add_row(key, f"{stats[key]:,}")
    deg = stats["degree"]
    table.add_row(
        "degree",
        f"mean {deg['mean']:.2f} · median {deg['median']:g} · 90% ≤ {deg['p90']:g} · 99% ≤ {deg['p99']:g} "
        f"· max {deg['max']:,}",
    )
    table.add_row("hubs", " · ".join(f"{name} ({n:,})" for name, n in stats["hubs"].items()))
    console.print(table)
    more = stats["relations"] - len(stats["top_relations"])
    rel_table = Table(
        "relation", "triples", "example", title="relations" + (f" (top 20; {more:,} more)" if more > 0 else "")
    )
    for name, count in stats["top_relations"].items():
        rel_table.add_row(name, f"{count:,}", stats["relation_examples"].get(name, ""))
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
    from kgrag.graph.algorithms.neighbourhood import k_hop
    from kgrag.graph.verbalize import verbalize_triple

    kg = load_store(kg_dir)
    eid = kg.entity_id(entity)
    hood = k_hop(kg, [eid], hops, direction=direction, relations=kg.relation_ids(relation))
    triples = [kg.triple(t) for t in hood.edges[:limit]]
    if as_json:
        print_json(
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
    from kgrag.graph.algorithms.shortest_paths import shortest_paths
    from kgrag.graph.algorithms.simple_paths import simple_paths
    from kgrag.graph.verbalize import verbalize_path

    kg = load_store(kg_dir)
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
        print_json({"from": source, "to": target, "paths": rows, "truncated": found.truncated})
        return
    if not rows:
        console.print(f"no path of at most {max_length} edges from {source!r} to {target!r}")
        return
    for row in rows:
        console.print("  " + row["text"], markup=False, highlight=False)
    if found.truncated:
        console.print(f"  (more paths exist; raise --max-paths above {max_paths})")
