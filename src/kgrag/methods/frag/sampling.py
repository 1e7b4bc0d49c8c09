"""Synthetic questions for `kgrag adapt`: relation patterns sampled around a KG's entities, and the settings.

Start entities are spread over the relations — each directed relation takes its turn as the first hop, so rare
relations get questions too — and are named, not hubs, and found again by their name (masking and linking
must see them as a user's topic would be). From each, a pattern of the wanted length is drawn among those it
starts; its endpoints are the answers, kept when there are few enough to be a question's answer. Nodes named
by an identifier (Freebase's CVTs) are never starts or answers, and a hop through one is worded together with
the next (:class:`~kgrag.methods.frag.synthetic.QuestionWriter`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kgrag.errors import KGRagError
from kgrag.graph.algorithms import reversed_relation
from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag.patterns import pattern_key, pattern_label, reachable_patterns
from kgrag.methods.frag.synthetic import QuestionWriter, RelationLexicon, humanise

# English function words: the structure of a question, which the classifiers can rely on in real questions;
# every other word may be one they never saw (see with_unseen_words)
_FUNCTION_WORDS = frozenset(
    """a an the and or but of in on at to for from by with about as into than then is are was were be been being
    do does did has have had what which who whom whose when where why how that this these those it its they
    them their he she his her there here also same other others else both together share shares shared sharing
    all any some each one ones not no me my i you your we our us name list tell give show""".split()
)
_WORD = re.compile(r"\[[^\]]*\]|[^\s\[\]]+")


class AdaptError(KGRagError, ValueError):
    exit_code = 2


@dataclass
class AdaptSettings:
    """What `kgrag adapt` samples and how it trains (recorded in ``adapt.json``)."""

    questions: int = 6000  # template questions, split evenly over 1..max_hops
    max_hops: int = 3
    max_answers: int = 20  # a pattern reaching more entities from a start is not asked from there
    hub_degree: int = 1000  # entities with more edges are neither starts nor walked through (frag's default)
    per_start: int = 2  # patterns asked from one start entity per hop count
    describe: int = 0  # relations (most frequent first) an LLM phrases (one call each)
    paraphrases: int = 0  # template questions an LLM rewords (one call each)
    rewordings: int = 2  # rewordings asked for per call
    unseen_words: float = 0.9  # share of content words made unknown in a second copy of each question (0: none)
    max_pattern_labels: int = 400  # the pattern scorer learns the most frequent patterns only
    # fresh synthetic questions, worded with held-out templates, that set the router's bias towards more hops
    # and decide which models are kept (0: no calibration, both models kept as trained)
    calibration: int = 300
    keep_margin: float = 0.05  # how much more answer recall than zero-shot frag a model must bring to be kept
    # share of 1-, 2- and 3-hop questions calibration weighs recall by: CWQ's, as the FRAG paper reports it
    # (WebQSP: 65 / 35 / 0); a user who asks mostly long questions can say so
    hop_mix: tuple[float, ...] = (0.41, 0.38, 0.21)
    validation: float = 0.2  # share of the synthetic questions held back to report accuracy
    # with an LLM that scores text: fresh held-out synthetic questions on which question_fit must raise zero-shot
    # frag's best-pattern accuracy by fit_margin for frag to use it on this KG (methods/frag/fit_check.py)
    fit_questions: int = 0
    fit_margin: float = 0.05  # ... by this much (a share of the questions)
    seed: int = 0


@dataclass
class SyntheticQuestion:
    """A question made from the KG, with the relation pattern it was written for and that pattern's ends."""

    question: str
    hops: int
    pattern: str
    topic: str
    answers: list[str]
    source: str = "template"  # or "llm"

    def row(self) -> dict[str, Any]:
        """The row :func:`~kgrag.methods.frag.training.train` reads."""
        return {"question": self.question, "hops": self.hops, "answers": self.answers, "topic_entities": [self.topic]}


class Progress(Protocol):
    """What :func:`adapt` reports while it runs (the CLI draws a bar per stage)."""

    def stage(self, name: str, total: int | None) -> None: ...

    def advance(self, steps: int = 1) -> None: ...


class Silent:
    """A :class:`Progress` that shows nothing (the library's default)."""

    def stage(self, name: str, total: int | None) -> None:
        pass

    def advance(self, steps: int = 1) -> None:
        pass


@dataclass
class _Candidates:
    """Per-KG arrays the sampler reuses: triples grouped by relation, start eligibility, named entities."""

    by_relation: np.ndarray  # triple ids sorted by relation
    relation_ptr: np.ndarray  # by_relation[relation_ptr[r]:relation_ptr[r + 1]] are relation r's triples
    named: np.ndarray  # bool per entity: a name a person would use (not an opaque id)
    startable: np.ndarray  # bool per entity: named, not a hub, its name finds it, no brackets in it


def _candidates(kg: KnowledgeGraph, hub_degree: int) -> _Candidates:
    degree = kg.degree("both")
    # nodes named by an identifier (Freebase CVTs, "m.05hqqz6") are never asked about nor answers
    named = ~unnamed_entities(kg) & np.fromiter((bool(n.strip()) for n in kg.entities), bool, kg.num_entities)
    startable = named & (degree <= hub_degree) & (degree > 0)
    for i in np.flatnonzero(startable):
        name = kg.entities[i]
        if "[" in name or "]" in name or kg.find_entity(name) != i:  # masking or linking would not find it
            startable[i] = False
    by_relation = np.argsort(kg.rels, kind="stable")
    relation_ptr = np.searchsorted(kg.rels[by_relation], np.arange(kg.num_relations + 1))
    return _Candidates(by_relation, relation_ptr, named, startable)


