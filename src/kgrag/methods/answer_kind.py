"""Questions whose answer is not an entity: counts ("How many children does Thomas Hale have?") and yes/no ("Is
Kestrel headquartered in Seoul?").

Every answer prompt asks for entity names, and frag (and kaping or ultrag with ``choose_answers``) may write only
names its evidence shows, so without this a count question got a list of names and a yes/no question the
entity it asks about. A small model also counts badly, but it picks the members of a set well. So:

- a **count** question's answer call gets a note asking it to list every member (and, under a grammar, room for
  up to :data:`COUNT_ITEMS` names); the answer is then the number of distinct names listed, supported when every
  member is (its support: the members' chains). A reply that is a number stays as it is — "How many credits is
  Distributed Systems worth?" is answered by the value ``6``, which a KG holds as an entity, not by counting it.
- a **yes/no** question's answer call gets a note asking for yes or no (under a grammar, only those two words);
  the reply's first word is the answer. "yes" is supported by the shortest chain of evidence joining two of the
  question's entities; "no" has no support (no fact says a triple is absent).

The kind is read from the question's words (English, like the prompts): nothing here depends on a KG.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # pragma: no cover
    from kgrag.graph.kg import KnowledgeGraph
    from kgrag.types import Evidence

AnswerKind = Literal["entities", "count", "yes_no"]

COUNT_ITEMS = 50  # names a count reply may list under a grammar (entity answers: 10)

_COUNT = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b", re.I)
_YES_NO = re.compile(
    r"^\s*(?:is|are|was|were|am|does|do|did|has|have|had|can|could|will|would|shall|should|may|must)\b", re.I
)
_OR = re.compile(r"\bor\b", re.I)  # "Was X born in Leeds or York?" asks for one of the two, not yes or no
_REQUEST = re.compile(r"^\s*(?:can|could|will|would)\s+(?:you|u)\b", re.I)  # "can you name a film by X": a request
_NUMBER = re.compile(r"^[+-]?\d[\d,]*(?:\.\d+)?$")
_YES_NO_WORD = re.compile(r"^\W*(yes|no)\b", re.I)


def answer_kind(question: str) -> AnswerKind:
    """What kind of answer ``question`` asks for."""
    if _COUNT.search(question):
        return "count"
    if _YES_NO.match(question) and not _OR.search(question) and not _REQUEST.match(question):
        return "yes_no"
    return "entities"


def with_note(question: str, kind: AnswerKind) -> str:
    """``question`` as the answer call shows it: with the note its kind needs (prompt files ``question_count``
    and ``question_yes_no``), unchanged for entity questions (so their prompts and cached replies stay)."""
    if kind == "entities":
        return question
    from kgrag.prompts import load_prompt

    return load_prompt(f"question_{kind}").render(question=question)[-1]["content"]


def is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def read_yes_no(items: Sequence[str]) -> list[str]:
    """``["yes"]`` or ``["no"]`` from the first reply line that starts with either word ("Yes, it is." → yes);
    ``[]`` when none does."""
    for item in items:
        found = _YES_NO_WORD.match(item)
        if found:
            return [found.group(1).lower()]
    return []


def joining_evidence(
    kg: KnowledgeGraph, question: str, topics: Sequence[int], evidence: Sequence[Evidence], *, max_length: int = 3
) -> list[Evidence]:
    """``evidence`` with, for a yes/no question about two or more KG entities, the shortest paths joining the
    first to the others (up to ``max_length`` hops) put first. A method whose walks never step onto a question
    entity (frag: an entity question's answer is never one of its own) would otherwise hide the very fact a
    "yes" stands on ("Kestrel -[headquartered in]-> Seoul")."""
    if answer_kind(question) != "yes_no" or len(topics) < 2:
        return list(evidence)
    from kgrag.graph.algorithms import shortest_paths
    from kgrag.retrieval.paths import paths_as_evidence

    paths = shortest_paths(kg, [topics[0]], list(topics[1:]), max_length=max_length, max_paths=10)
    top = max((ev.score for ev in evidence if ev.score is not None), default=0.0)
    joining = paths_as_evidence(kg, paths, [top] * len(paths), source="joining")
    known = {tuple(ev.triples) for ev in joining}
    return joining + [ev for ev in evidence if tuple(ev.triples) not in known]


def as_count(
    answers: Sequence[str], support: Mapping[str, list[int]], confidence: Mapping[str, float]
) -> tuple[list[str], dict[str, list[int]], dict[str, float], str | None]:
    """A count question's answers → ``([n], support, confidence, member)``: ``n`` distinct names listed; the
    count's support is its members' chains (in their order, each triple once) when every member has one; its
    confidence is the least sure member's, and ``member`` names that member (whose signals stand for the count).
    Numbers among the answers are the answer instead (the question asked for a value), and no answers stay none."""
    numbers = [a for a in answers if is_number(a)]
    if numbers or not answers:
        return list(numbers or answers), dict(support), dict(confidence), None
    members = list(dict.fromkeys(answers))
    count = str(len(members))
    least = min(members, key=lambda a: confidence.get(a, 0.0))
    out_support: dict[str, list[int]] = {}
    if all(m in support for m in members):
        out_support[count] = list(dict.fromkeys(t for m in members for t in support[m]))
    return [count], out_support, {count: confidence.get(least, 0.0)}, least


__all__ = [
    "COUNT_ITEMS",
    "AnswerKind",
    "answer_kind",
    "as_count",
    "is_number",
    "joining_evidence",
    "read_yes_no",
    "with_note",
]
