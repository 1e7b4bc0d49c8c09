"""Candidate triples around topic entities and their ranking against a question.

Two stages keep hub entities fast: (1) all triples within N hops are scored with *static* vectors of their
relation and far-end entity names (precomputed per KG, so scoring is a few matrix products) and the best
``max_candidates`` survive; (2) those are ranked by the transformer embedding of the verbalised triple against
the question, with triple vectors cached per KG (a triple is never embedded twice).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kgrag.graph.algorithms.edges import incident_edges
from kgrag.graph.algorithms.neighbourhood import k_hop
from kgrag.graph.hubs import walkable
from kgrag.graph.identifiers import looks_like_identifier, unnamed_entities
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.verbalize import humanize, short_relation_names, verbalize_triples
from kgrag.models.embeddings import Embedder, dot_scores, load_embedder
from kgrag.models.embeddings.kg_cache import KGEmbeddings
from kgrag.retrieval.evidence_tree import UNNAMED
from kgrag.types import Evidence


def kg_vectors(kg: KnowledgeGraph, embedder: Embedder) -> KGEmbeddings:
    """The KG's name/relation/triple vectors for ``embedder``, one instance per KG (shared by all methods)."""
    return kg.resources.get(("kg_embeddings", embedder.id), lambda: KGEmbeddings(kg, embedder))


def candidate_triples(
    kg: KnowledgeGraph,
    topics: Sequence[int],
    question: str,
    *,
    hops: int = 2,
    max_candidates: int = 2000,
    prefilter: Embedder | None = None,
) -> np.ndarray:
    """Triple ids within ``hops`` of the topics (both directions), pruned to ``max_candidates`` by relevance."""
    if not len(topics):
        return np.empty(0, dtype=np.int64)
    hood = k_hop(kg, np.asarray(topics), hops)
    tids = hood.edges
    if len(tids) <= max_candidates:
        return tids
    prefilter = prefilter or load_embedder("static")
    vecs = kg_vectors(kg, prefilter)
    q = prefilter.encode([question])[0]
    rel_score = dot_scores(vecs.relations(), q)
    ent_score = dot_scores(vecs.entities(), q)
    dist = np.full(kg.num_entities, hops + 1, dtype=np.int32)
    dist[hood.nodes] = hood.distance
    h, t = kg.heads[tids], kg.tails[tids]
    near = np.minimum(dist[h], dist[t])  # hop of the triple's nearer end (0 = touches a topic)
    score = rel_score[kg.rels[tids]] + 0.5 * np.maximum(ent_score[h], ent_score[t]) - 0.3 * near
    keep = np.argpartition(-score, max_candidates - 1)[:max_candidates]
    return np.sort(tids[keep])


