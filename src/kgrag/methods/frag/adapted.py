"""What `kgrag adapt` left for a KG, read back: its models, the LLM's relation phrasings and chosen settings.

Kept apart from the training code (:mod:`kgrag.methods.frag.adapt`) so that frag finds them without loading it.
Everything is valid only for the KG whose checksum ``adapt.json`` records, and only while every file matches
the digest it records.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection
from pathlib import Path
from typing import Any

from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.store import digest_files
from kgrag.methods.frag.router import ADAPTED_DIR

ROUTER_FILE = "frag_router.npz"
PATTERNS_FILE = "frag_patterns.npz"
SUMMARY_FILE = "adapt.json"  # written last: its presence marks a finished directory
PHRASING_PARTS = ("ask_object", "ask_subject", "object_phrase", "subject_phrase")  # in adapt.json, per relation
SETTINGS_KEY = "frag_settings"  # in adapt.json: settings frag takes on this KG unless the caller sets them

log = logging.getLogger("kgrag.adapt")


def adapted_models(kg: KnowledgeGraph, record: dict[str, Any] | None) -> tuple[Path | None, Path | None]:
    """Paths of the router and pattern scorer `kgrag adapt` kept for ``kg``, each None when absent.

    ``record`` is ``kg``'s :func:`record_of` (read once by the caller, which may need all three readings);
    both are None when it is None (no valid adaptation for ``kg``).

    >>> kg = load_kg("my-kg")  # doctest: +SKIP
    >>> router, patterns = adapted_models(kg, record_of(kg))  # doctest: +SKIP
    """
    if record is None:
        return None, None
    target = kg.store_path / ADAPTED_DIR  # type: ignore[operator]
    router, patterns = target / ROUTER_FILE, target / PATTERNS_FILE
    return (router if router.is_file() else None), (patterns if patterns.is_file() else None)


def adapted_phrasings(kg: KnowledgeGraph, record: dict[str, Any] | None) -> dict[int, tuple[str, ...]]:
    """What the LLM wrote for each relation during `kgrag adapt --describe` (questions and phrases, the fact's
    name as ``{x}``), by relation id, from ``kg``'s :func:`record_of`; empty when there is no valid adaptation
    for ``kg`` or it phrased nothing. The zero-shot pattern scorer reads them as more words for the relation,
    whether or not adapt kept a model."""
    phrasings = record.get("relation_phrasings") if record else None
    if not isinstance(phrasings, dict):
        return {}
    index = {name: i for i, name in enumerate(kg.relations)}
    out: dict[int, tuple[str, ...]] = {}
    for name, parts in phrasings.items():
        if name in index and isinstance(parts, dict):
            lines = [x for key in PHRASING_PARTS for x in parts.get(key) or () if isinstance(x, str)]
            if lines:
                out[index[name]] = tuple(lines)
    return out


def adapted_settings(record: dict[str, Any] | None, unless_set: Collection[str] = ()) -> dict[str, Any]:
    """frag settings `kgrag adapt` chose for a KG (``question_fit`` when its check passed:
    :mod:`kgrag.methods.frag.fit_check`), from its :func:`record_of`, except those in ``unless_set`` (what
    the caller set itself); empty when it chose none or there is no valid adaptation."""
    chosen = record.get(SETTINGS_KEY) if record else None
    return {k: v for k, v in chosen.items() if k not in unless_set} if isinstance(chosen, dict) else {}


def record_of(kg: KnowledgeGraph) -> dict[str, Any] | None:
    """``adapt.json`` of ``kg``'s adaptation, or None when absent, made for another version of the KG, or when
    a file differs from the digest it records (edited or damaged after it was written: the store's manifest
    cannot cover files written later). A mismatch is logged (logger ``kgrag.adapt``), as derived data that
    must be rebuilt; ``kgrag adapt`` rebuilds it."""
    if kg.store_path is None or kg.checksum is None:
        return None
    target = kg.store_path / ADAPTED_DIR
    try:
        record = json.loads((target / SUMMARY_FILE).read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable (%s); run `kgrag adapt` again", target / SUMMARY_FILE, exc)
        return None
    if not isinstance(record, dict) or record.get("kg_checksum") != kg.checksum:
        log.warning("%s: made for another version of this KG; run `kgrag adapt` again", target)
        return None
    if record.get("files") != digest_files(target, exclude=frozenset({SUMMARY_FILE})):
        log.warning("%s: files differ from those `kgrag adapt` wrote; run `kgrag adapt` again", target)
        return None
    return record
