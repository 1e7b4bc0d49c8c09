"""Embedders, chosen by a spec string: ``minilm`` (default, int8 ONNX), ``static`` (fast, for millions of
names), ``st:<model dir or package>`` (sentence-transformers, extra ``[st]``).

>>> emb = load_embedder("static")            # doctest: +SKIP
>>> emb.encode(["Heat", "Michael Mann"]).shape  # doctest: +SKIP
(2, 256)
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from kgrag.models.embeddings.base import Embedder, dot_scores, l2_normalise
from kgrag.registry import Registry

DEFAULT_EMBEDDER = "minilm"

embedders: Registry[Callable[[str], Embedder]] = Registry("embedder")


@embedders.register("minilm")
def _minilm(arg: str) -> Embedder:
    from kgrag.models.embeddings.onnx_minilm import OnnxMiniLM

    return OnnxMiniLM(arg or None)


@embedders.register("static")
def _static(arg: str) -> Embedder:
    from kgrag.models.embeddings.static import StaticEmbedder

    return StaticEmbedder(arg or None)


@embedders.register("st")
def _st(arg: str) -> Embedder:
    from kgrag.models.embeddings.st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(arg or "sentence-transformers/all-MiniLM-L6-v2")


@cache
def load_embedder(spec: str = DEFAULT_EMBEDDER) -> Embedder:
    """One shared instance per spec (models are loaded once per process)."""
    kind, _, arg = spec.partition(":")
    return embedders.get(kind)(arg)


__all__ = ["DEFAULT_EMBEDDER", "Embedder", "dot_scores", "embedders", "l2_normalise", "load_embedder"]
