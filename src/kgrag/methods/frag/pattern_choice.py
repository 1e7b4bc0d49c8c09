"""Zero-shot answering by choosing a relation pattern: the model picks a number, the KG gives the answers.

Without a trained pattern scorer, FRAG's zero-shot ranking cannot be sure which of its top patterns the
question asks for, so it shows several: the films of a person, the directors of those films, the films of
the co-stars. Asked to write the answer entities from all of them, a 1.5B model often takes the ends of the
wrong pattern or a node in the middle of the right one (renamed MetaQA, first 15 dev questions per hop: all 8
misses had the answer in the evidence). Choosing among a handful of numbered patterns — each written once,
with an example path and a few of its ends — is a smaller task: the reply is one number under a grammar, and
the answers are every end of that pattern, each with its path as support. The prompt is a fraction of the
tree's length (each pattern is one line, not every path).

Only frag answers this way, so the module lives here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgrag.graph.identifiers import looks_like_identifier
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.verbalize import humanize
from kgrag.methods.frag.evidence_tree import edge_text, node_label, path_steps, short_relation_names
from kgrag.prompts.gbnf import choice_grammar
from kgrag.types import Evidence

TAG = "pattern"


@dataclass
class PatternGroup:
    """The evidence paths that follow one relation pattern from one topic, in rank order."""

    start: str
    steps: tuple[tuple[str, bool], ...]  # (relation, walked forwards) per hop
    evidence: list[Evidence] = field(default_factory=list)

    def ends(self, exclude: Sequence[str] = ()) -> list[str]:
        """Named path ends, each once, in rank order; never a topic or an unnamed (CVT) node."""
        skip = set(exclude)
        names = (ev.entities[-1] for ev in self.evidence)
        return [n for n in dict.fromkeys(names) if n not in skip and not looks_like_identifier(n)]


def group_by_pattern(kg: KnowledgeGraph, evidence: Sequence[Evidence]) -> list[PatternGroup]:
    """Evidence paths grouped by (topic, relation pattern), groups in the order of their best path; evidence
    that is not a KG path is left out."""
    groups: dict[tuple, PatternGroup] = {}
    for ev in evidence:
        steps = path_steps(kg, ev)
        if not steps:
            continue
        signature = tuple((rel, forward) for rel, forward, _ in steps)
        key = (ev.entities[0], signature)
        if key not in groups:
            groups[key] = PatternGroup(ev.entities[0], signature)
        groups[key].evidence.append(ev)
    return list(groups.values())


def patterns_text(groups: Sequence[PatternGroup], exclude: Sequence[str] = (), examples: int = 3) -> str:
    """One numbered line per pattern: the topic, the relations with the first path's middle nodes as an
    example, and the pattern's ends (the first ``examples`` of them and how many there are).

    ``3. John Godey <-[screenwriter]- Johnny Handsome -[director]-> {Walter Hill; Jerry Paris; 3 in all}``
    """
    short = short_relation_names(rel for g in groups for rel, _ in g.steps)
    lines = []
    for number, group in enumerate(groups, 1):
        path = group.evidence[0].entities
        parts = [humanize(group.start)]
        for hop, (rel, forward) in enumerate(group.steps):
            parts.append(edge_text(short[rel], forward))
            if hop < len(group.steps) - 1:
                parts.append(node_label(path[hop + 1]))
        ends = group.ends(exclude)
        shown = [node_label(n) for n in ends[:examples]]
        if len(ends) > examples:
            shown.append(f"{len(ends)} in all")
        parts.append("{" + "; ".join(shown) + "}")
        lines.append(f"{number}. " + " ".join(parts))
    return "\n".join(lines)


def pattern_grammar(count: int) -> str | None:
    """GBNF for one pattern number from 1 to ``count`` between ``<pattern>`` tags."""
    return choice_grammar([str(i) for i in range(1, count + 1)], tag=TAG, max_items=1)


def read_choice(reply: str | None, parsed: str | None, count: int) -> int | None:
    """The 0-based pattern the model chose: the first number in its ``<pattern>`` section (else in its whole
    reply) when it is one of the shown ones; None otherwise (the caller falls back to the best-ranked)."""
    for text in (parsed, reply):
        match = re.search(r"\d+", text or "")
        if match:
            number = int(match.group())
            return number - 1 if 1 <= number <= count else None
    return None


__all__ = ["TAG", "PatternGroup", "group_by_pattern", "pattern_grammar", "patterns_text", "read_choice"]
