"""Zero-label adaptation: train FRAG's router and pattern scorer for a KG from the KG alone (`kgrag adapt`).

FRAG needs labelled questions to train its classifiers; a user bringing their own KG has none. But the KG
says which relation patterns exist and where they lead, so questions with known answers can be *made*:

1. **Sample** start entities spread over the relations (each directed relation takes its turn as the first
   hop, so rare relations get questions too; hubs and unnamed nodes are not starts), then a relation pattern
   of 1–3 hops from each (:func:`~kgrag.methods.frag.patterns.reachable_patterns`); its endpoints are the
   answers, kept when there are few enough to be a question's answer.
2. **Write** a question per pattern from the relation names (:mod:`kgrag.methods.frag.synthetic`), with other
   words for each relation from the static embedder's vocabulary. Optionally an LLM first phrases the most
   frequent relations (prompt ``adapt_relation``: "who directed {x}", "the films {x} starred in" — one call
   per relation, so its cost does not grow with the number of questions; these phrasings nest into 2- and
   3-hop questions the way people write them) and afterwards rewords some questions (``adapt_paraphrase``),
   rejecting rewordings that drop the entity or give away an answer.
3. **Train** both classifiers with :func:`~kgrag.methods.frag.training.train` (pattern labels come from
   which patterns reach the answers, ties kept, as for real questions; a second copy of every question has
   its content words made unknown, which is how real questions look to a model trained on templates).
4. **Calibrate** on fresh questions worded with templates held out of training (:func:`calibrate`): bias the
   router towards more hops, and keep a model only when frag with it beats frag's zero-shot pipeline.
   What is kept goes to ``KGDIR/adapted/`` with the KG's checksum, so frag picks it up on this KG and
   nowhere else.

The directory is built under a temporary name and renamed into place (:func:`kgrag.graph.store.replace_derived`),
so an interrupted run leaves the previous models as they were. ``adapt.json`` records the settings, counts,
validation accuracies, timings and the sha256 of every file written.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kgrag import __version__
from kgrag.errors import KGRagError
from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.store import digest_files, replace_derived
from kgrag.methods.frag.patterns import pattern_label, reachable_patterns
from kgrag.methods.frag.router import ADAPTED_DIR, HopRouter
from kgrag.methods.frag.synthetic import SLOT, QuestionWriter, RelationLexicon, humanise, nearest_words, verb_forms
from kgrag.methods.frag.training import train
from kgrag.models.llm.base import LLM

ROUTER_FILE = "frag_router.npz"
PATTERNS_FILE = "frag_patterns.npz"
SUMMARY_FILE = "adapt.json"  # written last: its presence marks a finished directory
QUESTIONS_FILE = "questions.jsonl"  # the synthetic questions, for inspection or reuse with `kgrag frag-train`
FORMAT = "kgrag-adapt-v1"


# English function words: the structure of a question, which the classifiers can rely on in real questions;
# every other word may be one they never saw (see _with_unseen_words)
_FUNCTION_WORDS = frozenset(
    """a an the and or but of in on at to for from by with about as into than then is are was were be been being
    do does did has have had what which who whom whose when where why how that this these those it its they
    them their he she his her there here also same other others else both together share shares shared sharing
    all any some each one ones not no me my i you your we our us name list tell give show""".split()
)
_WORD = re.compile(r"\[[^\]]*\]|[^\s\[\]]+")


log = logging.getLogger("kgrag.adapt")


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


class _Silent:
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
    degree = np.diff(kg.out_indptr).astype(np.int64) + np.diff(kg.in_indptr)
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
    p = [int(x) for x in pattern if x >= 0]
    inv = [(x + num_relations) % (2 * num_relations) for x in p]
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
    progress = progress or _Silent()
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
    index = {tuple(int(p) for p in row if p >= 0): k for k, row in enumerate(reach.patterns)}
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
        directed_ids = [int(p) for p in pattern if p >= 0]
        # the entities a prefix of the pattern reaches: unnamed ones are not worded (see QuestionWriter.write)
        unnamed = [not cand.named[reach.endpoints(index[tuple(directed_ids[:j])])].any() for j in range(1, hops)]
        questions.append(SyntheticQuestion(writer.write(topic, directed_ids, unnamed), hops, label, topic, answers))
    return questions


def _with_unseen_words(question: str, rng: np.random.Generator, share: float) -> str:
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


# ---------------------------------------------------------------------------------------------- relation words
def relation_lexicons(kg: KnowledgeGraph) -> list[RelationLexicon]:
    """Each relation's humanised name, the static embedder's nearest words for it and the verb its name implies
    (the embedder's vocabulary doubles as the word list that checks verb forms); no LLM."""
    from kgrag.models.embeddings import load_embedder

    phrases = [humanise(r) for r in kg.relations]
    embedder = load_embedder("static")
    vocabulary = getattr(embedder, "vocabulary", None)
    if vocabulary is None:  # an embedder without a word list: names only
        return [RelationLexicon(p) for p in phrases]
    words, word_vectors = vocabulary()
    synonyms = nearest_words(phrases, words, word_vectors, embedder.encode([p.words for p in phrases]))
    known = frozenset(words)
    return [RelationLexicon(p, s, verb=verb_forms(p, known)) for p, s in zip(phrases, synonyms)]


def _facts(
    kg: KnowledgeGraph, relation: int, named: np.ndarray, hub_degree: int, rng: np.random.Generator, k: int = 3
) -> list[tuple[str, str]]:
    """Up to ``k`` (subject, object) names of ``relation``'s facts for the LLM to write about.

    Drawn from the best-connected facts short of hubs (a model has heard of well-connected entities, so it
    knows what "Heat" is), names of several words first (a one-word name such as "2012" is the one most
    likely shared by unrelated things), neither name inside the other (each must be found again in the
    model's lines).
    """
    degree = np.diff(kg.out_indptr).astype(np.int64) + np.diff(kg.in_indptr)
    tids = np.flatnonzero(kg.rels == relation)
    heads, tails = kg.heads[tids], kg.tails[tids]
    ok = named[heads] & named[tails] & (degree[heads] <= hub_degree) & (degree[tails] <= hub_degree)
    tids = tids[ok]
    tids = tids[np.argsort(-(degree[kg.heads[tids]] + degree[kg.tails[tids]]), kind="stable")[: 100 * k]]
    candidates = []
    for t in tids:
        subject, obj = kg.entities[kg.heads[t]], kg.entities[kg.tails[t]]
        if subject.lower() in obj.lower() or obj.lower() in subject.lower() or max(len(subject), len(obj)) > 60:
            continue
        candidates.append((-(" " in subject) - (" " in obj), float(rng.random()), subject, obj))
    facts: list[tuple[str, str]] = []
    used: set[str] = set()
    for _, _, subject, obj in sorted(candidates):
        if subject not in used and obj not in used:
            facts.append((subject, obj))
            used.update((subject, obj))
        if len(facts) == k:
            break
    return facts


def _slot_lines(text: str | None, name: str, answer: str, limit: int) -> list[str]:
    """Lines that mention ``name`` (written as the slot ``{x}``) and not ``answer``: templates from the model's
    questions about one fact."""
    from kgrag.prompts.tags import split_items

    kept: list[str] = []
    pattern = re.compile(re.escape(name.strip()), re.IGNORECASE)
    for line in split_items(text):
        line = " ".join(line.strip().strip('"').split())
        if len(pattern.findall(line)) != 1 or answer.strip().lower() in line.lower() or len(line) > 150:
            continue
        if any(c in line for c in "{}[]<>"):
            continue
        template = pattern.sub(SLOT, line).rstrip(" ?.!")
        for quote in ('"', "'", "“", "‘"):  # a quoted name: the slot carries the name's brackets instead
            template = template.replace(quote + SLOT, SLOT).replace(SLOT + {"“": "”", "‘": "’"}.get(quote, quote), SLOT)
        if len(template.replace(SLOT, "").split()) >= 2 and template not in kept:
            kept.append(template)
    return kept[:limit]


def read_relation_description(text: str, lexicon: RelationLexicon, subject: str, obj: str) -> bool:
    """Add what an ``adapt_relation`` reply says about a relation, shown through the fact (``subject``,
    ``obj``), to ``lexicon``; False when it said nothing usable (wrong tags, names missing or mixed up)."""
    from kgrag.prompts import load_prompt
    from kgrag.prompts.tags import parse_tags, split_items

    parsed = parse_tags(text, load_prompt("adapt_relation").tags)
    forward_q = _slot_lines(parsed.get("ask_object"), subject, obj, 5)
    inverse_q = _slot_lines(parsed.get("ask_subject"), obj, subject, 5)
    forward_p = _slot_lines(parsed.get("object_phrase"), subject, obj, 4)
    inverse_p = _slot_lines(parsed.get("subject_phrase"), obj, subject, 4)
    lexicon.forward_questions += forward_q
    lexicon.inverse_questions += inverse_q
    lexicon.forward_phrases += forward_p
    lexicon.inverse_phrases += inverse_p
    for noun in split_items(parsed.get("kind"))[:1]:
        noun = noun.lower().strip(" .")
        if re.fullmatch(r"[a-z][a-z \-]{1,30}", noun) and len(noun.split()) <= 3:
            lexicon.subject_types.append(noun)
    return bool(forward_q or inverse_q or forward_p or inverse_p)


def describe_relations(
    kg: KnowledgeGraph,
    llm: LLM,
    lexicons: list[RelationLexicon],
    settings: AdaptSettings,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Let the LLM phrase the ``settings.describe`` most frequent relations, one call each: it is shown one fact
    by name (concrete names are what small models write good questions about) and writes questions and
    phrases about it, in which the fact's names become slots. Returns counts (``calls``, ``unusable``)."""
    from kgrag.prompts import load_prompt

    progress = progress or _Silent()
    prompt = load_prompt("adapt_relation")
    rng = np.random.default_rng(settings.seed + 2)
    named = ~unnamed_entities(kg)
    sizes = np.bincount(kg.rels, minlength=kg.num_relations)
    chosen = [int(r) for r in np.argsort(-sizes, kind="stable")[: settings.describe] if sizes[r]]
    counts = {"calls": 0, "unusable": 0}
    progress.stage("phrasing relations", len(chosen))
    for r in chosen:
        facts = _facts(kg, r, named, settings.hub_degree, rng)
        if facts:
            (subject, obj), more = facts[0], facts[1:]
            text = _generate(
                llm,
                prompt,
                relation=lexicons[r].phrase.words,
                subject=subject,
                object=obj,
                examples="; ".join(f'"{s}" → "{o}"' for s, o in more) or "(none)",
            )
            counts["calls"] += 1
            counts["unusable"] += not read_relation_description(text, lexicons[r], subject, obj)
        progress.advance()
    return counts


def _generate(llm: LLM, prompt: Any, **values: Any) -> str:
    """One call with the prompt file's decoding settings."""
    gen = llm.generate(
        prompt.render(**values),
        name=prompt.name,
        max_tokens=prompt.max_tokens,
        temperature=prompt.temperature,
        stop=list(prompt.stop),
        top_k=prompt.top_k,
        min_p=prompt.min_p,
    )
    return gen.text


# ---------------------------------------------------------------------------------------------- paraphrases
def _chain(kg: KnowledgeGraph, label: str, topic: str) -> str:
    """A pattern spelled out for the paraphrasing prompt: "[Heat] → its director → what has that as director"."""
    parts = [f"[{topic}]"]
    for hop in label.split(">"):
        inverse = hop.endswith("_inv") and hop[: -len("_inv")] in kg.relations
        words = humanise(hop[: -len("_inv")] if inverse else hop).words
        parts.append(f"what has that as its {words}" if inverse else f"its {words}")
    return " → ".join(parts)


def read_paraphrases(text: str, item: SyntheticQuestion) -> list[str]:
    """The usable rewordings in an LLM reply: each keeps ``[topic]`` (brackets are put back when the model
    dropped them), names no other bracketed thing, gives away no answer and differs from the original.

    >>> q = SyntheticQuestion("what is the director of [Heat]", 1, "director", "Heat", ["Michael Mann"])
    >>> read_paraphrases("<paraphrases>\\n1. Who directed Heat?\\nWho made [Heat]? Michael Mann\\n</paraphrases>", q)
    ['Who directed [Heat]?']
    """
    from kgrag.prompts import load_prompt
    from kgrag.prompts.tags import parse_tags, split_items

    parsed = parse_tags(text, load_prompt("adapt_paraphrase").tags).get("paraphrases")
    lines = split_items(parsed if parsed is not None else ("" if "<" in text else text))
    bracketed = f"[{item.topic}]"
    original = " ".join(item.question.lower().split())
    answers = [a.lower() for a in item.answers if len(a) >= 3]
    kept: list[str] = []
    for line in lines:
        line = " ".join(line.split())
        if bracketed not in line:
            at = line.lower().find(item.topic.lower())
            if at < 0 or "[" in line:
                continue
            line = line[:at] + bracketed + line[at + len(item.topic) :]
        rest = line.replace(bracketed, "", 1)
        low = rest.lower()
        if (
            "[" in rest
            or "]" in rest
            or bracketed in rest
            or len(rest.split()) < 2
            or len(line) > 3 * len(item.question) + 40
        ):
            continue
        if " ".join(line.lower().split()) == original or any(re.search(rf"\b{re.escape(a)}\b", low) for a in answers):
            continue
        if line not in kept:
            kept.append(line)
    return kept


def paraphrase_questions(
    kg: KnowledgeGraph,
    llm: LLM,
    questions: Sequence[SyntheticQuestion],
    settings: AdaptSettings,
    progress: Progress | None = None,
) -> tuple[list[SyntheticQuestion], dict[str, int]]:
    """LLM rewordings of ``settings.paraphrases`` template questions (hop counts taken in turn, seeded).

    Returns the new questions and counts (``calls``, ``rejected``: rewordings that failed the checks of
    :func:`read_paraphrases`, ``empty``: calls that gave nothing usable).
    """
    from kgrag.prompts import load_prompt

    progress = progress or _Silent()
    prompt = load_prompt("adapt_paraphrase")
    rng = np.random.default_rng(settings.seed + 1)
    by_hops: dict[int, list[SyntheticQuestion]] = {}
    for q in questions:
        by_hops.setdefault(q.hops, []).append(q)
    queues = {h: [qs[i] for i in rng.permutation(len(qs))] for h, qs in sorted(by_hops.items())}
    chosen: list[SyntheticQuestion] = []
    while len(chosen) < settings.paraphrases and any(queues.values()):
        for queue in queues.values():
            if queue and len(chosen) < settings.paraphrases:
                chosen.append(queue.pop())
    out: list[SyntheticQuestion] = []
    counts = {"calls": 0, "rejected": 0, "empty": 0}
    progress.stage("paraphrasing", len(chosen))
    for item in chosen:
        text = _generate(
            llm, prompt, question=item.question, chain=_chain(kg, item.pattern, item.topic), count=settings.rewordings
        )
        counts["calls"] += 1
        lines = read_paraphrases(text, item)[: settings.rewordings]
        counts["rejected"] += max(0, settings.rewordings - len(lines))
        counts["empty"] += not lines
        out.extend(
            SyntheticQuestion(line, item.hops, item.pattern, item.topic, item.answers, source="llm") for line in lines
        )
        progress.advance()
    return out, counts


# ---------------------------------------------------------------------------------------------- calibration
def calibrate(
    kg: KnowledgeGraph,
    router_path: Path,
    patterns_path: Path,
    lexicons: Sequence[RelationLexicon],
    settings: AdaptSettings,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Bias the router towards more hops and keep only the models that help frag, judged on fresh synthetic
    questions worded with templates held out of training (answers known, wordings the models never saw).

    Real questions look to the router like templates whose content words it never saw, and without them it
    falls back on short-question habits (on MetaQA with renamed relations it sent 23% of the real questions
    one hop or more too short, 6% of the held-out synthetic ones). A question routed short loses its answers;
    routed long, it keeps the shorter patterns among crowded candidates, which costs little on a sparse KG
    and much on a dense one. So frag retrieves every calibration question at every hop count, the router
    reads it with all content words unknown, and ``intercept[h] += b * (h - 1)`` takes the ``b`` on a grid
    whose routing keeps the largest share of answers.

    Then frag's three ways to run are compared on the same questions: zero-shot (no model), unrouted with the
    pattern scorer, and routed with both. A model is kept (its file left in place) only when the way that
    uses it keeps ``keep_margin`` more of the answers than zero-shot frag: on the WebQSP proxy, routing by a
    template-trained router lost a third of the answers frag's zero-shot search finds. Returns what was
    measured and kept.
    """
    from kgrag.linking.normalize import normalize_answer
    from kgrag.methods.frag import Frag

    progress = progress or _Silent()
    router = HopRouter.load(router_path)
    labels = router.labels.astype(np.int64)
    calibration = AdaptSettings(**{**asdict(settings), "questions": settings.calibration, "seed": settings.seed + 4})
    questions = sample_questions(kg, calibration, lexicons, templates="held-out")
    rng = np.random.default_rng(settings.seed + 5)
    degraded = [_with_unseen_words(q.question, rng, 1.0) for q in questions]
    logits = np.log(np.maximum(router.predict_proba(degraded), 1e-300))
    texts = [q.question.replace("[", "").replace("]", "") for q in questions]
    golds = [{normalize_answer(a) for a in q.answers} for q in questions]

    def kept_answers(**config: Any) -> np.ndarray:
        """Share of each question's answers in frag's evidence with this configuration."""
        frag = Frag(kg, **config)
        out = np.zeros(len(questions))
        for i, (text, q, gold) in enumerate(zip(texts, questions, golds)):
            found = {normalize_answer(name) for ev in frag.retrieve(text, [q.topic]) for name in ev.entities}
            out[i] = len(gold & found) / len(gold)
            progress.advance()
        return out

    progress.stage("calibrating", len(questions) * (len(labels) + 2))
    zero_shot = kept_answers(router="none", patterns="none")
    unrouted = kept_answers(router="none", patterns=str(patterns_path))
    by_hops = np.stack(
        [kept_answers(router=str(router_path), patterns=str(patterns_path), hops=int(h)) for h in labels], axis=1
    )
    rows = np.arange(len(questions))
    hop_counts = np.array([q.hops for q in questions])
    truth = np.searchsorted(labels, hop_counts)
    # questions people ask are mostly short: each hop count weighs as in the question mix, not as sampled
    mix = np.array([settings.hop_mix[min(h, len(settings.hop_mix)) - 1] for h in hop_counts], dtype=np.float64)
    weight = mix / np.bincount(hop_counts)[hop_counts]
    weight /= weight.sum()
    best_bias, routed = 0.0, -1.0
    for bias in np.arange(0.0, 2.01, 0.125):
        recall = float(weight @ by_hops[rows, np.argmax(logits + bias * (labels - 1), axis=1)])
        if recall > routed + 1e-9:
            best_bias, routed = float(bias), recall
    choice = np.argmax(logits + best_bias * (labels - 1), axis=1)
    options = {
        "zero-shot": float(weight @ zero_shot),
        "pattern scorer": float(weight @ unrouted),
        "router and pattern scorer": routed,
    }
    # a model must beat frag without models by a clear margin: synthetic questions use the KG's own words, which
    # flatters models trained on them (WebQSP proxy: routed 0.84 vs zero-shot 0.81 on held-out synthetic
    # questions, 0.50 vs 0.81 on real ones; renamed MetaQA: 0.82 vs 0.58, and 0.82 vs 0.68 mean on real ones)
    kept = max(
        options,
        key=lambda k: options[k] - (0.0 if k == "zero-shot" else settings.keep_margin) + 1e-6 * (k == "zero-shot"),
    )
    if kept == "router and pattern scorer":
        router.intercept = router.intercept + best_bias * (labels - 1)
        router.save(router_path)
    else:
        router_path.unlink()
        if kept == "zero-shot":
            patterns_path.unlink()
    return {
        "questions": len(questions),
        "answer_recall": {k: round(v, 4) for k, v in options.items()},
        "kept": kept,
        "router_bias": best_bias,
        "routed_too_short": round(float(np.mean(choice < truth)), 4),
        "routed_too_long": round(float(np.mean(choice > truth)), 4),
        "answer_recall_right_hops": round(float(weight @ by_hops[rows, truth]), 4),
        "hop_mix": list(settings.hop_mix),
    }


# ---------------------------------------------------------------------------------------------- adapt
def adapted_dir(kg: KnowledgeGraph) -> Path:
    """Where `kgrag adapt` keeps this KG's models (``KGDIR/adapted``)."""
    if kg.store_path is None:
        raise AdaptError("adaptation needs a KG loaded from a store directory (made by `kgrag ingest`)")
    return kg.store_path / ADAPTED_DIR


def adapted_models(kg: KnowledgeGraph) -> tuple[Path | None, Path | None]:
    """Paths of the router and pattern scorer `kgrag adapt` trained for ``kg``, each None when absent.

    Both are None when the directory was made for another version of the KG, or when a file differs from the
    digest recorded in ``adapt.json`` (edited or damaged after it was written: the store's manifest cannot
    cover files written later). A mismatch is logged (logger ``kgrag.adapt``), as derived data that must be
    rebuilt; ``kgrag adapt`` rebuilds it.

    >>> router, patterns = adapted_models(load_kg("my-kg"))  # doctest: +SKIP
    """
    if kg.store_path is None or kg.checksum is None:
        return None, None
    target = kg.store_path / ADAPTED_DIR
    try:
        record = json.loads((target / SUMMARY_FILE).read_text("utf-8"))
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable (%s); run `kgrag adapt` again", target / SUMMARY_FILE, exc)
        return None, None
    if not isinstance(record, dict) or record.get("kg_checksum") != kg.checksum:
        log.warning("%s: made for another version of this KG; run `kgrag adapt` again", target)
        return None, None
    if record.get("files") != digest_files(target, exclude=frozenset({SUMMARY_FILE})):
        log.warning("%s: files differ from those `kgrag adapt` wrote; run `kgrag adapt` again", target)
        return None, None
    router, patterns = target / ROUTER_FILE, target / PATTERNS_FILE
    return (router if router.is_file() else None), (patterns if patterns.is_file() else None)


def adapt(
    kg: KnowledgeGraph,
    settings: AdaptSettings | None = None,
    *,
    llm: LLM | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Sample, (paraphrase,) train and store FRAG's classifiers for ``kg``; returns what ``adapt.json`` holds.

    ``llm`` is needed only when ``settings.paraphrases`` > 0. The previous ``KGDIR/adapted`` is replaced only
    when everything succeeded.
    """
    settings = settings or AdaptSettings()
    if settings.questions < 3 * settings.max_hops:
        raise AdaptError(f"--questions must be at least {3 * settings.max_hops}")
    if (settings.paraphrases or settings.describe) and llm is None:
        raise AdaptError("phrasing relations and paraphrasing questions need an LLM")
    progress = progress or _Silent()
    target = adapted_dir(kg)
    seconds: dict[str, float] = {}
    llm_counts: dict[str, int] = {}
    start = time.perf_counter()
    lexicons = relation_lexicons(kg)
    if settings.describe and llm is not None:
        t = time.perf_counter()
        llm_counts.update(
            {f"relation_{k}": v for k, v in describe_relations(kg, llm, lexicons, settings, progress).items()}
        )
        seconds["phrasing_relations"] = time.perf_counter() - t
    t = time.perf_counter()
    questions = sample_questions(
        kg, settings, lexicons, progress, templates="training" if settings.calibration else "all"
    )
    seconds["sampling"] = time.perf_counter() - t
    if not questions:
        raise AdaptError("no relation pattern with a manageable number of answers was found: nothing to train on")
    if settings.paraphrases and llm is not None:
        t = time.perf_counter()
        extra, counts = paraphrase_questions(kg, llm, questions, settings, progress)
        llm_counts.update({f"paraphrase_{k}": v for k, v in counts.items()})
        questions = questions + extra
        seconds["paraphrasing"] = time.perf_counter() - t
    if settings.unseen_words > 0:
        rng = np.random.default_rng(settings.seed + 3)
        questions = questions + [
            SyntheticQuestion(
                _with_unseen_words(q.question, rng, settings.unseen_words),
                q.hops,
                q.pattern,
                q.topic,
                q.answers,
                source=f"{q.source}, unseen words",  # counted with its original below
            )
            for q in questions
        ]
    n_llm = sum(q.source == "llm" for q in questions)
    n_copies = sum(q.source.endswith("unseen words") for q in questions)
    described = sum(bool(lex.forward_questions or lex.inverse_questions) for lex in lexicons)
    how = "templates" + (" with LLM-phrased relations" if described else "") + (" + LLM paraphrases" if n_llm else "")
    source = f"kgrag adapt: {len(questions)} synthetic questions ({how})"
    tmp = Path(tempfile.mkdtemp(prefix=f".{ADAPTED_DIR}.tmp-", dir=target.parent))
    try:
        t = time.perf_counter()
        progress.stage("labelling", len(questions))
        labelled = 0

        def tick() -> None:  # the fits that follow the last labelled row get a stage of their own
            nonlocal labelled
            labelled += 1
            progress.advance()
            if labelled == len(questions):
                progress.stage("training", None)

        summary = train(
            [q.row() for q in questions],
            tmp / ROUTER_FILE,
            kg=kg,
            patterns_out=tmp / PATTERNS_FILE,
            validation=settings.validation,
            seed=settings.seed,
            progress=tick,
            questions_source=source,
            max_pattern_labels=settings.max_pattern_labels,
        )
        seconds["training"] = time.perf_counter() - t
        calibration: dict[str, Any] | None = None
        if settings.calibration and (tmp / ROUTER_FILE).exists() and (tmp / PATTERNS_FILE).exists():
            t = time.perf_counter()
            calibration = calibrate(kg, tmp / ROUTER_FILE, tmp / PATTERNS_FILE, lexicons, settings, progress)
            seconds["calibrating"] = time.perf_counter() - t
        with open(tmp / QUESTIONS_FILE, "w", encoding="utf-8") as fh:
            for q in questions:
                fh.write(json.dumps({**q.row(), "pattern": q.pattern, "source": q.source}, ensure_ascii=False) + "\n")
        seconds["total"] = time.perf_counter() - start
        record = {
            "format": FORMAT,
            "created_by": f"kgrag {__version__}",
            "kg_checksum": kg.checksum,
            "questions_source": source,
            "settings": {**asdict(settings), "hop_mix": list(settings.hop_mix)},  # as JSON reads it back
            "llm": llm.model_id if llm is not None and (settings.paraphrases or settings.describe) else None,
            "counts": {
                "questions": len(questions),
                "templates": len(questions) - n_llm - n_copies,
                "paraphrases": n_llm,
                "unseen_word_copies": n_copies,
                "by_hops": {str(h): sum(q.hops == h for q in questions) for h in range(1, settings.max_hops + 1)},
                "patterns": len({q.pattern for q in questions}),
                "start_entities": len({q.topic for q in questions}),
                "relations_phrased_by_llm": described,
                **llm_counts,
            },
            "router": summary.get("router"),
            "patterns": summary.get("patterns"),
            "calibration": calibration,
            "seconds": {k: round(v, 2) for k, v in seconds.items()},
            # what the LLM wrote for each relation it phrased ({x}: where an entity goes), for inspection
            "relation_phrasings": {
                kg.relations[r]: {
                    "kind": lex.subject_types,
                    "ask_object": lex.forward_questions,
                    "ask_subject": lex.inverse_questions,
                    "object_phrase": lex.forward_phrases,
                    "subject_phrase": lex.inverse_phrases,
                }
                for r, lex in enumerate(lexicons)
                if lex.forward_questions or lex.inverse_questions or lex.forward_phrases or lex.inverse_phrases
            },
        }
        for part in ("router", "patterns"):  # paths inside the temp dir mean nothing after the rename
            if isinstance(record[part], dict) and "out" in record[part]:
                name = Path(record[part]["out"]).name
                record[part]["out"] = str(target / name) if (tmp / name).exists() else None  # None: not kept
        record["files"] = digest_files(tmp)
        (tmp / SUMMARY_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False), "utf-8")
        replace_derived(tmp, target, SUMMARY_FILE)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return record
