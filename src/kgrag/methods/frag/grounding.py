"""How frag ties the model's answers to its paths (the ``grounding`` setting), resolved per question.

``auto`` means: ``pattern`` when trained models ranked the patterns (their best pattern is the question's
reading, so the answers are its ends); ``score`` when the LLM re-read the zero-shot ranking this question
(:mod:`kgrag.methods.frag.question_fit`: the model's answers ordered by the score of the path ending at each,
the ranking the model itself corrected); ``none`` otherwise — a zero-shot alignment's best pattern is too often
not the question's, so the model's own order stands. Paired on the same replies with question_fit on, ``score``
against ``none``: renamed MetaQA first 30 dev questions per hop 0.87 / 0.87 / 0.87 -> 0.90 / 0.90 / 0.97, the
WebQSP proxy's first 100 the same answers (benchmarks/results/frag_question_fit.json).
"""

from __future__ import annotations

from kgrag.methods.answer_kind import AnswerKind
from kgrag.methods.base import Trace
from kgrag.methods.frag.question_fit import TRACE_KEY
from kgrag.types import Evidence


def refitted(trace: Trace) -> bool:
    """Whether question_fit re-ordered this question's patterns (it records them in the trace when it did)."""
    return any(TRACE_KEY in step.outputs for step in trace.steps)


def resolve(setting: str, *, trained: bool, refit: bool, kind: AnswerKind) -> str:
    """The grounding used for one question: ``setting`` with ``auto`` resolved (module doc); what is counted
    is the best pattern's ends; "yes" and "no" end no path, so they are never grounded."""
    grounding = setting
    if grounding == "auto":
        grounding = "pattern" if trained else ("score" if refit else "none")
    if grounding == "none" and kind == "count":
        grounding = "pattern"
    return "none" if kind == "yes_no" else grounding


def as_long_as_asked(evidence: list[Evidence], hops: int) -> list[Evidence]:
    """The paths as long as the routed question asks (none when the length is open or one hop): their ends are
    the candidates; a shorter path shown beside them ends at a middle node (the director in "films by the
    director of X")."""
    return [ev for ev in evidence if len(ev.relations) == hops] if hops > 1 else []


def read_by_answer(evidence: list[Evidence], hops: int, grounding: str, reads: str, kind: AnswerKind) -> list[Evidence]:
    """The evidence the answer call reads: under grounding "pattern" with ``reads`` "best", only the paths of
    the best-ranked pattern; the answers are that pattern's ends whatever the model names, so the paths of
    other patterns would only be read, not used. Not for counts: their number is of the ends the model names,
    and what it names from a shorter list was not measured."""
    ranked = as_long_as_asked(evidence, hops) or evidence
    if grounding != "pattern" or reads != "best" or kind == "count" or not ranked:
        return evidence
    best = ranked[0].relations
    return [ev for ev in evidence if ev.relations == best]
