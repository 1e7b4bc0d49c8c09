"""Two runs on the same questions, compared question by question (``kgrag compare``).

Two Hit@1 numbers whose 95% intervals overlap say little about whether a change helped: on 100 questions a
method that gains five and loses eight moves by three, inside the noise of either number. What a change did is
the *paired* difference — the questions it turned right, those it turned wrong, and how likely that split is if
the change did nothing (McNemar's exact test: under no effect each changed question goes either way with
probability one half). Issue #26 asks for exactly this beside every before/after claim; this module computes it
from the ``results.jsonl`` files ``kgrag eval`` and ``kgrag bench`` write, so no session needs a script of its own.

Rows pair on (KG, group, question id); rows only one run has are counted, not compared. Seconds compare only
when the two runs shared the machine the same way (back to back, nothing else running); the tokens and calls
compare always.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgrag.errors import KGRagError
from kgrag.eval.runner import summarise


class RunFileError(KGRagError, ValueError):
    """A run to compare is missing or holds a line that is no results row; the message names the place."""

    exit_code = 2


Key = tuple[str, str]  # (KG, method) of one results.jsonl: "" for a `kgrag eval` run's KG
RESULTS = "results.jsonl"


def read_run(path: Path) -> dict[Key, list[dict[str, Any]]]:
    """The rows of a run: ``path`` is a ``results.jsonl`` file, a ``kgrag eval`` output (``OUT/<method>/``) or a
    ``kgrag bench`` output (``OUT/<kg>/<method>/``). A line that is not JSON is an error naming its place."""
    if path.is_file():
        files = {("", path.parent.name): path}
    elif path.is_dir():
        files = {("", f.parent.name): f for f in sorted(path.glob(f"*/{RESULTS}"))}
        files |= {(f.parent.parent.name, f.parent.name): f for f in sorted(path.glob(f"*/*/{RESULTS}"))}
    else:
        raise RunFileError(f"{path}: no such file or directory")
    if not files:
        raise RunFileError(f"{path}: no {RESULTS} here, nor in OUT/<method>/ or OUT/<kg>/<method>/")
    return {key: _rows(file) for key, file in files.items()}


def _rows(file: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RunFileError(f"{file}:{number}: not a JSON line ({exc.msg})") from None
        if not isinstance(row, dict) or "id" not in row:
            raise RunFileError(f"{file}:{number}: a results row needs an 'id'")
        rows.append(row)
    return rows


def mcnemar_p(gains: int, losses: int) -> float:
    """Two-sided exact McNemar p-value: the chance of a split at least this uneven among ``gains + losses``
    changed questions if each went either way with probability one half."""
    n = gains + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(gains, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


@dataclass
class Side:
    """One run's numbers over the paired questions."""

    score: float  # mean of the metric
    right_grounded: float | None  # share of right (Hit@1) answers with support (None: no right answer, or not recorded)
    evaluated_prompt_tokens: float | None  # median per question
    seconds: float | None  # median per question
    llm_calls: float | None  # mean per question
    errors: int


@dataclass
class Paired:
    """One (KG, method, group) compared: ``a`` before, ``b`` after."""

    kg: str
    method: str
    group: str
    n: int
    a: Side
    b: Side
    gains: int  # right in b only
    losses: int  # right in a only
    p: float  # mcnemar_p(gains, losses)
    only_a: int = 0  # questions one run has and the other has not
    only_b: int = 0
    changed: list[dict[str, Any]] = field(default_factory=list)  # the questions that went one way or the other


