"""A tiny name → object registry; kgrag keeps one per pluggable kind (methods, LLM backends, embedders...).

>>> animals = Registry("animal")
>>> @animals.register("cat")
... class Cat: ...
>>> animals.get("cat").__name__
'Cat'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from kgrag.errors import KGRagError

T = TypeVar("T")


class UnknownNameError(KGRagError, KeyError):
    exit_code = 2

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def add(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._items[name] = obj
            return obj

        return add

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(f"unknown {self.kind} {name!r}; choose one of: {', '.join(self)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))
