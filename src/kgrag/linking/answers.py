"""Answers as the KG names them: undo the small model's habit of listing several answers on one line.

The answer prompts ask for one answer per line, but small local models often write ``"Greek, English and
French"``. The KG decides how to read such a line, so that titles with commas or "and" stay whole.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from kgrag.graph.identifiers import looks_like_identifier
from kgrag.linking.names import NameIndex
from kgrag.linking.normalize import normalize, tokens


def split_listed_names(answers: Sequence[str], names: NameIndex) -> list[str]:
    """Split answer lines like ``"Greek, English and French"`` (a list on one line, against the prompt).

    A line is split on semicolons or bars, else on commas, only when it is not itself an entity name and at
    least half of its parts are, so a title such as "Paris, Texas" stays whole; in a line split on semicolons
    a part that is an entity name keeps its commas ("Joy; He's a Bully, Charlie Brown; Fear": the model listed
    three titles, one with a comma of its own), another part is split on commas by the same rule. Neighbours
    in a list by commas that together make an entity's name are read as that name ("Heat, Good Morning, Miss
    Dove" is two films). A line with a comma is a name only where the KG's name has the comma ("Crime, Drama" is
    two genres even in a KG with the tag "crime drama"). A part is split on "and"/"&" only when every piece is an
    entity name ("Romeo and Juliet" stays whole).
    """

    def known(text: str) -> bool:
        """An entity's name; with a comma only if the entity's name has one too ("Crime, Drama" is a list of two
        genres, not the tag "crime drama" that the same words normalise to)."""
        ids = names.by_key.get(normalize(text), [])
        if "," not in text:
            return bool(ids)
        return any("," in name for e in ids for name in (names.kg.entities[e], *names.kg.aliases.get(e, ())))

    def pieces(part: str) -> list[str]:
        part = re.sub(r"^(?:and|&)\s+", "", part.strip(), flags=re.I)
        split = [x.strip() for x in re.split(r"\s+(?:and|&)\s+", part, flags=re.I)]
        return split if len(split) > 1 and not known(part) and all(map(known, split)) else [part] if part else []

    def rejoined(text: str) -> list[str]:
        """``text``'s comma-separated parts, neighbours that together make an entity's name joined again."""
        raw, out, i = [p.strip() for p in text.split(",")], [], 0
        while i < len(raw):
            j = next((j for j in range(min(len(raw), i + 4), i + 1, -1) if known(", ".join(raw[i:j]))), i + 1)
            out.append(", ".join(raw[i:j]))
            i = j
        return out

    def listed(text: str, parts: list[str], inner: Callable[[str], list[str]]) -> list[str]:
        parts = [q for p in parts for q in inner(p)]
        return parts if len(parts) > 1 and 2 * sum(map(known, parts)) >= len(parts) else [text]

    def by_commas(text: str) -> list[str]:
        text = text.strip()
        return [text] if known(text) else listed(text, rejoined(text), pieces)

    out: list[str] = []
    for line in answers:
        if known(line):
            out.append(line)
        elif re.search(r"[;|]", line):
            out.extend(listed(line, re.split(r"[;|]", line), by_commas))
        else:
            out.extend(by_commas(line))
    return list(dict.fromkeys(out))


def entity_names_first(answers: Sequence[str], names: NameIndex) -> list[str]:
    """Answers that are KG entity names before the rest (a sentence the model wrote instead), order kept."""
    known = [a for a in answers if names.by_key.get(normalize(a))]
    return known + [a for a in answers if not names.by_key.get(normalize(a))]


ARTICLES = frozenset({"the", "a", "an"})


def _key(tokens: Sequence[str]) -> tuple[str, ...]:
    """Token key of a name, leading article dropped ("Appeared" meets "The Appeared")."""
    return tuple(tokens[1:]) if len(tokens) > 1 and tokens[0] in ARTICLES else tuple(tokens)


def recover_names(item: str, candidates: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """The ``candidates`` an answer line that is not a KG name stands for, or ``[]``.

    Small models answer "7 Days in Havana Divine Intervention" (two titles, no separator), "Eduardo Mignogna
    wrote Cleopatra" (a sentence) or "Appeared" for "The Appeared". Read against the candidate names the
    evidence offers, in this order: the whole line is one candidate up to a leading article; the line is a
    sequence of candidates (fewest pieces); the line mentions candidates — those not in ``exclude`` (the
    question's own entities), in the order written.
    """
    words = tokens(item)
    if not words or not candidates:
        return []
    by_key: dict[tuple[str, ...], str] = {}
    for name in candidates:
        by_key.setdefault(_key(tokens(name)), name)
    by_key.pop((), None)
    banned = {_key(tokens(e)) for e in exclude}
    if _key(words) in by_key:
        return [by_key[_key(words)]]
    longest = max(len(k) for k in by_key) + 1  # +1: a name keyed without its article

    def at(i: int, j: int) -> str | None:
        piece = tuple(words[i:j])
        return by_key.get(piece) or by_key.get(_key(piece))

    # fewest-pieces segmentation of the whole line into candidate names (dynamic programming over tokens)
    best: list[list[str] | None] = [[]] + [None] * len(words)
    for j in range(1, len(words) + 1):
        for i in range(max(0, j - longest), j):
            name = at(i, j)
            if name is not None and best[i] is not None and (best[j] is None or len(best[i]) + 1 < len(best[j])):
                best[j] = [*best[i], name]
    if best[-1] is not None and len(best[-1]) > 1:
        return list(dict.fromkeys(best[-1]))
    # candidates mentioned in the line, longest first, not overlapping
    found: list[tuple[int, str]] = []
    used = [False] * len(words)
    for size in range(min(longest, len(words)), 0, -1):
        for i in range(len(words) - size + 1):
            name = at(i, i + size)
            if name is None or any(used[i : i + size]):
                continue
            used[i : i + size] = [True] * size
            if _key(tokens(name)) not in banned:
                found.append((i, name))
    return list(dict.fromkeys(name for _, name in sorted(found)))


def excluded_entities(answers: Sequence[str], exclude: Sequence[str]) -> Sequence[str]:
    """The question's own entities to keep out of the answers: none when the model chose only among them.

    A question's own entity is rarely its answer ("films with the same actor as Heat" → not Heat), so they
    are dropped, except when the question names several entities and the model answers with some of them
    and nothing else: "which of A and B was released first" asks for a choice among its own entities.
    """
    banned = {normalize(e) for e in exclude}
    said = [normalize(a) for a in answers if normalize(a)]
    if len(banned) >= 2 and said and all(a in banned for a in said):
        return ()
    return exclude


def as_kg_answers(
    answers: Sequence[str], names: NameIndex, candidates: Sequence[str] = (), exclude: Sequence[str] = ()
) -> list[str]:
    """One KG name per item where the KG allows it, KG names first.

    With ``candidates`` (the entities of the evidence shown to the model, best first) a line that is not a KG
    name is read as the candidates it stands for (:func:`recover_names`), and the answers are reordered by
    :func:`prefer_candidates`.
    """
    out = split_listed_names(answers, names)
    exclude = excluded_entities(out, exclude)
    if candidates:
        out = [
            name
            for line in out
            for name in ([line] if names.by_key.get(normalize(line)) else recover_names(line, candidates, exclude))
            or [line]
        ]
        out = list(dict.fromkeys(out))
    out = entity_names_first(out, names)
    return prefer_candidates(out, candidates, exclude) if candidates else out


def prefer_candidates(answers: Sequence[str], candidates: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """Answers that are ``candidates`` (e.g. the ends of the evidence paths) first, ``exclude`` dropped.

    A small model reading "Heat -[starred]-> Al Pacino <-[starred]- The Insider" for "films with the same actor
    as Heat" often answers with the question's own entity or a node in the middle of the path; the paths' ends
    are the candidates the retrieval meant. ``exclude`` (the topic entities) is dropped; when nothing else is
    left the best candidate that is not excluded stands in (a question's own entity is not its answer).
    Order is otherwise kept.
    """
    ends = {normalize(c) for c in candidates}
    banned = {normalize(e) for e in exclude}
    kept = [a for a in answers if normalize(a) not in banned]
    if not kept and answers:
        kept = [c for c in candidates if normalize(c) not in banned][:1] or list(answers)
    return sorted(kept, key=lambda a: normalize(a) not in ends)


def _mentions(answer: tuple[str, ...], name: tuple[str, ...]) -> bool:
    """Whether an answer names an entity loosely: same tokens (article aside), or one holds the other as a run
    of at least two tokens ("Sylvan Simon" for "S. Sylvan Simon")."""
    if _key(answer) == _key(name):
        return True
    short, long = sorted((answer, name), key=len)
    if len(short) < 2:
        return False
    return any(long[i : i + len(short)] == short for i in range(len(long) - len(short) + 1))


def _named_by(answers: Sequence[str]) -> Callable[[str], bool]:
    """A test: does any of ``answers`` name this entity (loosely, see :func:`_mentions`)?"""
    said = [key for key in (tuple(tokens(a)) for a in answers) if key]
    return lambda name: any(_mentions(a, tuple(tokens(name))) for a in said)


def keep_to_best_pattern(
    answers: Sequence[str],
    paths: Sequence[tuple[Sequence[str], Sequence[str]]],
    exclude: Sequence[str] = (),
    every_end: bool = False,
) -> list[str]:
    """Answers among the ends of the paths that share the best path's relation pattern; if none are, those ends.

    ``paths`` are (entity names, relation names) in rank order. The best pattern is the retrieval's reading of
    the question (on MetaQA 3-hop dev its first path ends at a gold answer for 97 of 100 questions, where the
    1.5B model's own first answer was right for 78): the model chooses among that pattern's ends — named exactly or
    loosely, or through a middle node of such a path — and when it names none of them, they are the answers,
    in rank order. ``exclude`` (the question's own entities) is never an answer. With ``every_end`` the other
    ends of that pattern follow the chosen ones: the pattern is the reading of the question, so all it reaches
    is what the question asks for, and a model choosing under a grammar stops after a few names.
    """
    if not paths:
        return list(answers)
    banned = {normalize(e) for e in excluded_entities(answers, exclude)}
    if banned != {normalize(e) for e in exclude}:  # a choice among the question's own entities
        return list(answers)
    best = tuple(paths[0][1])
    top = [(list(nodes), nodes[-1]) for nodes, rels in paths if tuple(rels) == best and nodes]
    ends = list(dict.fromkeys(end for _, end in top if normalize(end) not in banned))
    if not ends:
        return list(answers)
    named = _named_by(answers)
    chosen = [end for end in ends if named(end)]
    if not chosen:  # named through a middle node of a best-pattern path
        chosen = list(dict.fromkeys(end for nodes, end in top if end in ends and any(map(named, nodes[1:-1]))))
    if every_end and chosen:
        return chosen + [end for end in ends if end not in chosen]
    return chosen or ends


def by_path_score(answers: Sequence[str], paths: Sequence[tuple[Sequence[str], float]]) -> list[str]:
    """Answers ordered by the score of the best evidence path that ends at them; the model's order among equals.

    ``paths`` are (entity names, score). A small model asked "the director of X also directed which films",
    shown X -director-> D -director (reverse)-> films, often names D first and the films after it: it chose
    well but ordered badly. The retrieval scored the pattern ending at the films above the one ending at D, so
    they come first. An answer that ends no path (a middle node only) comes last.
    """
    best: dict[str, float] = {}
    for nodes, score in paths:
        if nodes:
            key = normalize(nodes[-1])
            best[key] = max(best.get(key, -math.inf), score)
    return sorted(answers, key=lambda a: -best.get(normalize(a), -math.inf))


def name_unnamed_answers(
    answers: Sequence[str], paths: Sequence[Sequence[str]], exclude: Sequence[str] = ()
) -> list[str]:
    """Answers that are unnamed nodes (``m.0ydn3r2``: a Freebase CVT) replaced by the named entities the evidence
    joins them to, never the question's own; an unnamed answer the evidence does not explain is dropped.

    A CVT stands for a fact ("Christian Grey <-character- m.0ydn3r2 -actor-> Jamie Dornan"); a small model that
    answers with its identifier means the fact's other participants. ``paths`` are the entity names of the
    evidence items (a path, or a triple's two ends), best first; the names after the unnamed node on a path come
    first, then those before it.
    """
    if not any(looks_like_identifier(a) for a in answers):
        return list(answers)
    banned = {normalize(e) for e in exclude}
    out: list[str] = []
    for answer in answers:
        if not looks_like_identifier(answer):
            out.append(answer)
            continue
        for nodes in paths:
            if answer in nodes:
                i = list(nodes).index(answer)
                near = [*nodes[i + 1 :], *reversed(nodes[:i])]
                out += [n for n in near if not looks_like_identifier(n) and normalize(n) not in banned][:1]
    return list(dict.fromkeys(out))


def follow_to_path_ends(
    answers: Sequence[str], paths: Sequence[tuple[Sequence[str], Sequence[str]]], exclude: Sequence[str] = ()
) -> list[str]:
    """Answers that stop mid-path moved to where the paths they sit on end.

    ``paths`` are (entity names, relation names) in rank order, all of the length the question asks for. For
    "the director of Angela also directed which films" with paths "Angela -> Rebecca Miller <- X", a small
    model often answers "Rebecca Miller", the node in the middle. When no answer ends a path but some name a
    node inside one (loosely: "Sylvan Simon" names "S. Sylvan Simon"), the answers become the ends of the paths
    through those nodes that follow the same relations as the best-ranked such path (``exclude`` dropped);
    otherwise they stay as they are.
    """
    named = _named_by(answers)
    if not any(tokens(a) for a in answers):
        return list(answers)
    if any(named(nodes[-1]) for nodes, _ in paths if nodes) or not excluded_entities(answers, exclude):
        return list(answers)
    banned = {normalize(e) for e in exclude}
    through = [(nodes, tuple(rels)) for nodes, rels in paths if len(nodes) > 2 and any(map(named, nodes[1:-1]))]
    if not through:
        return list(answers)
    pattern = through[0][1]
    moved = [nodes[-1] for nodes, rels in through if rels == pattern and normalize(nodes[-1]) not in banned]
    return list(dict.fromkeys(moved)) or list(answers)
