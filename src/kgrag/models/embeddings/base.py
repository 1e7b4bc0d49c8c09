"""The Embedder interface: ``encode(texts) -> float32 array (n, dim)``, rows L2-normalised."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np


def l2_normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.maximum(norms, 1e-12, out=norms)
    return x / norms


class Embedder(ABC):
    """Text → unit vectors. ``id`` names the model in cache paths (change it when the vectors change)."""

    id: str = "embedder"
    dim: int = 0

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return l2_normalise(self._encode(texts, batch_size))

    @abstractmethod
    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Raw (unnormalised) vectors for non-empty ``texts``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r}, dim={self.dim})"
