"""Questions whose answer is not an entity: counts ("How many children does Thomas Hale have?") and yes/no ("Is
Kestrel headquartered in Seoul?").

Every answer prompt asks for entity names, and frag (and kaping or ultrag with ``choose_answers``) may write only
names its evidence shows, so without this a count question got a list of names and a yes/no question the
entity it asks about. A small model also counts badly, but it picks the members of a set well. So:

- a **count** question's answer call gets a note asking it to list every member (and, under a grammar, room for
  up to :data:`COUNT_ITEMS` names); the answer is then the number of distinct names listed, supported when every
  member is (its support: the members' chains). A reply that is a number stays as it is (a free-text model may
  write the count itself), and "How many credits is Distributed Systems worth?", whose noun names a relation
  holding numbers, is an entity question answered by the value ``6`` (:func:`kind_on`).
- a **yes/no** question that names two KG entities is a claim about the last one: "Is Voltaic headquartered in
  Taipei?" is asked as the entity question "Which X: Is Voltaic headquartered in X?" about Voltaic
  (:func:`yes_no_claim`), and the answer is yes when the method's answers include Taipei, no when they name
  others (:func:`verdict`); a yes is supported by the chain to the claimed entity, a no by the chain to what was
  found instead. Asked for yes or no directly, the default 1.5B model said yes to all 18 dev questions, half of
  which are no; picking the entity is what it does well.
- a yes/no question about one entity ("Does Thomas Hale have children?") has no claim to check: its answer call
  gets a note asking for yes or no (under a grammar, only those two words) and the reply's first word is read.

The kind is read from the question's words (English, like the prompts); whether "how many <noun>" asks for a
value reads the KG's own relation names and whether their values are numbers (:func:`kind_on`). No rule
belongs to one KG.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from kgrag.linking.normalize import normalize, tokens

if TYPE_CHECKING:  # pragma: no cover
    from kgrag.graph.kg import KnowledgeGraph

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


_COUNTED = re.compile(r"\bhow\s+many\s+([A-Za-z]+)", re.I)


def asks_for_value(kg: KnowledgeGraph, question: str) -> bool:
    """Whether a count question asks for a value the KG holds rather than a count: the noun it counts names a
    relation whose values are mostly numbers ("How many credits is Distributed Systems worth?" with ``credits``
    → 6; "how many employees" with ``number_of_employees``), singular or plural. "How many prerequisites" with a
    relation ``prerequisite`` between courses, or "how many departments" with ``head of department``, count."""
    found = _COUNTED.search(question)
    if not found:
        return False
    word = found.group(1).lower()
    forms = {word, word.rstrip("s"), word[:-3] + "y" if word.endswith("ies") else word}
    return bool(forms & _numeric_relation_words(kg))


def _numeric_relation_words(kg: KnowledgeGraph) -> frozenset[str]:
    """The words (and their forms without a plural "s") of the relations whose tails are mostly numbers, found
    once per KG."""

    def words() -> frozenset[str]:
        import numpy as np

        numeric = np.fromiter((is_number(name) for name in kg.entities), dtype=bool, count=len(kg.entities))
        rels, tails = np.asarray(kg.rels), np.asarray(kg.tails)
        total = np.bincount(rels, minlength=len(kg.relations))
        hits = np.bincount(rels[numeric[tails]], minlength=len(kg.relations))
        share = hits / np.maximum(total, 1)
        return frozenset(
            form
            for r, rel in enumerate(kg.relations)
            if share[r] > 0.5
            for w in tokens(rel)
            for form in (w, w.rstrip("s"))
        )

    return kg.resources.get(("numeric_relation_words",), words)


def kind_on(kg: KnowledgeGraph, question: str) -> AnswerKind:
    """:func:`answer_kind`, with a count question that asks for a value the KG holds (:func:`asks_for_value`)
    read as an entity question: its answer is that value, not a number of members."""
    kind = answer_kind(question)
    return "entities" if kind == "count" and asks_for_value(kg, question) else kind


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


@dataclass(frozen=True)
class Claim:
    """A yes/no question read as an entity question and the entity it claims: "Is Voltaic headquartered in
    Taipei?" → asked "Which X: Is Voltaic headquartered in X?" about ``topics`` ["Voltaic"], claimed "Taipei"."""

    asked: str
    claimed: str
    topics: list[str]


def yes_no_claim(kg: KnowledgeGraph, question: str, topics: Sequence[str] = ()) -> Claim | None:
    """The claim of a yes/no question that names two or more KG entities (the given topics, else its two most
    salient mentions): the one it names last is claimed, the others are what the entity question is about;
    None when the question names fewer than two, or a given one cannot be found in its text."""
    if topics:
        found = [(question.lower().rfind(t.lower()), t) for t in dict.fromkeys(topics)]
        if len(found) < 2 or any(at < 0 for at, _ in found):
            return None
        (at, claimed), rest = max(found), [t for _, t in sorted(found)[:-1]]
        end = at + len(claimed)
    else:
        from kgrag.linking.hybrid import HybridLinker

        spans = [s for s in HybridLinker(kg).find_mentions(question)[:2] if s.candidates]
        if len(spans) < 2:
            return None
        last = max(spans, key=lambda s: s.start)
        at, end, claimed = last.start, last.end, kg.entities[last.candidates[0].entity]
        rest = [kg.entities[s.candidates[0].entity] for s in spans if s is not last]
    return Claim(f"Which X: {question[:at]}X{question[end:]}", claimed, rest)


def verdict(kg: KnowledgeGraph, claim: Claim, answers: Sequence[str]) -> list[str]:
    """``["yes"]`` when the entity question's answers include the claimed entity, ``["no"]`` when they name
    others, ``[]`` when there are none (nothing known either way)."""
    if not answers:
        return []
    claimed = kg.find_entity(claim.claimed)
    named = claimed is not None and claimed in {kg.find_entity(a) for a in answers}
    return ["yes"] if named or any(normalize(a) == normalize(claim.claimed) for a in answers) else ["no"]


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
    "Claim",
    "answer_kind",
    "as_count",
    "asks_for_value",
    "is_number",
    "kind_on",
    "read_yes_no",
    "verdict",
    "with_note",
    "yes_no_claim",
]
