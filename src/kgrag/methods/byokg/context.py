"""The evidence byokg gathers across rounds and strategies, and the lines of it a prompt shows.

Kept apart from the method because the order of the context is a decision with its own evidence: facts closer
to the question entities first, then the strategies' round-robin (DESIGN: byokg answer context).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.normalize import names_said, normalize
from kgrag.retrieval.evidence_tree import rooted_tree_text
from kgrag.types import Evidence, Step

# Order in which sources fill a prompt's context (round-robin between them, best first within each).
SOURCE_ORDER = ("cypher", "path", "agentic", "shortest_path", "reranker", "text")


def numbered(items: Sequence[Evidence]) -> str:
    """Evidence as the numbered lines a prompt shows."""
    lines = [ev.text for ev in items]
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1)) if lines else "(none yet)"


class Context:
    """The gathered evidence C, without repeats; renders the lines a prompt sees."""

    def __init__(self) -> None:
        self.items: list[Evidence] = []
        self.anchors: list[str] = []  # names of the question entities linked so far
        self.given: list[str] = []  # names of the topic entities the user gave
        self._keys: set[Any] = set()
        self._first: set[int] = set()  # ids of items shown before all others

    def add(self, evidence: Sequence[Evidence], *, first: bool = False) -> int:
        """Add what is new; ``first`` items lead every ordering — the rows of a query written and checked for
        the question (text2cypher's), which answer it as asked even when they name no question entity (an
        average, a count) and would otherwise come after every fact that does."""
        added = 0
        for ev in evidence:
            key = tuple(ev.triples) if ev.triples else ev.text
            if key not in self._keys:
                self._keys.add(key)
                self.items.append(ev)  # kept for the context's life, so its id names it
                if first:
                    self._first.add(id(ev))
                added += 1
        return added

    def ordered(self) -> list[Evidence]:
        """Items by their distance from the question entities, then round-robin over sources.

        Distance 1 is an item that names a question entity, 2 one that names an entity of a distance-1 item,
        and so on; items the question entities do not reach (whole-KG text scoring brings facts about other
        films) come last.  A small model reads the first lines that fit its relation: with round-robin
        alone, "Man of the Year starred actors Christopher Walken" preceded the question film's own cast."""
        return [ev for ev, _ in self._ranked()]

    def _ranked(self) -> list[tuple[Evidence, float]]:
        """(item, distance) in :meth:`ordered`'s order: the distances are computed once for ordering and
        filtering alike."""
        rr = self._round_robin()
        level = [0.0 if id(ev) in self._first else lv for ev, lv in zip(rr, self._levels(rr), strict=True)]
        return [(rr[i], level[i]) for i in sorted(range(len(rr)), key=lambda i: (level[i], i))]

    def _round_robin(self) -> list[Evidence]:
        """Round-robin over sources in :data:`SOURCE_ORDER`, each source's items in the order found."""
        by_source: dict[str, list[Evidence]] = {}
        for ev in self.items:
            by_source.setdefault(ev.source, []).append(ev)
        queues = [by_source.pop(s) for s in SOURCE_ORDER if s in by_source] + list(by_source.values())
        out: list[Evidence] = []
        depth = 0
        while len(out) < len(self.items):
            out.extend(q[depth] for q in queues if depth < len(q))
            depth += 1
        return out

    def _levels(self, items: Sequence[Evidence]) -> list[float]:
        """Breadth-first distance of each item from the anchors over shared entity names (inf: unreached)."""
        names = [{normalize(e) for e in ev.entities} for ev in items]
        level = [float("inf")] * len(items)
        frontier = {normalize(e) for e in self.anchors}
        seen = set(frontier)
        remaining = set(range(len(items)))
        depth = 1
        while frontier and remaining:
            reached = [i for i in sorted(remaining) if names[i] & frontier]
            for i in reached:
                level[i] = depth
            remaining.difference_update(reached)
            frontier = set().union(*(names[i] for i in reached)) - seen
            seen |= frontier
            depth += 1
        return level

    def shown(self, limit: int, *, reached_only: bool = False) -> list[Evidence]:
        """The first ``limit`` of :meth:`ordered`; with ``reached_only``, only items connected to the question
        entities (all items when none is).  A fact that shares no chain of entities with them cannot support
        an answer about them, yet the 1.5B model answered "what movies was Alvin Meyers the writer of" with
        the titles of whole-KG text-scoring facts listed after "Alvin Meyers <-[written by]- Tennessee
        Johnson".  Rows of the graph query are always kept: they answer the question as the model asked it,
        and an aggregate row touches no entity."""
        ranked = self._ranked()
        items = [ev for ev, _ in ranked]
        if reached_only:  # graph query rows stay: an aggregate ("count: 12") names no entity at all
            items = [ev for ev, level in ranked if level != float("inf") or ev.source == "cypher"] or items
        return items[:limit]

    def tree_text(self, kg: KnowledgeGraph, shown: Sequence[Evidence], question: str | None = None) -> str:
        """``shown`` re-read as paths from the question entities and written as a tree, each shared prefix once
        (:func:`rooted_tree_text`). Given the same facts as numbered lines, the 1.5B model answered "Who teaches
        the prerequisite of Distributed Systems?" with the lecturer of another course's prerequisite, two lines
        below the right chain. With ``question``, the tree grows only from the anchors it names (:meth:`roots`)."""
        roots = self.anchors if question is None else self.roots(question)
        return rooted_tree_text(kg, shown, [e for e in map(kg.find_entity, roots) if e is not None])

    def roots(self, question: str) -> list[str]:
        """The anchors a tree grows from: the given topics and the linked entities whose name the question
        contains as words; all anchors when it names none (a misspelt name). KG-Linker's later rounds link the
        entities it read in the context too ("Quay Robotics", a user of a package the question's maintainer
        maintains): rooted there, the facts that join them to the question's entity hang under them, and the
        chain the question asks about no longer reads as one path."""
        said = set(names_said(question, self.anchors))
        named = [a for a in self.anchors if a in self.given or a in said]
        return named or self.anchors

    def text(self, limit: int) -> str:
        return numbered(self.shown(limit))

    def supported(self, drafts: Sequence[str]) -> list[str]:
        """Draft answers the evidence ties to the question: reached by a followed relation path, returned by
        the graph query, or in a fact with a question entity.  Shortest paths and triples found around the
        drafts themselves do not count: they mention the drafts by construction."""
        anchors = {normalize(e) for e in self.anchors}
        keys: set[str] = set()
        for ev in self.items:
            names = [normalize(e) for e in ev.entities]
            direct = ev.source in ("path", "cypher")
            fact = ev.source != "shortest_path" and len(names) == 2 and bool(anchors.intersection(names))
            if direct or fact:
                keys.update(names)
        return [a for a in drafts if normalize(a) in keys - anchors]


def drafts_that_stand(steps: Sequence[Step]) -> list[str]:
    """KG-Linker's draft answers that the evidence supported when the rounds stopped (the last
    ``self_terminate`` step's ``supported``), in KG-Linker's order; empty when the rounds ran out instead."""
    stop = next((s for s in reversed(steps) if s.name == "self_terminate"), None)
    return list(stop.outputs.get("supported") or []) if stop is not None else []
