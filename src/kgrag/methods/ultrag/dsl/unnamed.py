"""Stepping past unnamed intermediate nodes to the named entities they link, for the arbitrator.

KGs exported from Freebase (and RDF graphs with blank nodes) join n-ary facts through nodes that have no
name of their own (a CVT such as ``m.0cr320w``: "Anna Bligh held the office X for district Y"; which names
are identifiers is :mod:`kgrag.graph.identifiers`' call). A query that stops on one
(``"Samsung Group" -> organization.organization.headquarters``) scores the identifier, and an arbitrator
shown ``m.03l9ynf (1.00)`` can neither read it nor give it as an answer: the named entities one step beyond
it (``Suwon``, through ``location.mailing_address.citytown``) are what the question asks for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kgrag.graph.algorithms import incident_edges
from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph


@dataclass(frozen=True)
class Candidate:
    """An entity offered to the arbitrator; ``via`` is the triple that reached it from an unnamed node the
    query ended on (``None`` when the query itself scored it)."""

    entity: int
    score: float
    via: int | None = None

    def label(self, kg: KnowledgeGraph) -> str:
        """``Suwon (1.00)``, or with the relation taken from the unnamed node: ``Suwon (1.00, by citytown)``."""
        name = kg.entities[self.entity]
        if self.via is None:
            return f"{name} ({self.score:.2f})"
        return f"{name} ({self.score:.2f}, by {kg.relations[int(kg.rels[self.via])]})"


def named_candidates(
    kg: KnowledgeGraph,
    ids: np.ndarray,
    scores: np.ndarray,
    *,
    exclude: np.ndarray | None = None,
    limit: int = 50,
    per_node: int = 20,
) -> list[Candidate]:
    """The executor's best entities with each unnamed one replaced by the named entities next to it.

    ``ids``/``scores`` are the executor's ranking (best first). A named neighbour of an unnamed node takes
    that node's score and is listed after the entities scored before it; ``exclude`` (a boolean mask) holds
    the entities the query passed through, so the node's link back to where the query came from ("Anna
    Bligh" for her office) is not offered. Unnamed nodes are kept only when no named entity is left to
    offer. At most ``per_node`` neighbours per node and ``limit`` candidates in all, each entity once.
    """
    unnamed = unnamed_entities(kg)
    out: list[Candidate] = []
    seen: set[int] = set()
    leftover: list[Candidate] = []
    for eid, score in zip(ids.tolist(), scores.tolist()):
        if len(out) >= limit:
            break
        if not unnamed[eid]:
            if eid not in seen:
                seen.add(eid)
                out.append(Candidate(eid, float(score)))
            continue
        leftover.append(Candidate(eid, float(score)))
        _, tids, other, _ = incident_edges(kg, np.array([eid], dtype=np.int64))
        keep = ~unnamed[other]
        if exclude is not None:
            keep &= ~exclude[other]
        added = 0
        for tid, nid in zip(tids[keep].tolist(), other[keep].tolist()):
            if added >= per_node or len(out) >= limit:
                break
            if nid not in seen:
                seen.add(nid)
                out.append(Candidate(int(nid), float(score), via=int(tid)))
                added += 1
    return out if out else leftover[:limit]


__all__ = ["Candidate", "named_candidates"]
