"""`kgrag adapt --asked FILE`: the questions a KG's users ask, without answers, as training data for frag.

Synthetic questions are worded from the KG's relation names; users word theirs their own way ("who acted in" for
``cast member``), and a scorer trained on templates alone reads them no better than the zero-shot alignment does. A
question log — the text of questions users asked, which a deployed system has and labelled answers it has not —
holds exactly those wordings. Each logged question is labelled by zero-shot frag itself: the best of its relation
patterns after the LLM re-read the five best (``question_fit``, :mod:`kgrag.methods.frag.question_fit`) is the
question's pattern, and that pattern's ends from the question's topic entities are its answers — unless frag's
answer call, reading the question over that ranking's evidence, answers with an entity the pattern does not reach
and another pattern does: then that pattern (the model checks its re-reading against the facts, FRAG-F's feedback
the other way round). A scorer trained on many labelled questions learns each wording's pattern and ranks without
the LLM's scoring call; it is about as right as its labels, since the labeller's mistakes mostly follow the
wording ("who co-starred with X" read as X's films) and the scorer learns them too (renamed MetaQA, 150 logged
dev questions per hop: labels right 0.92 / 0.65 / 0.78 per hop from the re-reading alone, 0.97 / 0.91 / 0.89
checked by the answer; best pattern on other dev questions 0.93 / 0.73 / 0.77 and 0.87 / 0.87 / 0.83). An LLM
is needed: the alignment's own best patterns make mistakes that follow the wording, and training on them teaches
the mistakes (renamed MetaQA: the best pattern reached an answer for 0.93 / 0.53 / 0.30 of held-out questions per
hop, against 0.90 / 0.60 / 0.40 for zero-shot frag itself). Two LLM calls a question: the scoring pass and the
answer.

Nothing of the file but its questions (and topic entities, where given) is read: answers in it are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag.fit_check import PATTERNS
from kgrag.methods.frag.patterns import pattern_label
from kgrag.methods.frag.question_fit import fit_patterns
from kgrag.methods.frag.sampling import Progress
from kgrag.models.llm.base import LLM
from kgrag.retrieval.topics import resolve_topics

if TYPE_CHECKING:
    from kgrag.methods.frag import Frag

# The answer call that checks a label reads the first paths of the best patterns only (zero-shot frag's answer call
# reads 60): it picks among them, and the 1.5B model read 700-900 prompt tokens a question with all 60 (~18 s).
LABEL_ANSWER_PATHS = 20
MAX_ANSWERS = 200  # a pattern reaching more named entities labels nothing: its ends say little about the question


def label_asked(
    kg: KnowledgeGraph, llm: LLM, asked: Sequence[tuple[str, Sequence[str]]], progress: Progress
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Training rows (``question``, ``topic_entities``, ``answers``, ``labelled_pattern``) for the asked questions
    (``(question, topic entity names)``; no names: linked from the question) frag can label (module doc),
    and counts: ``asked``, ``labelled``, ``no_topic`` (no entity of the KG found), ``no_pattern`` (no pattern
    reaches a named entity within MAX_ANSWERS), ``moved_to_answer`` (labels the first answer moved)."""
    from kgrag.methods.frag import Frag

    frag = Frag(
        kg,
        llm=cast(LLM, _ScoresOnce(llm)),
        router="none",
        patterns="none",
        question_fit=PATTERNS,
        answer_paths=LABEL_ANSWER_PATHS,
    )
    unnamed = unnamed_entities(kg)
    rows: list[dict[str, Any]] = []
    counts = {"asked": len(asked), "labelled": 0, "no_topic": 0, "no_pattern": 0, "moved_to_answer": 0}
    progress.stage("labelling asked", len(asked))
    for text, names in asked:
        question = text.replace("[", "").replace("]", "")
        topics = resolve_topics(kg, question, list(names))
        label = _label(frag, question, topics, unnamed) if topics else None
        progress.advance()
        if label is None:
            counts["no_topic" if not topics else "no_pattern"] += 1
            continue
        pattern, ends, moved = label
        counts["moved_to_answer"] += moved
        rows.append(
            {
                "question": question,
                "topic_entities": [kg.entities[t] for t in topics],
                "answers": [kg.entities[e] for e in ends],
                "hops": None,  # the router learns the pattern's length from the masked question
                "labelled_pattern": pattern_label(kg, pattern),
            }
        )
    counts["labelled"] = len(rows)
    return rows, counts


