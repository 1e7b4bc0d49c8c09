"""The linker methods use: exact names first, then fuzzy and embedding candidates (BYOKG-style top m=3).

Scores are comparable across strategies: 1.0 verbatim name, 0.98 normalised name, fuzzy similarity × 0.95,
embedding cosine × 0.9 — so an exact hit always outranks a near miss.

Mention finding also knows what in a question is no topic: the word naming the kind of answer ("which team"),
a lone lower-case word spelled like one of the KG's relations ("director", ``directed_by``) or standing beside
names the user wrote, and — when a written name ("Faculty of Arts", "warp-drive-service") matches nothing —
anything outside written names: the question is then about something the KG lacks, and methods say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.base import Candidate, LinkResult, Span
from kgrag.linking.names import NORMALISED_NAME, STOPWORDS, NameIndex, names_answer_kind
from kgrag.linking.normalize import inside_compound, normalize, tokens, tokens_with_spans
from kgrag.models.embeddings import Embedder

FUZZY_WEIGHT = 0.95
EMBEDDING_WEIGHT = 0.9
FUZZY_MENTION_CUTOFF = 85.0
_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)+")
# lower-case words inside names ("Faculty of Arts", "Joaquim de Almeida", "Lord of the Rings")
NAME_PARTICLES = frozenset("of the de la le du des von van der den del da di dos y".split())


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
        if self.use_embedding and not any(c.score >= NORMALISED_NAME for c in best.values()):
            for c in self.embedding.link(mention, k):
                c.score *= EMBEDDING_WEIGHT
                if c.entity not in best or best[c.entity].score < c.score:
                    best[c.entity] = c
        ranked = sorted(best.values(), key=lambda c: (-c.score, -int(self.names.degree[c.entity])))
        return ranked[:k]

    def find_mentions(self, question: str, k: int | None = None) -> list[Span]:
        """Entity mentions in free text, most likely first (exact names; fuzzy n-grams when none match); no lone
        lower-case word that reads as a relation of the KG (:meth:`_relation_word`), nor one outside the names the
        user wrote when one of those matches nothing (:meth:`unmatched_names`)."""
        k = k or self.m
        spans = [s for s in self.names.find_mentions(question, k) if not self._relation_word(s)]
        spans = spans or [s for s in self._fuzzy_mentions(question, k) if not self._relation_word(s)]
        named = written_names(question, tokens_with_spans(question)) if spans else []
        if named:
            spans = [s for s in spans if not _lone_word(s) or any(_overlap(n, (s.start, s.end)) for n in named)]
            if spans and self.unmatched_names(question, spans):
                spans = [s for s in spans if any(_overlap(n, (s.start, s.end)) for n in named)]
        return spans

    @cached_property
    def relation_words(self) -> frozenset[str]:
        """The words of the KG's relation names ("directed", "actors" in ``directed_by``, ``starred_actors``)."""
        return frozenset(w for r in self.kg.relations for w in tokens(r.replace(".", " ")) if len(w) >= 4)

    def _relation_word(self, span: Span) -> bool:
        """A lone lower-case word spelled like a word of a relation name but for its last two letters, or its
        beginning ("director" ~ ``directed_by``, "actor" ~ ``starred_actors``, "star" ~ ``starred_actors``): the
        question saying how things relate, even where the KG also has a tag or a film of that name ("director",
        "Star!")."""
        if not _lone_word(span):
            return False
        word = normalize(span.text)
        return any(_same_stem(word, w) for w in self.relation_words if w[:4] == word[:4])

    def _fuzzy_mentions(self, question: str, k: int) -> list[Span]:
        toks = tokens_with_spans(question)
        named = written_names(question, toks)
        found: list[tuple[float, int, int, list[Candidate]]] = []
        for i, j in _phrases(toks, min(self.names.max_tokens, 5), question):
            start, end = toks[i][1], toks[j - 1][2]
            if inside_compound(question, start, end) or {toks[i][0], toks[j - 1][0]} & STOPWORDS:
                continue  # "the actor" ~ "The Factory", "what language" ~ "Swati Language": near only in the edge
            if any(_overlap(n, (start, end)) and not start <= n[0] <= n[1] <= end for n in named):
                continue  # near a part of a name the user wrote ("Lovel" of "Fenbek Lovel" ~ "Love"): another thing
            cands = self.fuzzy.link(question[start:end], k, score_cutoff=FUZZY_MENTION_CUTOFF, full_scan=False)
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

    def unmatched_names(self, question: str, spans: list[Span] | None = None) -> list[str]:
        """The names the user wrote (:func:`written_names`) that match nothing in the KG, exactly, in part, or
        nearly, and are no part of a mention found (``spans``, found here when not given; "Chamber" in "Harry
        Potter and the Chamber of Secrets"): what the question is about is then not in the KG."""
        if spans is None:
            spans = self.names.find_mentions(question, self.m) or self._fuzzy_mentions(question, self.m)
        out = []
        for start, end in written_names(question, tokens_with_spans(question)):
            if any(_overlap((start, end), (s.start, s.end)) for s in spans):
                continue
            text = question[start:end]
            near = self.fuzzy.link(text, 1, score_cutoff=FUZZY_MENTION_CUTOFF)
            if not (near or self.names.find_mentions(text, 1)):
                out.append(text)
        return out

    def not_mentions(self, question: str) -> set[str]:
        """Normal forms of what in ``question`` is no entity to start from, for names others pick from it (an
        LLM's): the word naming the kind of answer ("which team") and the :meth:`unmatched_names`."""
        toks = tokens_with_spans(question)
        kinds = {toks[i][0] for i in range(len(toks)) if names_answer_kind(question, toks, i)}
        return kinds | {normalize(n) for n in self.unmatched_names(question)}

    def link_text(self, text: str, k: int | None = None) -> LinkResult:
        """``find_mentions`` with a reason instead of an exception for empty or mention-less input."""
        if not text or not text.strip():
            return LinkResult(text or "", [], "empty text")
        spans = self.find_mentions(text, k)
        if not spans:
            missing = self.unmatched_names(text, [])
            named = f"; nothing is called {' or '.join(repr(n) for n in missing)}" if missing else ""
            return LinkResult(text, [], f"no entity of the KG is mentioned (no exact or close name match{named})")
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


