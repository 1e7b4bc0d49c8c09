"""Executing relation paths an LLM wrote (``directed_by -> starred_actors``) against the KG.

An LLM's relation path is a hint, not a query: names come back humanised (``directed by``), with a Freebase
prefix missing (``place_of_birth``), in the Cypher-safe spelling (``people_person_place_of_birth``), with
an inverse marker (``~r``, ``r_inv``, ``r (reverse)``), or mixed with entity names.  Small models also get
the *order* or the *direction* of hops wrong.  So a written path is first resolved to base relations
(tolerantly, dropping parts that are not relations), then its orientations are tried against the KG — as
written first, then in reverse order, then with hop directions flipped — and the first orientation that
reaches any entity from the sources is kept.  Entity types do the disambiguation: from an actor,
``starred_actors`` only leads anywhere backwards.  A path naming relations the KG does not have
(``location.location.birthplace``) can still be followed softly: hop by hop, the relation at hand whose name
embeds closest to the written one.

A path whose hops are all real relations but that reaches nothing in any orientation has often lost a
return hop: "the films that share directors with X" is ``directed_by -> directed_by_inv -> release_year``,
and a small model writes ``directed_by -> release_year``.  Such a path can be retried with the inverse of a
hop inserted right after it (the entities that share that hop's value), never walking back to the entity it
came from — but only when the question names every relation of the path (:func:`relations_named`): the same
model also writes ``written_by -> starred_actors`` for "who acted in Kafka", where the bridge would list the
casts of the writer's other films.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from kgrag.graph.algorithms.edges import incident_edges, reversed_relation
from kgrag.graph.algorithms.relation_paths import follow_relation_path
from kgrag.graph.algorithms.results import Paths
from kgrag.graph.kg import INVERSE_SUFFIX, KnowledgeGraph, unique_ints
from kgrag.graph.verbalize import humanize
from kgrag.linking.names import STOPWORDS, NameIndex
from kgrag.linking.normalize import normalize
from kgrag.models.embeddings import Embedder, dot_scores
from kgrag.retrieval.paths import subset
from kgrag.retrieval.triples import kg_vectors

# Separators between hops: arrows of any style, commas, semicolons, bars, "then".
_SPLIT = re.compile(r"\s*(?:<?-+>|→|⟶|=>|<-+|,|;|\|| then )\s*")
# Inverse markers a model may write around a relation name.
_INVERSE = re.compile(
    r"^(?:~|\^|!|inverse\s+(?:of\s+)?|reverse\s+(?:of\s+)?)|(?:_inv|_inverse|_reverse|_rev)$|"
    r"\s*\((?:inv|inverse|reverse|reversed|backwards?)\)$",
    re.I,
)
MAX_HOPS = 4
FUZZY_CUTOFF = 88.0


@dataclass
class Hop:
    """One resolved hop: a base relation and whether the text asked to walk it backwards."""

    relation: int
    inverse: bool = False


@dataclass
class FollowedPath:
    """What following one written path gave: the orientation that worked, entities reached, concrete paths."""

    text: str
    hops: list[Hop]
    directed: list[int] = field(default_factory=list)
    reached: np.ndarray = field(default_factory=lambda: np.empty(0, np.int32))
    paths: Paths = field(default_factory=Paths.empty)
    variant: str = "none"  # as_written | reversed | flipped | reversed_flipped | bridged | soft | none

    def as_json(self, kg: KnowledgeGraph) -> dict:
        return {
            "text": self.text,
            "relations": [kg.relation_name(r) for r in self.directed],
            "variant": self.variant,
            "reached": len(self.reached),
            "paths": len(self.paths),
        }


class RelationResolver:
    """Relation names as an LLM writes them → base relation ids (cached per KG: ``RelationResolver.of(kg)``)."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        self.by_key: dict[str, int] = {}
        self.by_last: dict[str, list[int]] = {}
        for rid, name in enumerate(kg.relations):
            self.by_key.setdefault(normalize(name), rid)
            last = normalize(re.split(r"[./]", name)[-1])
            self.by_last.setdefault(last, []).append(rid)
        self.keys = list(self.by_key)

    @classmethod
    def of(cls, kg: KnowledgeGraph) -> RelationResolver:
        return kg.resources.get("relation_resolver", lambda: cls(kg))

    def resolve(self, text: str) -> Hop | None:
        """One relation mention → :class:`Hop`, or ``None`` when it names no relation of the KG."""
        name = text.strip().strip("`'\"*").strip()
        inverse = bool(_INVERSE.search(name))
        name = _INVERSE.sub("", name).strip().strip("`'\"[]:()*").strip()
        if not name:
            return None
        if name in self.kg.relations:
            return Hop(self.kg.relations.index(name), inverse)
        if name.endswith(INVERSE_SUFFIX) and name[: -len(INVERSE_SUFFIX)] in self.kg.relations:
            return Hop(self.kg.relations.index(name[: -len(INVERSE_SUFFIX)]), True)
        key = normalize(name)
        if not key:
            return None
        if key in self.by_key:
            return Hop(self.by_key[key], inverse)
        last = self.by_last.get(key) or self.by_last.get(normalize(re.split(r"[./]", name)[-1]))
        if last and len(last) == 1:
            return Hop(last[0], inverse)
        from rapidfuzz import fuzz, process

        pool = [normalize(self.kg.relations[i]) for i in last] if last else self.keys
        found = process.extractOne(key, pool, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
        if found is None:
            return None
        return Hop(self.by_key[found[0]], inverse)

    def parse(self, text: str) -> list[Hop]:
        """A written path → its hops (parts that are not relations, e.g. entity names, are dropped)."""
        hops = [h for h in (self.resolve(p) for p in split_path(text)) if h is not None]
        return hops[:MAX_HOPS]


def split_path(text: str) -> list[str]:
    """The hop texts of a written path, in walking order (``a <- b`` is read from ``b``)."""
    parts = [p.strip() for p in _SPLIT.split(text.strip()) if p and p.strip()]
    if re.search(r"<-", text) and not re.search(r"->", text):  # written from the answer end
        parts = parts[::-1]
    return parts


def orientations(hops: Sequence[Hop]) -> Iterator[tuple[str, list[int], list[bool]]]:
    """Directed orientations of ``hops`` in the order to try them.

    As written; the hops in reverse order (small models list a chain's relations backwards); then every
    other direction assignment of each order, fewer flipped hops first.  Yields ``(variant, base relation
    ids, inverse flags)``.
    """
    base = [h.relation for h in hops]
    written = [h.inverse for h in hops]
    flips = sorted(itertools.product([False, True], repeat=len(hops)), key=sum)[1:]
    yield "as_written", base, written
    if len(hops) > 1:
        yield "reversed", base[::-1], written[::-1]
    for flip in flips:
        yield "flipped", base, [w ^ f for w, f in zip(written, flip)]
    if len(hops) > 1:
        for flip in flips:
            yield "reversed_flipped", base[::-1], [w ^ f for w, f in zip(written[::-1], flip)]


def follow_written_path(
    kg: KnowledgeGraph,
    sources: Sequence[int] | np.ndarray,
    text: str,
    *,
    max_paths: int = 200,
    try_orientations: bool = True,
) -> FollowedPath:
    """Follow one LLM-written relation path from ``sources``; the first orientation that reaches anything wins."""
    return _follow(kg, sources, text, RelationResolver.of(kg).parse(text), max_paths, try_orientations)


def _follow(
    kg: KnowledgeGraph,
    sources: Sequence[int] | np.ndarray,
    text: str,
    hops: list[Hop],
    max_paths: int,
    retry: bool,
    bridge: Callable[[], Collection[int]] | None = None,
) -> FollowedPath:
    result = FollowedPath(text=text, hops=hops)
    if not hops or not len(sources):
        return result
    for variant, directed in _directed_orientations(kg, hops, retry):
        found = follow_relation_path(kg, sources, directed, max_paths=max_paths)
        if len(found.reached):
            result.directed, result.reached, result.paths, result.variant = (
                directed,
                found.reached,
                found.paths,
                variant,
            )
            return result
    if bridge is not None and 1 < len(hops) < MAX_HOPS and all(h.relation in bridge() for h in hops):
        _bridge(kg, sources, hops, max_paths, retry, result)
    return result


def _bridge(
    kg: KnowledgeGraph,
    sources: np.ndarray | Sequence[int],
    hops: list[Hop],
    max_paths: int,
    retry: bool,
    out: FollowedPath,
) -> None:
    """Retry a path that reached nothing with one return hop inserted (``r1 -> r1_inv -> r2``); only paths
    that do not come back to an entity they passed are kept.  Fills ``out`` from the first that reaches."""
    seen: set[tuple[int, ...]] = set()
    for _, directed in _directed_orientations(kg, hops, retry):
        for i in range(1, len(directed)):
            back = reversed_relation(directed[i - 1], kg.num_relations)
            bridged = [*directed[:i], back, *directed[i:]]
            if tuple(bridged) in seen:
                continue
            seen.add(tuple(bridged))
            found = follow_relation_path(kg, sources, bridged, max_paths=2 * max_paths)
            paths = _without_revisits(found.paths)
            if len(paths):
                kept = subset(paths, np.arange(min(len(paths), max_paths)))
                kept.truncated = paths.truncated or len(paths) > max_paths
                out.directed, out.paths, out.variant = bridged, kept, "bridged"
                out.reached = unique_ints(kept.endpoints().astype(np.int64)).astype(np.int32)
                return


def _directed_orientations(kg: KnowledgeGraph, hops: Sequence[Hop], retry: bool) -> Iterator[tuple[str, list[int]]]:
    """:func:`orientations` as distinct directed relation ids (``r + num_relations`` walks ``r`` backwards);
    only the path as written when ``retry`` is off."""
    n_rel = kg.num_relations
    seen: set[tuple[int, ...]] = set()
    for variant, base, inverse in orientations(hops):
        directed = [r + n_rel if inv else r for r, inv in zip(base, inverse)]
        if tuple(directed) not in seen:
            seen.add(tuple(directed))
            yield variant, directed
        if not retry:
            return


def _without_revisits(paths: Paths) -> Paths:
    """The paths that pass no entity twice (a return hop must land on another entity)."""
    if not len(paths):
        return paths
    ordered = np.sort(paths.nodes, axis=1)
    simple = ~((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)).any(axis=1)
    return subset(paths, simple)


def relations_named(
    kg: KnowledgeGraph,
    question: str,
    embedder: Embedder,
    *,
    exclude: Sequence[str] = (),
    min_similarity: float = 0.6,
    stem: int = 4,
) -> set[int]:
    """Base relations the question names, entity names in ``exclude`` set aside: a content word shares its
    first ``stem`` letters with a word of the relation's name ("directors" → ``directed_by``, "writers" →
    ``written_by``), or a content word or pair of them embeds within ``min_similarity`` of the name ("wrote"
    → ``written_by``).  Embeddings alone are too loose here: "directors" is as close to "starred actors" as
    to "directed by" for MiniLM."""
    text = question.lower()
    for name in exclude:
        text = text.replace(name.lower(), " ")
    words = [w for w in re.findall(r"[^\W\d_]+", text) if w not in STOPWORDS]
    if not words or not kg.num_relations:
        return set()
    stems = {w[:stem] for w in words if len(w) >= stem}
    relation_words = kg.resources.get(
        "relation_words", lambda: [re.findall(r"[^\W\d_]+", humanize(n).lower()) for n in kg.relations]
    )
    specific = kg.resources.get(("relation_specific_words",), lambda: specific_words(relation_words))
    named = set()
    for rid, rel_words in enumerate(relation_words):
        if any(len(w) >= stem and w[:stem] in stems for w in rel_words if w in specific):
            named.add(rid)
    grams = list(dict.fromkeys(words + [f"{a} {b}" for a, b in itertools.pairwise(words)]))
    sims = embedder.encode(grams) @ kg_vectors(kg, embedder).relations().T  # (grams, relations)
    named.update(int(r) for r in np.flatnonzero(sims.max(axis=0) >= min_similarity))
    return named


def specific_words(relation_words: Sequence[Sequence[str]], share: float = 0.05) -> frozenset[str]:
    """Words of relation names that single out a few relations: in at most ``share`` of them (at least one).

    A question word that shares a stem with a schema-wide word names no relation: on Freebase ids "people"
    (``people.person.*``) or "location" start a hundred relation names, and matching them made "what do
    Jamaican people speak" name 50–120 of 800 relations. Stop-words never count.
    """
    counts: dict[str, int] = {}
    for words in relation_words:
        for w in set(words):
            counts[w] = counts.get(w, 0) + 1
    limit = max(1, int(share * len(relation_words)))
    return frozenset(w for w, c in counts.items() if c <= limit and w not in STOPWORDS)


def relation_parts(kg: KnowledgeGraph, text: str) -> list[str]:
    """The hop texts of a written path that are not entity names (at most :data:`MAX_HOPS`)."""
    names = NameIndex.of(kg)
    return [p for p in split_path(text) if not names.exact(p, 1)][:MAX_HOPS]


def soft_follow(
    kg: KnowledgeGraph,
    sources: Sequence[int] | np.ndarray,
    text: str,
    *,
    embedder: Embedder,
    min_similarity: float = 0.6,
    max_paths: int = 200,
) -> FollowedPath:
    """Follow a path whose relation names the KG does not have (``location.location.birthplace``).

    Hop by hop, among the relations present at the current entities (either direction), take the one whose
    name embeds closest to the written hop, if at least ``min_similarity``; stop at the first hop without
    one.  Parts naming an entity (not a relation) are skipped.
    """
    result = FollowedPath(text=text, hops=[])
    frontier = unique_ints(np.asarray(sources, dtype=np.int64))
    parts = relation_parts(kg, text)
    if not parts or not len(frontier):
        return result
    vectors = kg_vectors(kg, embedder).relations()
    queries = embedder.encode([humanize(_INVERSE.sub("", p)) for p in parts])
    directed: list[int] = []
    for q in queries:
        _, _, _, rels = incident_edges(kg, frontier, "both")
        present = unique_ints(rels.astype(np.int64))  # directed ids; forwards (smaller ids) win ties
        if not len(present):
            break
        sims = dot_scores(vectors[present % kg.num_relations], q)
        best = int(np.argmax(sims))
        if sims[best] < min_similarity:
            break
        directed.append(int(present[best]))
        frontier = follow_relation_path(kg, frontier, [directed[-1]], max_paths=1).reached.astype(np.int64)
    if directed:
        found = follow_relation_path(kg, sources, directed, max_paths=max_paths)
        result.hops = [Hop(r % kg.num_relations, r >= kg.num_relations) for r in directed]
        result.directed, result.reached, result.paths, result.variant = directed, found.reached, found.paths, "soft"
    return result


def follow_written_paths(
    kg: KnowledgeGraph,
    sources: Sequence[int] | np.ndarray,
    texts: Sequence[str],
    *,
    max_paths: int = 200,
    try_orientations: bool = True,
    embedder: Embedder | None = None,
    min_similarity: float = 0.6,
    bridge: Callable[[], Collection[int]] | None = None,
) -> list[FollowedPath]:
    """:func:`follow_written_path` for each distinct written path (same resolved hops are followed once);
    with an ``embedder``, a path that reaches nothing and names a relation the KG does not have is retried
    with :func:`soft_follow`.  A path of known relations that reaches nothing is wrong as written: followed
    softly it stopped after its first hop (``written_by -> starred_actors`` gave the film's writer for "who
    acted in Kafka", and the answer call took him).  When all its relations are in what ``bridge`` returns
    (base ids, e.g. :func:`relations_named`; called once, and only when some path needs it) it is retried with
    a return hop inserted (module docstring)."""
    out: list[FollowedPath] = []
    done: set[tuple[tuple[int, bool], ...]] = set()
    bridge = functools.cache(bridge) if bridge is not None else None
    for text in texts:
        hops = RelationResolver.of(kg).parse(text)
        key = tuple((h.relation, h.inverse) for h in hops)
        if hops and key in done:
            out.append(FollowedPath(text=text, hops=hops))
            continue
        done.add(key)
        found = _follow(kg, sources, text, hops, max_paths, try_orientations, bridge)
        if not len(found.reached) and embedder is not None and len(hops) < len(relation_parts(kg, text)):
            soft = soft_follow(kg, sources, text, embedder=embedder, min_similarity=min_similarity, max_paths=max_paths)
            found = soft if len(soft.reached) else found
        out.append(found)
    return out


__all__ = [
    "FollowedPath",
    "Hop",
    "RelationResolver",
    "follow_written_path",
    "follow_written_paths",
    "orientations",
    "relation_parts",
    "relations_named",
    "soft_follow",
    "split_path",
]
