"""Relation patterns around topic entities: which directed relation sequences lead where.

Enumerating concrete paths explodes at three hops (an actor's films' other actors' films is already tens of
thousands of paths), yet the paths that matter for a question share a handful of relation *patterns*. So we
propagate **sets**: level by level, each (pattern prefix, entity) pair is expanded once, whatever number of
concrete paths reach it. The result says, for every pattern of length ≤ L, which entities it reaches — enough
to score patterns against the question and pick answer candidates — and :func:`paths_to` then recovers one
concrete path per chosen endpoint for the evidence.

Hub entities (degree above ``hub_degree``, e.g. a genre shared by 10,000 films) are reached but not expanded
further when they are not a source: walking *through* them says nothing about the question and dominates the
cost. With ``fanout``, an entity is also not walked through along a relation it has more than ``fanout`` edges
of: a small KG's "Actor" joins 90 people by ``profession`` without being a hub by degree, and the walk
``profession, profession⁻¹, parents`` lists their parents beside the one parent asked for. The count is
per relation, so a country with thousands of edges is still walked through to its three languages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kgrag.graph.algorithms import Paths, incident_edges, reversed_relation
from kgrag.graph.kg import KnowledgeGraph, unique_ints
from kgrag.linking.normalize import normalize_answer


@dataclass
class PatternReach:
    """``patterns[k]`` (directed relation ids, ``-1``-padded) reaches entity ``entity[i]`` where ``pattern[i] == k``."""

    patterns: np.ndarray
    lengths: np.ndarray
    pattern: np.ndarray
    entity: np.ndarray
    truncated: bool = False

    def __len__(self) -> int:
        return len(self.patterns)

    def endpoints(self, k: int) -> np.ndarray:
        return self.entity[self.pattern == k]


def pattern_label(kg: KnowledgeGraph, pattern: Sequence[int]) -> str:
    """A pattern as a readable, stable string: relation names joined by ``>`` (``_inv`` for reversed)."""
    r = kg.num_relations
    return ">".join(kg.relations[int(p) % r] + ("" if p < r else "_inv") for p in pattern if p >= 0)


def _degree(kg: KnowledgeGraph) -> np.ndarray:
    return kg.resources.get(("degree_both",), lambda: kg.degree("both").astype(np.int64))


def _within_fanout(owner: np.ndarray, drel: np.ndarray, relations: int, limit: int | None) -> np.ndarray | bool:
    """Which incident edges leave an owner that has at most ``limit`` edges of their relation (either direction:
    KGs built from paths store some facts both ways); every edge of the owners must be given, the count is over
    them. No limit: all."""
    if limit is None:
        return True
    key = owner.astype(np.int64) * relations + drel % relations
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    return counts[inverse.ravel()] <= limit


def reachable_patterns(
    kg: KnowledgeGraph,
    sources: Sequence[int] | np.ndarray,
    max_length: int,
    *,
    hub_degree: int = 1000,
    fanout: int | None = None,
    max_pairs: int = 2_000_000,
    allowed_relations: np.ndarray | None = None,
    prune_from: int = 1,
) -> PatternReach:
    """Every directed relation pattern of length 1..``max_length`` from ``sources`` and the entities it reaches.

    ``allowed_relations`` (directed ids) limits the hops from the ``prune_from``-th on; the hops before it may
    use any relation."""
    sources = unique_ints(np.asarray(sources, dtype=np.int64))
    n, width, degree = kg.num_entities, max(max_length, 1), _degree(kg)
    is_source = np.zeros(n, bool)
    is_source[sources] = True
    allowed = None
    if allowed_relations is not None:
        allowed = np.zeros(2 * kg.num_relations, bool)
        allowed[np.asarray(allowed_relations, dtype=np.int64)] = True
    # prefix table: parent prefix and last directed relation of every pattern seen so far (prefix 0 = empty)
    parent = [np.array([-1], np.int64)]
    last_rel = [np.array([-1], np.int64)]
    level_of = [np.array([0], np.int64)]
    n_prefixes = 1
    pair_prefix = np.zeros(len(sources), np.int64)
    pair_entity = sources
    out_prefix, out_entity = [], []
    truncated = False
    for depth in range(1, max_length + 1):
        if depth > 1:  # do not walk through hubs (sources themselves are always expanded)
            keep = degree[pair_entity] <= hub_degree
            pair_prefix, pair_entity = pair_prefix[keep], pair_entity[keep]
        if not len(pair_entity):
            break
        owner, _, other, drel = incident_edges(kg, pair_entity, "both")
        # paths never come back to a topic entity (nor leave a non-source along a relation above the fan-out)
        ok = ~is_source[other] & _within_fanout(owner, drel, kg.num_relations, fanout if depth > 1 else None)
        if allowed is not None and depth >= prune_from:
            ok &= allowed[drel]
        owner, other, drel = owner[ok], other[ok], drel[ok]
        if len(owner) > max_pairs:
            owner, other, drel, truncated = owner[:max_pairs], other[:max_pairs], drel[:max_pairs], True
        # new prefix = (old prefix, directed relation): number them densely
        combo = pair_prefix[owner] * (2 * kg.num_relations) + drel
        uniq, inverse = np.unique(combo, return_inverse=True)
        new_ids = n_prefixes + np.arange(len(uniq))
        parent.append(uniq // (2 * kg.num_relations))
        last_rel.append(uniq % (2 * kg.num_relations))
        level_of.append(np.full(len(uniq), depth, np.int64))
        n_prefixes += len(uniq)
        prefix = new_ids[inverse.ravel()]
        pair_key = unique_ints(prefix * n + other)
        pair_prefix, pair_entity = pair_key // n, pair_key % n
        out_prefix.append(pair_prefix)
        out_entity.append(pair_entity)
    return _spelled_reach(parent, last_rel, level_of, out_prefix, out_entity, width, truncated)


def paths_to(
    kg: KnowledgeGraph,
    sources: Sequence[int] | np.ndarray,
    pattern: Sequence[int],
    targets: Sequence[int] | np.ndarray,
    *,
    hub_degree: int = 1000,
    fanout: int | None = None,
) -> Paths:
    """One concrete path per target that ``pattern`` reaches from ``sources`` (same hub rules as above) by a walk
    that never turns back along the triple it just followed.

    A pattern is a set walk, so ``screenwriter, screenwriter⁻¹, screenwriter`` from a film reaches its own writer
    again (film → writer ← other film → the same writer, the last hop the second one reversed): the writer looks
    like an answer three hops out. Such a target has no path here, so callers drop it (the writer of another
    film who also wrote this one is still reached, by three different triples). Each step keeps only edges that
    end a non-backtracking walk — the walks into an edge's start less the one that arrived along the same triple
    — so walking back from a target always finds a way.
    """
    sources = unique_ints(np.asarray(sources, dtype=np.int64))
    rels, degree = [int(r) for r in pattern if r >= 0], _degree(kg)
    steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    frontier, walks = sources, np.empty(0)
    for depth, rid in enumerate(rels):
        if depth > 0:
            frontier = frontier[degree[frontier] <= hub_degree]
        owner, tids, other, drel = incident_edges(kg, frontier, "both")
        keep = (drel == rid) & ~np.isin(other, sources)
        keep &= _within_fanout(owner, drel, kg.num_relations, fanout if depth else None)
        src, dst, tids = frontier[owner[keep]], other[keep].astype(np.int64), tids[keep]
        if steps:
            walks = _walks_into(steps[-1], walks, src, tids)
            ok = walks > 0
            src, dst, tids, walks = src[ok], dst[ok], tids[ok], walks[ok]
        else:
            walks = np.ones(len(src))
        steps.append((src, dst, tids))
        frontier = unique_ints(dst)
    targets = np.asarray(targets, dtype=np.int64)
    current = targets[np.isin(targets, frontier)] if rels else np.empty(0, np.int64)
    if not len(current):
        return Paths.empty()
    nodes_rev = [current]
    edges_rev = []
    after = np.full(len(current), -1, np.int64)  # the triple the path takes next (none after the last hop)
    for src, dst, tids in reversed(steps):
        order = np.argsort(dst, kind="stable")
        pos = np.searchsorted(dst[order], current)  # the first edge into each current node ...
        turns_back = tids[order[pos]] == after
        pos = pos + turns_back  # ... or the next one when the first is the triple the path goes on along
        edge = order[pos]
        edges_rev.append(tids[edge])
        current = src[edge]
        after = tids[edge]
        nodes_rev.append(current)
    nodes = np.stack(nodes_rev[::-1], axis=1).astype(np.int32)
    edges = np.stack(edges_rev[::-1], axis=1).astype(np.int64)
    return Paths(nodes, edges, np.full(len(nodes), len(rels), np.int32))


def _walks_into(
    previous: tuple[np.ndarray, np.ndarray, np.ndarray], previous_walks: np.ndarray, src: np.ndarray, tids: np.ndarray
) -> np.ndarray:
    """Non-backtracking walks that each new edge (``src``, triple ``tids``) continues: those ending at ``src``,
    less the one that arrived along the same triple (a triple occurs at most once per step: one direction)."""
    _, p_dst, p_tids = previous
    nodes, inverse = np.unique(p_dst, return_inverse=True)
    into = np.bincount(inverse.ravel(), weights=previous_walks, minlength=len(nodes))
    at = np.minimum(np.searchsorted(nodes, src), max(len(nodes) - 1, 0))
    walks = np.where(nodes[at] == src, into[at], 0.0) if len(nodes) else np.zeros(len(src))
    order = np.argsort(p_tids, kind="stable")
    same = np.minimum(np.searchsorted(p_tids[order], tids), max(len(order) - 1, 0))
    if len(order):
        back = p_tids[order[same]] == tids
        walks = walks - np.where(back, previous_walks[order[same]], 0.0)
    return walks


def _normalised_name_index(kg: KnowledgeGraph) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for i, name in enumerate(kg.entities):
        index.setdefault(normalize_answer(name), []).append(i)
    return index


def answer_entities(kg: KnowledgeGraph, answers: Sequence[str]) -> np.ndarray:
    """Entity ids whose normalised name equals a normalised answer (the name index is built once per KG)."""
    index = kg.resources.get(("normalised_names",), lambda: _normalised_name_index(kg))
    ids = [i for a in answers for i in index.get(normalize_answer(a), [])]
    return unique_ints(np.asarray(ids, dtype=np.int64)) if ids else np.empty(0, np.int64)


def pattern_f1(reach: PatternReach, gold: np.ndarray, exclude: Sequence[int] = ()) -> np.ndarray:
    """F1 of every pattern's endpoint set against the gold entities (``exclude``: e.g. the topics)."""
    if not len(reach):
        return np.empty(0)
    keep = ~np.isin(reach.entity, np.asarray(exclude, dtype=np.int64))
    pattern, entity = reach.pattern[keep], reach.entity[keep]
    size = np.bincount(pattern, minlength=len(reach))
    hits = np.bincount(pattern[np.isin(entity, gold)], minlength=len(reach))
    return 2.0 * hits / np.maximum(size + len(gold), 1)


