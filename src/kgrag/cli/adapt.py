"""`kgrag adapt`: train FRAG's router and pattern scorer for a KG from the KG alone (methods/frag/adapt.py)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer

from kgrag.cli.common import JsonOpt, KGDir, LLMOpt, LLMTimeoutOpt, app, console, err_console, load_store, print_json

_Calibration = Annotated[
    int,
    typer.Option(
        min=0,
        help="Fresh synthetic questions (held-out wordings) that bias the router and decide which models are "
        "kept; 0: keep both as trained.",
    ),
]
_Describe = Annotated[
    int | None,
    typer.Option(
        min=0,
        help="Relations (most frequent first) the LLM phrases, one call each; default 40 with --llm, else 0.",
    ),
]
_FitCheck = Annotated[
    int | None,
    typer.Option(
        min=0,
        help="Fresh synthetic questions on which the LLM's re-reading of frag's best patterns (question_fit) "
        "must help for frag to use it on this KG, one scoring call each; default 60 with --llm, else 0. With "
        "--asked and models kept, any value but 0 checks it on the held-out asked questions instead.",
    ),
]
_Asked = Annotated[
    str | None,
    typer.Option(
        help="Questions your users ask, to train on instead of synthetic ones: a file with one question per "
        "line, or KIND:FILE (jsonl:, metaqa:, webqsp: ...; topic entities are read where given, answers never). "
        "Needs --llm, which labels each (a scoring and an answer call a question).",
    ),
]


class _Bars:
    """One rich progress bar per stage of :func:`kgrag.methods.frag.adapt.adapt`."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.task: Any = None

    def stage(self, name: str, total: int | None) -> None:
        if self.task is not None:  # the previous stage is over even if it did less than planned
            self.progress.update(self.task, total=self.progress.tasks[-1].completed)
        self.task = self.progress.add_task(name, total=total)

    def advance(self, steps: int = 1) -> None:
        if self.task is not None:
            self.progress.advance(self.task, steps)

    def finish(self) -> None:
        """Show the last stage as done (the training stage has no count to reach)."""
        if self.task is not None:
            done = self.progress.tasks[-1].completed or 1
            self.progress.update(self.task, total=done, completed=done)


def _run_with_bars(kg: Any, settings: Any, model: Any, asked: Any, *, quiet: bool) -> dict[str, Any]:
    """Run the adaptation with a progress bar per stage on stderr (none with ``quiet``)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kgrag.methods.frag.adapt import adapt as run_adapt

    columns = (TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, disable=quiet) as progress:
        bars = _Bars(progress)
        record = run_adapt(kg, settings, llm=model, progress=bars, asked=asked)
        bars.finish()
    return record


@app.command()
def adapt(
    kg_dir: KGDir,
    questions: Annotated[
        int, typer.Option("--questions", "-n", min=9, help="Template questions to sample (split over 1-3 hops).")
    ] = 6000,
    seed: Annotated[int, typer.Option(help="Seed of sampling, wording and the validation split.")] = 0,
    max_answers: Annotated[
        int, typer.Option(min=1, help="Skip a pattern that reaches more entities than this from its start.")
    ] = 20,
    calibration: _Calibration = 300,
    describe: _Describe = None,
    paraphrases: Annotated[
        int, typer.Option(min=0, help="Template questions the LLM rewords, one call each (default none).")
    ] = 0,
    fit_check: _FitCheck = None,
    asked: _Asked = None,
    llm: LLMOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    cache: Annotated[Path | None, typer.Option(help="SQLite file caching LLM responses.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Train FRAG's hop router and pattern scorer for KG_DIR from questions made from the KG itself.

    Samples relation paths of 1-3 hops and writes a question for each from the relation names (with --llm the
    LLM phrases the relations too), trains both models, keeps those that beat zero-shot frag on held-out
    questions, and stores them in KG_DIR/adapted/, where frag finds them. With --asked FILE they are trained on
    your users' questions instead, each labelled by zero-shot frag and the LLM. A failed run changes nothing.
    """
    from kgrag.cli.common import open_llm
    from kgrag.methods.frag.sampling import AdaptError, AdaptSettings

    if asked is not None and not llm:
        raise AdaptError("--asked needs --llm: the LLM labels each asked question")
    asked_questions = _read_asked(asked) if asked is not None else None
    synthetic = asked_questions is None
    n_describe = describe if describe is not None else (40 if llm and synthetic else 0)
    n_fit = fit_check if fit_check is not None else (60 if llm else 0)
    settings = AdaptSettings(
        questions=questions,
        seed=seed,
        max_answers=max_answers,
        calibration=calibration,
        describe=n_describe,
        paraphrases=paraphrases,
        fit_questions=n_fit,
    )
    kg = load_store(kg_dir)
    model = None
    if n_describe or paraphrases or n_fit or not synthetic:
        with err_console.status("loading the LLM", spinner="dots") if not as_json else nullcontext():
            model = open_llm(llm, cache=cache, timeout=llm_timeout)
    record = _run_with_bars(kg, settings, model, asked_questions, quiet=as_json)
    if as_json:
        print_json(record)
    else:
        _report(record, Path(kg.store_path or kg_dir) / "adapted")


