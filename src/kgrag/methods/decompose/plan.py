"""The decomposition a planning call writes, read defensively, and how later sub-questions name earlier answers
(``#k``, substituted by :func:`reformulate`; no LLM call)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgrag.prompts.tags import parse_tags

_END = re.compile(r"<\s*/?\s*END\s*/?\s*>", re.I)
_REF = re.compile(r"#(\d+)")
_NUMBERED = re.compile(r"^\s*(?:[-*•]\s*)?(?:\(?\d+[.):]|(?:sub[-\s]?question|step|q)\s*\d+\s*[:.)-])", re.I)
_LABEL = re.compile(r"^\s*(?:sub[-\s]?questions?|question|step|q)\s*\d*\s*[:.)-]\s*", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•]|\(?\d+[.):])\s*")
_QUESTION_START = re.compile(
    r"^(?:who|whom|whose|what|which|when|where|why|how|in\s+which|on\s+which|at\s+which|for\s+which|"
    r"is|are|was|were|does|do|did|can|list|name)\b",
    re.I,
)
_MAX_REASONING_CHARS = 1000
_MAX_SUBQUESTION_CHARS = 300


@dataclass
class Decomposition:
    """Parsed decomposition: the reasoning (CoT) and the ordered sub-questions.

    ``fallback`` is True when the LLM output held no usable sub-question and the question itself is used.
    """

    reasoning: str
    subquestions: list[str]
    fallback: bool = False

    def outputs(self, raw: str) -> dict[str, object]:
        """What a trace step records of the plan, with the reply it was read from."""
        return {"reasoning": self.reasoning, "subquestions": self.subquestions, "fallback": self.fallback, "raw": raw}


@dataclass
class ChainStep:
    """One answered sub-question: as decomposed, as reformulated (the retrieval query), facts and answers."""

    subquestion: str
    query: str
    facts: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    reached: list[int] = field(default_factory=list)  # the entities the answers stand for: later steps' anchors

    def as_dict(self) -> dict[str, object]:
        return {"subquestion": self.subquestion, "query": self.query, "facts": self.facts, "answers": self.answers}


def _clean_item(line: str) -> str:
    line = _BULLET.sub("", line)
    line = _LABEL.sub("", line)
    line = _BULLET.sub("", line)  # "Sub-question 1: 1. Who ..."
    return " ".join(line.strip().strip("\"'`").split())


def _looks_like_question(item: str) -> bool:
    return (
        bool(re.search(r"[A-Za-z]", item))
        and len(item) <= _MAX_SUBQUESTION_CHARS
        and ("?" in item or bool(_QUESTION_START.match(item)))
    )


def parse_decomposition(text: str | None, question: str, *, max_subquestions: int = 4) -> Decomposition:
    """Read the decomposition LLM output defensively; never raises.

    Accepts the requested ``<reasoning>``/``<subquestions>`` tags (unclosed, misspelled or fenced), a plain
    numbered list without tags, and output that runs past a missing ``<END>`` (cut at the first one).
    Anything without a question-like item yields the question itself as the only sub-question.
    """
    text = text or ""
    end = _END.search(text)
    if end:
        text = text[: end.start()]
    parsed = parse_tags(text, ("reasoning", "subquestions"))
    body = parsed.get("subquestions")
    # without the tag, the numbered lines of the whole output are the sub-questions
    lines = body.splitlines() if body is not None else [ln for ln in text.splitlines() if _NUMBERED.match(ln)]
    items: list[str] = []
    seen: set[str] = set()
    for line in lines:
        item = _clean_item(line)
        if _looks_like_question(item) and item.lower() not in seen:
            seen.add(item.lower())
            items.append(item)
    reasoning = parsed.get("reasoning") or ""
    if not reasoning and body is None and lines:  # untagged: the text before the list is the reasoning
        head = text.split(lines[0], 1)[0]
        reasoning = re.sub(r"^\s*reasoning\s*:\s*", "", head.strip(), flags=re.I)
    reasoning = " ".join(reasoning.split())[:_MAX_REASONING_CHARS]
    if not items:
        return Decomposition(reasoning=reasoning, subquestions=[question], fallback=True)
    return Decomposition(reasoning=reasoning, subquestions=items[:max_subquestions])


def join_names(names: Sequence[str], limit: int = 10) -> str:
    """``["A", "B", "C"]`` → ``"A, B and C"``; more than ``limit`` names end with ``"and N more"``."""
    shown = list(names[:limit])
    rest = len(names) - len(shown)
    if rest > 0:
        return ", ".join(shown) + f" and {rest} more"
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def reformulate(subquestion: str, earlier: Sequence[ChainStep], *, limit: int = 10) -> tuple[str, list[int]]:
    """The sub-question with each ``#k`` replaced by the answers of step ``k`` (1-based).

    Returns (text, referenced step indices, 0-based). No reference means the caller has to pass the earlier
    answers some other way. A step without answers is referred to by its own query ("the answer to ...").
    """
    used: list[int] = []

    def substitute(match: re.Match[str]) -> str:
        k = int(match.group(1)) - 1
        if not 0 <= k < len(earlier):
            return match.group(0)
        used.append(k)
        step = earlier[k]
        if step.answers:
            return join_names(step.answers, limit)
        return f"the answer to '{step.query.rstrip('?')}'"

    text = _REF.sub(substitute, subquestion)
    return " ".join(text.split()), sorted(set(used))


def chain_text(chain: Sequence[ChainStep]) -> str:
    """The steps so far as the answer and synthesis calls read them: each query and its answers."""
    return "\n".join(
        f"{i}. {s.query}\n   answers: {'; '.join(s.answers) if s.answers else '(none found)'}"
        for i, s in enumerate(chain, start=1)
    )