def best_patterns(
    kg: KnowledgeGraph,
    topics: Sequence[int],
    answers: Sequence[str],
    max_length: int,
    *,
    exact_length: bool = False,
    **reach_options,
) -> tuple[list[str], float]:
    """The relation patterns whose endpoints best match ``answers`` (F1, ties all kept, shorter first) — weak
    labels for training a scorer. Ties are common (a film's director is also its writer) and keeping only one
    would teach the scorer that "writer" means ``directed_by``.

    With ``exact_length`` only patterns of ``max_length`` relations compete (when the hop count is known).
    """
    gold = answer_entities(kg, answers)
    if not len(gold) or not len(topics):
        return [], 0.0
    reach = reachable_patterns(kg, topics, max_length, **reach_options)
    f1 = pattern_f1(reach, gold, exclude=topics)
    if exact_length and len(f1):
        f1 = np.where(reach.lengths == max_length, f1, 0.0)
    if not len(f1) or f1.max() <= 0:
        return [], 0.0
    best = f1.max()
    tied = np.flatnonzero(f1 >= best - 1e-9)
    if not exact_length:  # prefer the shortest of the tied patterns
        tied = tied[reach.lengths[tied] == reach.lengths[tied].min()]
    return [pattern_label(kg, reach.patterns[k]) for k in tied], float(best)


