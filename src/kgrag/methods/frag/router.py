"""FRAG's reasoning-aware router: predict a question's hop count from its text alone, no LLM.

The paper trains a small classifier on hop labels; here it is TF-IDF over word uni/bi-grams + multinomial
logistic regression, written with numpy/scipy (a few hundred KB, trains in seconds). Entity mentions are
replaced by a placeholder token (``[Heat]`` in MetaQA, or the linked mention spans) so the model learns the
question's *shape*, not the names. The fitted model is a plain ``.npz`` (no pickle): vocabulary, idf,
weights, labels — safe to load from anywhere. Retrain on a user's labelled questions with
``kgrag frag-train`` (or on the hop counts of LLM-verified paths: FRAG-F feedback).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import ClassVar

import numpy as np

from kgrag.errors import KGRagError

ENTITY_TOKEN = "ENT"
_BRACKETS = re.compile(r"\[[^\]]*\]")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
FORMAT = "kgrag-hop-router-v1"
#: the KG store's subdirectory where `kgrag adapt` keeps the models it trained for that KG
ADAPTED_DIR = "adapted"


class RouterError(KGRagError, ValueError):
    exit_code = 2


def mask_entities(question: str, spans: Sequence[tuple[int, int]] = ()) -> str:
    """Replace ``[bracketed]`` names and the given character spans by the placeholder token."""
    for start, end in sorted(spans, reverse=True):
        question = question[:start] + f" {ENTITY_TOKEN} " + question[end:]
    return _BRACKETS.sub(f" {ENTITY_TOKEN} ", question)


def mask_topics(question: str, names: Sequence[str]) -> str:
    """Mask the topic entities' names where they occur in ``question`` (case-insensitive)."""
    spans = []
    low = question.lower()
    for name in sorted(names, key=len, reverse=True):
        start = low.find(name.lower()) if name else -1
        if start >= 0 and not any(s < start + len(name) and start < e for s, e in spans):
            spans.append((start, start + len(name)))
    return mask_entities(question, spans)


def features(question: str) -> list[str]:
    """Word unigrams and bigrams of the lower-cased question, ``[bracketed]`` names masked."""
    words = [ENTITY_TOKEN if w == ENTITY_TOKEN.lower() else w for w in _WORD.findall(mask_entities(question).lower())]
    words = ["<s>", *words, "</s>"]
    return words[1:-1] + [f"{a} {b}" for a, b in pairwise(words)]


