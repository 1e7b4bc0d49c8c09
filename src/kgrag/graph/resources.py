"""What is derived from one KG and kept while the KG lives: indexes, matrices, embeddings, linkers, examples.

Every such object is built on first use by whoever needs it and shared by every method on the same KG (a
service runs several methods over one KG). They live in one :class:`KGResources` per KG (``kg.resources``),
under a key that names what they are, so that there is one place to see what is kept, one way to build it,
and one way to drop it (:meth:`KGResources.invalidate`) — e.g. after the embedder behind a key changed.
The KG itself is immutable, so nothing here goes stale on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class KGResources:
    """Per-KG objects by key, each built once by the ``build`` its first user passes to :meth:`get`."""

    def __init__(self) -> None:
        self._items: dict[Hashable, Any] = {}

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The object kept under ``key``, built now with ``build()`` if there is none yet."""
        try:
            return self._items[key]
        except KeyError:
            pass
        # Two threads may both build; the first stored wins so every user sees one object.
        return self._items.setdefault(key, build())

    def invalidate(self, *keys: Hashable) -> None:
        """Drop the objects under ``keys`` (all of them when none are given); they are rebuilt on next use."""
        if not keys:
            self._items.clear()
        for key in keys:
            self._items.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._items
