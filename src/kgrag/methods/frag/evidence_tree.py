"""Evidence paths written as a tree, so the answer call reads each shared prefix once.

A method's paths share most of their length: sixty paths from one topic through the same relation to forty
different people repeat ``Richard Nixon -[people.person.profession]-> Politician`` forty times, and on 2 CPU
cores the local model reads about 60 prompt tokens a second. Written as a tree, a prefix is written once, the
entities one relation reaches from the same node share a line, and a dotted relation id keeps only the
segments that tell it apart from the other relations shown (``people.person.profession`` → ``profession``).
An unnamed intermediate node (a Freebase CVT, named by its identifier) is written ``·``: it is never an answer
and its identifier means nothing to the model.

Only frag writes its evidence this way so far; the module moves to ``retrieval/`` when a second method does.

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
from kgrag.types import Evidence

UNNAMED = "·"
# what a prompt that shows the tree says about it (appended to the sentence that explains the arrows)
TREE_LAYOUT = (
    "\nPaths that share their start are written as a tree: an indented line goes on from the last entity of the"
    f' line above it with one indent less, "A; B; C" lists entities reached the same way, and "{UNNAMED}" is an'
    " unnamed intermediate node, never an answer."
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


__all__ = ["TREE_LAYOUT", "UNNAMED", "answer_options", "compact_paths_text"]
