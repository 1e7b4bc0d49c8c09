"""Answer-quality metrics, each a small function with its formula (registered by name).

All set metrics compare *normalised* answers (:func:`normalize_answer`).  ``pred`` is the ranked prediction
list (best first), ``gold`` the gold answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from kgrag.linking.normalize import normalize_answer
from kgrag.registry import Registry

Metric = Callable[[Sequence[str], Sequence[str]], float]
metrics: Registry[Metric] = Registry("metric")


def _norm_list(items: Iterable[str]) -> list[str]:
    out: dict[str, None] = {}
    for item in items:
        norm = normalize_answer(item)
        if norm:
            out.setdefault(norm, None)
    return list(out)


@metrics.register("hit")
def hit(pred: Sequence[str], gold: Sequence[str]) -> float:
    """1 if any prediction is a gold answer."""
    g = set(_norm_list(gold))
    return float(any(p in g for p in _norm_list(pred)))


@metrics.register("hit@1")
def hit_at_1(pred: Sequence[str], gold: Sequence[str]) -> float:
    """1 if the first prediction is a gold answer."""
    p = _norm_list(pred)
    return float(bool(p) and p[0] in set(_norm_list(gold)))


@metrics.register("em")
def exact_match(pred: Sequence[str], gold: Sequence[str]) -> float:
    """1 if the prediction set equals the gold set."""
    return float(set(_norm_list(pred)) == set(_norm_list(gold)))


def precision_recall_f1(pred: Sequence[str], gold: Sequence[str]) -> tuple[float, float, float]:
    """P = |P∩G|/|P|, R = |P∩G|/|G|, F1 = 2PR/(P+R); all 0 when either set is empty."""
    p, g = set(_norm_list(pred)), set(_norm_list(gold))
    if not p or not g:
        return 0.0, 0.0, 0.0
    inter = len(p & g)
    precision, recall = inter / len(p), inter / len(g)
    f1 = 2 * precision * recall / (precision + recall) if inter else 0.0
    return precision, recall, f1


metrics.register("precision")(lambda pred, gold: precision_recall_f1(pred, gold)[0])
metrics.register("recall")(lambda pred, gold: precision_recall_f1(pred, gold)[1])
metrics.register("f1")(lambda pred, gold: precision_recall_f1(pred, gold)[2])


@metrics.register("mrr")
def reciprocal_rank(pred: Sequence[str], gold: Sequence[str]) -> float:
    """1/rank of the first gold answer in the ranked list (0 if none)."""
    g = set(_norm_list(gold))
    for rank, p in enumerate(_norm_list(pred), start=1):
        if p in g:
            return 1.0 / rank
    return 0.0


def hit_at_k(pred: Sequence[str], gold: Sequence[str], k: int) -> float:
    """1 if a gold answer is among the first ``k`` predictions."""
    g = set(_norm_list(gold))
    return float(any(p in g for p in _norm_list(pred)[:k]))


metrics.register("hit@10")(lambda pred, gold: hit_at_k(pred, gold, 10))


def answer_recall(evidence_entities: Iterable[str], gold: Sequence[str]) -> float:
    """Share of gold answers that occur as an entity in the retrieved evidence."""
    g = _norm_list(gold)
    if not g:
        return 0.0
    seen = set(_norm_list(evidence_entities))
    return sum(a in seen for a in g) / len(g)


def rows_match(
    pred_rows: Sequence[Sequence[object]], gold_rows: Sequence[Sequence[object]], ordered: bool = False
) -> bool:
    """Execution accuracy for Cypher: result rows equal as multisets (as lists when the question orders).

    Cell values are compared after string normalisation, so ``1``/``1.0``/``"1"`` differ only in form.
    """

    def canon(rows: Sequence[Sequence[object]]) -> list[tuple[str, ...]]:
        return [tuple(_cell(v) for v in row) for row in rows]

    pred_c, gold_c = canon(pred_rows), canon(gold_rows)
    return pred_c == gold_c if ordered else Counter(pred_c) == Counter(gold_c)


def _cell(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, float):
        value = round(value, 6)
    return normalize_answer(str(value))
