"""Zero-shot frag's pattern choice: the LLM picks which of the best-ranked relation patterns answers the question.

Without a pattern scorer trained for the KG, frag ranks patterns by aligning their relation names with the
question, and that ranking knows words, not the question's structure: on renamed MetaQA dev (100 per hop) the
best-ranked pattern holds an answer for 0.96 / 0.58 / 0.54 of the questions, one of the best three for 1.00 /
0.96 / 0.96 — "the films directed by the director of X" ranks ``director`` (X's director) above ``director,
director (reverse)``. Reading the question's structure is what the model can do, so it is shown the best few
patterns as one example walk each (a few dozen tokens) and names one by number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.base import use_grammar
from kgrag.methods.frag.evidence_tree import compact_paths_text
from kgrag.methods.frag.patterns import PatternReach, paths_to
from kgrag.retrieval.paths import paths_as_evidence
from kgrag.types import Evidence, Step

if TYPE_CHECKING:
    from kgrag.methods.frag import Frag


def walk_line(kg: KnowledgeGraph, example: Evidence, reached: int) -> str:
    """One pattern as its example path on one line, and how many more entities it reaches."""
    text = " ".join(line.strip() for line in compact_paths_text(kg, [example]).splitlines())
    return text + (f" (and {reached - 1} more)" if reached > 1 else "")


def walks_text(lines: Sequence[str]) -> str:
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))


def walk_grammar(count: int) -> str:
    """GBNF for one option number between <walk> tags."""
    numbers = " | ".join(f'"{i}"' for i in range(1, count + 1))
    return f'root ::= "<walk>" ({numbers}) "</walk>"'


def read_choice(tagged: str | None, text: str, count: int) -> int | None:
    """The 0-based option the reply names: the first number in the tag (else in the reply) when in range."""
    for source in (tagged, text):
        match = re.search(r"\d+", source or "")
        if match:
            number = int(match.group())
            return number - 1 if 1 <= number <= count else None
    return None


def pick_pattern(
    frag: Frag, question: str, topics: list[int], reach: PatternReach, scores: np.ndarray, outputs: dict[str, Any]
) -> int | None:
    """The pattern the LLM names among the ``pattern_options`` best-ranked ones that reach an entity (None: no
    choice to make, or a reply naming none); what it was shown and chose goes to ``outputs``."""
    cfg = frag.config
    options = frag._choose(topics, reach, scores, routed=False)[: cfg.pattern_options]
    if len(options) < 2 or frag.llm is None:
        return None
    lines = []
    for k, ends in options:
        paths = paths_to(frag.kg, topics, reach.patterns[k], ends[:1], hub_degree=frag.hub_degree)
        lines.append(walk_line(frag.kg, paths_as_evidence(frag.kg, paths)[0], len(ends)) if len(paths) else "")
    shown = [(k, line) for (k, _), line in zip(options, lines, strict=True) if line]
    if len(shown) < 2:
        return None
    grammar = walk_grammar(len(shown)) if use_grammar(cfg.choose_answers, frag.llm) else None
    text, parsed = frag.call_prompt(
        "frag_pattern", grammar=grammar, walks=walks_text([x for _, x in shown]), question=question
    )
    choice = read_choice(parsed.get("walk"), text, len(shown))
    outputs["pattern_choice"] = {"walks": [x for _, x in shown], "chosen": None if choice is None else choice + 1}
    return None if choice is None else shown[choice][0]


def picked_ends(steps: Sequence[Step], evidence: Sequence[Evidence]) -> list[str] | None:
    """With a pattern chosen (a ``rank_paths`` step that records one), the ends of its paths, best first: the
    answers of ``pattern_choice="answer"``; None when no pattern was chosen."""
    for step in steps:
        if step.name == "rank_paths" and (step.outputs.get("pattern_choice") or {}).get("chosen"):
            return list(dict.fromkeys(ev.entities[-1] for ev in evidence if ev.entities))
    return None


__all__ = ["pick_pattern", "picked_ends", "read_choice", "walk_grammar", "walk_line", "walks_text"]
