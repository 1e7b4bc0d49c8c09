"""Entities named by an identifier: unnamed intermediate nodes a question can never be answered with.

KGs exported from Freebase (and RDF graphs with blank nodes) join n-ary facts through nodes that have no
name of their own — a *compound value* (CVT) such as ``m.0cr320w``, standing for "Anna Bligh held the office
X for district Y from 2006 to 2012". Ingest names such a node by its identifier; a method must walk through
it to the named entities beyond, never offer it as an answer.

Whether a name is an identifier is read from its spelling, with no list of any KG's prefixes: one token
made of a short namespace and an identifier that holds digits (``m.0abc12``, ``g.11b6``, ``_:b12``,
``wd:Q42``), or letters and digits alternating at least four times with no namespace (``a3f9c2e1``).
Years, decades and codes (``1995``, ``1980s``, ``AM1200``, ``R2D2``) are not identifiers.
"""

from __future__ import annotations

import re

import numpy as np

from kgrag.graph.kg import KnowledgeGraph

_NAMESPACED = re.compile(r"(?:[A-Za-z]{1,3}[.:/]|_:)(?=[\w-]*\d)[\w-]{3,}")
_RUNS = re.compile(r"\d+|[^\W\d_]+")


def looks_like_identifier(name: str) -> bool:
    """True for names that are machine identifiers rather than names (``m.0abc12``: yes; ``1980s``: no).

    >>> [looks_like_identifier(n) for n in ("m.03l9ynf", "_:b12", "a3f9c2e1", "1980s", "AM1200", "Se7en")]
    [True, True, True, False, False, False]
    """
    if not name or any(c.isspace() for c in name):
        return False
    if _NAMESPACED.fullmatch(name):
        return True
    return len(name) >= 6 and len(_RUNS.findall(name)) >= 4 and name.isalnum()


def unnamed_entities(kg: KnowledgeGraph) -> np.ndarray:
    """Boolean array over ``kg``'s entities: True where the name is an identifier (computed once per KG)."""
    return kg.resources.get(
        ("unnamed_entities",),
        lambda: np.fromiter((looks_like_identifier(n) for n in kg.entities), dtype=bool, count=kg.num_entities),
    )
