"""Which evidence supports each answer: the shortest chain of checked KG triples from a question entity to it.

``Answer.grounded`` used to mean "the cited triple ids are in range", true of any evidence the library produces,
so a wrong answer looked as sure as a right one. An answer is *supported* when the evidence shown to the model
joins it to an entity of the question: the evidence triples (each checked against the KG: the id exists and
joins the entities the evidence names) form a small graph, and a breadth-first search from the question's
entities finds the shortest chain to the answer. An answer found only in evidence that is not a KG path (a Cypher
result row) is supported by that row, with no triples. Everything else — an answer from the model's own
knowledge, or the question's own words echoed back — has no support.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence

import numpy as np

from kgrag.graph.hubs import walkable
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.verbalize import verbalize_triples
from kgrag.linking.names import NameIndex
from kgrag.linking.normalize import names_said, normalize, tokens
from kgrag.types import Evidence

_DATE = re.compile(r"\d{4} \d{2} \d{2}(?: |$)")  # an ISO date's normal form ("1901 09 14")

# the question's entities, where chains start, the checked triples as an adjacency list, result-row values
_Graph = tuple[set[int], set[int], dict[int, list[tuple[int, int]]], set[str]]


def checked_triples(kg: KnowledgeGraph, ev: Evidence) -> list[int]:
    """The triple ids of ``ev`` that exist in ``kg`` and join the entities ``ev`` names in that place (a path's
    i-th triple joins its i-th and i+1-th entities; a lone triple its two); ids that do not check are dropped."""
    lined_up = len(ev.entities) == len(ev.triples) + 1
    out = []
    for i, tid in enumerate(ev.triples):
        if not 0 <= tid < kg.num_triples:
            continue
        ends = {kg.entities[int(kg.heads[tid])], kg.entities[int(kg.tails[tid])]}
        if not lined_up or set(ev.entities[i : i + 2]) == ends:  # evidence whose names do not line up with
            out.append(int(tid))  # its triples (none the library makes) can only be checked for existence
    return out


def question_entities(
    kg: KnowledgeGraph, question: str, evidence: Sequence[Evidence], given: Iterable[str]
) -> set[int]:
    """Entity ids the support chains may start from: the given or linked topic entities, and every evidence
    entity whose whole name the question says (a path's start is its topic; a fact retrieved for the
    question may hang off an entity the method linked without saying so)."""
    named = names_said(question, dict.fromkeys(name for ev in evidence for name in ev.entities))
    ids = (kg.find_entity(name) for name in [*given, *named])
    return {e for e in ids if e is not None}


def answer_support(
    kg: KnowledgeGraph,
    question: str,
    answers: Sequence[str],
    evidence: Sequence[Evidence],
    topics: Iterable[str] = (),
) -> dict[str, list[int]]:
    """For each supported answer, the triple ids of the shortest chain of checked evidence triples from a
    question entity to it (``[]``: found in a result row that is not a KG path). Unsupported answers are absent,
    the question's own entities among them: a chain of no triples supports nothing."""
    return _support_in(kg, answers, _evidence_graph(kg, question, evidence, topics))


def _support_in(kg: KnowledgeGraph, answers: Sequence[str], graph: _Graph) -> dict[str, list[int]]:
    """:func:`answer_support` over an evidence graph already built."""
    named, starts, adjacency, row_values = graph
    chains = _chains(adjacency, starts)
    # the entities the chains reach, by their names' normal form: a model that writes names (not one choosing
    # among them) writes "cosmologist" for the KG's "Cosmologist" and "Robert E. Kahn" for "Robert  E. Kahn",
    # and the answer is no less the entity the evidence shows (the evaluation reads it so too)
    reached: dict[str, int] = {}
    for eid in sorted(chains, key=lambda e: len(chains[e])):
        if chains[eid]:
            reached.setdefault(normalize(kg.entities[eid]), eid)
    support: dict[str, list[int]] = {}
    from_named: dict[int, list[int]] | None = None  # chains from the question's own entities only, when needed
    for answer in answers:
        eid = own = kg.find_entity(answer)
        if eid is None or not chains.get(eid):
            eid = reached.get(normalize(answer))
        if eid is None and own is None:
            eid = _shortened(normalize(answer), reached)
        if eid is not None and chains.get(eid):
            support[answer] = chains[eid]
        elif normalize(answer) in row_values:
            support[answer] = []
        elif own in starts and own not in named:
            # a path the method retrieved around the answer itself (byokg links its draft answers and follows
            # paths from them) starts there, which made it a chain of no triples; the question's own entities
            # may still reach it ("Kestrel Books <- A Ledger of Tides -> Corvina Award")
            from_named = _chains(adjacency, named) if from_named is None else from_named
            if from_named.get(own):
                support[answer] = from_named[own]
    return support


