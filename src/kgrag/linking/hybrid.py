"""The linker methods use: exact names first, then fuzzy and embedding candidates (BYOKG-style top m=3).

Scores are comparable across strategies: 1.0 verbatim name, 0.98 normalised name, fuzzy similarity × 0.95,
embedding cosine × 0.9 — so an exact hit always outranks a near miss.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.base import Candidate, LinkResult, Span
from kgrag.linking.names import STOPWORDS, NameIndex, names_answer_kind
from kgrag.linking.normalize import inside_compound, tokens_with_spans
from kgrag.models.embeddings import Embedder

FUZZY_WEIGHT = 0.95
EMBEDDING_WEIGHT = 0.9
FUZZY_MENTION_CUTOFF = 85.0


class HybridLinker:
    def __init__(
        self, kg: KnowledgeGraph, *, embedder: Embedder | None = None, use_embedding: bool = True, m: int = 3
    ) -> None:
        self.kg = kg
        self.names = NameIndex.of(kg)
        self._embedder = embedder
        self.use_embedding = use_embedding
        self.m = m

    @cached_property
    def fuzzy(self):
        from kgrag.linking.fuzzy import FuzzyLinker

        return self.kg.resources.get("fuzzy_linker", lambda: FuzzyLinker(self.names))

    @cached_property
    def embedding(self):
        from kgrag.linking.embedding import EmbeddingLinker

        key = ("embedding_linker", self._embedder.id if self._embedder else "static")
        return self.kg.resources.get(key, lambda: EmbeddingLinker(self.kg, self._embedder))

    def link(self, mention: str, k: int | None = None) -> list[Candidate]:
        """Candidates for one mention, best first."""
        k = k or self.m
        if not mention or not mention.strip():
            return []
        best: dict[int, Candidate] = {c.entity: c for c in self.names.exact(mention, k)}
        verbatim = any(c.score == 1.0 for c in best.values())
        if len(best) < k and not verbatim:
            for c in self.fuzzy.link(mention, k):
                c.score *= FUZZY_WEIGHT
                if c.entity not in best or best[c.entity].score < c.score:
                    best[c.entity] = c
        if self.use_embedding and not any(c.score >= 0.98 for c in best.values()):
            for c in self.embedding.link(mention, k):
                c.score *= EMBEDDING_WEIGHT
                if c.entity not in best or best[c.entity].score < c.score:
                    best[c.entity] = c
        ranked = sorted(best.values(), key=lambda c: (-c.score, -int(self.names.degree[c.entity])))
        return ranked[:k]

    def find_mentions(self, question: str, k: int | None = None) -> list[Span]:
        """Entity mentions in free text, most likely first (exact names; fuzzy n-grams when none match)."""
        k = k or self.m
        spans = self.names.find_mentions(question, k)
        return spans if spans else self._fuzzy_mentions(question, k)

    def _fuzzy_mentions(self, question: str, k: int) -> list[Span]:
        toks = tokens_with_spans(question)
        found: list[tuple[float, int, int, list[Candidate]]] = []
        for i, j in _phrases(toks, min(self.names.max_tokens, 5), question):
            if inside_compound(question, toks[i][1], toks[j - 1][2]):
                continue
            cands = self.fuzzy.link(
                question[toks[i][1] : toks[j - 1][2]], k, score_cutoff=FUZZY_MENTION_CUTOFF, full_scan=False
            )
            if cands:
                found.append((cands[0].score + 0.01 * (j - i), i, j, cands))
        found.sort(key=lambda f: -f[0])
        taken: set[int] = set()
        spans = []
        for score, i, j, cands in found:
            if taken.intersection(range(i, j)):
                continue
            taken.update(range(i, j))
            for c in cands:
                c.score *= FUZZY_WEIGHT
            start, end = toks[i][1], toks[j - 1][2]
            spans.append(Span(question[start:end], start, end, cands, salience=score))
        return spans

    def suggestions(self, question: str, k: int = 3, cutoff: float = 60.0) -> list[str]:
        """The entity names closest to any phrase of ``question`` (1–3 words, not all stopwords), best first, a
        longer phrase's match before a shorter one's of the same score: what to show a user whose question names
        nothing the KG has."""
        toks = tokens_with_spans(question)
        best: dict[int, float] = {}
        for i, j in _phrases(toks, 3, question):
            for c in self.fuzzy.link(question[toks[i][1] : toks[j - 1][2]], k, score_cutoff=cutoff):
                best[c.entity] = max(best.get(c.entity, 0.0), c.score + 0.05 * (j - i - 1))
        return [self.kg.entities[e] for e in sorted(best, key=lambda e: (-best[e], e))[:k]]

    def link_text(self, text: str, k: int | None = None) -> LinkResult:
        """``find_mentions`` with a reason instead of an exception for empty or mention-less input."""
        if not text or not text.strip():
            return LinkResult(text or "", [], "empty text")
        spans = self.find_mentions(text, k)
        if not spans:
            return LinkResult(text, [], "no entity of the KG is mentioned (no exact or close name match)")
        return LinkResult(text, spans)

    def link_topics(self, names: list[str], k: int = 1) -> list[int]:
        """Entity ids for user-given topic names (best candidate each; unknown names are skipped)."""
        ids = []
        for name in names:
            cands = self.link(name, k)
            if cands:
                ids.append(cands[0].entity)
        return ids


def _phrases(toks: list[tuple[str, int, int]], longest: int, question: str) -> Iterator[tuple[int, int]]:
    """Token ranges ``[i, j)`` of at most ``longest`` tokens worth looking up by fuzzy match: not all stopwords,
    at least four letters, not the one lower-case word that names the kind of answer ("which team")."""
    for i in range(len(toks)):
        first = i + 2 if names_answer_kind(question, toks, i) else i + 1  # "which team": no phrase of "team" alone
        for j in range(first, min(len(toks), i + longest) + 1):
            words = [t for t, _, _ in toks[i:j]]
            if not all(w in STOPWORDS for w in words) and sum(len(w) for w in words) >= 4:
                yield i, j
