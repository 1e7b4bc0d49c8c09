"""One normalisation for names and questions, so that a mention and an entity name meet in the same form.

Lower case, accents stripped (``Franzén`` → ``franzen``), underscores and punctuation treated as separators:
``"Some Mother's Son"`` → tokens ``some mother s son``.  :func:`tokens_with_spans` keeps each token's
character span in the original text so a match can be reported where the user wrote it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


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


def tokens_with_spans(text: str) -> list[tuple[str, int, int]]:
    return [(fold(m.group()), m.start(), m.end()) for m in _TOKEN.finditer(text)]
