"""The names a query writer reads and writes for a KG's relations: Freebase-style ids shortened.

A namespaced relation id is mostly namespace: ``education.educational_institution.students_graduates`` is 9
tokens of the default model (``students_graduates``: 3), written three times on its line of the query writer's
list (the name, and the example fact read both ways), for ten to twenty relations a question. Its last segments,
as few as keep it apart from every other relation of the KG (``students_graduates``; ``film.genre`` where
``music.artist.genre`` also exists), say the same to the model in a third of the tokens. The aliases are
computed once over the whole KG, so a relation has one name in every prompt, example and grammar, and the
validator reads an alias back to the KG's id (:class:`~kgrag.methods.ultrag.dsl.validator.RelationResolver`):
queries, traces and evidence keep the KG's own names. A KG whose relations have no dots (MetaQA's
``directed_by``, a user's CSV) keeps them as they are, and so does every KG where an alias and an inverse could
be read as each other.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.verbalize import short_relation_names
from kgrag.methods.ultrag.dsl.nodes import INVERSE_SUFFIX


def relation_aliases(kg: KnowledgeGraph) -> list[str]:
    """Per relation id, the shortest unambiguous name a query may use for it (computed once per KG)."""
    return kg.resources.get("dsl_relation_aliases", lambda: _aliases(list(kg.relations)))


def _aliases(names: list[str]) -> list[str]:
    short = short_relation_names(names, readable=False)
    aliases = [short[name] for name in names]
    written = [*aliases, *(a + INVERSE_SUFFIX for a in aliases)]
    if len(set(written)) < len(written) or set(aliases) & (set(names) - set(aliases)):
        return names  # an alias that reads as another relation (or its inverse): keep the KG's names
    return aliases


def query_names(kg: KnowledgeGraph, short: bool) -> Sequence[str]:
    """Per relation id, the name the query writer is shown: its alias (``short``) or the KG's id (the KG's own
    list, not a copy: every relation line of every question reads it)."""
    return relation_aliases(kg) if short else kg.relations