def _degenerate(pattern: np.ndarray, num_relations: int) -> bool:
    """``r > r_inv > r``: back to the entity the first hop reached, i.e. a 1-hop question in disguise."""
    p = pattern_key(pattern)
    inv = [reversed_relation(x, num_relations) for x in p]
    return any(p[i + 1] == inv[i] and p[i + 2] == p[i] for i in range(len(p) - 2))


def sample_questions(
    kg: KnowledgeGraph,
    settings: AdaptSettings,
    lexicons: Sequence[RelationLexicon] | None = None,
    progress: Progress | None = None,
    templates: str = "all",
) -> list[SyntheticQuestion]:
    """Template questions for relation patterns sampled around the KG's entities (seeded); ``lexicons``
    (one per relation, :func:`relation_lexicons`) say how relations may be worded, by default their names;
    ``templates`` ("all", "training", "held-out") which share of the templates is used (:class:`QuestionWriter`).

    >>> qs = sample_questions(kg, AdaptSettings(questions=30))  # doctest: +SKIP
    >>> qs[0].question, qs[0].answers  # doctest: +SKIP
    ('what is the director of [Heat]', ['Michael Mann'])
    """
    progress = progress or Silent()
    rng = np.random.default_rng(settings.seed)
    writer = QuestionWriter(lexicons or [RelationLexicon(humanise(r)) for r in kg.relations], rng, templates)
    cand = _candidates(kg, settings.hub_degree)
    n_rel = kg.num_relations
    sizes = np.diff(cand.relation_ptr)
    directed = np.array([d for d in range(2 * n_rel) if sizes[d % n_rel] > 0], np.int64)
    if not len(directed) or not cand.startable.any():
        raise AdaptError("the KG has no named entity with few enough edges to ask about: nothing to adapt to")
    per_hop = [settings.questions // settings.max_hops] * settings.max_hops
    for i in range(settings.questions % settings.max_hops):
        per_hop[-1 - i] += 1
    out: list[SyntheticQuestion] = []
    seen: set[tuple[int, str]] = set()
    progress.stage("sampling", settings.questions)
    for hops, target in zip(range(1, settings.max_hops + 1), per_hop):
        failures = np.zeros(2 * n_rel, np.int64)
        live = list(rng.permutation(directed))
        made, budget = 0, 30 * target + 100
        while made < target and live and budget > 0:
            d = int(live[budget % len(live)])
            budget -= 1
            asked = _ask_from(kg, cand, writer, rng, d, hops, settings, seen)
            if not asked:
                failures[d] += 1
                if failures[d] >= 25:  # this relation does not start usable patterns of this length
                    live.remove(d)
                continue
            failures[d] = 0
            asked = asked[: target - made]
            out.extend(asked)
            made += len(asked)
            progress.advance(len(asked))
    return out


def _ask_from(
    kg: KnowledgeGraph,
    cand: _Candidates,
    writer: QuestionWriter,
    rng: np.random.Generator,
    directed: int,
    hops: int,
    settings: AdaptSettings,
    seen: set[tuple[int, str]],
) -> list[SyntheticQuestion]:
    """Up to ``per_start`` questions from a random start whose first hop is ``directed``."""
    n_rel = kg.num_relations
    r = directed % n_rel
    lo, hi = cand.relation_ptr[r], cand.relation_ptr[r + 1]
    triple = cand.by_relation[int(rng.integers(lo, hi))]
    start = int(kg.tails[triple] if directed >= n_rel else kg.heads[triple])
    if not cand.startable[start]:
        return []
    reach = reachable_patterns(kg, [start], hops, hub_degree=settings.hub_degree)
    if not len(reach):
        return []
    named_ends = np.bincount(reach.pattern, weights=cand.named[reach.entity], minlength=len(reach))
    ok = (reach.lengths == hops) & (reach.patterns[:, 0] == directed)
    ok &= (named_ends >= 1) & (named_ends <= settings.max_answers)
    questions: list[SyntheticQuestion] = []
    topic = kg.entities[start]
    index = {pattern_key(row): k for k, row in enumerate(reach.patterns)}
    for k in rng.permutation(np.flatnonzero(ok)):
        if len(questions) >= settings.per_start:
            break
        pattern = reach.patterns[int(k)]
        label = pattern_label(kg, pattern)
        if (start, label) in seen or _degenerate(pattern, n_rel):
            continue
        seen.add((start, label))
        ends = reach.endpoints(int(k))
        answers = sorted({kg.entities[e] for e in ends[cand.named[ends]]})
        directed_ids = list(pattern_key(pattern))
        # the entities a prefix of the pattern reaches: unnamed ones are not worded (see QuestionWriter.write)
        unnamed = [not cand.named[reach.endpoints(index[tuple(directed_ids[:j])])].any() for j in range(1, hops)]
        questions.append(SyntheticQuestion(writer.write(topic, directed_ids, unnamed), hops, label, topic, answers))
    return questions


def with_unseen_words(question: str, rng: np.random.Generator, share: float) -> str:
    """``question`` with about ``share`` of its content words replaced by tokens seen nowhere else.

    Real questions say most relations in words no template has ("acted", "films"); the classifiers drop
    such words, with the bigrams around them. Training on copies where content words are unknown in just
    that way teaches them to route by what remains — the question's structure — instead of trusting one
    relation word. Bracketed names and function words stay.
    """
    out = []
    for token in _WORD.findall(question):
        if token.startswith("[") or token.lower() in _FUNCTION_WORDS or rng.random() >= share:
            out.append(token)
        else:
            out.append("u" + rng.bytes(6).hex())  # one [a-z0-9]+ word, unique: below the vocabulary's min count
    return " ".join(out)
