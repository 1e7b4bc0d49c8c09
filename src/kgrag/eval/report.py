"""report.md (methods × metrics with 95% bootstrap CIs) and PNG plots next to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kgrag.eval.calibration import COVERAGES, TARGET_HIT, calibration_summary, risk_coverage
from kgrag.eval.runner import bootstrap_ci

TABLE_METRICS = ("hit@1", "hit", "em", "f1", "answer_recall", "evidence_triples", "llm_calls", "seconds")
RETRIEVAL_METRICS = ("answer_recall", "evidence_triples", "evidence_tokens", "seconds")
GROUP_METRICS = ("hit@1", "f1", "answer_recall", "evidence_triples")
RETRIEVAL_GROUP_METRICS = ("answer_recall", "evidence_triples", "seconds")


def _fmt(values: list[float], metric: str) -> str:
    mean = float(np.mean(values)) if values else 0.0
    if metric in ("evidence_triples", "evidence_tokens", "llm_calls", "seconds"):
        return (
            f"{mean:.3f}" if metric == "seconds" else f"{mean:.1f}" if metric.startswith("evidence") else f"{mean:.2f}"
        )
    low, high = bootstrap_ci(values)
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def write_report(out_dir: Path, rows_by_method: dict[str, list[dict[str, Any]]], meta: dict[str, Any]) -> Path:
    retrieval_only = bool(meta.get("retrieval_only"))
    table_metrics = RETRIEVAL_METRICS if retrieval_only else TABLE_METRICS
    group_metrics = RETRIEVAL_GROUP_METRICS if retrieval_only else GROUP_METRICS
    lines = [
        "# kgrag evaluation report",
        "",
        f"- KG: `{meta.get('kg')}`",
        f"- datasets: {', '.join(f'`{d}`' for d in meta.get('datasets', []))}",
        f"- LLM: `{meta.get('llm')}`" + (" (retrieval only: no LLM calls)" if meta.get("retrieval_only") else ""),
        f"- selection: {meta.get('selection')}",
        "",
        "Means with 95% bootstrap confidence intervals (1,000 resamples).",
        "",
        "| method | n | " + " | ".join(table_metrics) + " | errors |",
        "|---|---|" + "---|" * len(table_metrics) + "---|",
    ]
    for method, rows in rows_by_method.items():
        cells = [_fmt([r[m] for r in rows], m) for m in table_metrics]
        errors = sum(1 for r in rows if r.get("error"))
        lines.append(f"| {method} | {len(rows)} | " + " | ".join(cells) + f" | {errors} |")
    if not retrieval_only:
        lines += _cost_lines(rows_by_method)
        lines += _trust_lines(rows_by_method)
    groups = sorted({r["group"] for rows in rows_by_method.values() for r in rows})
    if len(groups) > 1:
        lines += [
            "",
            "## By group",
            "",
            "| method | group | n | " + " | ".join(group_metrics) + " |",
            "|---|---|---|" + "---|" * len(group_metrics),
        ]
        for method, rows in rows_by_method.items():
            for g in groups:
                sub = [r for r in rows if r["group"] == g]
                if sub:
                    cells = [_fmt([r[m] for r in sub], m) for m in group_metrics]
                    lines.append(f"| {method} | {g} | {len(sub)} | " + " | ".join(cells) + " |")
    plots = write_plots(out_dir, rows_by_method)
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    else:
        lines += ["", "(plots skipped: matplotlib is not installed — pip install 'kgrag[eval]')"]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _cost_lines(rows_by_method: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Medians of what a question cost. Evaluated prompt tokens are the ones the model read (not restored from a
    kept prefix, not answered from the response cache): on a CPU they, not the prompt's length, set the time."""
    lines = [
        "",
        "## Cost per question (medians)",
        "",
        "| method | LLM calls | prompt tokens | evaluated prompt tokens | completion tokens | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for method, rows in rows_by_method.items():
        cells = [float(np.median([r.get(k, 0) for r in rows])) if rows else 0.0 for k in _COST_KEYS]
        lines.append(
            f"| {method} | {cells[0]:.1f} | {cells[1]:.0f} | {cells[2]:.0f} | {cells[3]:.0f} | {cells[4]:.2f} |"
        )
    return lines


def _trust_lines(rows_by_method: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Risk–coverage: Hit@1 when only the most confident questions are answered, the threshold (``--set
    abstain=...``) that answers them, and how well the confidence is calibrated (ECE)."""
    summaries = {m: calibration_summary(rows) for m, rows in rows_by_method.items()}
    if not any(summaries.values()):
        return []
    lines = [
        "",
        "## Answers you can trust (risk–coverage)",
        "",
        "Hit@1 on the questions answered when only the most confident share is answered, with the `abstain` "
        f"threshold that does it; the last column is the threshold keeping Hit@1 ≥ {TARGET_HIT} and its coverage. "
        "ECE: expected calibration error of the top answer's confidence (10 bins); in brackets the ECE a "
        "perfectly calibrated confidence would show on as many questions (mean, 90th percentile): an ECE within "
        "that range is sampling noise, not miscalibration.",
        "",
        "| method | ECE | " + " | ".join(f"{c:.0%} answered" for c in COVERAGES) + f" | Hit@1 ≥ {TARGET_HIT} |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method, summary in summaries.items():
        if not summary:
            continue
        cells = [f"{p['hit@1']:.2f} (≥{p['threshold']:.2f})" for p in summary["risk_coverage"]]
        cells += [""] * (len(COVERAGES) - len(cells))
        key = f"threshold_for_hit@1_{TARGET_HIT}"
        best = f"≥{summary[key]:.2f}: {summary[f'coverage_at_hit@1_{TARGET_HIT}']:.0%}" if key in summary else "none"
        floor = summary.get("ece_floor")
        ece = f"{summary['ece']:.3f}" + (f" ({floor[0]:.3f}–{floor[1]:.3f})" if floor else "")
        lines.append(f"| {method} | {ece} | " + " | ".join(cells) + f" | {best} |")
    return lines


_COST_KEYS = ("llm_calls", "prompt_tokens", "evaluated_prompt_tokens", "completion_tokens", "seconds")


def write_plots(out_dir: Path, rows_by_method: dict[str, list[dict[str, Any]]]) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    methods = list(rows_by_method)
    paths = []
    retrieval_only = all(r["llm_calls"] == 0 for rows in rows_by_method.values() for r in rows)
    metric = "answer_recall" if retrieval_only else "hit@1"

    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(methods) + 2), 3.5))
    means = [np.mean([r[metric] for r in rows_by_method[m]]) for m in methods]
    cis = [bootstrap_ci([r[metric] for r in rows_by_method[m]]) for m in methods]
    err = np.array([[mu - lo for mu, (lo, _) in zip(means, cis)], [hi - mu for mu, (_, hi) in zip(means, cis)]])
    ax.bar(methods, means, yerr=np.maximum(err, 0), capsize=4, color="#4C72B0")
    ax.set_ylabel(metric)
    ax.set_ylim(0, 1.05)
    ax.set_title(f"{metric} by method (95% CI)")
    fig.tight_layout()
    paths.append(out_dir / "accuracy_by_method.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    if not retrieval_only:
        fig, ax = plt.subplots(figsize=(4.5, 3.5))
        for m in methods:
            rows = rows_by_method[m]
            ax.scatter(np.mean([r["llm_calls"] for r in rows]), np.mean([r["hit@1"] for r in rows]), label=m, s=40)
        ax.set_xlabel("LLM calls per question")
        ax.set_ylabel("hit@1")
        ax.legend(fontsize=8)
        ax.set_title("accuracy vs LLM calls")
        fig.tight_layout()
        paths.append(out_dir / "accuracy_vs_llm_calls.png")
        fig.savefig(paths[-1], dpi=120)
        plt.close(fig)

    if not retrieval_only:
        paths += _risk_coverage_plot(plt, out_dir, rows_by_method)

    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(methods) + 2), 3.5))
    ax.boxplot([[max(r["seconds"], 1e-6) for r in rows_by_method[m]] for m in methods], showfliers=True)
    ax.set_xticks(range(1, len(methods) + 1), methods)
    ax.set_yscale("log")
    ax.set_ylabel("seconds per question")
    ax.set_title("latency")
    fig.tight_layout()
    paths.append(out_dir / "latency.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def _risk_coverage_plot(plt: Any, out_dir: Path, rows_by_method: dict[str, list[dict[str, Any]]]) -> list[Path]:
    """Hit@1 of the answered questions against the share answered, one curve per method with confidences."""
    curves = {}
    for method, rows in rows_by_method.items():
        scored = [r for r in rows if "confidence" in r and not r.get("error")]
        if scored:
            conf = np.array([float(r["confidence"]) for r in scored])
            curves[method] = risk_coverage(conf, np.array([float(r["hit@1"]) for r in scored]))
    if not curves:
        return []
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    for method, (coverage, hit, _) in curves.items():
        ax.plot(coverage, hit, label=method, drawstyle="steps-post")
    ax.set_xlabel("share of questions answered")
    ax.set_ylabel("hit@1 of those answered")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    ax.set_title("risk-coverage")
    fig.tight_layout()
    path = out_dir / "risk_coverage.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return [path]
