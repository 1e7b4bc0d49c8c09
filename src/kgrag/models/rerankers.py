"""Rerankers score passages against a query: ``score(query, passages) -> float array`` (higher is better).

No PyPI package ships cross-encoder weights, so the default reranks by embedding cosine.  A user with an ONNX
cross-encoder (``model.onnx`` + ``tokenizer.json`` in one directory) can plug it in with ``onnx:<dir>``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from kgrag.errors import MissingExtraError
from kgrag.models.embeddings import Embedder, dot_scores, load_embedder
from kgrag.registry import Registry


class Reranker(ABC):
    id: str = "reranker"

    @abstractmethod
    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One relevance score per passage."""

    def top_k(self, query: str, passages: Sequence[str], k: int) -> np.ndarray:
        """Indices of the ``k`` best passages, best first."""
        scores = self.score(query, passages)
        k = min(k, len(scores))
        if k <= 0:
            return np.empty(0, dtype=np.int64)
        part = np.argpartition(-scores, k - 1)[:k]
        return part[np.argsort(-scores[part], kind="stable")]


class EmbeddingReranker(Reranker):
    """Cosine similarity between the query's and the passages' embeddings."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.id = f"cosine-{embedder.id}"

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        if not len(passages):
            return np.zeros(0, dtype=np.float32)
        q = self.embedder.encode([query])[0]
        return dot_scores(self.embedder.encode(list(passages)), q)


class OnnxCrossEncoder(Reranker):
    """A cross-encoder exported to ONNX (inputs input_ids/attention_mask[/token_type_ids], output logits)."""

    def __init__(self, model_dir: str | Path, *, threads: int = 2, max_tokens: int = 512, batch_size: int = 32) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtraError(None, "the ONNX cross-encoder", exc.name or "onnxruntime") from exc
        model_dir = Path(model_dir)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        self._session = ort.InferenceSession(str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.enable_padding()
        self.batch_size = batch_size
        self.id = f"onnx-{model_dir.name}"

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        out = np.zeros(len(passages), dtype=np.float32)
        for start in range(0, len(passages), self.batch_size):
            batch = [(query, p) for p in passages[start : start + self.batch_size]]
            enc = self._tokenizer.encode_batch(batch)
            feed = {
                "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            }
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.array([e.type_ids for e in enc], dtype=np.int64)
            logits = np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
            out[start : start + len(batch)] = logits[:, -1] if logits.ndim == 2 else logits
        return out


rerankers: Registry[Callable[[str], Reranker]] = Registry("reranker")
rerankers.register("cosine")(lambda arg: EmbeddingReranker(load_embedder(arg or "minilm")))
rerankers.register("onnx")(lambda arg: OnnxCrossEncoder(arg))


def load_reranker(spec: str = "cosine") -> Reranker:
    """``cosine[:<embedder spec>]`` (default) or ``onnx:<model dir>``."""
    kind, _, arg = spec.partition(":")
    return rerankers.get(kind)(arg)
