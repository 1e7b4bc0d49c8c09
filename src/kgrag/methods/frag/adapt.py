"""Zero-label adaptation: train FRAG's router and pattern scorer for a KG from the KG alone (`kgrag adapt`).

FRAG needs labelled questions to train its classifiers; a user bringing their own KG has none. But the KG
says which relation patterns exist and where they lead, so questions with known answers can be *made*:

1. **Sample** relation patterns of 1–3 hops around named, non-hub entities; their endpoints are the answers
   (:mod:`kgrag.methods.frag.sampling`).
2. **Write** a question per pattern from the relation names (:mod:`kgrag.methods.frag.synthetic`), with other
   words for each relation; optionally an LLM first phrases the most frequent relations and afterwards
   rewords some questions (:mod:`kgrag.methods.frag.phrasing`).
3. **Train** both classifiers with :func:`~kgrag.methods.frag.training.train` (pattern labels come from
   which patterns reach the answers, ties kept, as for real questions; a second copy of every question has
   its content words made unknown, which is how real questions look to a model trained on templates).
4. **Calibrate** on fresh questions worded with templates held out of training
   (:mod:`kgrag.methods.frag.calibration`): bias the router towards more hops, and keep a model only when
   frag with it beats frag's zero-shot pipeline.
5. **Check question_fit** (with an LLM that scores text, zero-shot frag only): on more fresh questions, does
   the LLM's re-reading of frag's best patterns put one that reaches the answers first more often? If so,
   frag uses it on this KG (:mod:`kgrag.methods.frag.fit_check`).

With ``--asked FILE`` the models learn from questions the KG's users ask instead, each labelled by zero-shot
frag with the LLM (:mod:`kgrag.methods.frag.question_log`); steps 1–2 and 4 are skipped: on renamed MetaQA,
models trained on synthetic questions ranked real questions' patterns worse than zero-shot frag (the best
pattern reached an answer for 0.87 / 0.40 / 0.43 of held-out dev questions per hop against 0.90 / 0.60 / 0.40),
and adding the synthetic questions to the asked ones took their gain away (0.87 / 0.40 / 0.43 again). A held-out
fifth of the asked questions decides whether the models are kept and, when they are, step 5 is done on it too
(question_fit beside the models; when they are not, on synthetic questions as above).

What is kept goes to ``KGDIR/adapted/`` with the KG's checksum, so frag picks it up on this KG and nowhere
else. The directory is built under a temporary name and renamed into place
(:func:`kgrag.graph.store.replace_derived`), so an interrupted run leaves the previous models as they were.
``adapt.json`` records the settings, counts, accuracies, calibration, the settings chosen for frag, timings
and the sha256 of every file written; :mod:`kgrag.methods.frag.adapted` reads them back and checks them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from kgrag import __version__
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.store import digest_files, replace_derived
from kgrag.methods.frag.adapted import PATTERNS_FILE, ROUTER_FILE, SETTINGS_KEY, SUMMARY_FILE
from kgrag.methods.frag.calibration import ROUTED, ZERO_SHOT, calibrate
from kgrag.methods.frag.fit_check import PATTERNS, check_question_fit
from kgrag.methods.frag.phrasing import describe_relations, paraphrase_questions, relation_lexicons
from kgrag.methods.frag.question_log import agreement, label_asked, split_held_out
from kgrag.methods.frag.router import ADAPTED_DIR
from kgrag.methods.frag.sampling import (
    AdaptError,
    AdaptSettings,
    Progress,
    Silent,
    SyntheticQuestion,
    sample_questions,
    with_unseen_words,
)
from kgrag.methods.frag.synthetic import RelationLexicon
from kgrag.methods.frag.training import train
from kgrag.models.llm.base import LLM

ASKED_HELD_OUT = 0.2  # share of the asked questions that decides whether models trained on them are kept
FITTED = "routed with question_fit"  # the asked check's third way: kept models, the LLM re-reading their ranking
MIN_ASKED = 30  # labelled asked questions below which the models would learn too little to be worth using
QUESTIONS_FILE = "questions.jsonl"  # the synthetic questions, for inspection or reuse with `kgrag frag-train`
FORMAT = "kgrag-adapt-v1"


def adapted_dir(kg: KnowledgeGraph) -> Path:
    """Where `kgrag adapt` keeps this KG's models (``KGDIR/adapted``)."""
    if kg.store_path is None:
        raise AdaptError("adaptation needs a KG loaded from a store directory (made by `kgrag ingest`)")
    return kg.store_path / ADAPTED_DIR


