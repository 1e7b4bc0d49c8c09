"""Zero-shot pattern scoring: each relation a pattern uses must be *said* somewhere in the question.

Without a scorer trained for the KG, FRAG used to score a relation pattern by the mean similarity of its
relations to the whole question. That cannot tell ``cast member, cast member⁻¹, director`` ("who directed the
films that share actors with X") from ``director, director⁻¹, director``: both are about directors, and the mean
does not care that "actors" was never accounted for. Nor can it choose a length: every extra hop that looks
like the question's topic is as good as none, so a 3-hop search drowned 1- and 2-hop questions.

Here the question is cut into word spans (1–3 words, the topic's own words masked) and a pattern into the
relations it *mentions*; each mention is aligned to its own non-overlapping span, BERTScore-style, and a
pattern scores the sum of those alignments less a cost per mention. A relation earns its place only when some
part of the question asks for it, so the pattern's length follows from the question. Three things make a
mention:

- an out-and-back pair ``r, r⁻¹`` ("films that *share actors* with X") is one mention of ``r``, or two when
  the question names ``r`` twice ("the *director* of X also *directed* which films": read as one, the second
  word went to a third hop, ``director, director⁻¹, director``, and that pattern won); the better reading counts;
- hops through an unnamed node (a Freebase CVT: ``film.film.starring`` then ``film.performance.actor``) are one
  fact, one mention, scored with the mean of their relation vectors;
- anything else is one mention per relation.

Similarities are centred per span (less the span's mean similarity over all the KG's relations), so a word
that resembles every relation of the domain ("films" on a movie KG) aligns with none of them. Chain questions
name their hops outwards from the topic ("the *release years* of the films *starring* the actors of X"), so a
pattern whose later hops align nearer the topic than earlier ones pays ``order_cost``. An out-and-back pair beside a
word such as "share", "same" or "together" pays no hop cost: that word is how English names the pair.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from kgrag.graph.algorithms import reversed_relation
from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag.patterns import PatternReach, pattern_key
from kgrag.methods.frag.router import ENTITY_TOKEN
from kgrag.methods.frag.synthetic import SLOT, humanise
from kgrag.models.embeddings import Embedder, dot_scores
from kgrag.retrieval.triples import kg_vectors

_WORD = re.compile(r"[^\W_]+")
_CANDIDATES = 5  # spans tried per mention (best by similarity); the assignment is exact over these
# English words that say the answer shares something with the topic ("films that *share* actors with X", "the
# *same* director", "acted *together* with", "*co-*stars", "X *also* wrote"): the question's own sign of an
# out-and-back pair. The language's, like the question words answer_kind reads; no KG's.
_SHARED = frozenset({"share", "shares", "shared", "sharing", "same", "together", "also", "co"})
_SHARED_REACH = 3  # words between a shared word and the pair's best span


@dataclass(frozen=True)
class AlignmentCosts:
    """What a pattern pays: per mention, per mention beyond the second, per hop, per hop aligned out of order;
    ``shared_pairs``: whether an out-and-back pair's two hops are free where the question says "share", "same",
    "together", "also" or "co-" (see :func:`aligned_pattern_scores`)."""

    mention: float = 0.2
    extra_mention: float = 0.15
    hop: float = 0.08
    order: float = 0.1
    shared_pairs: bool = True


@dataclass
class QuestionSpans:
    """The question's word spans (text, first word, end word) and where the masked topic words stand."""

    spans: list[tuple[str, int, int]]
    topic_positions: tuple[int, ...]
    shared_positions: tuple[int, ...] = ()  # where the question says a word of _SHARED

    @classmethod
    def of(cls, masked_question: str, max_words: int = 3) -> QuestionSpans:
        words = _WORD.findall(masked_question)
        spans = [
            (" ".join(words[s : s + n]).lower(), s, s + n)
            for n in range(1, max_words + 1)
            for s in range(len(words) - n + 1)
            if ENTITY_TOKEN not in words[s : s + n]
        ]
        topics = tuple(i for i, w in enumerate(words) if w == ENTITY_TOKEN)
        return cls(spans, topics, tuple(i for i, w in enumerate(words) if w.lower() in _SHARED))

    def near_shared(self, span: int) -> bool:
        """Whether span number ``span`` stands within ``_SHARED_REACH`` words of a shared word."""
        _, start, end = self.spans[span]
        return any(start - _SHARED_REACH <= p < end + _SHARED_REACH for p in self.shared_positions)

    def distance(self, start: int, end: int) -> int:
        """Words between a span and the nearest topic mention (0 when there is none)."""
        if not self.topic_positions:
            return 0
        return min(min(abs(start - t), abs(end - 1 - t)) for t in self.topic_positions)