def _read_asked(spec: str) -> list[tuple[str, list[str]]]:
    """``(question, topic entity names)`` from a question file (module :mod:`kgrag.eval.datasets`; a bare path
    is one question per line); their answers are dropped here, so nothing downstream can read them."""
    from kgrag.eval.datasets import datasets, load_dataset
    from kgrag.methods.frag.sampling import AdaptError

    examples = load_dataset(spec if spec.partition(":")[0] in datasets else f"text:{spec}")
    if not examples:
        raise AdaptError(f"{spec}: no questions in the --asked file")
    return [(ex.question, list(ex.topic_entities)) for ex in examples]


def _made(counts: dict[str, Any]) -> str:
    """The questions the models were trained on, in one line."""
    if "asked" in counts:
        return (
            f"{counts['labelled']:,} of {counts['asked']:,} asked questions labelled by zero-shot frag with the LLM "
            f"({counts['moved_to_answer']:,} moved to the pattern of the model's answer, {counts['no_topic']:,} "
            f"with no entity of the KG, {counts['no_pattern']:,} with no pattern to a named entity)"
        )
    by_hops = " / ".join(f"{counts['by_hops'][h]:,}" for h in sorted(counts["by_hops"]))
    return (
        f"{counts['templates']:,} synthetic questions over {counts['patterns']:,} relation patterns from "
        f"{counts['start_entities']:,} entities, {counts['relations_phrased_by_llm']} relations phrased by the LLM, "
        f"{counts['paraphrases']:,} LLM paraphrases, {counts['unseen_word_copies']:,} copies with unknown words: "
        f"{by_hops} questions by hop count"
    )


def _report(record: dict[str, Any], target: Path) -> None:
    """What was made, trained and kept, in a few lines."""
    counts, seconds = record["counts"], record["seconds"]
    asked = "asked" in counts
    console.print(f"[green]✓[/green] {_made(counts)}")
    kept = []
    for key, name in (("router", "hop router"), ("patterns", "pattern scorer")):
        part = record.get(key) or {}
        if "skipped" in part:
            console.print(f"  {name} not trained: {part['skipped']}")
        elif part:
            mark = "[green]✓[/green]" if part["out"] else "[yellow]–[/yellow]"
            trained = (
                f"trained on {part['train']:,} asked questions"
                if asked
                else f"validation accuracy on synthetic questions {part['validation_accuracy']}"
            )
            console.print(
                f"{mark} {name}: {part['labels']:,} labels, {trained}"
                + ("" if part["out"] else "; not kept (frag does better without it)")
            )
            kept += [name] if part["out"] else []
    calibration = record.get("calibration")
    if calibration:
        recall = ", ".join(f"{k} {v:.3f}" for k, v in calibration["answer_recall"].items())
        console.print(
            f"  answer recall on {calibration['questions']} held-out synthetic questions: {recall} → kept: "
            f"{calibration['kept']}"
        )
    held = record.get("asked_check")
    if held:
        zero, trained, *fitted = held["agreement"].values()
        console.print(
            f"  {held['held_out']} held-out asked questions read as labelled: zero-shot frag {zero:.2f}, with the "
            f"models {trained:.2f} → " + ("kept (trained again on all)" if held["kept"] else "not kept")
        )
        if fitted:
            console.print(
                f"{'[green]✓[/green]' if held['question_fit'] else '[yellow]–[/yellow]'} question_fit beside them: "
                f"{fitted[0]:.2f} → "
                + ("frag re-reads their best patterns with the LLM on this KG" if held["question_fit"] else "not used")
            )
    check = record.get("question_fit_check")
    if check:
        best = check["best_pattern_reaches_an_answer"]
        console.print(
            f"{'[green]✓[/green]' if check['kept'] else '[yellow]–[/yellow]'} question_fit: the best pattern reaches "
            f"an answer for {best['alignment']:.2f} → {best['question_fit']:.2f} of {check['questions']} held-out "
            "synthetic questions; "
            + ("frag re-reads its best patterns with the LLM on this KG" if check["kept"] else "not used (no gain)")
        )
    if kept:
        console.print(f"  → {target}  ({seconds['total']:.0f} s); frag uses its {' and '.join(kept)} on this KG")
    else:
        console.print(
            f"  → {target}  ({seconds['total']:.0f} s); no model kept: frag stays zero-shot on this KG, which did "
            "as well on questions worded as no model was trained"
        )