def _questions(
    kg: KnowledgeGraph, settings: AdaptSettings, llm: LLM | None, progress: Progress, seconds: dict[str, float]
) -> tuple[list[RelationLexicon], list[SyntheticQuestion], dict[str, int]]:
    """Relation wordings, then the synthetic questions (templates, LLM rewordings, unseen-word copies), and
    the LLM's counts."""
    llm_counts: dict[str, int] = {}
    t = time.perf_counter()
    lexicons = relation_lexicons(kg)
    if settings.describe and llm is not None:
        counts = describe_relations(kg, llm, lexicons, settings, progress)
        llm_counts.update({f"relation_{k}": v for k, v in counts.items()})
        seconds["phrasing_relations"] = time.perf_counter() - t
    t = time.perf_counter()
    templates = "training" if settings.calibration else "all"  # the held-out wordings are calibration's
    questions = sample_questions(kg, settings, lexicons, progress, templates=templates)
    seconds["sampling"] = time.perf_counter() - t
    if not questions:
        raise AdaptError("no relation pattern with a manageable number of answers was found: nothing to train on")
    if settings.paraphrases and llm is not None:
        t = time.perf_counter()
        extra, counts = paraphrase_questions(kg, llm, questions, settings, progress)
        llm_counts.update({f"paraphrase_{k}": v for k, v in counts.items()})
        questions = questions + extra
        seconds["paraphrasing"] = time.perf_counter() - t
    if settings.unseen_words > 0:
        rng = np.random.default_rng(settings.seed + 3)
        questions = questions + [
            SyntheticQuestion(
                with_unseen_words(q.question, rng, settings.unseen_words),
                q.hops,
                q.pattern,
                q.topic,
                q.answers,
                source=f"{q.source}, unseen words",  # counted apart from the questions in adapt.json
            )
            for q in questions
        ]
    return lexicons, questions, llm_counts


def _train_into(
    tmp: Path,
    kg: KnowledgeGraph,
    rows: list[dict[str, Any]],
    settings: AdaptSettings,
    source: str,
    progress: Progress,
) -> dict[str, Any]:
    """Both classifiers trained into ``tmp``; the labelling bar hands over to a training stage at its end."""
    progress.stage("labelling", len(rows))
    labelled = 0

    def tick() -> None:
        nonlocal labelled
        labelled += 1
        progress.advance()
        if labelled == len(rows):
            progress.stage("training", None)

    return train(
        rows,
        tmp / ROUTER_FILE,
        kg=kg,
        patterns_out=tmp / PATTERNS_FILE,
        validation=settings.validation,
        seed=settings.seed,
        progress=tick,
        questions_source=source,
        max_pattern_labels=settings.max_pattern_labels,
    )


