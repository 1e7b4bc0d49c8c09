"""Checks on the text a model writes, held token by token where the runtime can (the llama.cpp backend).

A grammar says which strings may be written, but only what a context-free grammar can say: it cannot know
that a Cypher variable read in a WHERE was bound by a MATCH before it. A token check can: it reads the text
written so far and says of each next token whether it may follow. A method names its check in a call
(``token_check=NAME``); the llama.cpp backend builds a fresh one for the call and, in its greedy chain under a
grammar, sets the logit of every token the check refuses to -inf after the grammar has run
(:mod:`kgrag.models.llm.grammar_first`). Where the check refuses every token the grammar allows, it is set
aside for that token, so it can only narrow a choice, never leave none. Backends that cannot run it (an
OpenAI-compatible server, the scripted model) write without it; the method checks the result afterwards as
it would without the check.

Checks register here by name. The name is part of the response-cache key and a check's code is not, so a
check that comes to refuse something else takes a new name (a version suffix): replies cached under the old
one are then not reused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class TokenCheck(Protocol):
    def accept(self, piece: str) -> None:
        """The model wrote ``piece`` (one token's text)."""

    def allows(self, piece: str) -> bool:
        """Whether ``piece`` may be written next."""


_CHECKS: dict[str, Callable[[], TokenCheck]] = {}


def register(name: str) -> Callable[[Callable[[], TokenCheck]], Callable[[], TokenCheck]]:
    """Register a factory of a token check under ``name`` (a decorator)."""

    def add(factory: Callable[[], TokenCheck]) -> Callable[[], TokenCheck]:
        _CHECKS[name] = factory
        return factory

    return add


def new_check(name: str) -> TokenCheck:
    """A fresh check of the kind registered as ``name`` (a clear error for an unknown name)."""
    try:
        return _CHECKS[name]()
    except KeyError:
        known = ", ".join(sorted(_CHECKS)) or "none"
        raise ValueError(f"unknown token check {name!r} (registered: {known})") from None


__all__ = ["TokenCheck", "new_check", "register"]
