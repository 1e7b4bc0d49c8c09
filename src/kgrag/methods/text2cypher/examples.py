"""Solved question/Cypher pairs a user already has, and the most similar of them for a new question.

Few-shot examples that share the question's shape ("top 5 ... by ...", "average ... per ...") show a small
model the aggregation and the relationship directions of this very database. The pairs are embedded once; a
pair whose question is the one asked is skipped, so evaluating over the pairs file itself is leave-one-out.
With a ``mask`` (the value index's: the values and numbers a question names become ``value`` / ``number``)
questions are compared by their shape rather than by the values they name, as DAIL-SQL retrieves examples.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kgrag.errors import KGFormatError
from kgrag.models.embeddings import Embedder


class ExamplePairs:
    def __init__(
        self, pairs: list[tuple[str, str]], embedder: Embedder, mask: Callable[[str], str] | None = None
    ) -> None:
        self.pairs = pairs
        self.embedder = embedder
        self.mask = mask or (lambda question: question)
        texts = [self.mask(q) for q, _ in pairs]
        self.vectors = embedder.encode(texts) if pairs else np.zeros((0, 1), np.float32)

    @classmethod
    def load(cls, path: str | Path, embedder: Embedder, mask: Callable[[str], str] | None = None) -> ExamplePairs:
        """Pairs from a JSONL file of objects with ``question`` and ``cypher``; a bad line is ``path:line``."""
        pairs = []
        with open(path, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    question, cypher = row["question"], row["cypher"]
                except (ValueError, KeyError, TypeError) as exc:
                    raise KGFormatError(str(path), line_no, f"not a {{question, cypher}} object ({exc})") from None
                if isinstance(question, str) and isinstance(cypher, str) and question.strip() and cypher.strip():
                    pairs.append((question.strip(), cypher.strip()))
        return cls(pairs, embedder, mask)

    def similar(self, question: str, k: int) -> list[tuple[str, str]]:
        """The ``k`` pairs whose questions embed closest to ``question``, most similar last (nearest the
        question in the prompt); the question itself is never its own example."""
        if k <= 0 or not self.pairs:
            return []
        scores = self.vectors @ self.embedder.encode([self.mask(question)])[0]
        asked = " ".join(question.lower().split())
        order = [i for i in np.argsort(-scores) if " ".join(self.pairs[i][0].lower().split()) != asked][:k]
        return [self.pairs[i] for i in reversed(order)]


__all__ = ["ExamplePairs"]
