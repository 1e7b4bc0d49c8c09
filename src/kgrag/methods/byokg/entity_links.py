"""KG-Linker's entity names turned into KG entities.

The LLM names the question's entities in its own words. A name the KG holds (after normalisation) links to that
entity; any other name is searched by spelling and meaning, and there a name that only repeats part of an entity
already linked ("Wynton" beside the topic "Wynton Marsalis") or hangs words on it ("Wynton Marsalis's place of
birth") finds entities that merely share the leftover words ("Downtown", "Place of birth"), whose neighbourhoods
then crowd the evidence. Such a name links only to entities whose names hold all of its words ("Wynton Marsalis"
again; "New Orleans Jazz & Heritage Festival" for "New Orleans Jazz Festival" beside New Orleans).
"""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.linking.base import Candidate
from kgrag.linking.hybrid import HybridLinker
from kgrag.linking.names import NORMALISED_NAME
from kgrag.linking.normalize import normalize, restated, tokens


def link_names(
    linker: HybridLinker, question: str, names: Sequence[str], known: Sequence[str], *, top_m: int, min_score: float
) -> dict[str, list[Candidate]]:
    """Candidates per name, best first; ``known`` are names of entities linked already (the given topics).

    A name the question does not say as an entity ("which team", :meth:`HybridLinker.not_mentions`) gets none; a
    name with no exact match that :func:`restated` an exactly linked or known name keeps only the candidates
    whose names hold all of its words.
    """
    absent = linker.not_mentions(question) if names else set()
    found: dict[str, list[Candidate]] = {}
    for name in names:  # "which team" or a name the KG lacks ("warp-drive-service"): no stand-in
        cands = [] if normalize(name) in absent else linker.link(name, top_m)
        found[name] = [c for c in cands if c.score >= min_score]
    exact = [*known, *(c.name for cands in found.values() for c in cands if c.score >= NORMALISED_NAME)]
    for name, cands in found.items():
        if cands and cands[0].score < NORMALISED_NAME and restated(name, exact):
            words = set(tokens(name))
            found[name] = [c for c in cands if words <= set(tokens(c.name))]
    return found