def best_pattern(
    kg: KnowledgeGraph, topics: Sequence[int], answers: Sequence[str], max_length: int, **options
) -> tuple[str | None, float]:
    """The first of :func:`best_patterns` (None when no pattern reaches an answer)."""
    labels, f1 = best_patterns(kg, topics, answers, max_length, **options)
    return (labels[0] if labels else None), f1


def weak_pattern_labels(
    kg: KnowledgeGraph, rows: Sequence[dict], *, max_hops: int = 3, progress=None
) -> list[tuple[str, tuple[str, ...], float, bool]]:
    """``(masked question, tied best pattern labels, F1, hops unknown)`` per row with answers that some pattern
    reaches, or with its ``labelled_pattern`` given (F1 1).

    Topics come from ``topic_entities``, else ``[bracketed]`` names, else entity linking of the question; a
    row's ``hops``, when given, fixes the pattern length.
    """
    import re

    from kgrag.methods.frag.router import mask_topics
    from kgrag.retrieval.topics import resolve_topics

    out = []
    for row in rows:
        if progress is not None:
            progress()
        if not row.get("answers") and not row.get("labelled_pattern"):
            continue
        names = row.get("topic_entities") or re.findall(r"\[([^\]]*)\]", row["question"])
        topics = resolve_topics(kg, row["question"].replace("[", "").replace("]", ""), names)
        hops = row.get("hops")
        if row.get("labelled_pattern"):  # kgrag adapt --asked: its answers would only lead back to it
            labels, f1 = [row["labelled_pattern"]], 1.0
        else:
            labels, f1 = best_patterns(kg, topics, row["answers"], hops or max_hops, exact_length=hops is not None)
        if labels:
            masked = mask_topics(row["question"], [kg.entities[t] for t in topics])
            out.append((masked, tuple(labels), f1, hops is None))
    return out


