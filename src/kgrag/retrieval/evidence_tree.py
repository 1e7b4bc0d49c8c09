"""Evidence paths written as a tree, so the answer call reads each shared prefix once.

A method's paths share most of their length: sixty paths from one topic through the same relation to forty
different people repeat ``Richard Nixon -[people.person.profession]-> Politician`` forty times, and on 2 CPU
cores the local model reads about 60 prompt tokens a second. Written as a tree, a prefix is written once, the
entities one relation reaches from the same node share a line, and a dotted relation id keeps only the
segments that tell it apart from the other relations shown (``people.person.profession`` → ``profession``).
An unnamed intermediate node (a Freebase CVT, named by its identifier) is written ``·``: it is never an answer
and its identifier means nothing to the model.

frag writes its paths this way; byokg first re-reads the facts it gathered as paths from the question's
entities (:func:`rooted_paths`), so that a two-hop chain spread over two numbered facts reads as one line.

::

    Richard Nixon
      -[spouse s]-> · -[spouse s]-> Pat Nixon
        <-[parents]- Julie Nixon Eisenhower; Tricia Nixon Cox
      -[profession]-> Politician
        <-[profession]- Abraham Lincoln; Adolf Hitler
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kgrag.graph.identifiers import looks_like_identifier
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.verbalize import humanize, short_relation_names
from kgrag.retrieval.paths import path_as_evidence
from kgrag.types import Evidence

UNNAMED = "·"
UNNAMED_IS = "unnamed intermediate node, never an answer"  # what a prompt tells the model ``UNNAMED`` is
# what a prompt that shows the tree says about it (appended to the sentence that explains the arrows)
TREE_LAYOUT = (
    "\nPaths that share their start are written as a tree: an indented line goes on from the last entity of the"
    f' line above it with one indent less, "A; B; C" lists entities reached the same way, and "{UNNAMED}" is an'
    f" {UNNAMED_IS}."
)


@dataclass
class _Node:
    name: str
    children: dict[tuple[str, bool, str], _Node] = field(default_factory=dict)


def _steps(kg: KnowledgeGraph, ev: Evidence) -> list[tuple[str, bool, str]] | None:
    """(relation, walked forwards, entity reached) per hop of a KG path; None for anything else."""
    if not ev.triples or len(ev.entities) != len(ev.triples) + 1 or len(ev.relations) != len(ev.triples):
        return None
    steps = []
    for i, tid in enumerate(ev.triples):
        forward = kg.entities[int(kg.heads[tid])] == ev.entities[i]
        steps.append((ev.relations[i], forward, ev.entities[i + 1]))
    return steps


def _label(name: str) -> str:
    return UNNAMED if looks_like_identifier(name) else humanize(name)


def compact_paths_text(kg: KnowledgeGraph, evidence: Sequence[Evidence]) -> str:
    """The evidence as an indented tree of paths (order of first appearance kept); evidence that is not a
    KG path (a Cypher row, a text fact) follows as plain lines."""
    roots: dict[str, _Node] = {}
    loose: list[str] = []
    relations: list[str] = []
    for ev in evidence:
        steps = _steps(kg, ev)
        if steps is None:
            loose.append(ev.text)
            continue
        node = roots.setdefault(ev.entities[0], _Node(ev.entities[0]))
        for step in steps:
            relations.append(step[0])
            node = node.children.setdefault(step, _Node(step[2]))
    short = short_relation_names(relations)

    def edge(rel: str, forward: bool) -> str:
        return f"-[{short[rel]}]->" if forward else f"<-[{short[rel]}]-"

    lines: list[str] = []

    def render(node: _Node, depth: int) -> None:
        # leaves reached by the same relation share a line, at the place of the first of them
        leaves: dict[tuple[str, bool], list[str]] = {}
        items: list[tuple[str, bool, _Node | list[str]]] = []
        for (rel, forward, _), child in node.children.items():
            if child.children:
                items.append((rel, forward, child))
            elif (rel, forward) in leaves:
                leaves[(rel, forward)].append(_label(child.name))
            else:
                leaves[(rel, forward)] = [_label(child.name)]
                items.append((rel, forward, leaves[(rel, forward)]))
        for rel, forward, item in items:
            if isinstance(item, list):
                lines.append("  " * depth + f"{edge(rel, forward)} {'; '.join(item)}")
                continue
            child = item
            chain = [f"{edge(rel, forward)} {_label(child.name)}"]
            while len(child.children) == 1:  # a path that does not branch stays on one line
                (next_rel, next_forward, _), child = next(iter(child.children.items()))
                chain.append(f"{edge(next_rel, next_forward)} {_label(child.name)}")
            lines.append("  " * depth + " ".join(chain))
            render(child, depth + 1)

    for root in roots.values():
        lines.append(humanize(root.name))
        render(root, 1)
    lines.extend(loose)
    return "\n".join(lines) or "(no facts found)"


def answer_options(evidence: Sequence[Evidence]) -> dict[str, str]:
    """The entities an answer may name, as the tree writes them (its label → the KG name), in order of first
    appearance: every named node. The question's own entities stay among them although they are never the
    answer: a small model often names one first, and a grammar that forbids it moves its next choices too
    (the caller drops them afterwards)."""
    options: dict[str, str] = {}
    for ev in evidence:
        for name in ev.entities:
            if not looks_like_identifier(name):
                options.setdefault(_label(name), name)
    return options


def rooted_paths(
    kg: KnowledgeGraph, evidence: Sequence[Evidence], anchors: Sequence[int], *, max_hops: int = 3
) -> tuple[list[Evidence], list[Evidence]]:
    """The KG facts of ``evidence`` re-read as paths from ``anchors`` (the question's entities): (paths, rest).

    A method that gathers single facts (byokg's strategies, a triple ranking) hands the answer call a two-hop
    chain as two numbered lines, often far apart; the 1.5B model then answers from a fact that names the right
    relation on the wrong entity ("Who teaches the prerequisite of Distributed Systems?" → the lecturer of
    another course's prerequisite). Here every triple of the evidence (a path's one by one) hangs under its end
    nearer to an anchor, nearness found breadth-first over the evidence's own triples in evidence order, so the
    better-ranked facts lay out the tree, and becomes the path from that anchor through it: written as a tree
    (:func:`compact_paths_text`), the chain reads as one line. ``rest`` holds, in their order, the evidence
    that is no KG fact (a Cypher row) and, as single facts, the triples no anchor reaches within ``max_hops``.
    """
    order: list[int] = list(dict.fromkeys(t for ev in evidence for t in ev.triples))
    touching: dict[int, list[int]] = {}
    for t in order:
        for node in dict.fromkeys((int(kg.heads[t]), int(kg.tails[t]))):
            touching.setdefault(node, []).append(t)
    parent: dict[int, tuple[int, int] | None] = dict.fromkeys(anchors)  # node -> (triple, node it came from)
    depth = dict.fromkeys(parent, 0)
    frontier = list(parent)
    while frontier:
        reached = []
        for node in frontier:
            for t in touching.get(node, []) if depth[node] < max_hops else []:
                other = int(kg.tails[t]) if int(kg.heads[t]) == node else int(kg.heads[t])
                if other not in depth:
                    depth[other], parent[other] = depth[node] + 1, (t, node)
                    reached.append(other)
        frontier = reached
    paths: list[Evidence] = []
    unplaced: list[int] = []
    for t in order:
        head, tail = int(kg.heads[t]), int(kg.tails[t])
        ends = [n for n in (head, tail) if n in depth and depth[n] < max_hops]
        if not ends or head == tail:
            unplaced.append(t)
            continue
        near = min(ends, key=lambda n: depth[n])
        nodes, edges = [near], []
        while (step := parent[nodes[0]]) is not None:
            edges.insert(0, step[0])
            nodes.insert(0, step[1])
        paths.append(path_as_evidence(kg, [*nodes, tail if near == head else head], [*edges, t], source="rooted"))
    rest = [ev for ev in evidence if not ev.triples] + [
        path_as_evidence(kg, [int(kg.heads[t]), int(kg.tails[t])], [t], source="rooted") for t in unplaced
    ]
    return paths, rest


def rooted_tree_text(kg: KnowledgeGraph, evidence: Sequence[Evidence], anchors: Sequence[int]) -> str:
    """``evidence`` as a prompt reads it rooted at ``anchors``: rows that are no KG fact first (a query's rows
    answer the question as asked), then the tree of paths from the anchors, then the facts no anchor reaches."""
    paths, rest = rooted_paths(kg, evidence, anchors)
    rows = [ev.text for ev in rest if not ev.triples]
    facts = [ev.text for ev in rest if ev.triples]
    tree = [compact_paths_text(kg, paths)] if paths else []
    return "\n".join([*rows, *tree, *facts]) or "(no facts found)"


__all__ = ["TREE_LAYOUT", "UNNAMED", "answer_options", "compact_paths_text", "rooted_paths", "rooted_tree_text"]
