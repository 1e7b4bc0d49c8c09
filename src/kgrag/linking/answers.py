"""Answers as the KG names them: undo the small model's habit of listing several answers on one line.

The answer prompts ask for one answer per line, but small local models often write ``"Greek, English and
French"``. The KG decides how to read such a line, so that titles with commas or "and" stay whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kgrag.linking.names import NameIndex
from kgrag.linking.normalize import normalize


def split_listed_names(answers: Sequence[str], names: NameIndex) -> list[str]:
    """Split answer lines like ``"Greek, English and French"`` (a list on one line, against the prompt).

    A line is split on commas, semicolons or bars only when it is not itself an entity name and at least half
    of its parts are, so a title such as "Paris, Texas" stays whole; a part is split on "and"/"&" only when
    every piece is an entity name ("Romeo and Juliet" stays whole).
    """

    def known(text: str) -> bool:
        return bool(names.by_key.get(normalize(text)))

    out: list[str] = []
    for line in answers:
        if known(line):
            out.append(line)
            continue
        parts: list[str] = []
        for part in (p.strip() for p in re.split(r"[,;|]", line)):
            part = re.sub(r"^(?:and|&)\s+", "", part, flags=re.I)
            pieces = [x.strip() for x in re.split(r"\s+(?:and|&)\s+", part, flags=re.I)]
            if len(pieces) > 1 and not known(part) and all(map(known, pieces)):
                parts.extend(pieces)
            elif part:
                parts.append(part)
        if len(parts) > 1 and 2 * sum(map(known, parts)) >= len(parts):
            out.extend(parts)
        else:
            out.append(line)
    return list(dict.fromkeys(out))


def entity_names_first(answers: Sequence[str], names: NameIndex) -> list[str]:
    """Answers that are KG entity names before the rest (a sentence the model wrote instead), order kept."""
    known = [a for a in answers if names.by_key.get(normalize(a))]
    return known + [a for a in answers if not names.by_key.get(normalize(a))]


def as_kg_answers(answers: Sequence[str], names: NameIndex) -> list[str]:
    """Both of the above: one KG name per item where the KG allows it, KG names first."""
    return entity_names_first(split_listed_names(answers, names), names)


def prefer_candidates(answers: Sequence[str], candidates: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """Answers that are ``candidates`` (e.g. the ends of the evidence paths) first, ``exclude`` dropped.

    A small model reading "Heat -[starred]-> Al Pacino <-[starred]- The Insider" for "films with the same actor
    as Heat" often answers with the question's own entity or a node in the middle of the path; the paths' ends
    are the candidates the retrieval meant. ``exclude`` (the topic entities) is only dropped when something
    else is left. Order is otherwise kept.
    """
    ends = {normalize(c) for c in candidates}
    banned = {normalize(e) for e in exclude}
    kept = [a for a in answers if normalize(a) not in banned] or list(answers)
    return sorted(kept, key=lambda a: normalize(a) not in ends)