@dataclass(frozen=True)
class RelationText:
    """How a relation is described to the embedder: its words, plus the names it most often leads to."""

    examples: int = 5  # most frequent named tail entities per relation (0: the words alone)
    example_weight: float = 0.5  # weight of their vector beside the words' vector
    # per relation id, the questions and phrases an LLM wrote for it (`kgrag adapt --describe`; "{x}" where the
    # entity goes), empty for most; the vector of their distinctive words is added with phrasing_weight
    phrasings: tuple[tuple[str, ...], ...] = ()
    phrasing_weight: float = 0.25


def frequent_tails(kg: KnowledgeGraph, k: int) -> list[list[str]]:
    """Per relation, the names of its ``k`` most frequent named tail entities (ties: lower id first)."""
    named = ~unnamed_entities(kg)[kg.tails]
    rels, tails = kg.rels[named].astype(np.int64), kg.tails[named].astype(np.int64)
    pairs, counts = np.unique(rels * kg.num_entities + tails, return_counts=True)
    rel_of = pairs // kg.num_entities
    order = np.lexsort((pairs, -counts, rel_of))  # by relation, then most frequent first
    rel_sorted = rel_of[order]
    first = np.searchsorted(rel_sorted, np.arange(kg.num_relations))
    rank = np.arange(len(order)) - first[rel_sorted]
    out: list[list[str]] = [[] for _ in range(kg.num_relations)]
    for i in order[rank < k]:
        out[int(rel_of[i])].append(kg.entities[int(pairs[i] % kg.num_entities)])
    return out


def relation_phrase_vectors(kg: KnowledgeGraph, embedder: Embedder, text: RelationText = RelationText()) -> np.ndarray:
    """Vectors of the relations read as English (``people.person.place_of_birth`` → "person place of birth"),
    once per KG and embedder: a namespaced id's domain words ("people") would otherwise match the question.

    A relation's words often say less than what it leads to, and an opaque id (Wikidata's ``P577``) says
    nothing: under MiniLM "which years" meets "publication date" at 0.43 but "publication date" with "2009,
    2007, 2008, 2011, 2012" at 0.60, and "directed by who" is nearer "screenwriter" than "director" until both
    carry their most frequent names. So the vector of the relation's ``examples`` most frequent named tails is
    added with ``example_weight`` (a relation whose tails are all unnamed keeps its words' direction).
    Retrieval only, frag zero-shot, on the dev data that chose 5 and 0.5: renamed MetaQA 300 per hop 0.997 /
    0.969 / 0.896 → 1.000 / 0.981 / 0.936, WebQSP proxy all 784 0.798 → 0.801, examples/ university, family,
    catalogue 1.0 either way (docs/DESIGN.md)."""

    def build() -> np.ndarray:
        phrases = [humanise(name) for name in kg.relations]
        words = [f"{p.subject_type} {p.words}".strip() for p in phrases]
        vectors = embedder.encode(words)
        mixed = vectors
        if text.examples and text.example_weight:
            tails = frequent_tails(kg, text.examples)
            examples = embedder.encode([", ".join(t) if t else w for w, t in zip(words, tails, strict=True)])
            mixed = mixed + text.example_weight * examples
        if text.phrasings and text.phrasing_weight:
            mixed = mixed + text.phrasing_weight * _phrasing_vectors(embedder, text.phrasings, mixed.shape)
        return mixed / np.maximum(np.linalg.norm(mixed, axis=1, keepdims=True), 1e-12)

    return kg.resources.get(("frag_relation_phrases", embedder.id, text), build)


