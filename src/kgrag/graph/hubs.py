"""Hubs: entities with so many edges that walking through them reaches most of the KG.

Past a country with a thousand edges, or a genre every drama has, the next hop is everything; a walk that
goes on from there drowns what the question needs (WebQSP, "who was Richard Nixon married to": 76 of the 84
relations within two hops are reached through "United States of America"; MetaQA, "what does Christian
Serratos act in": the facts one step past her film's genre are 30 other dramas). A hub is reached, not walked
through.
"""

from __future__ import annotations

import numpy as np

from kgrag.graph.kg import KnowledgeGraph

HUB_FACTOR = 10
"""Entities with more than this many times the KG's median degree are hubs (WebQSP proxy: more than 20 edges;
MetaQA: 40). A percentile would call the unnamed nodes of a KG whose entities mostly have one edge hubs."""


def hub_degree(kg: KnowledgeGraph, factor: float = HUB_FACTOR) -> float:
    """The degree above which an entity counts as a hub: ``factor`` times the median (computed once per KG)."""
    return kg.resources.get(
        ("hub_degree", factor),
        lambda: factor * max(1.0, float(np.median(kg.degree("both")))) if kg.num_entities else 0.0,
    )


def walkable(kg: KnowledgeGraph, factor: float = HUB_FACTOR) -> np.ndarray:
    """Per entity, whether a walk may go on through it (not a hub; computed once per KG)."""
    return kg.resources.get(("walkable", factor), lambda: kg.degree("both") <= hub_degree(kg, factor))
