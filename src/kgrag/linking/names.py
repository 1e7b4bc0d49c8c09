"""Exact/normalised linking and mention finding over a KG's entity names (no model, no LLM).

:class:`NameIndex` maps each normalised name (and alias) to its entities, most-connected first, and keeps the
set of all token prefixes of those names.  Mention finding walks the question's tokens and extends a match
while the tokens so far are a prefix of some name — a token trie stored as a set of strings — then keeps the
most salient non-overlapping matches.
"""

from __future__ import annotations

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.base import Candidate, Span
from kgrag.linking.normalize import inside_compound, normalize, tokens_with_spans

# Words that are names of some entity in most KGs (films called "It", tags like "the") but are rarely meant
# as one; a match made only of these needs capitalisation (not at the start of the question) to count.
STOPWORDS = frozenset(
    """a an the and or of in on at to for from by with about as is are was were be been do does did what which
    who whom whose when where why how that this these those it its he she they them his her their there here
    has have had not no yes can could would should will shall may might must than then also same other all any
    some one two me my we us our you your i""".split()
)

#: The score of an entity whose name equals the mention after normalisation (verbatim scores 1.0); anything
#: scoring at least this is the name itself, not a near miss.
NORMALISED_NAME = 0.98

# "Which team owns X?", "what genre is Heat": the word right after these names the kind of thing asked for,
# not a thing the question starts from. A KG with tags or categories has an entity called "team" or "genre";
# linked as the topic, it turns a question about something the KG lacks into an answer about the tag.
ANSWER_KIND_CUES = frozenset({"which", "what", "whose"})


def names_answer_kind(question: str, toks: list[tuple[str, int, int]], i: int) -> bool:
    """Whether token ``i`` of ``question`` is a lower-case word right after one of :data:`ANSWER_KIND_CUES`:
    alone, it is the kind of answer asked for, not a mention (exact or fuzzy)."""
    return i > 0 and toks[i - 1][0] in ANSWER_KIND_CUES and not question[toks[i][1]].isupper()


class NameIndex:
    """Normalised entity names → entity ids; cached per KG (``NameIndex.of(kg)``)."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        degree = kg.degree("both")
        by_key: dict[str, list[int]] = {}
        for eid, name in enumerate(kg.entities):
            by_key.setdefault(normalize(name), []).append(eid)
        for eid, aliases in kg.aliases.items():
            for alias in aliases:
                ids = by_key.setdefault(normalize(alias), [])
                if eid not in ids:
                    ids.append(eid)
        by_key.pop("", None)
        for ids in by_key.values():
            if len(ids) > 1:
                ids.sort(key=lambda e: -int(degree[e]))
        self.by_key = by_key
        self.keys: list[str] = list(by_key)
        prefixes: set[str] = set()
        max_tokens = 1
        for key in self.keys:
            parts = key.split(" ")
            max_tokens = max(max_tokens, len(parts))
            for n in range(1, len(parts) + 1):
                prefixes.add(" ".join(parts[:n]))
        self.prefixes = prefixes
        self.max_tokens = max_tokens
        self.degree = degree

    @classmethod
    def of(cls, kg: KnowledgeGraph) -> NameIndex:
        return kg.resources.get("name_index", lambda: cls(kg))

    def exact(self, mention: str, k: int = 3) -> list[Candidate]:
        """Entities whose name (or alias) equals the mention: 1.0 verbatim, 0.98 after normalisation."""
        ids = self.by_key.get(normalize(mention), [])
        out = []
        for eid in ids[:k]:
            name = self.kg.entities[eid]
            out.append(Candidate(eid, name, 1.0 if name == mention else NORMALISED_NAME))
        out.sort(key=lambda c: -c.score)
        return out

    def find_mentions(self, question: str, k: int = 3) -> list[Span]:
        """Entity names occurring in ``question``: longest, most name-like, non-overlapping; best first."""
        toks = tokens_with_spans(question)
        words = [t for t, _, _ in toks]
        found: list[tuple[float, int, int, str]] = []
        for i in range(len(words)):
            key = words[i]
            j = i + 1
            while True:
                if key in self.by_key:
                    score = self._salience(question, toks, i, j)
                    if score is not None:
                        found.append((score, i, j, key))
                if j >= len(words) or j - i >= self.max_tokens:
                    break
                longer = key + " " + words[j]
                if longer not in self.prefixes:
                    break
                key, j = longer, j + 1
        found.sort(key=lambda f: -f[0])
        taken = np.zeros(len(words), dtype=bool)
        spans = []
        for score, i, j, key in found:
            start, end = toks[i][1], toks[j - 1][2]
            if taken[i:j].any() or inside_compound(question, start, end):
                continue
            taken[i:j] = True
            ids = self.by_key[key][:k]
            end = self._extend_over_punctuation(question, start, end, ids)
            text = question[start:end]
            cands = [
                Candidate(e, self.kg.entities[e], 1.0 if self.kg.entities[e] == text else NORMALISED_NAME) for e in ids
            ]
            cands.sort(key=lambda c: -c.score)
            spans.append(Span(text, start, end, cands, salience=score))
        return spans

    def _extend_over_punctuation(self, question: str, start: int, end: int, ids: list[int]) -> int:
        """``Moulin Rouge!``: take trailing punctuation into the span when a name is spelled with it."""
        stop = end
        while stop < len(question) and not question[stop].isspace() and not question[stop].isalnum():
            stop += 1
        if stop > end and any(self.kg.entities[e] == question[start:stop] for e in ids):
            return stop
        return end

    @staticmethod
    def _salience(question: str, toks: list[tuple[str, int, int]], i: int, j: int) -> float | None:
        """Higher for longer matches written with capitals; ``None`` for a bare stop-word match, a small number
        or one lower-case word right after "which" / "what" / "whose" (:data:`ANSWER_KIND_CUES`)."""
        words = [t for t, _, _ in toks[i:j]]
        capitals = sum(1 for n in range(i, j) if question[toks[n][1]].isupper() and (n > 0 or j - i > 1))
        if all(w in STOPWORDS for w in words) and capitals == 0:
            return None
        if all(w.isdigit() for w in words) and j - i == 1 and len(words[0]) < 3:
            return None  # "2 films" — small numbers are rarely entity mentions
        if j - i == 1 and names_answer_kind(question, toks, i):
            return None  # "which team ...": the kind of answer asked for, not a topic
        return (j - i) + 2.0 * capitals / (j - i) + 0.01 * (toks[j - 1][2] - toks[i][1])
