"""Linking types: a mention in a text and its candidate entities."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass
class Candidate:
    entity: int
    name: str
    score: float

    def as_json(self) -> dict:
        return {"entity": self.name, "score": round(float(self.score), 4)}


@dataclass
class Span:
    """A mention: ``text[start:end]`` of the question, with candidates best first."""

    text: str
    start: int
    end: int
    candidates: list[Candidate] = field(default_factory=list)
    salience: float = 0.0

    def as_json(self) -> dict:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "candidates": [c.as_json() for c in self.candidates],
        }


@dataclass
class LinkResult:
    """All mentions of one text; ``reason`` says why there are none."""

    text: str
    mentions: list[Span]
    reason: str | None = None

    def as_json(self) -> dict:
        out: dict = {"text": self.text, "mentions": [m.as_json() for m in self.mentions]}
        if not self.mentions:
            out["reason"] = self.reason or "no entity mention found"
        return out


class Linker(Protocol):
    def link(self, mention: str, k: int = 3) -> list[Candidate]:
        """Candidate entities for a mention, best first."""
        ...