@dataclass
class TextClassifier:
    """TF-IDF + multinomial logistic regression over question labels (hop counts, relation patterns, ...)."""

    vocab: dict[str, int]
    idf: np.ndarray
    coef: np.ndarray  # (n_classes, n_features)
    intercept: np.ndarray  # (n_classes,)
    labels: np.ndarray  # class labels (int hop counts or str)
    #: what it was trained on: ``kg_checksum`` (the KG store's checksum, None when not tied to one KG) and
    #: ``questions`` (where the training questions came from). A model trained on one KG's questions is
    #: only used on that KG by default: on another KG it would route by habits of the wrong question set.
    provenance: dict = field(default_factory=dict)

    builtin: ClassVar[str] = "frag_router.npz"

    # ------------------------------------------------------------------ features
    def _matrix(self, questions: Sequence[str]):
        import scipy.sparse as sp

        rows, cols, vals = [], [], []
        for i, q in enumerate(questions):
            counts = Counter(self.vocab[f] for f in features(q) if f in self.vocab)
            for j, c in counts.items():
                rows.append(i)
                cols.append(j)
                vals.append((1.0 + np.log(c)) * self.idf[j])
        x = sp.csr_matrix((vals, (rows, cols)), shape=(len(questions), len(self.vocab)), dtype=np.float64)
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.diags(1.0 / norms) @ x

    # ------------------------------------------------------------------ inference
    def _one(self, question: str) -> np.ndarray:
        """Logits of one question without building a sparse matrix (the per-question hot path)."""
        counts = Counter(self.vocab[f] for f in features(question) if f in self.vocab)
        if not counts:
            return self.intercept.copy()
        cols = np.fromiter(counts.keys(), np.int64, len(counts))
        vals = (1.0 + np.log(np.fromiter(counts.values(), np.float64, len(counts)))) * self.idf[cols]
        vals /= np.sqrt(vals @ vals)
        return self.coef[:, cols] @ vals + self.intercept

    def predict_proba(self, questions: Sequence[str]) -> np.ndarray:
        if len(questions) == 1:
            logits = self._one(questions[0])[None, :]
        else:
            logits = self._matrix(questions) @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, questions: Sequence[str]) -> np.ndarray:
        """The most probable label per question."""
        if not len(questions):
            return self.labels[:0]
        return self.labels[np.argmax(self.predict_proba(questions), axis=1)]

    # ------------------------------------------------------------------ training
    @classmethod
    def fit(
        cls,
        questions: Sequence[str],
        hops: Sequence[int] | Sequence[str] | Sequence[tuple],
        *,
        min_count: int = 2,
        l2: float = 1e-3,
        max_iter: int = 300,
    ) -> TextClassifier:
        """Fit on ``questions`` (entities bracketed or already masked) with one label each, or a tuple of
        labels that are equally right (weak labels that tie)."""
        from scipy.optimize import minimize

        if len(questions) != len(hops) or not len(questions):
            raise RouterError("router training needs the same, non-zero number of questions and labels")
        # a label may be a tuple of equally good labels: the target spreads evenly over them
        choices = [tuple(h) if isinstance(h, (list, tuple)) else (h,) for h in hops]
        if any(not c for c in choices):
            raise RouterError("every question needs at least one label")
        labels = np.unique(np.asarray([lab for c in choices for lab in c]))
        if len(labels) < 2:
            raise RouterError(f"training needs at least two different labels, got {labels.tolist()}")
        doc_freq: Counter[str] = Counter()
        for q in questions:
            doc_freq.update(set(features(q)))
        terms = sorted(t for t, c in doc_freq.items() if c >= min_count)
        vocab = {t: i for i, t in enumerate(terms)}
        n = len(questions)
        idf = np.log((1 + n) / (1 + np.array([doc_freq[t] for t in terms], dtype=np.float64))) + 1.0
        model = cls(vocab, idf, np.zeros((len(labels), len(terms))), np.zeros(len(labels)), labels)
        x = model._matrix(questions)
        onehot = np.zeros((n, len(labels)))
        for i, c in enumerate(choices):
            onehot[i, np.searchsorted(labels, np.asarray(c))] = 1.0 / len(c)
        k, d = len(labels), len(terms)

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            w, b = theta[: k * d].reshape(k, d), theta[k * d :]
            logits = x @ w.T + b
            logits -= logits.max(axis=1, keepdims=True)
            logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
            diff = (np.exp(logp) - onehot) / n
            value = -(onehot * logp).sum() / n + 0.5 * l2 * (w * w).sum()
            grad_w = np.asarray(x.T @ diff).T + l2 * w
            return value, np.concatenate([grad_w.ravel(), diff.sum(axis=0)])

        res = minimize(loss, np.zeros(k * d + k), jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
        model.coef = res.x[: k * d].reshape(k, d)
        model.intercept = res.x[k * d :]
        return model

    def accuracy(self, questions: Sequence[str], labels: Sequence) -> float:
        """Share of questions whose prediction is the label (or one of a tuple of tied labels)."""
        if not len(questions):
            return 0.0
        pred = self.predict(questions)
        return float(np.mean([p in (y if isinstance(y, (list, tuple)) else (y,)) for p, y in zip(pred, labels)]))

    def trained_for(self, checksum: str | None) -> bool:
        """True when this model was trained on the questions of the KG with this store checksum."""
        return checksum is not None and self.provenance.get("kg_checksum") == checksum

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> Path:
        path = Path(path)
        terms = np.array(sorted(self.vocab, key=self.vocab.__getitem__), dtype=str)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(
            tmp,
            format=np.array(FORMAT),
            terms=terms,
            idf=self.idf.astype(np.float32),
            coef=self.coef.astype(np.float32),
            intercept=self.intercept.astype(np.float32),
            labels=self.labels.astype(np.int64 if self.labels.dtype.kind in "iu" else str),
            provenance=np.array(json.dumps(self.provenance, sort_keys=True)),
        )
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path | None = None) -> TextClassifier:
        """Load a model ``.npz`` (the one shipped with kgrag when ``path`` is None or ``"builtin"``)."""
        if path is None or str(path) == "builtin":
            return cls._read(Path(str(resources.files("kgrag").joinpath(f"data/{cls.builtin}"))))
        return cls._read(Path(path))

    @classmethod
    def _read(cls, path: Path) -> TextClassifier:
        try:
            with np.load(path, allow_pickle=False) as z:
                if str(z["format"]) != FORMAT:
                    raise RouterError(f"{path}: not a kgrag question classifier (format {z['format']!s})")
                terms = [str(t) for t in z["terms"]]
                return cls(
                    {t: i for i, t in enumerate(terms)},
                    z["idf"].astype(np.float64),
                    z["coef"].astype(np.float64),
                    z["intercept"].astype(np.float64),
                    z["labels"],
                    _provenance(z, path),
                )
        except (OSError, KeyError, ValueError) as exc:
            if isinstance(exc, RouterError):
                raise
            raise RouterError(f"{path}: cannot read question classifier: {exc}") from None


