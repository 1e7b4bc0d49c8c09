"""The report of a benchmark suite (``OUT/report.md`` and plots): every KG side by side, then one section per KG.

The side-by-side table comes first because it is the question a suite answers — does a method hold up on a
KG it was not tuned on; each KG's full ``kgrag eval`` report (all metrics with confidence intervals, per
group) stays in ``OUT/<kg>/report.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kgrag.eval.runner import bootstrap_ci

if TYPE_CHECKING:
    from kgrag.eval.suite import KGResult, SuiteResult


def main_metric(retrieval_only: bool) -> str:
    """Retrieval only: the share of gold answers in the evidence; end to end: the first answer's accuracy."""
    return "answer_recall" if retrieval_only else "hit@1"


def _mean(rows: list[dict[str, Any]], metric: str) -> float | None:
    values = [r[metric] for r in rows if metric in r]
    return float(np.mean(values)) if values else None


def _cell(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _with_ci(rows: list[dict[str, Any]], metric: str) -> str:
    values = [r[metric] for r in rows if metric in r]
    if not values:
        return "–"
    low, high = bootstrap_ci(values)
    return f"{np.mean(values):.3f} [{low:.3f}, {high:.3f}]"


def _group_label(group: str) -> str:
    return group or "(no group)"


def write_suite_report(out: Path, result: SuiteResult) -> Path:
    """Write ``out/report.md`` (and the plots it shows) for a finished suite run; returns its path."""
    from kgrag.eval.suite import display_path

    options = result.options
    metric = main_metric(options.retrieval_only)
    methods = list(dict.fromkeys(m for r in result.kgs for m in r.rows_by_method))
    what = (
        "retrieval only (no LLM calls): `answer_recall` is the share of gold answers named in the evidence"
        if options.retrieval_only
        else f"LLM `{result.llm_id}`: `hit@1` is the share of questions whose first answer is a gold answer"
    )
    lines = [
        f"# kgrag benchmark: {result.suite.name}",
        "",
        *([result.suite.description, ""] if result.suite.description else []),
        f"- suite: `{display_path(result.suite.path)}`",
        f"- {what}",
        f"- selection: {options.selection}; questions without a gold answer are not scored (listed per KG)",
        f"- kgrag {result.to_json()['kgrag']}; {result.seconds:.0f} s in all",
        "",
        f"## {metric} by KG",
        "",
        "| KG | entities | relations | triples | n | " + " | ".join(methods) + " |",
        "|---|---|---|---|---|" + "---|" * len(methods),
    ]
    for r in result.kgs:
        cells = [_cell(_mean(r.rows_by_method[m], metric)) if m in r.rows_by_method else "" for m in methods]
        scored = max((len(rows) for rows in r.rows_by_method.values()), default=0)
        lines.append(
            f"| {r.entry.name} | {r.stats['entities']:,} | {r.stats['relations']:,} | {r.stats['triples']:,} | "
            f"{scored} | " + " | ".join(cells) + " |"
        )
    plot = write_kg_plot(out, result, metric, methods)
    if plot:
        lines += ["", f"![{metric} by KG]({plot.name})"]
    elif _pyplot() is None:
        lines += ["", "(plots skipped: matplotlib is not installed — pip install 'kgrag[eval]')"]
    lines += _cost_section(result)
    for r in result.kgs:
        lines += _kg_section(out, r, metric)
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _cost_section(result: SuiteResult) -> list[str]:
    """What each method cost on each KG (LLM calls, tokens, time): a better score bought with ten times the
    calls is a different result."""
    lines = [
        "",
        "## Cost and time",
        "",
        "Means per question; `wall s` is this run's time for the method on the KG (questions answered by an "
        "earlier run over the same output are not timed again).",
        "",
        "| KG | method | n | evidence triples | LLM calls | prompt tokens | evaluated prompt tokens (median) | "
        "completion tokens | s/question | wall s | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result.kgs:
        for method, summary in r.summary.items():
            lines.append(
                f"| {r.entry.name} | {method} | {summary.get('n', 0)} | {summary.get('evidence_triples', 0):.1f} | "
                f"{summary.get('llm_calls', 0):.2f} | {summary.get('prompt_tokens', 0):.0f} | "
                f"{summary.get('evaluated_prompt_tokens_median', 0):.0f} | "
                f"{summary.get('completion_tokens', 0):.0f} | {summary.get('seconds_per_question', 0):.3f} | "
                f"{summary.get('wall_seconds', 0):.1f} | {summary.get('errors', 0)} |"
            )
    return lines


def _kg_section(out: Path, r: KGResult, metric: str) -> list[str]:
    entry = r.entry
    lines = ["", f"## {entry.name}", ""]
    if entry.description:
        lines += [entry.description, ""]
    renamed = f" with relations renamed (`{entry.rename_relations}`)" if entry.rename_relations else ""
    lines += [
        f"- KG: `{entry.source_text}`{renamed} ({'built' if r.build['built'] else 'cached store'}, "
        f"{r.build['seconds']:.1f} s)",
        "- questions: " + ", ".join(f"`{spec}`" for spec in entry.datasets_text),
        f"- {r.questions} selected, {len(r.unanswerable)} without a gold answer"
        + (f" (`{entry.name}/unanswerable.jsonl`)" if r.unanswerable else ""),
        f"- per question: `{entry.name}/<method>/results.jsonl`; all metrics: [{entry.name}/report.md]"
        f"({entry.name}/report.md)",
        "",
        "| method | n | " + " | ".join(_kg_metrics(r, metric)) + " | errors |",
        "|---|---|" + "---|" * len(_kg_metrics(r, metric)) + "---|",
    ]
    for method, rows in r.rows_by_method.items():
        cells = [
            _with_ci(rows, m) if m not in ("evidence_triples",) else _cell(_mean(rows, m), 1)
            for m in _kg_metrics(r, metric)
        ]
        errors = sum(1 for row in rows if row.get("error"))
        lines.append(f"| {method} | {len(rows)} | " + " | ".join(cells) + f" | {errors} |")
    groups = sorted({row["group"] for rows in r.rows_by_method.values() for row in rows})
    if len(groups) > 1:
        methods = list(r.rows_by_method)
        lines += [
            "",
            f"{metric} by group:",
            "",
            "| group | n | " + " | ".join(methods) + " |",
            "|---|---|" + "---|" * len(methods),
        ]
        for group in groups:
            subsets = {m: [row for row in rows if row["group"] == group] for m, rows in r.rows_by_method.items()}
            n = max(len(rows) for rows in subsets.values())
            lines.append(
                f"| {_group_label(group)} | {n} | "
                + " | ".join(_cell(_mean(subsets[m], metric)) for m in methods)
                + " |"
            )
        plot = write_group_plot(out / entry.name, r, metric, groups)
        if plot:
            lines += ["", f"![{entry.name} {metric} by group]({entry.name}/{plot.name})"]
    return lines


def _kg_metrics(r: KGResult, metric: str) -> list[str]:
    """The main metric, then what explains it: F1 and answer recall end to end, evidence size always; Cypher
    questions add execution accuracy."""
    names = [metric] if metric == "answer_recall" else [metric, "f1", "answer_recall"]
    if any("execution_accuracy" in row for rows in r.rows_by_method.values() for row in rows):
        names.append("execution_accuracy")
    return [*names, "evidence_triples"]


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _grouped_bars(path: Path, labels: list[str], series: dict[str, list[list[float]]], metric: str, title: str) -> Path:
    """Bars per label, one per series (method), with 95% bootstrap intervals."""
    plt = _pyplot()
    width = 0.8 / max(len(series), 1)
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(labels) * max(len(series), 1) * 0.5 + 3), 3.8))
    x = np.arange(len(labels))
    for i, (name, per_label) in enumerate(series.items()):
        means = np.array([np.mean(v) if v else np.nan for v in per_label])
        cis = [bootstrap_ci(v) if v else (np.nan, np.nan) for v in per_label]
        err = np.array([[m - lo for m, (lo, _) in zip(means, cis)], [hi - m for m, (_, hi) in zip(means, cis)]])
        ax.bar(
            x + (i - (len(series) - 1) / 2) * width,
            means,
            width,
            yerr=np.nan_to_num(np.maximum(err, 0)),
            capsize=3,
            label=name,
        )
    ax.set_xticks(x, labels, rotation=20 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center")
    ax.set_ylabel(metric)
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_kg_plot(out: Path, result: SuiteResult, metric: str, methods: list[str]) -> Path | None:
    """``accuracy_by_kg.png``: the main metric per KG and method (None without matplotlib or rows)."""
    kgs = [r for r in result.kgs if any(r.rows_by_method.values())]
    if _pyplot() is None or not kgs:
        return None
    series = {m: [[row[metric] for row in r.rows_by_method.get(m, []) if metric in row] for r in kgs] for m in methods}
    return _grouped_bars(out / "accuracy_by_kg.png", [r.entry.name for r in kgs], series, metric, f"{metric} by KG")


def write_group_plot(out: Path, r: KGResult, metric: str, groups: list[str]) -> Path | None:
    """``<kg>/accuracy_by_group.png``: the main metric per group (hops, question types) and method."""
    if _pyplot() is None:
        return None
    series = {
        m: [[row[metric] for row in rows if row["group"] == g and metric in row] for g in groups]
        for m, rows in r.rows_by_method.items()
    }
    labels = [_group_label(g) for g in groups]
    return _grouped_bars(out / "accuracy_by_group.png", labels, series, metric, f"{r.entry.name}: {metric} by group")
