"""``kgrag eval``: run methods over a question set, one JSON line per question, then summarise and report.

Output (a stable contract, see docs/DESIGN.md)::

    OUT/<method>/results.jsonl   one line per question (appended as answered, so an interrupted run resumes)
    OUT/summary.json             {method: {"n", "hit", "hit@1", "em", "f1", "answer_recall", "evidence_triples",
                                  "llm_calls", "seconds_per_question", ...}}
    OUT/report.md (+ PNG plots)  all methods × metrics with 95% bootstrap confidence intervals

A question that fails is recorded with its error and counts as wrong; it never aborts the run.  When the
failure is the LLM's (``llm_failed``: unreachable, rate-limited, garbage replies), the question is asked again
by the next run over the same OUT: the endpoint may be back, and the row says nothing about the method.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.errors import LLMError, LLMUnavailableError
from kgrag.eval.calibration import calibration_summary
from kgrag.eval.datasets import Example
from kgrag.eval.metrics import (
    answer_recall,
    exact_match,
    hit,
    hit_at_1,
    precision_recall_f1,
    rows_match,
)
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag import hop_labels
from kgrag.retrieval.graph_query import first_column_answers
from kgrag.types import Evidence

STOP_AFTER_UNREACHABLE = 5
"""Questions in a row that find the LLM unreachable before a run stops: the rest would only fail the same way,
each after the whole LLM timeout (a re-run resumes where it stopped)."""

SUMMARY_KEYS = (
    "hit",
    "hit@1",
    "em",
    "precision",
    "recall",
    "f1",
    "answer_recall",
    "evidence_triples",
    "evidence_tokens",
    "llm_calls",
    "prompt_tokens",
    "evaluated_prompt_tokens",
    "completion_tokens",
    "seconds",
)
MEDIAN_KEYS = ("prompt_tokens", "evaluated_prompt_tokens", "seconds")
"""Also summarised by their median (``<key>_median``): one slow question or one long prompt moves a mean, and the
time a user waits for a typical answer is the median."""


def score_row(
    ex: Example,
    predicted: list[str],
    evidence: Sequence[Evidence],
    *,
    llm_calls: int = 0,
    prompt_tokens: int = 0,
    evaluated_prompt_tokens: int = 0,
    completion_tokens: int = 0,
    seconds: float = 0.0,
    error: str | None = None,
    llm_failed: bool = False,
) -> dict[str, Any]:
    """One results.jsonl line for a question."""
    precision, recall, f1 = precision_recall_f1(predicted, ex.answers)
    entities = [name for ev in evidence for name in ev.entities]
    triple_ids = {t for ev in evidence for t in ev.triples}
    return {
        "id": ex.id,
        "group": ex.group,
        "question": ex.question,
        "topic_entities": ex.topic_entities,
        "gold": ex.answers,
        "predicted": predicted,
        "hit": hit(predicted, ex.answers),
        "hit@1": hit_at_1(predicted, ex.answers),
        "em": exact_match(predicted, ex.answers),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "answer_recall": answer_recall(entities, ex.answers),
        "evidence_triples": len(triple_ids) if triple_ids else len(evidence),
        "evidence_tokens": sum(len(ev.text.split()) for ev in evidence),
        hop_labels.FIELD: hop_labels.answer_path_hops(predicted, evidence),
        "llm_calls": llm_calls,
        "prompt_tokens": prompt_tokens,
        "evaluated_prompt_tokens": evaluated_prompt_tokens,
        "completion_tokens": completion_tokens,
        "seconds": round(seconds, 4),
        "error": error,
        "llm_failed": llm_failed,
    }


def run_question(method: Any, ex: Example, retrieval_only: bool) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        if retrieval_only:
            evidence = method.retrieve(ex.question, ex.topic_entities)
            return score_row(ex, [], evidence, seconds=time.perf_counter() - start)
        answer = method.answer(ex.question, ex.topic_entities)
        u = answer.usage
        row = score_row(
            ex,
            answer.answers,
            answer.evidence,
            llm_calls=u.llm_calls,
            prompt_tokens=u.prompt_tokens,
            evaluated_prompt_tokens=u.evaluated_prompt_tokens,
            completion_tokens=u.completion_tokens,
            seconds=time.perf_counter() - start,
            error=answer.error,
        )
        row["grounded"] = answer.grounded
        row["abstained"] = answer.abstained
        if answer.set_aside:
            row["set_aside"] = answer.set_aside
        if answer.doubtful:
            row["doubtful"] = answer.doubtful
        top = answer.answers[0] if answer.answers else None
        row["confidence"] = answer.confidence.get(top, 0.0) if top else 0.0  # the top answer's; 0 with none
        row["signals"] = answer.signals.get(top, {}) if top else {}
        if "gold_rows" in ex.meta:
            row["execution_accuracy"] = execution_match(answer, ex)
        row["steps"] = compact_trace(answer.trace)
        return row
    except Exception as exc:  # one failing question never aborts an evaluation
        error = f"{type(exc).__name__}: {exc}"
        llm_failed = isinstance(exc, LLMError)
        return score_row(ex, [], [], seconds=time.perf_counter() - start, error=error, llm_failed=llm_failed)


def compact_trace(steps: Sequence[Any], max_text: int = 200, max_items: int = 10) -> list[dict[str, Any]]:
    """The trace's step names and their scalar outputs (numbers, flags, short strings), for analysing a run
    afterwards — e.g. the share of questions whose ULTRAG query was valid, or FRAG's routed hop count —
    without the size of full evidence lists.  Short lists of such values are kept too (KG-Linker's entities and
    draft answers, a step's answers): a wrong answer is usually explained by them."""

    def scalar(value: Any) -> bool:
        return (
            value is None
            or isinstance(value, bool | int | float)
            or (isinstance(value, str) and len(value) <= max_text)
        )

    def small(value: Any) -> bool:
        return scalar(value) or (isinstance(value, list) and len(value) <= max_items and all(map(scalar, value)))

    return [
        {"name": s.name, **{k: v for k, v in s.outputs.items() if small(v)}, "llm_calls": s.llm_calls} for s in steps
    ]


def execution_match(answer: Any, ex: Example) -> float:
    """1 if the rows of the method's executed query equal the gold query's rows (multisets; lists if ordered)."""
    executed = [s for s in answer.trace if "result_rows" in s.outputs]
    if not executed:
        return 0.0
    ordered = "order by" in str(ex.meta.get("cypher", "")).lower()
    return float(rows_match(executed[-1].outputs["result_rows"], ex.meta["gold_rows"], ordered=ordered))


def fill_gold_from_cypher(examples: list[Example], backend: Any, *, row_cap: int = 1000) -> int:
    """Text2Cypher questions: gold rows and answers from running each gold query on ``backend``.

    Returns how many gold queries ran; a gold query that fails leaves its question without gold answers
    (it then scores as wrong for every method, and is counted in ``gold_errors``).
    """
    ran = 0
    for ex in examples:
        if "cypher" not in ex.meta or ex.answers:
            continue
        result = backend.run(ex.meta["cypher"], row_cap=row_cap)
        ex.meta["gold_error"] = result.error
        if result.ok:
            ran += 1
            ex.meta["gold_rows"] = result.rows
            ex.answers = first_column_answers(result.rows)
    return ran


# ---------------------------------------------------------------------- process workers (CPU-bound retrieval)
_WORKER: dict[str, Any] = {}


def _init_worker(store: str, method_name: str, config: dict[str, Any]) -> None:
    from kgrag.methods import get as get_method

    kg = KnowledgeGraph.load(store, verify=False)
    _WORKER["method"] = get_method(method_name)(kg, llm=None, **config)


def _worker_run(ex: Example) -> dict[str, Any]:
    return run_question(_WORKER["method"], ex, True)


# ---------------------------------------------------------------------- the run
def read_results(path: Path) -> dict[str, dict[str, Any]]:
    """Complete lines of a results file by question id (a torn last line from a crash is ignored)."""
    rows: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text("utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            rows[row["id"]] = row
    return rows


def evaluate_method(
    kg: KnowledgeGraph,
    method_name: str,
    examples: list[Example],
    out_dir: Path,
    *,
    llm: Any = None,
    retrieval_only: bool = False,
    workers: int = 1,
    processes: bool = False,
    method_config: dict[str, Any] | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    stop_after_unreachable: int = STOP_AFTER_UNREACHABLE,
) -> list[dict[str, Any]]:
    """Answer (or retrieve for) every example not already in ``out_dir/<method>/results.jsonl`` (or there
    only as an LLM failure)."""
    from kgrag.methods import get as get_method

    method_cls = get_method(method_name)
    config = method_config or {}
    path = out_dir / method_name / "results.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = read_results(path)
    todo = [ex for ex in examples if ex.id not in done or done[ex.id].get("llm_failed")]
    if todo:
        if path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            with open(path, "ab") as fh:  # a crash mid-line: start the next record on its own line
                fh.write(b"\n")
        executor: Executor | None = None
        if processes and retrieval_only and workers > 1 and kg.store_path is not None:
            executor = ProcessPoolExecutor(
                workers, initializer=_init_worker, initargs=(str(kg.store_path), method_name, config)
            )
            results = executor.map(_worker_run, todo, chunksize=16)
        else:
            method = method_cls(kg, llm=None if retrieval_only else llm, **config)
            if workers > 1:
                executor = ThreadPoolExecutor(workers)
                results = executor.map(lambda ex: run_question(method, ex, retrieval_only), todo)
            else:
                results = (run_question(method, ex, retrieval_only) for ex in todo)
        try:
            _append_results(results, path, done, method_name, on_result, stop_after_unreachable)
        finally:
            if executor is not None:
                executor.shutdown(cancel_futures=True)
    wanted = {ex.id for ex in examples}
    return [row for qid, row in done.items() if qid in wanted]


def _append_results(
    results: Iterable[dict[str, Any]],
    path: Path,
    done: dict[str, dict[str, Any]],
    method_name: str,
    on_result: Callable[[dict[str, Any]], None] | None,
    stop_after_unreachable: int,
) -> None:
    """Append each row to ``path`` as it arrives (so an interrupted run resumes) and to ``done``; stop with
    ``LLMUnavailableError`` after ``stop_after_unreachable`` questions in a row found the LLM unreachable."""
    unreachable = 0
    with open(path, "a", encoding="utf-8") as fh:
        for row in results:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
            done[row["id"]] = row
            if on_result:
                on_result(row)
            unreachable = unreachable + 1 if _unreachable(row) else 0
            if unreachable >= stop_after_unreachable:
                raise LLMUnavailableError(
                    f"{method_name}: stopped after {unreachable} questions in a row found the LLM "
                    f"unreachable; re-run to resume ({row['error']})"
                )


def _unreachable(row: dict[str, Any]) -> bool:
    """The row's question failed because the LLM endpoint could not be reached (not a bad reply)."""
    return bool(row.get("llm_failed")) and str(row.get("error")).startswith(LLMUnavailableError.__name__)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means of every metric, plus per-group means and the error count."""
    if not rows:
        return {"n": 0}

    def means(subset: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(subset)}
        for key in SUMMARY_KEYS:  # rows written before a key existed count as 0
            out[key] = round(float(np.mean([r.get(key, 0) for r in subset])), 4)
        for key in MEDIAN_KEYS:
            out[f"{key}_median"] = round(float(np.median([r.get(key, 0) for r in subset])), 4)
        out["seconds_per_question"] = out.pop("seconds")
        out["errors"] = sum(1 for r in subset if r.get("error"))
        out["llm_failures"] = sum(1 for r in subset if r.get("llm_failed"))
        scored = [r for r in subset if "grounded" in r and not r.get("error")]
        right = [r["grounded"] for r in scored if r["hit@1"] == 1]
        wrong = [not r["grounded"] for r in scored if r["hit@1"] == 0]
        if right:  # what `grounded` is worth: right answers should have support, wrong ones should not
            out["grounded_when_right"] = round(float(np.mean(right)), 4)
        if wrong:
            out["ungrounded_when_wrong"] = round(float(np.mean(wrong)), 4)
        out.update(calibration_summary(subset))
        exec_rows = [r["execution_accuracy"] for r in subset if "execution_accuracy" in r]
        if exec_rows:
            out["execution_accuracy"] = round(float(np.mean(exec_rows)), 4)
        return out

    summary = means(rows)
    groups = sorted({r["group"] for r in rows})
    if len(groups) > 1:
        summary["groups"] = {g: means([r for r in rows if r["group"] == g]) for g in groups}
    return summary


def bootstrap_ci(values: Sequence[float], *, resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean."""
    arr = np.asarray(values, dtype=np.float64)
    if len(arr) < 2:
        return (float(arr.mean()) if len(arr) else 0.0,) * 2  # type: ignore[return-value]
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, len(arr), size=(resamples, len(arr)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)