def written_names(question: str, toks: list[tuple[str, int, int]]) -> list[tuple[int, int]]:
    """Character spans the user wrote as names: runs of capitalised words, joined by up to two lower-case name
    particles ("Faculty of Arts", "Lord of the Rings"; the question's first word only as part of a longer run,
    and not a stop word), and hyphenated compounds ("warp-drive-service")."""
    names = [(m.start(), m.end()) for m in _COMPOUND.finditer(question)]

    def joined(a: int, b: int) -> bool:  # "Dave O'Brien": no space, or only spaces, between tokens a and b
        gap = question[toks[a][2] : toks[b][1]]
        return gap.isspace() or not any(c.isspace() for c in gap)

    capital = [question[s].isupper() and not (n == 0 and w in STOPWORDS) for n, (w, s, _) in enumerate(toks)]
    n = 0
    while n < len(toks):
        if not capital[n]:
            n += 1
            continue
        end = n
        while True:
            nxt = end + 1
            while nxt < len(toks) and nxt - end <= 2 and not capital[nxt] and toks[nxt][0] in NAME_PARTICLES:
                nxt += 1
            if nxt < len(toks) and capital[nxt] and all(joined(m, m + 1) for m in range(end, nxt)):
                end = nxt
            else:
                break
        if n > 0 or end > n:
            names.append((toks[n][1], toks[end][2]))
        n = end + 1
    return names


def _lone_word(span: Span) -> bool:
    """One lower-case word: the weakest mention, often a word of the question that a KG also has as a name."""
    return " " not in span.text.strip() and not span.text[:1].isupper()


def _same_stem(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` share all but at most their last two letters, or ``a`` begins ``b`` ("star",
    ``starred``), in at least four letters."""
    common = next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return common >= 4 and (common >= max(len(a), len(b)) - 2 or common == len(a))


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]
