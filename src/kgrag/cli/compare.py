"""``kgrag compare A B``: two runs on the same questions, question by question (:mod:`kgrag.eval.paired`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from kgrag.cli.common import JsonOpt, app, console, print_json

if TYPE_CHECKING:
    from kgrag.eval.paired import Paired, Side


@app.command()
def compare(
    before: Annotated[Path, typer.Argument(help="The first run: a `kgrag eval`/`bench` output, or a results.jsonl.")],
    after: Annotated[Path, typer.Argument(help="The second run, on (some of) the same questions.")],
    metric: Annotated[str, typer.Option(help="The per-question score compared (answer_recall for retrieval).")] = (
        "hit@1"
    ),
    methods: Annotated[
        str | None,
        typer.Option("--methods", help="FIRST,SECOND: compare the first run's method FIRST with the second's SECOND."),
    ] = None,
    changed: Annotated[bool, typer.Option("--changed", help="Also list the questions that went either way.")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Also write the comparison here as JSON.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare two runs question by question: each run's score, the questions the second run gained and lost,
    McNemar's exact p-value, grounded right answers, evaluated prompt tokens, seconds and calls (seconds compare
    only for runs made back to back on an idle machine)."""
    from kgrag.eval.paired import as_json as paired_json
    from kgrag.eval.paired import compare as paired
    from kgrag.eval.paired import read_run, total

    pair = None
    if methods:
        first, _, second = methods.partition(",")
        if not first.strip() or not second.strip():
            raise typer.BadParameter("--methods takes FIRST,SECOND")
        pair = (first.strip(), second.strip())
    result = paired(read_run(before), read_run(after), metric=metric, methods=pair)
    report = paired_json(result, metric=metric, changed=changed)
    if out:
        out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if as_json:
        print_json(report)
        return
    console.print(_table(result, metric))
    pooled = total(result)
    console.print(
        f"all {pooled['n']} questions: +{pooled['gains']} / −{pooled['losses']}, McNemar p = {pooled['p']:.3g}"
    )
    if changed:
        for p in result:
            for q in p.changed:
                was, now = q[metric]
                console.print(f"  {p.kg}/{p.group} {q['id']}: {was:g} → {now:g}  {q['question']}")


def _table(result: list[Paired], metric: str) -> Table:
    table = Table(
        "KG", "method", "group", "n", metric, "+/−", "p", "grounded", "tokens", "s", "calls",
        title=f"first → second on the same questions ({metric}; right answers grounded; evaluated prompt tokens "
        "and seconds, medians; LLM calls, mean)",
    )  # fmt: skip
    for p in result:
        unpaired = f" ({p.only_a}/{p.only_b} unpaired)" if p.only_a or p.only_b else ""
        table.add_row(
            p.kg or "–", p.method, p.group or "–", f"{p.n}{unpaired}",
            f"{p.a.score:.3f} → {p.b.score:.3f}", f"+{p.gains} / −{p.losses}", f"{p.p:.3g}",
            _arrow(p.a, p.b, "right_grounded", ".2f"), _arrow(p.a, p.b, "evaluated_prompt_tokens", ".0f"),
            _arrow(p.a, p.b, "seconds", ".1f"), _arrow(p.a, p.b, "llm_calls", ".2f"),
        )  # fmt: skip
    return table


def _arrow(a: Side, b: Side, name: str, spec: str) -> str:
    x, y = getattr(a, name), getattr(b, name)
    if x is None and y is None:
        return "–"
    return " → ".join("–" if v is None else format(v, spec) for v in (x, y))
