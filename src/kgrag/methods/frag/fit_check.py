"""`kgrag adapt --llm`: does the LLM's re-reading of zero-shot frag's best patterns help on this KG?

``question_fit`` (:mod:`kgrag.methods.frag.question_fit`) has the model score the question after each of the
five best patterns, written as a query, and re-orders them by it. Whether that helps depends on how well the
model reads this KG's relation words, and it costs a scoring call a question, so it is off by default. Here
adapt measures it on the KG's own fresh synthetic questions, worded with templates held out of training (no
labelled question needed): the share whose best-scored pattern reaches an answer, by the alignment alone and
after question_fit. When question_fit gains ``fit_margin`` or more, adapt records it among the settings frag
takes on this KG (:func:`kgrag.methods.frag.adapted.adapted_settings`); frag then also orders the model's
answers by that corrected ranking (``grounding`` "auto", :mod:`kgrag.methods.frag.grounding`).

Only for zero-shot frag: a kept pattern scorer ranks on its own scale, and question_fit runs beside it only
when the user sets it (``question_fit_trained_weight``). A backend that cannot score text (an OpenAI-compatible
endpoint) leaves the order as it was, so the check finds no gain and nothing is recorded.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.frag.patterns import PatternReach
from kgrag.methods.frag.question_fit import fit_patterns
from kgrag.methods.frag.sampling import AdaptSettings, Progress, sample_questions
from kgrag.methods.frag.synthetic import RelationLexicon
from kgrag.models.llm.base import LLM

PATTERNS = 5  # question_fit's k when adapt turns it on: the value it was measured with (FragConfig)


def _best_reaches(reach: PatternReach, scores: np.ndarray, answers: set[int]) -> bool:
    """Whether the best-scored pattern reaches one of ``answers``."""
    return bool(len(scores)) and bool(answers.intersection(reach.endpoints(int(np.argmax(scores))).tolist()))


def check_question_fit(
    kg: KnowledgeGraph,
    llm: LLM,
    lexicons: list[RelationLexicon],
    settings: AdaptSettings,
    progress: Progress,
) -> dict[str, Any]:
    """Best-pattern accuracy with and without question_fit on ``settings.fit_questions`` fresh held-out synthetic
    questions, and whether frag should use it here (``kept``)."""
    from kgrag.methods.frag import Frag

    fresh = AdaptSettings(**{**asdict(settings), "questions": settings.fit_questions, "seed": settings.seed + 6})
    questions = sample_questions(kg, fresh, lexicons, templates="held-out")
    frag = Frag(kg, llm=llm, router="none", patterns="none", question_fit=PATTERNS)
    progress.stage("checking question_fit", len(questions))
    hits = np.zeros((2, len(questions)), dtype=bool)
    for i, q in enumerate(questions):
        text = q.question.replace("[", "").replace("]", "")  # brackets mark the topic; real questions have none
        topic = kg.find_entity(q.topic)
        answers = {a for a in map(kg.find_entity, q.answers) if a is not None}
        ranked = frag.zero_shot_pattern_scores(text, [topic]) if topic is not None else None
        if ranked is not None:
            reach, scores = ranked
            fitted = fit_patterns(frag, text, [topic], reach, scores, {})
            hits[:, i] = _best_reaches(reach, scores, answers), _best_reaches(reach, fitted, answers)
        progress.advance()
    alignment, refit = (float(h.mean()) if len(questions) else 0.0 for h in hits)
    return {
        "questions": len(questions),
        "best_pattern_reaches_an_answer": {"alignment": round(alignment, 4), "question_fit": round(refit, 4)},
        "gains": int((hits[1] & ~hits[0]).sum()),
        "losses": int((hits[0] & ~hits[1]).sum()),
        "kept": refit - alignment >= settings.fit_margin,
    }
