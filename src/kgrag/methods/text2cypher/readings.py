"""Several readings of one question, and the one whose rows the others agree with.

The 1.5B model's query depends on what the prompt shows it: with the three most similar solved examples it
copies their shape, without them it writes from the schema alone, and examples met by the question as written
rather than by its masked shape are other examples. Over the 299 clean Northwind dev pairs the two recorded runs
with and without examples were each right where the other was wrong on 76 questions (42 and 34), and either was
right on 0.61 of them against 0.49 for the better alone. Which one is right cannot be read from either query, but
different prompts rarely agree on the same wrong rows: with three readings, rows that two of them return are
the answer (self-consistency, decided by execution as text-to-SQL systems vote over sampled queries). A reading
counts only when it ran with rows and nothing the check saw wrong; among equals the earlier reading wins, so the
first prompt's query stands unless two other readings agree against it.

Readings agree when they return the same rows (as multisets, columns in any order), shape included. Agreeing
on the answer alone (a node and its name as one) was measured too, keeping the earliest reading's shape: on the
299 clean Northwind dev pairs with leave-one-out examples it chose the first reading's shape where two others
agreed on another, and lost 7 questions to that and won 4 (the same replies replayed): the shape most prompts
write is more often the one the user's own queries use than the first prompt's is. Once a majority of
the readings planned agree, the rest are not written: the first two agreeing settle a vote of three.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgrag.methods.base import Trace
from kgrag.retrieval.rows import strict_match

MAX_CALLS = 3  # LLM calls a question may cost, repairs and further readings together


@dataclass
class Reading:
    """One query as run: its text, the trace step that ran it, the backend's result, and what was wrong."""

    query: str
    step: Any
    result: Any
    problem: str | None

    @property
    def standing(self) -> int:
        """It ran with nothing wrong (3), ran with rows but a problem the check saw (2), ran with no rows (1), or
        did not run (0)."""
        if not self.result.ok:
            return 0
        if self.problem is None:
            return 3
        return 2 if has_rows(self.result) else 1


def has_rows(result: Any) -> bool:
    """Whether a query's result holds a value (``avg()`` over no rows is one row of null, not an answer)."""
    return any(cell is not None for row in result.rows for cell in row)


def _agreement(sound: list[Reading]) -> list[int]:
    """For each sound reading, how many sound readings (itself included) return the same rows."""
    return [sum(strict_match(r.result.rows, other.result.rows) for other in sound) for r in sound]


def decided(readings: list[Reading], planned: int) -> bool:
    """Whether sound readings already agree in a majority of ``planned``: no later reading can change the vote."""
    agree = _agreement([r for r in readings if r.standing == 3])
    return bool(agree) and max(agree) >= planned // 2 + 1


def choose_reading(readings: list[Reading], trace: Trace) -> Reading | None:
    """The reading whose rows most sound readings return (the earliest among equals); when none stands, the
    first of the best standing. The choice and each reading's agreement are recorded on ``trace``."""
    if len(readings) < 2:
        return readings[0] if readings else None
    with trace.step("choose_reading") as step:
        sound = [r for r in readings if r.standing == 3]
        if not sound:
            top = max(r.standing for r in readings)
            chosen = next(r for r in readings if r.standing == top)
            step.outputs.update(agree=[], chosen=readings.index(chosen))
            return chosen
        agree = _agreement(sound)
        chosen = sound[max(range(len(sound)), key=lambda i: (agree[i], -i))]
        step.outputs.update(agree=agree, chosen=readings.index(chosen))
    return chosen


__all__ = ["MAX_CALLS", "Reading", "choose_reading", "decided", "has_rows"]
