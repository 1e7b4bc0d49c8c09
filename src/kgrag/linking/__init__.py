"""Entity linking: mapping words of a question (or LLM-extracted mentions) to KG entities.

>>> from kgrag.linking import HybridLinker          # doctest: +SKIP
>>> HybridLinker(kg).link_text("who directed Kismet").as_json()  # doctest: +SKIP
{'text': 'who directed Kismet', 'mentions': [{'text': 'Kismet', 'start': 13, 'end': 19, 'candidates': [...]}]}
"""

from kgrag.linking.base import Candidate, Linker, LinkResult, Span
from kgrag.linking.hybrid import HybridLinker
from kgrag.linking.names import NameIndex
from kgrag.linking.normalize import normalize

__all__ = ["Candidate", "HybridLinker", "LinkResult", "Linker", "NameIndex", "Span", "normalize"]
