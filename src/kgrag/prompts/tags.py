"""Reading ``<tag>...</tag>`` sections out of LLM output, tolerantly.

Small local models forget closing tags, close with the wrong name (``<answer>...</answers>``), change case,
add spaces (``< Entities >``) or wrap everything in a Markdown code fence.  :func:`parse_tags` accepts all of
that: a section runs from its opening tag to the next closing tag or the next opening tag of another known
section, whichever comes first, or to the end of the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_TAG = re.compile(r"<\s*(/?)\s*([A-Za-z_][\w\-]*)\s*/?\s*>")
_FENCE = re.compile(r"^\s*```[\w+\-]*\s*$", re.M)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\(\d+\))\s+")
# a score copied from a candidate list ("Spanish (1.00)", "Suwon (0.87, by citytown)": ultrag's arbitrator shows
# each entity so, and the 1.5B model wrote the 4 answers of one of the WebQSP proxy's first 100 dev questions so)
_COPIED_SCORE = re.compile(r"\s+\((?:0|1)\.\d+(?:, by [^()]*)?\)$")


def _canonical(name: str, known: set[str], aliases: Mapping[str, str]) -> str | None:
    low = name.lower().replace("-", "_")
    if low in known:
        return low
    if low in aliases:
        return aliases[low]
    plural_y = low[:-1] + "ies" if low.endswith("y") else low
    singular_y = low[:-3] + "y" if low.endswith("ies") else low
    for variant in (low + "s", low.rstrip("s"), low + "es", plural_y, singular_y):
        if variant in known:
            return variant
    return None


def parse_tags(
    text: str | None, tags: Iterable[str], aliases: Mapping[str, str] | None = None
) -> dict[str, str | None]:
    """Content of each known tag (stripped), or ``None`` when the tag is absent or empty.

    >>> parse_tags("```\\n<Answers> Paris\\n</answer>```", ["answers"])
    {'answers': 'Paris'}
    """
    known = {t.lower() for t in tags}
    alias_map = {k.lower(): v.lower() for k, v in (aliases or {}).items()}
    result: dict[str, str | None] = dict.fromkeys(known)
    if not text:
        return result
    text = _FENCE.sub("", text)
    tokens = [(m, _canonical(m.group(2), known, alias_map)) for m in _TAG.finditer(text)]
    for i, (match, name) in enumerate(tokens):
        if match.group(1) or name is None or result.get(name):
            continue  # a closing tag, an unknown tag, or a section we already have
        end = len(text)
        for later, later_name in tokens[i + 1 :]:
            if later.group(1) or later_name is not None:  # any closing tag, or another known section
                end = later.start()
                break
        content = text[match.end() : end].strip()
        result[name] = content or None
    return result


def split_items(content: str | None) -> list[str]:
    """One item per line, bullets and numbering removed, blanks and repeats dropped (order kept)."""
    if not content:
        return []
    seen: dict[str, None] = {}
    for line in content.splitlines():
        item = _COPIED_SCORE.sub("", _BULLET.sub("", line).strip()).strip('"').strip()
        if item and item.lower() not in ("none", "n/a", "-"):
            seen.setdefault(item, None)
    return list(seen)
