"""Whether a query's execution is worth arbitrating: it found something new, and it asks what the question asks.

The arbitrator can only choose among what the query reached, so a query that follows a relation the question
does not ask for yields a confident wrong answer. The 1.5B query writer does that: "Which charger does the
Aero 14 Laptop use?" became ``"Aero 14 Laptop" -> "works with_inv" -> "ships from"`` (a warehouse) beside a
``uses`` relation, on a KG of 15 relations that were all listed.

FRAG's zero-shot scorer reads the question another way: it aligns each relation of a relation pattern with
its own span of the question (:mod:`kgrag.methods.frag.alignment`), with no LLM. A chain query from one entity
(``"E" -> r1 -> r2``) is such a pattern. When it scores more than FRAG's ``answer_margin`` below the best
pattern from the same entity, or FRAG's search does not reach it at all — FRAG's own answer call would not
read its paths — the query is set aside and the fallback answers instead. So is a query one hop short
(``verify_shorter``): its relations are some of FRAG's best pattern's, which has more hops ("Who teaches the
prerequisite of X?" written as ``"X" -> prerequisite`` where FRAG reads ``prerequisite > taught by``); the
1.5B writer stops short, and the arbitrator then names the middle entity. Queries with an intersection, and
KGs where FRAG scores patterns with trained models (on another scale), are not checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.base import Trace
from kgrag.methods.frag import Frag
from kgrag.methods.frag.patterns import pattern_key, pattern_label
from kgrag.methods.ultrag.dsl.executor import Execution
from kgrag.methods.ultrag.dsl.nodes import Entity, Projection, Query


def found_anything_new(execution: Execution) -> bool:
    """Whether the query scored an entity other than the ones it started from. A query that goes out and back
    (``"George W. Bush" -> to_president -> to_president_inv``) can end where it began, and the arbitrator,
    offered only the question's own entity, answers with it; that query ran as good as empty."""
    started = np.zeros(len(execution.scores), dtype=bool)
    for node, x in execution.intermediate.items():
        if isinstance(node, Entity):
            started |= x > 0
    return bool(((execution.scores > 0) & ~started).any())


def chain_pattern(kg: KnowledgeGraph, query: Query) -> tuple[Entity, tuple[int, ...]] | None:
    """A chain query's leaf and its directed relation ids from the leaf outwards (``r_inv`` is ``r + n``);
    None for a query with an intersection."""
    relations: list[int] = []
    node = query
    while isinstance(node, Projection):
        relations.append(kg.relation_id(node.relation))
        node = node.operand
    if not isinstance(node, Entity) or not relations:
        return None
    return node, tuple(reversed(relations))


@dataclass(frozen=True)
class QueryReading:
    """The query's pattern and FRAG's best one from the same entity, with their zero-shot scores."""

    pattern: str
    score: float | None  # None: FRAG's search does not reach that pattern at all
    best: str
    best_score: float
    stops_short: bool = False  # the query's relations are some of the best pattern's, which has more hops

    def asks_what_frag_reads(self, margin: float) -> bool:
        return self.score is not None and self.score >= self.best_score - margin

    def as_json(self) -> dict[str, object]:
        score = None if self.score is None else round(self.score, 4)
        return {"pattern": self.pattern, "score": score, "best": self.best, "best_score": round(self.best_score, 4)}


def read_query(frag: Frag, question: str, query: Query, execution: Execution) -> QueryReading | None:
    """FRAG's zero-shot reading of a chain query against the question, from the entity its leaf linked to
    best; None when there is nothing to compare (an intersection, a trained scorer, no linked leaf)."""
    kg = frag.kg
    chain = chain_pattern(kg, query)
    if chain is None:
        return None
    leaf, pattern = chain
    anchored = execution.intermediate.get(leaf)
    if anchored is None or not (anchored > 0).any():
        return None
    scored = frag.zero_shot_pattern_scores(question, [int(np.argmax(anchored))])
    if scored is None or not len(scored[0]):
        return None
    reach, scores = scored
    best = int(np.argmax(scores))
    keys = {pattern_key(p): k for k, p in enumerate(reach.patterns)}
    k = keys.get(pattern)
    best_pattern = pattern_key(reach.patterns[best])
    return QueryReading(
        pattern=pattern_label(kg, pattern),
        score=None if k is None else float(scores[k]),
        best=pattern_label(kg, reach.patterns[best]),
        best_score=float(scores[best]),
        stops_short=len(pattern) < len(best_pattern) and set(pattern) < set(best_pattern),
    )


def misread(
    frag: object, question: str, query: Query, execution: Execution, trace: Trace, stops_short: bool = False
) -> str:
    """Why the query is set aside ("" when it is not): its pattern scores more than ``frag``'s
    ``answer_margin`` below frag's best, or (``stops_short``) follows only some of the relations of frag's
    best pattern, which goes further (a ``verify_query`` step on the trace says what was compared)."""
    if not isinstance(frag, Frag) or frag.config.answer_margin is None:
        return ""
    margin = frag.config.answer_margin
    with trace.step("verify_query") as step:
        reading = read_query(frag, question, query, execution)
        short = reading is not None and stops_short and reading.stops_short
        agrees = reading is None or (reading.asks_what_frag_reads(margin) and not short)
        step.outputs.update({"checked": reading is not None, "agrees": agrees})
        if reading is not None:
            step.outputs.update({**reading.as_json(), "stops_short": reading.stops_short})
    if agrees:
        return ""
    return (
        "frag's best pattern goes further than the query"
        if short
        else "frag's reading does not take the query's relations"
    )


__all__ = ["QueryReading", "chain_pattern", "found_anything_new", "misread", "read_query"]