def _shortened(key: str, reached: dict[str, int]) -> int | None:
    """The one reached entity whose name ``key`` (no KG name) is the first or last words of: a model reading
    "Costa Rica currency used Costa Rican colón" writes "Colón", for "Italian Language" "Italian". A number is
    a value, not a name: it shortens only a date, as its year ("1901" for "1901-09-14"), never "2009 NFL season"
    (the WebQSP proxy's gold for "when did Michael Vick start playing for the Eagles" is "2009"). Two such
    entities, or none: None (the answer stays the model's own)."""
    found = {e for name, e in reached.items() if _shortens(key, name)}
    return found.pop() if len(found) == 1 else None


def _shortens(key: str, name: str) -> bool:
    """Whether ``key`` is the first or last words of ``name`` (both normal forms), a number only a date's year."""
    if len(key) < 3:
        return False
    if key.isdigit():
        return bool(_DATE.match(name)) and name.startswith(key + " ")
    return name.startswith(key + " ") or name.endswith(" " + key)


def links_past(kg: KnowledgeGraph, answers: Sequence[int], reached: Sequence[int]) -> list[int]:
    """Per answer entity, the first KG triple that joins it directly to an entity of ``reached`` (either
    direction), in ``answers``' order; answers with none are skipped."""
    targets = np.asarray(sorted(set(reached)), dtype=np.int64)
    out: list[int] = []
    for e in dict.fromkeys(answers):
        tids = np.concatenate([kg.out_edge_ids(e), kg.in_edge_ids(e)])
        other = np.where(kg.heads[tids] == e, kg.tails[tids], kg.heads[tids])
        hits = tids[np.isin(other, targets) & (other != e)]
        if len(hits):
            out.append(int(hits.min()))
    return out


def answer_links(
    kg: KnowledgeGraph,
    question: str,
    answers: Sequence[str],
    evidence: Sequence[Evidence],
    topics: Iterable[str] = (),
) -> tuple[list[int], list[int]]:
    """(the entities the unsupported answers may be, the KG triples that join them to an entity the evidence
    joins to the question's): an answer one hop past what the evidence reached gets that hop checked against the
    KG instead of standing on the model's word. Only where the evidence supports none of the answers: beside
    supported ones, the others are names the model added from memory and are set aside, and a fact joining one
    to any entity the evidence reached (French, through a Canada the facts about Spain mention) would bring it
    back.

    A model reading facts that stop a hop short (a plan's missing last step, a 2-hop question answered from
    1-hop facts) often names the right entity from its own knowledge; where the KG holds the hop from an entity
    the evidence reached, that fact is the answer's support, and where it does not, the answer stays
    unsupported. Names are read as every entity they may be ("drama" is a tag and a genre "Drama")."""
    graph = _evidence_graph(kg, question, evidence, topics)
    named, starts, adjacency, _ = graph
    supported = _support_in(kg, answers, graph)
    if supported:  # the others are set aside (set_aside_unsupported): a link would bring a recalled name back
        return [], []
    index = NameIndex.of(kg)  # the question's own entities stay unsupported whatever joins them (answer_support)
    loose = [e for a in answers for e in index.by_key.get(normalize(a), []) if e not in named]
    if not loose:
        return [], []
    # a link joins an answer to an entity reached along a chain of the evidence, never to or through a hub: every
    # film has a genre, so "Dutch genre Drama" (the film Dutch, for the language) joined anything at all
    hubs_ok = walkable(kg)
    reached = {e for e in _chains(adjacency, starts, hubs_ok) if hubs_ok[e]} | starts
    return loose, links_past(kg, loose, reached)


def _evidence_graph(kg: KnowledgeGraph, question: str, evidence: Sequence[Evidence], topics: Iterable[str]) -> _Graph:
    """The question's entities, where chains start, the checked evidence triples as an adjacency list, and the
    values of result rows that are not KG paths."""
    named = question_entities(kg, question, evidence, topics)
    starts = set(named)
    for ev in evidence:  # a path of several hops starts at the entity it was retrieved for (a lone fact's first
        start = kg.find_entity(ev.entities[0]) if len(ev.triples) > 1 and ev.entities else None  # name: its head)
        if start is not None:
            starts.add(start)
    adjacency: dict[int, list[tuple[int, int]]] = {}
    row_values: set[str] = set()
    for ev in evidence:
        if not ev.triples:
            row_values.update(normalize(v) for v in ev.entities)
            continue
        for tid in checked_triples(kg, ev):
            head, tail = int(kg.heads[tid]), int(kg.tails[tid])
            adjacency.setdefault(head, []).append((tail, tid))
            adjacency.setdefault(tail, []).append((head, tid))
    return named, starts, adjacency, row_values


