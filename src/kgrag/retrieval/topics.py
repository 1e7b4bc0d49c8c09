"""From a question (and optional user-given topic names) to topic entity ids."""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.hybrid import HybridLinker


def resolve_topics(
    kg: KnowledgeGraph,
    question: str,
    topic_names: Sequence[str] = (),
    *,
    linker: HybridLinker | None = None,
    max_mentions: int = 2,
) -> list[int]:
    """Topic entity ids: the given names linked (exact first, then fuzzy), else the question's mentions.

    Without given names, the top candidate of the ``max_mentions`` most salient mentions is used.
    """
    ids: list[int] = []
    for name in topic_names:
        eid = kg.find_entity(name)
        if eid is None:
            linker = linker or HybridLinker(kg)
            cands = linker.link(name, 1)
            eid = cands[0].entity if cands else None
        if eid is not None and eid not in ids:
            ids.append(eid)
    if ids or topic_names:
        return ids
    linker = linker or HybridLinker(kg)
    for span in linker.find_mentions(question)[:max_mentions]:
        if span.candidates and span.candidates[0].entity not in ids:
            ids.append(span.candidates[0].entity)
    return ids
