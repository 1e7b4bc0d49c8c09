"""Question sets, chosen by a spec string.

=============================  =======================================================================
``metaqa:<qa file>``            MetaQA vanilla format ``question with [topic]<TAB>a1|a2`` (``.gz`` ok). The
                                bracketed entity becomes the topic entity; ``metaqa:<file>?topic=drop`` removes
                                brackets and topic so that linking is tested too. A ``*_qtype.txt`` file next
                                to the qa file adds per-question types; the hop count comes from the name.
``jsonl:<file>``                one object per line: ``question``, ``answers`` (list), optional
                                ``topic_entities`` (list) and ``id``
``text:<file>``                 one question per line, no answers: a question log for ``kgrag adapt --asked``
``text2cypher:<file>``          ``question`` + gold ``cypher``; gold answers come from running the gold query
``webqsp:<file>``               WebQSP as ToG/AoG ship it: a JSON list (``.gz`` ok) of ``RawQuestion``,
                                ``answer`` (list) and ``topic_entity`` (``{mid: name}``); the names are the
                                topics. ``?topic=drop`` leaves them out
``cwq:<file>``                  ComplexWebQuestions as ToG ships it: a JSON list of ``question``, ``answer``
                                (one name), ``topic_entity`` (``{mid: name}``) and ``compositionality_type``
                                (the group); ``?topic=drop`` as for webqsp
=============================  =======================================================================

Bring your own questions as JSONL: ``{"question": "who directed Heat?", "answers": ["Michael Mann"]}``.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgrag.errors import KGFormatError
from kgrag.registry import Registry

_BRACKET = re.compile(r"\[([^\]]+)\]")
_HOP = re.compile(r"(\d)[-_]?hop", re.I)


@dataclass
class Example:
    id: str
    question: str
    answers: list[str]
    topic_entities: list[str] = field(default_factory=list)
    group: str = ""  # stratum for sampling and per-group reports (e.g. "2hop")
    meta: dict[str, Any] = field(default_factory=dict)


def _open_text(path: Path):
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gz else open(path, encoding="utf-8")


def _parse_spec_options(arg: str) -> tuple[Path, dict[str, str]]:
    path, _, query = arg.partition("?")
    options = dict(part.split("=", 1) for part in query.split("&") if "=" in part)
    return Path(path), options


datasets: Registry = Registry("dataset kind")


@datasets.register("metaqa")
def read_metaqa(arg: str) -> list[Example]:
    path, options = _parse_spec_options(arg)
    if not path.exists():
        raise KGFormatError(str(path), None, "no such question file")
    keep_topic = options.get("topic", "keep") != "drop"
    hop = _HOP.search(path.name)
    group = f"{hop.group(1)}hop" if hop else path.name.split(".")[0]
    stem = path.name.split(".")[0]
    qtype_path = path.with_name(f"{stem}_qtype.txt")
    qtypes = qtype_path.read_text("utf-8").splitlines() if qtype_path.exists() else None
    examples = []
    with _open_text(path) as fh:
        for i, line in enumerate(fh, start=1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            question, sep, answers = line.partition("\t")
            if not sep:
                raise KGFormatError(str(path), i, "expected 'question<TAB>answer1|answer2'")
            topics = _BRACKET.findall(question)
            text = _BRACKET.sub(r"\1", question) if not keep_topic else question.replace("[", "").replace("]", "")
            examples.append(
                Example(
                    id=f"{group}-{i}",
                    question=text.strip(),
                    answers=[a for a in answers.split("|") if a],
                    topic_entities=topics if keep_topic else [],
                    group=group,
                    meta={"qtype": qtypes[i - 1]} if qtypes and i - 1 < len(qtypes) else {},
                )
            )
    return examples


@datasets.register("jsonl")
def read_jsonl(arg: str) -> list[Example]:
    path, _ = _parse_spec_options(arg)
    if not path.exists():
        raise KGFormatError(str(path), None, "no such question file")
    examples = []
    with _open_text(path) as fh:
        for i, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise KGFormatError(str(path), i, f"invalid JSON ({exc.msg})") from None
            if not isinstance(obj, dict) or not isinstance(obj.get("question"), str):
                raise KGFormatError(str(path), i, "each line needs a 'question' string")
            answers = obj.get("answers", obj.get("answer", []))
            answers = [answers] if isinstance(answers, str) else list(answers or [])
            topics = obj.get("topic_entities") or []
            examples.append(
                Example(
                    id=str(obj.get("id", f"q{i}")),
                    question=obj["question"],
                    answers=[str(a) for a in answers],
                    topic_entities=[str(t) for t in (topics.values() if isinstance(topics, dict) else topics)],
                    group=str(obj.get("group", "")),
                    meta={k: v for k, v in obj.items() if k in ("type", "cypher", "qtype")},
                )
            )
    return examples


@datasets.register("text")
def read_text(arg: str) -> list[Example]:
    """Questions without answers, one per line (what users asked); blank lines are skipped."""
    path, _ = _parse_spec_options(arg)
    if not path.exists():
        raise KGFormatError(str(path), None, "no such question file")
    with _open_text(path) as fh:
        return [Example(id=f"q{i}", question=line.strip(), answers=[]) for i, line in enumerate(fh, 1) if line.strip()]


@datasets.register("text2cypher")
def read_text2cypher(arg: str) -> list[Example]:
    """Questions with gold Cypher; ``answers`` stay empty until the runner executes the gold query."""
    examples = read_jsonl(arg)
    for ex in examples:
        if "cypher" not in ex.meta:
            raise KGFormatError(arg, None, f"question {ex.id} has no 'cypher' field")
        ex.group = ex.group or str(ex.meta.get("type", ""))
    return examples


def _read_json_list(path: Path) -> list[Any]:
    """A whole-file JSON list (the ToG-style WebQSP/CWQ files); line numbers are not known inside one."""
    if not path.exists():
        raise KGFormatError(str(path), None, "no such question file")
    try:
        with _open_text(path) as fh:
            items = json.load(fh)
    except json.JSONDecodeError as exc:
        raise KGFormatError(str(path), exc.lineno, f"invalid JSON ({exc.msg})") from None
    if not isinstance(items, list):
        raise KGFormatError(str(path), None, "expected a JSON list of question objects")
    return items


def _topic_names(topic_entity: Any) -> list[str]:
    """Freebase ``{mid: name}`` → the names: a user's KG knows entities by name, not by Freebase id."""
    if isinstance(topic_entity, dict):
        return [str(name) for name in topic_entity.values() if str(name).strip()]
    return [str(name) for name in topic_entity or [] if str(name).strip()]


