"""One normalisation for names and questions, so that a mention and an entity name meet in the same form.

Lower case, accents stripped (``Franzén`` → ``franzen``), underscores and punctuation treated as separators:
``"Some Mother's Son"`` → tokens ``some mother s son``.  :func:`tokens_with_spans` keeps each token's
character span in the original text so a match can be reported where the user wrote it.

:func:`normalize_answer` is the lighter form answers are compared in (scoring, and finding the entities an
answer names): accents and inner punctuation are kept, so ``Amélie`` and ``Amelie`` stay different answers.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = string.punctuation + "“”‘’«»"


@lru_cache(maxsize=65536)
def fold(token: str) -> str:
    """Lower-case and strip combining accents from one token."""
    decomposed = unicodedata.normalize("NFKD", token.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokens(text: str) -> list[str]:
    return [fold(m.group()) for m in _TOKEN.finditer(text)]


def normalize(text: str) -> str:
    """``"Peter_Franzén!"`` → ``"peter franzen"``."""
    return " ".join(tokens(text))


def names_said(text: str, names: Iterable[str]) -> list[str]:
    """The ``names`` whose whole normal form ``text`` says as words, in their order: "Heat" in "who directed
    heat?", not "He" in it, nor a name that normalises to nothing."""
    padded = f" {normalize(text)} "
    return [name for name in names if (key := normalize(name)) and f" {key} " in padded]


def restated(name: str, known: Iterable[str]) -> str | None:
    """The first of ``known`` whose words ``name`` repeats in part ("Wynton" of "Wynton Marsalis") or wraps in
    more words ("Wynton Marsalis's place of birth"), as a run of whole tokens; None when it does neither.

    A name an LLM writes that way is the known entity again, or a description hung on it; searched as a name of
    its own, its leftover words find whatever entity shares them ("Wynton" → "Downtown", "Place of birth").
    """
    words = tokens(name)
    for other in known:
        theirs = tokens(other)
        if words and theirs and (_runs_in(words, theirs) or _runs_in(theirs, words)):
            return other
    return None


def _runs_in(part: list[str], whole: list[str]) -> bool:
    """Whether ``part`` is a strictly shorter run of ``whole``'s tokens (so a name never restates itself)."""
    n = len(part)
    return n < len(whole) and any(whole[i : i + n] == part for i in range(len(whole) - n + 1))


def tokens_with_spans(text: str) -> list[tuple[str, int, int]]:
    return [(fold(m.group()), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def inside_compound(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a strict part of a hyphenated word ("drive" in "warp-drive-service"): a name
    found there is a different thing from the word it is part of, so it is not a mention."""
    before = start >= 2 and text[start - 1] == "-" and text[start - 2].isalnum()
    after = end + 1 < len(text) and text[end] == "-" and text[end + 1].isalnum()
    return before or after


def normalize_answer(text: str) -> str:
    """Lowercase, ``_`` → space, collapse whitespace, strip punctuation at both ends.

    >>> normalize_answer("  The_Matrix. ")
    'the matrix'
    """
    text = _SPACES.sub(" ", str(text).replace("_", " ").lower()).strip()
    return text.strip(_EDGE_PUNCT + " ")