def _train_on_asked(
    tmp: Path,
    kg: KnowledgeGraph,
    rows: list[dict[str, Any]],
    settings: AdaptSettings,
    source: str,
    progress: Progress,
    llm: LLM | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Models trained on asked questions, kept only where they read held-out asked questions as their labels say
    by ``keep_margin`` more often than zero-shot frag does; then trained again on every row. On questions as
    varied as the WebQSP proxy's, a few hundred cannot teach a scorer over hundreds of patterns, and the
    trained models would rank worse than the alignment they were labelled with. With ``llm`` and
    ``fit_questions``, the models are also checked with question_fit beside them (the LLM re-reading their
    five best patterns): when that agrees with the labels ``fit_margin`` more often than the models alone,
    adapt records it, and that reading is the one weighed against zero-shot. (Checking it only for models kept
    on their own dropped them on renamed MetaQA once zero-shot frag read "share" questions right: models 0.72
    against zero-shot 0.67 of the held-out labels, under the 0.05 margin, though with question_fit they had
    read 0.78 against 0.63 the session before and answered 0.94 / 0.90 / 0.84 against 0.86 / 0.86 / 0.52.)"""
    training, held = split_held_out(rows, ASKED_HELD_OUT, settings.seed)
    _train_into(tmp, kg, training, settings, source, progress)
    router = str(tmp / ROUTER_FILE) if (tmp / ROUTER_FILE).exists() else "none"
    ways: dict[str, dict[str, Any]] = {
        ZERO_SHOT: {"router": "none", "patterns": "none"},
        ROUTED: {"router": router, "patterns": str(tmp / PATTERNS_FILE)},
    }
    progress.stage("checking", len(held) * len(ways))
    agree = {way: agreement(kg, held, progress, **config) for way, config in ways.items()}
    if llm is not None and settings.fit_questions:
        progress.stage("checking question_fit", len(held))
        agree[FITTED] = agreement(kg, held, progress, **ways[ROUTED], llm=llm, question_fit=PATTERNS)
    fitted = FITTED in agree and agree[FITTED] - agree[ROUTED] >= settings.fit_margin
    kept = agree[FITTED if fitted else ROUTED] - agree[ZERO_SHOT] >= settings.keep_margin
    check = {"held_out": len(held), "agreement": {k: round(v, 4) for k, v in agree.items()}, "kept": kept}
    check["question_fit"] = kept and fitted
    if kept:
        return _train_into(tmp, kg, rows, settings, source, progress), check
    summary = {}
    for part, name in (("router", ROUTER_FILE), ("patterns", PATTERNS_FILE)):
        (tmp / name).unlink(missing_ok=True)  # _record reads a missing file as a model not kept
        summary[part] = {"out": str(tmp / name), "train": len(training)}
    return summary, check


def _counts(questions: list[SyntheticQuestion], lexicons: list[RelationLexicon], settings: AdaptSettings) -> dict:
    copies = sum(q.source.endswith("unseen words") for q in questions)
    rewordings = sum(q.source == "llm" for q in questions)
    return {
        "questions": len(questions),
        "templates": len(questions) - rewordings - copies,
        "paraphrases": rewordings,
        "unseen_word_copies": copies,
        "by_hops": {str(h): sum(q.hops == h for q in questions) for h in range(1, settings.max_hops + 1)},
        "patterns": len({q.pattern for q in questions}),
        "start_entities": len({q.topic for q in questions}),
        "relations_phrased_by_llm": sum(bool(lex.forward_questions or lex.inverse_questions) for lex in lexicons),
    }


def _phrasings(kg: KnowledgeGraph, lexicons: list[RelationLexicon]) -> dict[str, dict[str, list[str]]]:
    """What the LLM wrote for each relation it phrased (``{x}``: where an entity goes), for inspection."""
    return {
        kg.relations[r]: {
            "kind": lex.subject_types,
            "ask_object": lex.forward_questions,
            "ask_subject": lex.inverse_questions,
            "object_phrase": lex.forward_phrases,
            "subject_phrase": lex.inverse_phrases,
        }
        for r, lex in enumerate(lexicons)
        if lex.forward_questions or lex.inverse_questions or lex.forward_phrases or lex.inverse_phrases
    }


def _record(
    kg: KnowledgeGraph,
    settings: AdaptSettings,
    llm_id: str | None,
    counts: dict,
    source: str,
    summary: dict[str, Any],
    calibration: dict[str, Any] | None,
    seconds: dict[str, float],
    lexicons: list[RelationLexicon],
    tmp: Path,
    target: Path,
) -> dict[str, Any]:
    """What ``adapt.json`` says: settings, counts, each model's training summary (``out`` None: not kept),
    calibration, timings, the LLM's phrasings and the digest of every file in ``tmp``."""
    for part in ("router", "patterns"):  # paths inside the temp dir mean nothing after the rename
        if isinstance(summary.get(part), dict) and "out" in summary[part]:
            name = Path(summary[part]["out"]).name
            summary[part]["out"] = str(target / name) if (tmp / name).exists() else None
    return {
        "format": FORMAT,
        "created_by": f"kgrag {__version__}",
        "kg_checksum": kg.checksum,
        "questions_source": source,
        "settings": {**asdict(settings), "hop_mix": list(settings.hop_mix)},  # as JSON reads it back
        "llm": llm_id,
        "counts": counts,
        "router": summary.get("router"),
        "patterns": summary.get("patterns"),
        "calibration": calibration,
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "relation_phrasings": _phrasings(kg, lexicons),
        "files": digest_files(tmp),
    }


def _training_set(
    kg: KnowledgeGraph,
    settings: AdaptSettings,
    llm: LLM | None,
    progress: Progress,
    seconds: dict[str, float],
    asked: Sequence[tuple[str, Sequence[str]]] | None,
) -> tuple[list[RelationLexicon], list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], str]:
    """What the models learn from: the relation wordings, the training rows, the rows ``questions.jsonl``
    keeps, the counts and the source the models record — synthetic questions, or the asked ones labelled."""
    if asked is None:
        lexicons, questions, llm_counts = _questions(kg, settings, llm, progress, seconds)
        counts = {**_counts(questions, lexicons, settings), **llm_counts}
        how = "templates" + (" with LLM-phrased relations" if counts["relations_phrased_by_llm"] else "")
        how += " + LLM paraphrases" if counts["paraphrases"] else ""
        written = [{**q.row(), "pattern": q.pattern, "source": q.source} for q in questions]
        return (
            lexicons,
            [q.row() for q in questions],
            written,
            counts,
            f"kgrag adapt: {len(questions)} synthetic questions ({how})",
        )
    assert llm is not None  # adapt() checked
    t = time.perf_counter()
    rows, asked_counts = label_asked(kg, llm, asked, progress)
    seconds["labelling_asked"] = time.perf_counter() - t
    if len(rows) < MIN_ASKED:
        raise AdaptError(f"only {len(rows)} of the asked questions could be labelled; training needs {MIN_ASKED}")
    lexicons = relation_lexicons(kg) if settings.fit_questions else []  # the question_fit check words with them
    return (
        lexicons,
        rows,
        rows,
        asked_counts,
        f"kgrag adapt: {len(rows)} asked questions labelled by zero-shot frag with question_fit and its answers",
    )