@datasets.register("webqsp")
def read_webqsp(arg: str) -> list[Example]:
    """WebQSP questions with Freebase topic entities given by name (``RawQuestion`` or ``question``)."""
    path, options = _parse_spec_options(arg)
    keep_topic = options.get("topic", "keep") != "drop"
    examples = []
    for i, obj in enumerate(_read_json_list(path), start=1):
        question = obj.get("RawQuestion", obj.get("question")) if isinstance(obj, dict) else None
        if not isinstance(question, str):
            raise KGFormatError(str(path), None, f"question {i}: needs a 'RawQuestion' (or 'question') string")
        answers = obj.get("answer", obj.get("answers")) or []
        examples.append(
            Example(
                id=str(obj.get("QuestionId", f"webqsp-{i}")),
                question=question.strip(),
                answers=[str(a) for a in ([answers] if isinstance(answers, str) else answers)],
                topic_entities=_topic_names(obj.get("topic_entity")) if keep_topic else [],
            )
        )
    return examples


@datasets.register("cwq")
def read_cwq(arg: str) -> list[Example]:
    """ComplexWebQuestions: one answer name per question, grouped by how the question was composed."""
    path, options = _parse_spec_options(arg)
    keep_topic = options.get("topic", "keep") != "drop"
    examples = []
    for i, obj in enumerate(_read_json_list(path), start=1):
        if not isinstance(obj, dict) or not isinstance(obj.get("question"), str):
            raise KGFormatError(str(path), None, f"question {i}: needs a 'question' string")
        answers = obj.get("answer", obj.get("answers")) or []
        examples.append(
            Example(
                id=str(obj.get("ID", f"cwq-{i}")),
                question=obj["question"].strip(),
                answers=[str(a) for a in ([answers] if isinstance(answers, str) else answers)],
                topic_entities=_topic_names(obj.get("topic_entity")) if keep_topic else [],
                group=str(obj.get("compositionality_type", "")),
            )
        )
    return examples


def load_dataset(spec: str) -> list[Example]:
    kind, sep, arg = spec.partition(":")
    if not sep:
        raise ValueError(f"dataset spec is KIND:FILE (kinds: {', '.join(datasets)}), got {spec!r}")
    return datasets.get(kind)(arg)


def load_datasets(specs: list[str]) -> list[Example]:
    examples: list[Example] = []
    for spec in specs:
        examples.extend(load_dataset(spec))
    return examples


def select(
    examples: list[Example], *, limit: int | None = None, sample: int | None = None, seed: int = 0
) -> list[Example]:
    """``limit``: the first N per group; ``sample``: N drawn per group with ``seed`` (stratified by group)."""
    groups: dict[str, list[Example]] = {}
    for ex in examples:
        groups.setdefault(ex.group, []).append(ex)
    chosen: list[Example] = []
    for _, items in groups.items():
        if sample is not None:
            rng = random.Random(seed)
            chosen.extend(rng.sample(items, min(sample, len(items))))
        elif limit is not None:
            chosen.extend(items[:limit])
        else:
            chosen.extend(items)
    return chosen
