"""How `kgrag adapt` words relations: nearest words and verbs without an LLM, phrasings and rewordings with one.

Without an LLM each relation gets its humanised name, the static embedder's nearest words for it and the verb
an agent noun implies. With one, the most frequent relations are each shown one fact by name — concrete names
are what small models write good questions about — and the questions and phrases it writes become templates
with the fact's names as slots (prompt ``adapt_relation``); the cost is one call per relation, whatever the
number of questions. Rewordings of single questions (``adapt_paraphrase``) cost a call each. Replies are read
defensively: a line that lacks the name, names the answer or holds another placeholder is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag.sampling import AdaptSettings, Progress, Silent, SyntheticQuestion
from kgrag.methods.frag.synthetic import SLOT, RelationLexicon, humanise, nearest_words, verb_forms
from kgrag.models.llm.base import LLM


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
    degree = kg.degree("both")
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

    progress = progress or Silent()
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
            text = llm.run_prompt(
                prompt,
                relation=lexicons[r].phrase.words,
                subject=subject,
                object=obj,
                examples="; ".join(f'"{s}" → "{o}"' for s, o in more) or "(none)",
            ).text
            counts["calls"] += 1
            counts["unusable"] += not read_relation_description(text, lexicons[r], subject, obj)
        progress.advance()
    return counts


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

    progress = progress or Silent()
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
        text = llm.run_prompt(
            prompt, question=item.question, chain=_chain(kg, item.pattern, item.topic), count=settings.rewordings
        ).text
        counts["calls"] += 1
        lines = read_paraphrases(text, item)[: settings.rewordings]
        counts["rejected"] += max(0, settings.rewordings - len(lines))
        counts["empty"] += not lines
        out.extend(
            SyntheticQuestion(line, item.hops, item.pattern, item.topic, item.answers, source="llm") for line in lines
        )
        progress.advance()
    return out, counts
