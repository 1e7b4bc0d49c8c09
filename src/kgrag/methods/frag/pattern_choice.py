"""Zero-shot frag's pattern choice: the LLM picks which of the best-ranked relation patterns answers the question.

Without a pattern scorer trained for the KG, frag ranks patterns by aligning their relation names with the
question, and that ranking knows words, not the question's structure: on renamed MetaQA dev (100 per hop) the
best-ranked pattern holds an answer for 0.96 / 0.58 / 0.54 of the questions, one of the best three for 1.00 /
0.96 / 0.96 — "the films directed by the director of X" ranks ``director`` (X's director) above ``director,
director (reverse)``. Reading the question's structure is what the model can do, so it is shown the best few
patterns as one example walk each (a few dozen tokens) and copies the one that answers it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.verbalize import humanize
from kgrag.methods.base import use_grammar
from kgrag.methods.frag.evidence_tree import compact_paths_text
from kgrag.methods.frag.patterns import PatternReach, paths_to
from kgrag.prompts.gbnf import literal
from kgrag.retrieval.paths import paths_as_evidence
from kgrag.types import Evidence, Step

if TYPE_CHECKING:
    from kgrag.methods.frag import Frag


ANSWER_MARK = "answer: "


def walk_line(kg: KnowledgeGraph, example: Evidence) -> str:
    """One pattern as its example path on one line, its end marked as the answer it gives.

    The mark makes stopping a choice of its own: walks that go on from another walk's end share its text up
    to there, and copying the shorter one means writing the end tag where the longer one goes on — a step the
    1.5B model rarely takes. Unmarked, renamed MetaQA's 1-hop questions got their 2-hop extensions (the films'
    other actors for "what does X act in"): the chosen pattern's ends answered 0.23 of the first 30. Marked,
    the walks part where the answer starts, and the model chooses what the answer is."""
    text = " ".join(line.strip() for line in compact_paths_text(kg, [example]).splitlines())
    end = humanize(example.entities[-1])
    return text[: -len(end)] + ANSWER_MARK + end if text.endswith(end) else text


def walk_grammar(lines: Sequence[str]) -> str:
    """GBNF for one of ``lines`` copied between <walk> tags.

    The model copies the walk instead of naming its number: asked for a number, the 1.5B model named the last
    option shown for most renamed MetaQA 2-hop questions, right or not (0.53 Hit@1 against 0.87 without the
    choice). Copying, it decides token by token where the walks part, reading the relation it writes next right
    after the ones it wrote, which is what the question is about."""
    return 'root ::= "<walk>" (' + " | ".join(literal(x) for x in lines) + ') "</walk>"'


def read_choice(tagged: str | None, text: str, lines: Sequence[str]) -> int | None:
    """The index of the walk the reply copies (spacing aside), else of a walk number it names; None for
    anything else (a walk that was not shown is not guessed at)."""
    squeeze = " ".join((tagged if tagged is not None else text).split())
    for i, line in enumerate(lines):
        if " ".join(line.split()) == squeeze:
            return i
    match = re.fullmatch(r"\D{0,8}(\d+)\D{0,2}", squeeze)
    if match and 1 <= int(match.group(1)) <= len(lines):
        return int(match.group(1)) - 1
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
    shown: dict[str, int] = {}  # walk line -> pattern; two patterns written alike show once
    for k, ends in options:
        paths = paths_to(frag.kg, topics, reach.patterns[k], ends[:1], hub_degree=frag.hub_degree)
        if len(paths):
            shown.setdefault(walk_line(frag.kg, paths_as_evidence(frag.kg, paths)[0]), k)
    lines = list(shown)
    if len(lines) < 2:
        return None
    grammar = walk_grammar(lines) if use_grammar(cfg.choose_answers, frag.llm) else None
    text, parsed = frag.call_prompt("frag_pattern", grammar=grammar, walks="\n".join(lines), question=question)
    choice = read_choice(parsed.get("walk"), text, lines)
    outputs["pattern_choice"] = {"walks": lines, "chosen": None if choice is None else choice + 1}
    return None if choice is None else shown[lines[choice]]


def picked_ends(steps: Sequence[Step], evidence: Sequence[Evidence]) -> list[str] | None:
    """With a pattern chosen (a ``rank_paths`` step that records one), the ends of its paths, best first: the
    answers of ``pattern_choice="answer"``, the names ``narrow``'s answer call chooses from; None when no
    pattern was chosen."""
    for step in steps:
        if step.name == "rank_paths" and (step.outputs.get("pattern_choice") or {}).get("chosen"):
            return list(dict.fromkeys(ev.entities[-1] for ev in evidence if ev.entities))
    return None


__all__ = ["pick_pattern", "picked_ends", "read_choice", "walk_grammar", "walk_line"]