def _phrasing_vectors(embedder: Embedder, phrasings: tuple[tuple[str, ...], ...], shape: tuple[int, ...]) -> np.ndarray:
    """Per relation, the vector of the words its lines use that few other relations' lines do ("which movie
    was directed by {x}" → "directed"); zeros for a relation with none.

    Whole lines share their frame ("which movie was … by", "what is the … of") across relations, and a span
    such as "movies" would then resemble every relation's lines and let any extra hop align with it (renamed
    MetaQA's 1-hop questions: the best pattern reached a gold answer for 0.44 instead of 0.96). A word is kept
    when at most a quarter of the phrased relations' lines use it (one relation at least)."""
    words = [[w.lower() for line in said for w in _WORD.findall(line.replace(SLOT, " "))] for said in phrasings]
    phrased = sum(bool(w) for w in words)
    df = Counter(w for ws in words for w in set(ws))
    limit = max(1, phrased // 4)
    texts = [" ".join(dict.fromkeys(w for w in ws if df[w] <= limit)) for ws in words]
    out = np.zeros(shape, dtype=np.float64)
    rows = [r for r, text in enumerate(texts) if text]
    if rows:
        out[rows] = embedder.encode([texts[r] for r in rows])
    return out


def mentions(
    reach: PatternReach, k: int, num_relations: int, prefix: dict, through_unnamed: np.ndarray
) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """The relation mentions of pattern ``k`` (tuples of relation ids, out-and-back pairs and hops through
    unnamed nodes joined, see the module docstring), and which of them are out-and-back pairs."""
    path = pattern_key(reach.patterns[k])
    groups: list[tuple[int, ...]] = []
    pairs: list[int] = []
    i = 0
    while i < len(path):
        group = [path[i] % num_relations]
        j = i
        while j + 1 < len(path):
            nxt = path[j + 1]
            if len(group) == 1 and nxt == reversed_relation(path[j], num_relations):
                j += 1  # out and back: "shares r with"
                pairs.append(len(groups))
                break
            middle = prefix.get(path[: j + 1])
            if middle is None or not through_unnamed[middle]:
                break
            group.append(nxt % num_relations)
            j += 1
        groups.append(tuple(group))
        i = j + 1
    return tuple(groups), tuple(pairs)


def _best_assignment(
    rows: list[np.ndarray], question: QuestionSpans, order_cost: float, apart: tuple[tuple[int, int], ...] = ()
) -> float:
    """Highest total similarity with each mention on its own span, spans not overlapping (and a topic mention
    between the two spans of each mention pair in ``apart``); a mention may go unaligned (0) when the question
    has too few words for all of them.

    Exact over the ``_CANDIDATES`` best spans of each mention, every combination scored at once with numpy:
    a pattern scorer runs this for each distinct mention tuple of a 3-hop search (hundreds per question)."""
    m = len(rows)
    score = np.zeros((m, _CANDIDATES + 1))
    start = np.full((m, _CANDIDATES + 1), -1, dtype=np.int64)  # -1: the mention stays unaligned
    end = np.full((m, _CANDIDATES + 1), -1, dtype=np.int64)
    dist = np.zeros((m, _CANDIDATES + 1), dtype=np.int64)
    for i, row in enumerate(rows):
        top = np.argsort(-row, kind="stable")[:_CANDIDATES]
        score[i, : len(top)] = row[top]
        for c, t in enumerate(top):
            _, start[i, c], end[i, c] = question.spans[t]
            dist[i, c] = question.distance(start[i, c], end[i, c])
    # option len(top) of each mention is "unaligned" (score 0, start -1), as the arrays were filled
    combos = _combinations(tuple(min(len(row), _CANDIDATES) + 1 for row in rows))
    picked = np.arange(m)
    s, a, b, d = (x[picked, combos] for x in (score, start, end, dist))  # (combinations, mentions)
    placed = a >= 0
    total = s[:, 0].copy()
    for i in range(1, m):
        total += s[:, i]
    ok = np.ones(len(combos), bool)
    out_of_order = np.zeros(len(combos), np.int64)
    for i, j in itertools.combinations(range(m), 2):
        both = placed[:, i] & placed[:, j]
        ok &= ~(both & (a[:, i] < b[:, j]) & (a[:, j] < b[:, i]))
        # consecutive among the aligned mentions, in the pattern's order
        out_of_order += both & ~placed[:, i + 1 : j].any(axis=1) & (d[:, i] > d[:, j])
    for i, j in apart:  # a topic mention between the two spans
        between = np.zeros(len(combos), bool)
        for t in question.topic_positions:
            between |= ((b[:, i] <= t) & (a[:, j] > t)) | ((b[:, j] <= t) & (a[:, i] > t))
        ok &= ~(placed[:, i] & placed[:, j] & ~between)
    if order_cost and m > 1:
        total -= order_cost * out_of_order
    return float(total[ok].max())


@functools.lru_cache(maxsize=64)
def _combinations(options: tuple[int, ...]) -> np.ndarray:
    """Every choice of one option per mention, as rows of option indices (the first mention varies slowest);
    a handful of shapes, so each is built once. Callers only index with it."""
    grids = np.meshgrid(*[np.arange(n) for n in options], indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1)


@dataclass
class SpanSimilarities:
    """How much each span of one question resembles each relation of the KG, centred per span (less the span's
    mean over all relations): the material both the relation ranking and the pattern alignment read."""

    question: QuestionSpans
    vectors: np.ndarray  # (spans, dim)
    relations: np.ndarray  # (relations, dim)
    baseline: np.ndarray  # (spans,) a span's mean similarity over the KG's relations

    @classmethod
    def of(
        cls, kg: KnowledgeGraph, embedder: Embedder, masked_question: str, text: RelationText = RelationText()
    ) -> SpanSimilarities | None:
        """None when the question has no words besides its topic's."""
        question = QuestionSpans.of(masked_question)
        if not question.spans:
            return None
        relations = relation_phrase_vectors(kg, embedder, text)
        vectors = embedder.encode([span for span, _, _ in question.spans])
        return cls(question, vectors, relations, (vectors @ relations.T).mean(axis=1))

    def relevance(self) -> np.ndarray:
        """Per relation, its best centred similarity to any span: how strongly some part of the question asks
        for it. Unlike the whole question's similarity, one word ("born") is enough to keep a relation
        (``place_of_birth``) among the hundreds a 3-hop subgraph of Freebase holds."""
        return (self.vectors @ self.relations.T - self.baseline[:, None]).max(axis=0)

    def mention_row(self, group: tuple[int, ...]) -> np.ndarray:
        """Centred similarity of every span to one mention (the mean vector of its relations)."""
        vector = self.relations[list(group)].mean(axis=0)
        return self.vectors @ (vector / (np.linalg.norm(vector) or 1.0)) - self.baseline


def _pair_readings(pairs: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The ways to read a pattern's out-and-back pairs: each is one mention ("films that *share actors* with X")
    or two ("the *director* of X also *directed* which films"), as the positions of the pairs read twice."""
    return [
        tuple(p for p, t in zip(pairs, twice, strict=True) if t)
        for twice in itertools.product((0, 1), repeat=len(pairs))
    ]


def _reading_score(
    rows: list[np.ndarray], question: QuestionSpans, costs: AlignmentCosts, twice: tuple[int, ...]
) -> float:
    """The best alignment of one reading less its mention costs. A pair read twice takes two spans on either side
    of the topic: one says how the topic reaches the shared entity, the other how the answer does ("the
    *director* of X also *directed*"). Two spans on one side are usually two relations, which MiniLM may both
    find near one ("who *directed* the films *written* by X": both near ``screenwriter``), or two words of one
    name ("cast members")."""
    said: list[np.ndarray] = []
    apart: list[tuple[int, int]] = []
    for i, row in enumerate(rows):
        said.append(row)
        if i in twice:
            apart.append((len(said) - 1, len(said)))
            said.append(row)
    cost = costs.mention * len(said) + costs.extra_mention * max(0, len(said) - 2)
    return _best_assignment(said, question, costs.order, tuple(apart)) - cost


def aligned_pattern_scores(
    kg: KnowledgeGraph, sims: SpanSimilarities, reach: PatternReach, costs: AlignmentCosts
) -> np.ndarray:
    """Each pattern's alignment score with the question (higher is better).

    Where the question says it shares something with its topic (``_SHARED``), an out-and-back pair pays no hop
    cost: the word is the question naming the pair, and without it "which movies share the screenwriter with X"
    read as X's screenwriter (the pair's extra hop cost more than "share" could earn, since no relation is
    called "share"). Only the pair whose best span stands within ``_SHARED_REACH`` words of the shared word: in
    "the directors of the films that share actors with X" the ``director`` pair is not the one shared. Best
    pattern reaching a gold answer, zero-shot, dev: renamed MetaQA first 100 per hop 0.96 / 0.58 / 0.54 -> 0.96 /
    0.85 / 0.66 (read while designing the rule), a seeded 200 per hop read after it 0.91 / 0.60 / 0.43 -> 0.91 /
    0.85 / 0.63, examples/ university 2-hop 0.75 -> 0.88, catalogue 2-hop 0.88 -> 1.00, family and the WebQSP
    proxy's 784 unchanged (benchmarks/results/frag_shared_pairs.json)."""
    n = kg.num_relations
    prefix = {pattern_key(reach.patterns[k]): k for k in range(len(reach))}
    counts = np.bincount(reach.pattern, minlength=len(reach))
    unnamed = np.bincount(reach.pattern, weights=unnamed_entities(kg)[reach.entity], minlength=len(reach))
    through_unnamed = unnamed > 0.5 * np.maximum(counts, 1)
    scored: dict[tuple, tuple[float, int]] = {}  # per mention tuple: its score and the hops it does not pay
    rows: dict[tuple[int, ...], np.ndarray] = {}  # a mention recurs across many patterns
    out = np.empty(len(reach))
    for k in range(len(reach)):
        key = mentions(reach, k, n, prefix, through_unnamed)
        if key not in scored:
            groups, pairs = key
            for group in groups:
                if group not in rows:
                    rows[group] = sims.mention_row(group)
            best = max(
                _reading_score([rows[g] for g in groups], sims.question, costs, twice)
                for twice in _pair_readings(pairs)
                # a second span cannot pay a mention's cost unless it aligns better than that cost
                if all(rows[groups[p]].max() > costs.mention for p in twice)
            )
            free = 0
            if costs.shared_pairs and sims.question.shared_positions:
                free = 2 * sum(sims.question.near_shared(int(rows[groups[p]].argmax())) for p in pairs)
            scored[key] = (best, free)
        best, free = scored[key]
        out[k] = best - costs.hop * (reach.lengths[k] - free)
    return out


def mean_pattern_scores(
    kg: KnowledgeGraph, embedder: Embedder, question: str, reach: PatternReach, hop_cost: float
) -> np.ndarray:
    """The ``"mean"`` zero-shot score: mean question similarity of each pattern's relations, less ``hop_cost``
    per hop. Scoring a pattern's whole text favours long patterns (more words to match) and out-and-back ones
    (``time zones, then time zones (reverse)``); the mean over its relations does not, and the hop cost
    prefers the shorter of two equally relevant patterns."""
    n = kg.num_relations
    sims = dot_scores(kg_vectors(kg, embedder).relations(), embedder.encode([question])[0])
    per_edge = np.where(reach.patterns >= 0, sims[np.maximum(reach.patterns, 0) % n], 0.0)
    lengths = np.maximum(reach.lengths, 1)
    return per_edge.sum(axis=1) / lengths - hop_cost * lengths