def _spelled_reach(
    parent: list[np.ndarray],
    last_rel: list[np.ndarray],
    level_of: list[np.ndarray],
    out_prefix: list[np.ndarray],
    out_entity: list[np.ndarray],
    width: int,
    truncated: bool,
) -> PatternReach:
    """The reach of :func:`reachable_patterns` with every prefix id it reached spelled out as a relation row.

    The walk numbers prefixes densely (parent prefix, last relation) so it never copies a pattern; only the
    prefixes some entity reached are walked back to the root here, all at once.
    """
    parents = np.concatenate(parent)
    lasts = np.concatenate(last_rel)
    levels = np.concatenate(level_of)
    if not out_prefix:
        empty = np.empty(0, np.int64)
        return PatternReach(np.empty((0, width), np.int64), empty, empty, empty, truncated)
    prefix_all = np.concatenate(out_prefix)
    entity_all = np.concatenate(out_entity)
    used, pattern_idx = np.unique(prefix_all, return_inverse=True)
    lengths = levels[used]
    patterns = np.full((len(used), width), -1, np.int64)
    cur = used.copy()
    for _ in range(width):  # walk each prefix back to the root, filling from its own end
        active = levels[cur] > 0
        pos = np.where(active, levels[cur] - 1, 0)
        rows = np.flatnonzero(active)
        patterns[rows, pos[rows]] = lasts[cur[rows]]
        cur = np.where(active, parents[cur], cur)
        if not active.any():
            break
    return PatternReach(patterns, lengths, pattern_idx.ravel(), entity_all, truncated)


def pattern_key(pattern: Sequence[int] | np.ndarray) -> tuple[int, ...]:
    """A pattern row (padded with -1) as the tuple of its directed relation ids."""
    return tuple(int(r) for r in pattern if r >= 0)


def extends_better(
    pattern: np.ndarray, score: float, taken: dict[tuple[int, ...], float], margin: float, num_relations: int
) -> bool:
    """Whether ``pattern`` extends a pattern already taken that scores more than ``margin`` above it: the
    question is answered at the shorter pattern's ends, and the longer one's lists of entities past them only
    draw a small model away (renamed MetaQA: "what films does X appear in" read the films sharing a genre with
    X's film as the answer). An extension that first turns back along the taken pattern's last relation is
    exempt: "films that share a screenwriter with X" is the out-and-back ``screenwriter, screenwriter⁻¹``, one
    mention like ``screenwriter`` itself, so it always scores a hop below "the screenwriter of X"."""
    key = pattern_key(pattern)
    for n in range(1, len(key)):
        turns_back = key[n] == reversed_relation(key[n - 1], num_relations)
        if not turns_back and score < taken.get(key[:n], -np.inf) - margin:
            return True
    return False


def within_triple_budget(paths: Paths, budget: int) -> np.ndarray:
    """Rows of the best paths (in order) whose distinct triples fit ``budget``: paths sharing a first edge
    (a topic's CVT node, a film's director) cost it once."""
    seen: set[int] = set()
    keep = []
    for i in range(len(paths)):
        new = {int(e) for e in paths.edges[i, : paths.lengths[i]]} - seen
        if len(seen) + len(new) > budget:
            continue
        seen |= new
        keep.append(i)
    return np.asarray(keep, dtype=np.int64)