def rank_triples(
    kg: KnowledgeGraph,
    question: str,
    tids: np.ndarray,
    *,
    embedder: Embedder,
    top_k: int = 30,
    vectors: np.ndarray | None = None,
    relation_weight: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``top_k`` triples by dot product of embeddings with the question, best first.

    ``relation_weight`` adds that much of the question's similarity to the triple's relation name alone. A
    verbalised triple that names a topic entity resembles any question about it, whatever its relation, so on
    a two-hop ranking every fact of the topic ("Wynton Marsalis, profession, Actor") outranks the second hop
    the question asks for ("New Orleans, film genre, Backstage Musical"); the relation's own similarity is what
    says which fact the question asks for.

    ``vectors`` (rows aligned with ``tids``) skips the cache read when one candidate set is ranked several
    times — gathering 2000 rows from the memory-mapped cache costs more than scoring them.
    """
    if not len(tids):
        return tids, np.empty(0, dtype=np.float32)
    cache = kg_vectors(kg, embedder)
    if vectors is None:
        vectors = cache.triples(tids)
    q = embedder.encode([question])[0]
    scores = dot_scores(vectors, q)
    if relation_weight:
        scores = scores + relation_weight * dot_scores(cache.relations(), q)[kg.rels[tids]]
    k = min(top_k, len(tids))
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.argsort(-scores[best], kind="stable")]
    return tids[best], scores[best]


def connected_top(
    kg: KnowledgeGraph, tids: np.ndarray, scores: np.ndarray, starts: Sequence[int], k: int
) -> np.ndarray:
    """Up to ``k`` positions of ``tids`` forming facts that join up with ``starts``: each next one is the
    best-scored fact touching an entity the starts or the facts taken so far reach (greedy, as Prim grows a
    tree), never going on through a hub (:mod:`kgrag.graph.hubs`) other than a start. A flat top-k over a
    two-hop neighbourhood fills with the second hop of everything ("Filmistaan release year 2012"), so a small
    model answers from facts no chain joins to the question; here every fact read is one step from what the
    question names or from a fact already read. In the order taken."""
    heads, tails = kg.heads[tids], kg.tails[tids]
    through = walkable(kg)
    on = np.zeros(kg.num_entities, dtype=bool)  # entities a next fact may touch
    on[np.asarray(starts, dtype=np.int64)] = True
    open_ = np.ones(len(tids), dtype=bool)
    taken: list[int] = []
    for _ in range(min(k, len(tids))):
        front = open_ & (on[heads] | on[tails])
        if not front.any():
            break
        best = int(np.argmax(np.where(front, scores, -np.inf)))
        open_[best] = False
        for end in (heads[best], tails[best]):
            on[end] |= through[end]
        taken.append(best)
    return np.asarray(taken, dtype=np.int64)


def _hub_walk(kg: KnowledgeGraph, topics: Sequence[int], hops: int) -> tuple[np.ndarray, np.ndarray]:
    """Per entity: whether a walk from the topics reaches it in fewer than ``hops`` steps and may go on from it
    (topics always may), and whether the walk reaches it there but stops, a hub (:mod:`kgrag.graph.hubs`)."""
    through = walkable(kg).copy()
    frontier = np.unique(np.asarray(topics, dtype=np.int64))
    through[frontier] = True
    walked = np.zeros(kg.num_entities, dtype=bool)
    walked[frontier] = True
    stopped = np.zeros(kg.num_entities, dtype=bool)
    for _ in range(hops - 1):
        _, _, other, _ = incident_edges(kg, frontier, "both")
        other = np.unique(other[~walked[other]])
        stopped[other[~through[other]]] = True
        frontier = other[through[other]]
        walked[frontier] = True
    return walked, stopped


def within_hubs(
    kg: KnowledgeGraph, ranked: np.ndarray, topics: Sequence[int], hops: int = 2, per_hub: int = 1
) -> np.ndarray:
    """Positions in ``ranked`` (triple ids, best first) of the facts a walk from the topics reaches without going
    on through a hub that is not a topic (:mod:`kgrag.graph.hubs`; one end an entity the walk reaches in fewer
    than ``hops`` steps and may go on from), and of the ``per_hub`` best-ranked facts at each hub the walk stopped
    at (its head when both ends are such hubs), in rank order. Facts further past a hub are left out.

    A hub is reached, not walked through. Past "1995", the release year of the topic film, lie the facts of
    every film of that year, and twenty of them ("A Walk in the Clouds release year 1995") were a third of the
    facts kaping read for "who was the director of Beyond the Clouds". The hub's own fact with the topic stays; a
    topic is always walked through, however many edges it has.

    One fact past each hub is what a question that asks through a hub needs when its relation ranks well ("the
    genre of film associated with the place where Wynton Marsalis was born" goes on past New Orleans, a hub of
    55 edges in the Freebase sample, whose other facts rank below twenty films past "United States of America");
    the rest of a hub's facts are what crowds a top-K."""
    ranked = np.asarray(ranked, dtype=np.int64)
    if not len(topics) or not len(ranked):
        return np.arange(len(ranked))
    walked, stopped = _hub_walk(kg, topics, hops)
    heads, tails = kg.heads[ranked], kg.tails[ranked]
    keep = walked[heads] | walked[tails]
    where = np.flatnonzero(~keep & (stopped[heads] | stopped[tails]))
    hub = np.where(stopped[heads[where]], heads[where], tails[where])
    by_hub = np.argsort(hub, kind="stable")  # rank order within each hub
    hubs = hub[by_hub]
    first = np.r_[True, hubs[1:] != hubs[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(len(hubs)), 0))
    keep[where[by_hub[np.arange(len(hubs)) - start < per_hub]]] = True
    return np.flatnonzero(keep)


def whole_facts(
    kg: KnowledgeGraph,
    ranked: np.ndarray,
    topics: Sequence[int],
    budget: int,
    *,
    siblings: int | None = None,
) -> np.ndarray:
    """Positions in ``ranked`` (triple ids, best first) of up to ``budget`` triples taken as whole facts.

    A top-K cut splits the facts a question needs: "what languages are spoken in Jamaica" has one answer per
    ``(Jamaica, languages_spoken, x)`` triple and the cut keeps the two or three that embed best; a Freebase
    fact behind an unnamed node (``Obama -spouse_s-> m.02h98gq -spouse-> Michelle``) needs both halves and
    the half without a name embeds badly. So, in rank order, a triple brings in (1) its siblings — the other
    ranked triples with the same relation at the same end, the end nearer a topic (at most ``siblings``,
    default a third of the budget, so large groups cannot crowd out other relations) — and (2) when its far end
    is unnamed, the best two ranked triples continuing from that node. Nothing that is not in ``ranked`` is
    added. The third is set on the WebQSP proxy and MetaQA dev sets (a half lost 1-hop MetaQA answers).
    """
    ranked = np.asarray(ranked, dtype=np.int64)
    if len(ranked) <= budget:
        return np.arange(len(ranked))
    siblings = max(1, budget // 3) if siblings is None else siblings
    dist = np.full(kg.num_entities, np.iinfo(np.int32).max, dtype=np.int64)
    hood = k_hop(kg, np.asarray(topics, dtype=np.int64), 2) if len(topics) else None
    if hood is not None:
        dist[hood.nodes] = hood.distance
    heads, rels, tails = kg.heads[ranked], kg.rels[ranked], kg.tails[ranked]
    head_is_anchor = dist[heads] <= dist[tails]
    anchor = np.where(head_is_anchor, heads, tails)
    far = np.where(head_is_anchor, tails, heads)
    unnamed = unnamed_entities(kg)
    groups: dict[tuple[int, int, bool], list[int]] = {}
    touching: dict[int, list[int]] = {}
    for i in range(len(ranked)):
        groups.setdefault((int(anchor[i]), int(rels[i]), bool(head_is_anchor[i])), []).append(i)
        touching.setdefault(int(heads[i]), []).append(i)
        touching.setdefault(int(tails[i]), []).append(i)
    chosen: dict[int, None] = {}  # insertion-ordered set of positions in ``ranked``
    for i in range(len(ranked)):
        if len(chosen) >= budget:
            break
        if i in chosen:
            continue
        for j in groups[(int(anchor[i]), int(rels[i]), bool(head_is_anchor[i]))][:siblings]:
            chosen.setdefault(j)
            if unnamed[far[j]]:
                for k in touching[int(far[j])][:3]:
                    chosen.setdefault(k)
    return np.fromiter(chosen, dtype=np.int64)[:budget]


def triples_as_evidence(
    kg: KnowledgeGraph, tids: np.ndarray, scores: np.ndarray | None = None, *, source: str = ""
) -> list[Evidence]:
    texts = verbalize_triples(kg, tids)
    out = []
    for i, tid in enumerate(tids.tolist()):
        h, r, t = kg.triple(tid)
        out.append(
            Evidence(
                text=texts[i],
                entities=[h, t],
                relations=[r],
                triples=[tid],
                score=None if scores is None else round(float(scores[i]), 4),
                source=source,
            )
        )
    return out


LineKey = tuple[str, str] | int | str
"""A fact line's key: (subject, relation) for a grouped line, an evidence position or the text of a line written
whole."""


def _one_triple(ev: Evidence) -> bool:
    return len(ev.triples) == 1 and len(ev.relations) == 1 and len(ev.entities) == 2


def facts_text(
    evidence: Sequence[Evidence], grouped: bool = False, by_object: bool = False, fold_unnamed: bool = False
) -> str:
    """Numbered fact lines for a prompt. A fact's dotted relation id (Freebase's
    ``people.person.place_of_birth``) keeps only the last segments that tell it apart from the other relations
    shown (``place of birth``): the namespace costs the local model ~6 prompt tokens a fact and tells it nothing
    the entities do not; the evidence objects keep the full id.

    ``grouped`` writes the facts that share subject and relation on one line, objects in the order they came
    (``Jamaica languages spoken Jamaican English; Jamaican Creole``): whole-fact retrieval brings a fact's
    siblings along (:func:`whole_facts`), and repeating their subject and relation is most of what the model
    reads (kaping, WebQSP proxy first 100 dev questions: 664 → 444 evaluated prompt tokens, median). Siblings
    found at the subject's end (twenty people whose nationality is one country) are the same repetition the
    other way round; ``by_object`` writes the facts left alone on their line that share relation and object once
    too, subjects first (``Veronica Lake; Tina Turner nationality United States of America``). Not kaping's
    default: the 1.5B model takes such a list of subjects for the answer ("what movies was X an actor in" → the
    films X *directed*, listed on one line; benchmarks/RESULTS.md).

    ``fold_unnamed`` (with ``grouped``) writes the facts of an unnamed intermediate node as one fact through
    ``·`` (:func:`_unnamed_lines`)."""
    short = short_relation_names(ev.relations[0] for ev in evidence if _one_triple(ev) and "." in ev.relations[0])
    folded = _unnamed_lines(evidence, short) if grouped and fold_unnamed else {}
    lines: dict[LineKey, list[str]] = {}
    for i, ev in enumerate(evidence):
        if i in folded:
            for key, obj in folded[i]:
                objects = lines.setdefault(key, [])
                if obj not in objects:  # twenty unnamed nodes of one kind say the same thing once
                    objects.append(obj)
            continue
        parts = _plain_fact(ev, short)
        if parts is None:
            lines[i] = [ev.text]
        elif grouped:
            lines.setdefault(parts[:2], []).append(parts[2])
        else:
            lines[i] = [" ".join(parts)]
    out = _line_texts(lines, by_object=grouped and by_object)
    return "\n".join(f"{i}. {text}" for i, text in enumerate(out, start=1)) or "(no facts found)"


def _line_texts(lines: dict[LineKey, list[str]], by_object: bool) -> list[str]:
    """The fact lines' texts; ``by_object``: the one-object lines that share relation and object become one line
    of their subjects, at the place of the first of them."""
    subjects: dict[tuple[str, str], list[str]] = {}
    for key, objects in lines.items():
        if by_object and isinstance(key, tuple) and len(objects) == 1:
            subjects.setdefault((key[1], objects[0]), []).append(key[0])
    out, written = [], set()
    for key, objects in lines.items():
        if not isinstance(key, tuple):
            out.append(objects[0])
            continue
        shared = subjects.get((key[1], objects[0])) if len(objects) == 1 else None
        if shared is None or len(shared) == 1:
            out.append(f"{key[0]} {key[1]} {'; '.join(objects)}")
        elif (key[1], objects[0]) not in written:
            written.add((key[1], objects[0]))
            out.append(f"{'; '.join(shared)} {key[1]} {objects[0]}")
    return out


def _node_of(ev: Evidence) -> str | None:
    """The unnamed end of a one-triple fact (its object if both are), None if both ends have names."""
    if not _one_triple(ev):
        return None
    head, tail = ev.entities
    return tail if looks_like_identifier(tail) else head if looks_like_identifier(head) else None


def _unnamed_lines(evidence: Sequence[Evidence], short: dict[str, str]) -> dict[int, list[tuple[LineKey, str]]]:
    """The facts of each unnamed node written as facts through it, keyed by the position of its first fact.

    Freebase-style KGs join an n-ary fact through a node with no name (``Germany gdp_nominal m.0j6rxwr``,
    ``m.0j6rxwr currency United States Dollar``). Written a triple a line, the model reads the identifier twice
    and one line per node: a country's twenty yearly GDP records repeat "currency United States Dollar" twenty
    times, which the 1.5B model then gives as the answer to "what is the currency of Germany". Folded, each
    node's fact reads from the named entity through ``·``: ``Germany gdp nominal · currency United States
    Dollar`` (the same line for twenty nodes is written once, and the objects of one path share a line). A node
    with several facts beyond it is one line (``Jamaica governing officials · (office holder Portia
    Simpson-Miller, title Prime Minister)``); a node nothing named leads to has its facts as ``· rel X``; one
    that leads nowhere says nothing and is left out. A node that two named entities lead to (``The Sixth Sense
    performance m.0k6gz9``, ``Donnie Wahlberg actor m.0k6gz9``, ``m.0k6gz9 character Vincent Grey``) is written
    as it is: its identifier is the only thing that says the film and the actor meet in one performance.

    Each value is a list of (line key, object) pairs: a tuple key is a grouped line's (subject, relation), a
    string key a line written whole."""
    touching: dict[str, list[int]] = {}
    for i, ev in enumerate(evidence):
        node = _node_of(ev)
        if node is not None and _plain_fact(ev, short) is not None:
            touching.setdefault(node, []).append(i)
    out: dict[int, list[tuple[LineKey, str]]] = {}
    for node, where in touching.items():
        into = [evidence[i] for i in where if evidence[i].entities[1] == node]
        if len(into) > 1:  # the node joins two named entities (a film and its actor in one performance):
            continue  # its identifier is what says so, and folding it would write two unrelated facts
        beyond = [
            (_relation(evidence[i], short), humanize(evidence[i].entities[1]))
            for i in where
            if evidence[i].entities[1] != node
        ]
        pairs: list[tuple[LineKey, str]] = []
        for ev in into or [None]:
            subject = UNNAMED if ev is None else humanize(ev.entities[0])
            via = "" if ev is None else f"{_relation(ev, short)} {UNNAMED} "
            if len(beyond) == 1:
                pairs.append(((subject, via + beyond[0][0]), beyond[0][1]))
            elif beyond:
                text = f"{subject} {via}({', '.join(f'{rel} {obj}' for rel, obj in beyond)})"
                pairs.append((text, text))
        out[where[0]] = pairs
        out.update((i, []) for i in where[1:])
    return out


def _relation(ev: Evidence, short: dict[str, str]) -> str:
    return short.get(ev.relations[0], humanize(ev.relations[0]))


def _plain_fact(ev: Evidence, short: dict[str, str]) -> tuple[str, str, str] | None:
    """Subject, relation (shortened when ``short`` has it) and object of a plain verbalised one-triple fact;
    None for anything else (a path, a Cypher row, a fact written another way), which is shown as it is."""
    if not _one_triple(ev):
        return None
    head, rel, tail = humanize(ev.entities[0]), ev.relations[0], humanize(ev.entities[1])
    if ev.text != f"{head} {humanize(rel)} {tail}":
        return None
    return head, _relation(ev, short), tail


__all__ = [
    "candidate_triples",
    "facts_text",
    "rank_triples",
    "triples_as_evidence",
    "whole_facts",
    "within_hubs",
]