def _label(
    frag: Frag, question: str, topics: list[int], unnamed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """``(pattern, its answers, whether the first answer moved the label)`` for one question, None when no
    pattern reaches a named entity within MAX_ANSWERS. The label is question_fit's best pattern, unless the
    model's first answer (frag's answer call over the evidence of that ranking) is not among its ends and another
    pattern reaches it: then the best-scored of those. The answer call reads the question with the evidence in
    front of it, and corrects the re-reading where the wording misleads it (renamed MetaQA log, 82 of 444 labels
    moved; 2-hop labels right 0.65 -> 0.91)."""
    kg = frag.kg
    ranked = frag.zero_shot_pattern_scores(question, topics)
    if ranked is None or not len(ranked[1]):
        return None
    reach, scores = ranked
    scores = fit_patterns(frag, question, topics, reach, scores, {})
    order = np.argsort(-scores, kind="stable")
    best = _named_ends(reach.endpoints(int(order[0])), topics, unnamed)
    if not 0 < len(best) <= MAX_ANSWERS:
        return None  # the best pattern labels nothing: an answer cannot tell which of the rest was meant
    first = frag.answer(question, [kg.entities[t] for t in topics]).answers[:1]
    found = kg.find_entity(first[0]) if first else None
    if found is None or found in best:
        return reach.patterns[order[0]], best, False
    for k in order[1:]:
        ends = reach.endpoints(int(k))
        if found in ends and found not in topics:
            ends = _named_ends(ends, topics, unnamed)
            if len(ends) <= MAX_ANSWERS:
                return reach.patterns[k], ends, True
    return reach.patterns[order[0]], best, False


def _named_ends(ends: np.ndarray, topics: list[int], unnamed: np.ndarray) -> np.ndarray:
    return ends[~unnamed[ends] & ~np.isin(ends, topics)]


class _ScoresOnce:
    """The labeller's LLM, remembering its last scoring call: frag's answer call ranks the patterns with the same
    question_fit scoring the label was taken from, and need not have the model read them again."""

    def __init__(self, llm: LLM) -> None:
        self._llm = llm
        self._last: tuple[Any, list[float] | None] | None = None

    def score_reply(self, prompts: Sequence[Any], reply: str, *, name: str = "raw") -> list[float] | None:
        key = (repr(list(prompts)), reply)
        if self._last is None or self._last[0] != key:
            self._last = (key, self._llm.score_reply(prompts, reply, name=name))
        return self._last[1]

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._llm, attribute)


def split_held_out(rows: list[dict[str, Any]], share: float, seed: int) -> tuple[list[dict], list[dict]]:
    """``(training rows, held-out rows)``: a seeded ``share`` of the rows held out (at least one of each)."""
    order = np.random.default_rng(seed).permutation(len(rows))
    n_held = min(max(1, int(len(rows) * share)), len(rows) - 1)
    held = set(order[:n_held].tolist())
    return [r for i, r in enumerate(rows) if i not in held], [rows[i] for i in sorted(held)]


def agreement(kg: KnowledgeGraph, rows: Sequence[dict[str, Any]], progress: Progress, **config: Any) -> float:
    """Share of ``rows`` whose label is the first pattern frag (with ``config``) takes for the question: how well a
    way of running frag reproduces the labeller's reading on questions it was not trained on."""
    from kgrag.methods.base import Trace
    from kgrag.methods.frag import Frag

    frag = Frag(kg, **config)
    same = 0
    for row in rows:
        trace = Trace()
        # as the answer call ranks them: question_fit, when set, re-reads the ranking only there
        frag._retrieve(row["question"], row["topic_entities"], trace, for_answer=bool(frag.config.question_fit))
        ranked = [s.outputs.get("patterns") for s in trace.steps if s.name == "rank_paths"]
        same += bool(ranked and ranked[0]) and ranked[0][0]["pattern"] == row["labelled_pattern"]
        progress.advance()
    return same / len(rows) if rows else 0.0
