"""FRAG-F's hop labels: how many relations the evidence path behind an answer has, written by ``kgrag eval``
into every results row and read back by ``kgrag frag-train --from-results`` to retrain the hop router.

The LLM picked that path's endpoint as its answer, so the path's length is an LLM-verified hop count for the
question (the paper's feedback variant). Both halves live here so the field's name and meaning have one home;
the evaluation runner only stores what :func:`answer_path_hops` returns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgrag.linking.normalize import normalize_answer
from kgrag.methods.frag.router import RouterError
from kgrag.types import Evidence

FIELD = "answer_path_hops"
"""The results.jsonl key holding the label."""


def answer_path_hops(predicted: Sequence[str], evidence: Sequence[Evidence]) -> int | None:
    """Relation count of the first evidence path that ends at the first predicted answer (else None).

    >>> path = Evidence(text="Heat directed_by Michael Mann", entities=["Heat", "Michael Mann"],
    ...                 relations=["directed_by"])
    >>> answer_path_hops(["michael mann"], [path])
    1
    """
    if not predicted:
        return None
    first = normalize_answer(predicted[0])
    for ev in evidence:
        if ev.relations and ev.entities and normalize_answer(ev.entities[-1]) == first:
            return len(ev.relations)
    return None


def rows_from_results(path: Path, *, only_correct: bool = False) -> list[dict[str, Any]]:
    """Router rows from a ``kgrag eval`` results.jsonl: the hop count of the path the answer came from."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RouterError(f"{path}: {exc.strerror or exc}") from None
    rows = []
    for lineno, line in enumerate(lines, 1):
        try:
            row = json.loads(line) if line.strip() else {}
        except json.JSONDecodeError as exc:
            raise RouterError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
        label = row.get(FIELD)
        if isinstance(label, int) and label > 0 and (row.get("hit") or not only_correct):
            rows.append({"question": str(row["question"]), "hops": label, "answers": [], "topic_entities": []})
    return rows