def compare(
    a: dict[Key, list[dict[str, Any]]],
    b: dict[Key, list[dict[str, Any]]],
    *,
    metric: str = "hit@1",
    methods: tuple[str, str] | None = None,
) -> list[Paired]:
    """Every (KG, method, group) both runs answered, paired question by question. ``methods`` compares one
    method of ``a`` with another of ``b`` (frag against ultrag, on the same questions) instead of like with like."""
    pairs = _matched_keys(a, b, methods)
    if not pairs:
        raise RunFileError(f"the two runs share no KG and method (first: {sorted(a)}, second: {sorted(b)})")
    if not any(metric in row for ka, kb in pairs for row in (*a[ka], *b[kb])):
        raise RunFileError(f"no row of either run has {metric!r} (a retrieval-only run: --metric answer_recall)")
    out = []
    for ka, kb in pairs:
        rows_a, rows_b = _by_question(a[ka]), _by_question(b[kb])
        for group in sorted({g for g, _ in rows_a} | {g for g, _ in rows_b}):
            ids_a = {q for g, q in rows_a if g == group}
            ids_b = {q for g, q in rows_b if g == group}
            both = sorted(ids_a & ids_b)
            if both:
                pa = [rows_a[group, q] for q in both]
                pb = [rows_b[group, q] for q in both]
                out.append(_paired(ka[0], ka[1] if ka[1] == kb[1] else f"{ka[1]} → {kb[1]}", group, pa, pb, metric))
                out[-1].only_a, out[-1].only_b = len(ids_a - ids_b), len(ids_b - ids_a)
    return out


def _matched_keys(a: dict[Key, list], b: dict[Key, list], methods: tuple[str, str] | None) -> list[tuple[Key, Key]]:
    if methods is None:
        return [(k, k) for k in sorted(set(a) & set(b))]
    ma, mb = methods
    return [((kg, ma), (kg, mb)) for kg, m in sorted(a) if m == ma and (kg, mb) in b]


def _by_question(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(str(r.get("group") or ""), str(r["id"])): r for r in rows}


def _paired(kg: str, method: str, group: str, rows_a: list[dict], rows_b: list[dict], metric: str) -> Paired:
    score_a = [_value(r, metric) for r in rows_a]
    score_b = [_value(r, metric) for r in rows_b]
    gains = sum(1 for x, y in zip(score_a, score_b, strict=True) if y > x)
    losses = sum(1 for x, y in zip(score_a, score_b, strict=True) if y < x)
    changed = [
        {"id": ra["id"], "question": ra.get("question", ""), metric: [x, y],
         "predicted": [ra.get("predicted", [])[:3], rb.get("predicted", [])[:3]], "gold": ra.get("gold", [])[:3]}
        for ra, rb, x, y in zip(rows_a, rows_b, score_a, score_b, strict=True) if x != y
    ]  # fmt: skip
    return Paired(
        kg=kg,
        method=method,
        group=group,
        n=len(rows_a),
        a=_side(rows_a, score_a),
        b=_side(rows_b, score_b),
        gains=gains,
        losses=losses,
        p=round(mcnemar_p(gains, losses), 4),
        changed=changed,
    )


def _value(row: dict[str, Any], metric: str) -> float:
    value = row.get(metric)
    return float(value) if isinstance(value, (int, float)) else 0.0


def _side(rows: Sequence[dict[str, Any]], scores: Sequence[float]) -> Side:
    """The run's cost and grounding over these rows as ``kgrag eval``'s summary reads them
    (:func:`kgrag.eval.runner.summarise`), and the mean of the compared metric."""
    summary = summarise(list(rows))
    return Side(
        score=round(sum(scores) / len(scores), 4),
        right_grounded=summary.get("grounded_when_right"),
        evaluated_prompt_tokens=summary["evaluated_prompt_tokens_median"],
        seconds=summary["seconds_median"],
        llm_calls=summary["llm_calls"],
        errors=summary["errors"],
    )


def total(pairs: Sequence[Paired]) -> dict[str, Any]:
    """Gains, losses and the McNemar p-value over every compared question (groups and KGs pooled)."""
    gains, losses = sum(p.gains for p in pairs), sum(p.losses for p in pairs)
    return {"n": sum(p.n for p in pairs), "gains": gains, "losses": losses, "p": round(mcnemar_p(gains, losses), 4)}


def as_json(pairs: Sequence[Paired], *, metric: str, changed: bool = False) -> dict[str, Any]:
    """The comparison as one JSON object (``changed``: with the questions that went either way)."""
    rows = []
    for p in pairs:
        row = asdict(p)
        if not changed:
            row.pop("changed")
        rows.append(row)
    return {"metric": metric, "compared": rows, "total": total(pairs)}


__all__ = ["Paired", "RunFileError", "Side", "as_json", "compare", "mcnemar_p", "read_run", "total"]
