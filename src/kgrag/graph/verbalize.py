"""Turning triples and paths into text for prompts, rerankers and people.

Names keep their case; underscores become spaces (``directed_by`` → ``directed by``).  A path is written
with arrows that show the direction each edge was walked, so an LLM can tell ``A -[directed by]-> B``
(A was directed by B) from ``A <-[directed by]- B`` (B was directed by A).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from kgrag.graph.kg import INVERSE_SUFFIX, KnowledgeGraph


def humanize(name: str) -> str:
    """``"directed_by"`` → ``"directed by"``."""
    return name.replace("_", " ")


def short_relation_names(names: Iterable[str], *, readable: bool = True) -> dict[str, str]:
    """Each dotted relation id shortened to its last segments, as few as keep the given names apart; with
    ``readable``, underscores as spaces (for reading), else as written (for a name a model writes back).

    >>> short_relation_names(["film.film.genre", "music.artist.genre", "people.person.spouse_s"])
    {'film.film.genre': 'film.genre', 'music.artist.genre': 'artist.genre', 'people.person.spouse_s': 'spouse s'}
    """
    names = list(dict.fromkeys(names))
    keep = {name: 1 for name in names}
    while True:
        shown: dict[str, list[str]] = {}
        for name in names:
            shown.setdefault(".".join(name.split(".")[-keep[name] :]), []).append(name)
        clashes = [group for group in shown.values() if len(group) > 1]
        grown = False
        for group in clashes:
            for name in group:
                if keep[name] < name.count(".") + 1:
                    keep[name] += 1
                    grown = True
        if not grown:
            shorter = {name: ".".join(name.split(".")[-keep[name] :]) for name in names}
            return {name: humanize(short) if readable else short for name, short in shorter.items()}


def relation_text(kg: KnowledgeGraph, rid: int) -> str:
    """Readable relation name; a virtual inverse reads ``"<rel> (inverse)"``."""
    name = kg.relation_name(rid)
    if rid >= kg.num_relations:
        return humanize(name[: -len(INVERSE_SUFFIX)]) + " (inverse)"
    return humanize(name)


def verbalize_triple(kg: KnowledgeGraph, tid: int) -> str:
    """``"Heat directed by Michael Mann"``."""
    h, r, t = kg.triple(tid)
    return f"{humanize(h)} {humanize(r)} {humanize(t)}"


def verbalize_triples(kg: KnowledgeGraph, tids: Iterable[int] | np.ndarray) -> list[str]:
    ents, rels = kg.entities, kg.relations
    ids = np.asarray(list(tids) if not isinstance(tids, np.ndarray) else tids, dtype=np.int64)
    return [
        f"{humanize(ents[h])} {humanize(rels[r])} {humanize(ents[t])}"
        for h, r, t in zip(kg.heads[ids].tolist(), kg.rels[ids].tolist(), kg.tails[ids].tolist())
    ]


def verbalize_path(kg: KnowledgeGraph, nodes: list[int], edges: list[int]) -> str:
    """``"Heat -[directed by]-> Michael Mann <-[directed by]- Collateral"``."""
    parts = [humanize(kg.entities[nodes[0]])]
    for i, tid in enumerate(edges):
        rel = humanize(kg.relations[int(kg.rels[tid])])
        forward = int(kg.heads[tid]) == nodes[i]
        parts.append(f"-[{rel}]->" if forward else f"<-[{rel}]-")
        parts.append(humanize(kg.entities[nodes[i + 1]]))
    return " ".join(parts)