def _checked(settings: AdaptSettings, llm: LLM | None, asked: bool) -> tuple[AdaptSettings, bool]:
    """The settings adapt runs with (AdaptError where they cannot work), and whether it uses the LLM."""
    if asked and (settings.describe or settings.paraphrases):
        raise AdaptError("phrasing relations and paraphrasing word synthetic questions, which --asked does not use")
    if asked:  # a few hundred asked questions: each one trains (renamed MetaQA 2-hop 0.63 -> 0.73)
        settings = replace(settings, validation=0.0)
    if settings.questions < 3 * settings.max_hops:
        raise AdaptError(f"--questions must be at least {3 * settings.max_hops}")
    uses_llm = bool(settings.paraphrases or settings.describe or settings.fit_questions or asked)
    if uses_llm and llm is None:
        raise AdaptError(
            "phrasing relations, paraphrasing, checking question_fit or labelling asked questions need an LLM"
        )
    return settings, uses_llm


def adapt(
    kg: KnowledgeGraph,
    settings: AdaptSettings | None = None,
    *,
    llm: LLM | None = None,
    progress: Progress | None = None,
    asked: Sequence[tuple[str, Sequence[str]]] | None = None,
) -> dict[str, Any]:
    """Sample, (phrase, paraphrase,) train, calibrate and store FRAG's classifiers for ``kg``; returns what
    ``adapt.json`` holds. ``llm`` is needed only for ``settings.describe`` / ``settings.paraphrases``. The
    previous ``KGDIR/adapted`` is replaced only when everything succeeded.

    With ``asked``, ``(question, topic entity names)`` users ask, they replace the synthetic questions (module doc).

    >>> record = adapt(load_kg("my-kg"))  # doctest: +SKIP
    >>> record["calibration"]["kept"]  # doctest: +SKIP
    'router and pattern scorer'
    """
    settings, uses_llm = _checked(settings or AdaptSettings(), llm, asked is not None)
    progress = progress or Silent()
    target = adapted_dir(kg)
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    lexicons, rows, written, counts, source = _training_set(kg, settings, llm, progress, seconds, asked)
    tmp = Path(tempfile.mkdtemp(prefix=f".{ADAPTED_DIR}.tmp-", dir=target.parent))
    try:
        t = time.perf_counter()
        if asked is None:
            summary, asked_check = _train_into(tmp, kg, rows, settings, source, progress), None
        else:
            summary, asked_check = _train_on_asked(tmp, kg, rows, settings, source, progress, llm)
        seconds["training"] = time.perf_counter() - t
        calibration = None
        if asked is None and settings.calibration and (tmp / ROUTER_FILE).exists() and (tmp / PATTERNS_FILE).exists():
            t = time.perf_counter()
            calibration = calibrate(kg, tmp / ROUTER_FILE, tmp / PATTERNS_FILE, lexicons, settings, progress)
            seconds["calibrating"] = time.perf_counter() - t
        check = None
        if settings.fit_questions and llm is not None and not (tmp / PATTERNS_FILE).exists():  # zero-shot only
            t = time.perf_counter()
            check = check_question_fit(kg, llm, lexicons, settings, progress)
            seconds["checking_question_fit"] = time.perf_counter() - t
        with open(tmp / QUESTIONS_FILE, "w", encoding="utf-8") as fh:
            for row in written:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        seconds["total"] = time.perf_counter() - start
        llm_id = llm.model_id if llm is not None and uses_llm else None
        record = _record(kg, settings, llm_id, counts, source, summary, calibration, seconds, lexicons, tmp, target)
        record["question_fit_check"] = check
        record["asked_check"] = asked_check
        fits = bool(check and check["kept"]) or bool(asked_check and asked_check["question_fit"])
        record[SETTINGS_KEY] = {"question_fit": PATTERNS} if fits else {}
        (tmp / SUMMARY_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False), "utf-8")
        replace_derived(tmp, target, SUMMARY_FILE)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return record