def _provenance(z: np.lib.npyio.NpzFile, path: Path) -> dict:
    """The ``provenance`` record of a saved model ({} for models saved before it existed)."""
    if "provenance" not in z.files:
        return {}
    try:
        value = json.loads(str(z["provenance"]))
    except json.JSONDecodeError:
        raise RouterError(f"{path}: unreadable provenance record") from None
    if not isinstance(value, dict):
        raise RouterError(f"{path}: provenance must be a JSON object")
    return value


class HopRouter(TextClassifier):
    """FRAG's router: labels are hop counts."""

    builtin: ClassVar[str] = "frag_router.npz"

    def hops(self, question: str) -> int:
        return int(self.predict([question])[0])


class PatternClassifier(TextClassifier):
    """Question → relation pattern (``rel>rel_inv>...`` labels), learned from questions with answers."""

    builtin: ClassVar[str] = "frag_patterns.npz"


def read_labelled(path: str | Path) -> list[dict]:
    """Training questions from JSONL: ``{"question": str, "hops": int?, "answers": [str]?, "topic_entities": [str]?}``.

    Each line needs ``hops`` (trains the router) or ``answers`` (with a KG: labels the pattern scorer, and the
    router through the pattern's length). Errors name ``path:line``; nothing is guessed.
    """
    path = Path(path)
    rows: list[dict] = []
    try:
        lines: Iterable[str] = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RouterError(f"{path}: {exc.strerror or exc}") from None
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RouterError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
            raise RouterError(f"{where}: expected an object with a non-empty 'question'")
        hops, answers, topics = row.get("hops"), row.get("answers"), row.get("topic_entities", [])
        if hops is not None and (not isinstance(hops, int) or isinstance(hops, bool) or hops < 1):
            raise RouterError(f"{where}: 'hops' must be a positive integer")
        if answers is not None and (not isinstance(answers, list) or not all(isinstance(a, str) for a in answers)):
            raise RouterError(f"{where}: 'answers' must be a list of strings")
        if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
            raise RouterError(f"{where}: 'topic_entities' must be a list of strings")
        if hops is None and not answers:
            raise RouterError(f"{where}: give 'hops' (router) or 'answers' (pattern scorer), or both")
        rows.append({"question": row["question"], "hops": hops, "answers": answers or [], "topic_entities": topics})
    if not rows:
        raise RouterError(f"{path}: no labelled questions")
    return rows