def _chains(
    adjacency: dict[int, list[tuple[int, int]]], starts: set[int], passable: np.ndarray | None = None
) -> dict[int, list[int]]:
    """Breadth-first from ``starts`` over the evidence graph: each reached entity's triple chain (given
    ``passable``, no chain goes on through an entity it marks False, a hub; the starts always do)."""
    chains: dict[int, list[int]] = {s: [] for s in starts if s in adjacency}
    queue = deque(chains)
    while queue:
        node = queue.popleft()
        if passable is not None and node not in starts and not passable[node]:
            continue
        for other, tid in adjacency[node]:
            if other not in chains:
                chains[other] = [*chains[node], tid]
                queue.append(other)
    return chains


def support_text(kg: KnowledgeGraph, chain: Sequence[int]) -> str:
    """A support chain as the facts it is made of: ``"Heat directed by Michael Mann; Collateral directed by
    Michael Mann"``."""
    return "; ".join(verbalize_triples(kg, list(chain)))


def supported_first(
    answers: Sequence[str], support: dict[str, list[int]], fit: dict[str, float] | None = None
) -> list[str]:
    """``answers`` with the supported ones first, each group in the method's order — or, given ``fit``
    (:mod:`kgrag.methods.pattern_fit`), those the question's best reading reaches first within each group."""
    if fit:
        answers = sorted(answers, key=lambda a: -fit.get(a, 0.0))  # stable: the method's order among equals
    return [a for a in answers if a in support] + [a for a in answers if a not in support]


def kg_spellings(kg: KnowledgeGraph, answers: Sequence[str], support: dict[str, list[int]]) -> dict[str, str]:
    """Answers the model wrote in another spelling of the entity their support reaches ("María Lopez",
    "cosmologist", or a short form: "Colón") mapped to the KG's name of it ("Maria Lopez", "Cosmologist",
    "Costa Rican colón"): support reads names under their normal form (:func:`_support_in`), and the user should
    see the name the evidence shows."""
    spelled: dict[str, str] = {}
    for answer in answers:
        chain = support.get(answer)
        if not chain or kg.find_entity(answer) is not None:
            continue
        head, _, tail = kg.triple(chain[-1])
        key = normalize(answer)
        name = next((n for n in (tail, head) if normalize(n) == key), None)
        name = name or next((n for n in (tail, head) if _shortens(key, normalize(n))), None)
        if name is not None:
            spelled[answer] = name
    return spelled


def set_aside_unsupported(answers: Sequence[str], support: dict[str, list[int]]) -> tuple[list[str], list[str]]:
    """(answers, set aside): when the evidence supports some of the answers, the others are set aside.

    Every answer prompt lets the model use its own knowledge only where the evidence is silent; an answer
    without support beside supported ones is the model adding names from memory where the evidence did answer
    ("what does Peter Franzén appear in": two films from the facts, two more it recalls), and they are mostly
    wrong (dev, 20 runs of five methods, 1,395 questions: names set aside on 32, a gold answer among them on 7,
    F1 0.6155 -> 0.6166; benchmarks/results/own_knowledge.json). Where nothing is supported the model's answers
    stay: that is what the prompt allows. The set-aside names are kept in the result (``Answer.set_aside``) and
    shown after the answers, marked."""
    if not any(a in support for a in answers):
        return list(answers), []
    return [a for a in answers if a in support], [a for a in answers if a not in support]


def echoes(kg: KnowledgeGraph, question: str, answers: Sequence[str], support: dict[str, list[int]]) -> list[str]:
    """Answers that only repeat the question's words: no support, not an entity of the KG, every word of them in
    the question ("Which team owns the warp-drive-service?" → "Warp Drive Service"). A model with nothing to go
    on writes these; they are never an answer. (An entity the question names stays: "which of A and B …".)"""
    words = set(tokens(question))
    return [a for a in answers if a not in support and kg.find_entity(a) is None and set(tokens(a)) <= words]
