"""Question answering: ask, retrieve, link, and eval over question sets."""

from __future__ import annotations

import json
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from kgrag.cli.common import (
    JsonOpt,
    KGDir,
    LLMOpt,
    LLMTimeoutOpt,
    SetOpt,
    app,
    check_llm_failures,
    console,
    err_console,
    load_store,
    open_llm,
    parse_settings,
    print_json,
    question_progress,
    topic_list,
)


@app.command()
def ask(
    kg_dir: KGDir,
    question: Annotated[str, typer.Argument(help="The question.")],
    method: Annotated[
        str, typer.Option("--method", "-m", help="Method name (see `kgrag methods`); auto picks per question.")
    ] = "auto",
    llm: LLMOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    topic: Annotated[list[str] | None, typer.Option("--topic", "-t", help="Topic entity (repeatable).")] = None,
    cache: Annotated[Path | None, typer.Option(help="SQLite file caching LLM responses.")] = None,
    settings: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer QUESTION over the KG with a method and an LLM; an LLM that fails exits with status 3."""
    from kgrag.methods import get as get_method
    from kgrag.methods.support import support_text

    method_cls = get_method(method)
    kg = load_store(kg_dir)
    for name in topic_list(topic):
        kg.entity_id(name)  # unknown topic entities fail early, with suggestions
    # a local model loads in the background while the method links and retrieves; its first call waits for it
    model = open_llm(llm, cache=cache, timeout=llm_timeout) if method_cls.needs_llm else None
    instance = method_cls(kg, llm=model, **parse_settings(settings))
    with _step_lines() if err_console.is_terminal and not as_json else nullcontext():
        result = instance.answer(question, topic_list(topic))
    if as_json:
        print_json(result.model_dump(mode="json"))
        return
    console.print(f"[bold]Q:[/bold] {question}", highlight=False)
    none = f"(no answer: {result.abstained})" if result.abstained else "(no answer)"
    console.print("[bold]A:[/bold] " + (" | ".join(result.answers) or none), highlight=False)
    if result.answers and not result.evidence:
        console.print("   [yellow]no KG evidence: the answers are the model's own[/yellow]", highlight=False)
    for answer in result.answers if result.evidence else []:
        chain = result.support.get(answer)
        sure = f"confidence {result.confidence[answer]:.2f}" if answer in result.confidence else ""
        if chain is None:
            console.print(f"   {answer} ({sure}): [yellow]no support in the evidence[/yellow]", highlight=False)
        else:
            because = f" ← {support_text(kg, chain)}" if chain else " ← a result row"
            console.print(f"   {answer} ({sure}){because}", markup=False, highlight=False)
    if result.set_aside:  # the model's own knowledge beside answers the evidence supports (own_knowledge setting)
        names = "; ".join(result.set_aside)
        console.print(f"   [yellow]set aside, not supported by the evidence:[/yellow] {escape(names)}", highlight=False)
    if result.doubtful:  # listed by the model, far less sure than its first answer (answer_spread setting)
        names = "; ".join(result.doubtful)
        console.print(f"   [yellow]less sure, not counted as answers:[/yellow] {escape(names)}", highlight=False)
    for ev in result.evidence[:10]:
        console.print(f"   · {ev.text}", markup=False, highlight=False)
    u = result.usage
    chose = next((step.outputs for step in result.trace if step.name == "auto"), None)
    if chose:  # which method auto let answer, and why
        console.print(f"[dim]auto → {chose.get('chosen')}: {chose.get('why')}[/dim]", highlight=False)
    console.print(
        f"[dim]{method} · {u.llm_calls} LLM call(s) · {u.prompt_tokens}+{u.completion_tokens} tokens "
        f"({u.evaluated_prompt_tokens} prompt tokens read) · "
        f"{u.seconds:.1f} s[/dim]"
    )


def _step_lines() -> Any:
    """A line on stderr as each step of the method finishes (linking, retrieval, the LLM call), with its time and
    the time since the question was asked: where the seconds go. Only on a terminal: a script reading stderr
    gets one line per error and nothing else."""
    from kgrag.methods.base import observe_steps

    start = time.perf_counter()

    def line(step: Any) -> None:
        calls = f", {step.llm_calls} LLM call(s)" if step.llm_calls else ""
        err_console.print(
            f"[dim]  {step.name}: {step.seconds:.2f} s{calls} (at {time.perf_counter() - start:.1f} s)[/dim]",
            highlight=False,
        )

    return observe_steps(line)


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

    kg = load_store(kg_dir)
    for name in topic_list(topic):
        kg.entity_id(name)
    start = time.perf_counter()
    evidence = get_method(method)(kg, llm=None, **parse_settings(settings)).retrieve(question, topic_list(topic))
    seconds = time.perf_counter() - start
    if as_json:
        print_json(
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
    linker = HybridLinker(load_store(kg_dir), m=k)
    for line in texts:
        result = linker.link_text(line, k)
        if as_json:
            print_json(result.as_json())
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
    from kgrag.eval.datasets import load_datasets, select
    from kgrag.eval.report import write_report
    from kgrag.eval.runner import evaluate_method, summarise

    names, classes, config = _methods_and_settings(method, settings)
    kg = load_store(kg_dir)
    examples = select(load_datasets(dataset), limit=limit, sample=sample, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    _fill_gold_answers(kg, examples)
    model = None
    if not retrieval_only and any(c.needs_llm for c in classes.values()):
        model = open_llm(llm, cache=cache or out / "llm-cache.sqlite", timeout=llm_timeout)
    rows_by_method: dict[str, list] = {}
    summary: dict[str, dict] = {}
    metric = "answer_recall" if retrieval_only else "hit@1"
    options = {"llm": model, "retrieval_only": retrieval_only, "workers": workers, "processes": processes}
    for name in names:
        with question_progress(name, len(examples), metric, disable=as_json) as on_result:
            method_config = classes[name].own_settings(config)
            rows = evaluate_method(kg, name, examples, out, method_config=method_config, on_result=on_result, **options)
        rows_by_method[name] = rows
        summary[name] = summarise(rows)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    selection = (
        f"sample {sample} per group (seed {seed})" if sample else (f"first {limit} per group" if limit else "all")
    )
    about = {"kg": str(kg_dir), "datasets": dataset, "llm": "none" if model is None else model.model_id}
    report = write_report(out, rows_by_method, {**about, "retrieval_only": retrieval_only, "selection": selection})
    check_llm_failures(rows_by_method)
    if as_json:
        print_json(summary)
        return
    console.print(_summary_table(summary))
    console.print(f"wrote {out / 'summary.json'} and {report}" + ("" if model is None else f" (LLM {model.model_id})"))


def _methods_and_settings(method: str, settings: list[str] | None) -> tuple[list[str], dict[str, Any], dict]:
    """``(names, classes by name, --set settings)`` of ``--method a,b``; an unknown method or a setting no named
    method has is a usage error before anything runs."""
    from kgrag.methods import get as get_method

    names = [m.strip() for m in method.split(",") if m.strip()]
    classes = {n: get_method(n) for n in names}
    config = parse_settings(settings)
    unknown = set(config) - {f for c in classes.values() for f in c.setting_names()}
    if unknown:
        raise typer.BadParameter(f"no method of {', '.join(names)} has setting(s): {', '.join(sorted(unknown))}")
    return names, classes, config


def _fill_gold_answers(kg: Any, examples: list) -> None:
    """Text2Cypher questions come with a gold query, not answers: run those on the KG's backend first."""
    if any("cypher" in ex.meta and not ex.answers for ex in examples):
        from kgrag.eval.runner import fill_gold_from_cypher
        from kgrag.graph.backends import open_cypher_backend

        ran = fill_gold_from_cypher(examples, open_cypher_backend(kg))
        err_console.print(f"gold answers from {ran}/{len(examples)} gold Cypher queries on the KG's backend")


def _summary_table(summary: dict[str, dict]) -> Table:
    """One row per method: the headline metrics, cost and errors of ``summary.json``."""
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
    return table
