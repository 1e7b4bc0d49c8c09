"""Question words that are not relation mentions, for the zero-shot alignment (:mod:`.alignment`).

Two kinds of words in a question resemble relation names without asking for the relation:

- **function words** ("in", "of the", "which"): ``Opened In`` and ``Part Of`` carry a preposition, so the span
  "in" aligned with ``Opened In`` (transit: "stations in the Millbank district" read the stations' opening
  years). A span made only of them asks for nothing; the wh-words that ask for a time, a place or a person
  ("when", "where", "who") are not function words here.
- **the answer's kind**: the noun right after "which" / "what" / "whose" ("*which lines* stop at Kelder
  Quay?") says what kind of thing the answer is. It may align with a relation whose name is that kind ("what
  *genres*" with ``hasGenre``, "what *colours*" with ``Line Colour``), but not with one where it only
  modifies another noun: ``Line Colour`` leads to colours, not lines, ``drug class`` to classes, ``head of
  department`` to people. Such a pair read "which lines stop at X" as the lines' colours and "which drugs
  treat migraine" as the drugs' classes. The head of a relation name is read as English noun phrases are: its
  last noun, or the last before "of", a trailing participle skipped with its adverb ("languages spoken",
  "currency formerly used").

Both are the language's, like the prompts; nothing here names a KG's relation. Pattern top-1 (the best-scored
pattern reaches a gold answer) over 1,017 dev questions: +10 / −0 (benchmarks/RESULTS.md, "Words that ask for
no relation").
"""

from __future__ import annotations

import re

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.names import ANSWER_KIND_CUES, STOPWORDS
from kgrag.methods.frag.router import ENTITY_TOKEN
from kgrag.methods.frag.synthetic import humanise

FUNCTION_WORDS = STOPWORDS - {"who", "whom", "whose", "when", "where", "why", "how"}
_PARTICIPLE = re.compile(r"(ed|en|ing)$")


def is_function_span(span: str) -> bool:
    """Whether a (lower-case) span is made only of function words."""
    return all(w in FUNCTION_WORDS for w in span.split())


def stem(word: str) -> str:
    """An English plural's singular, crudely ("companies" → "company", "lines" → "line"): enough to tell whether
    two words name the same kind of thing."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def relation_name_words(kg: KnowledgeGraph) -> list[tuple[str, frozenset[str]]]:
    """Per relation, the stem of its name's head (module docstring) and the stems of its other content words;
    a namespaced id's subject type is not among them (walked backwards, it is the answer's kind)."""

    def build() -> list[tuple[str, frozenset[str]]]:
        out = []
        for name in kg.relations:
            words = humanise(name).words.split()
            before_of = words[: words.index("of", 1)] if "of" in words[1:] else words
            content = [w for w in before_of if w not in FUNCTION_WORDS] or before_of
            while len(content) > 1 and _PARTICIPLE.search(content[-1]):
                content = content[:-1]
                if len(content) > 1 and content[-1].endswith("ly"):  # "currency formerly used"
                    content = content[:-1]
            head = stem(content[-1])
            out.append((head, frozenset({stem(w) for w in words if w not in FUNCTION_WORDS} - {head})))
        return out

    return kg.resources.get(("frag_relation_name_words",), build)


def kind_position(words: list[str]) -> int | None:
    """Where the answer's kind noun stands among the question's ``words``: the word right after the first
    "which" / "what" / "whose" that a lower-case word follows, if that word is not a function word."""
    for i, word in enumerate(words[:-1]):
        after = words[i + 1]
        if word.lower() in ANSWER_KIND_CUES and after != ENTITY_TOKEN and after.islower():
            return None if after in FUNCTION_WORDS else i + 1
    return None


def kind_blocks(kg: KnowledgeGraph, words: list[str], spans: list[tuple[str, int, int]]) -> np.ndarray | None:
    """(spans, relations): True where a span says only the answer's kind noun and the relation's name has that
    noun as a modifier, not its head; None when nothing is blocked."""
    kind = kind_position(words)
    if kind is None:
        return None
    noun = stem(words[kind])
    modifies = np.array([noun in others and noun != head for head, others in relation_name_words(kg)])
    if not modifies.any():
        return None
    blocked = np.zeros((len(spans), kg.num_relations), bool)
    for j, (_, start, end) in enumerate(spans):
        if [k for k in range(start, end) if words[k].lower() not in FUNCTION_WORDS] == [kind]:
            blocked[j] = modifies
    return blocked
