"""Loading KGs from the formats users have, and writing them back.

Formats (auto-detected from the extension, then from the first line; ``.gz`` is always accepted):

==========  ==========================================================================================
``spo``     ``subject|relation|object`` per line, no header (MetaQA ``kb.txt``)
``tsv``     tab-separated; header optional (auto-detected), column mapping via ``head/relation/tail``
``csv``     comma-separated with quoting; same column rules as ``tsv``
``jsonl``   one JSON object per line with ``head``, ``relation``, ``tail`` (or the mapped keys)
``nt``      N-Triples; IRIs become their (percent-decoded) local names, ``rdfs:label`` values become
            entity and relation names (two IRIs with the same short name keep their full IRIs apart; a
            predicate without a label of its own takes that of the one labelled IRI with its local name)
==========  ==========================================================================================

Every malformed input raises :class:`~kgrag.errors.KGFormatError` with ``path:line: what is wrong``.
Names are stored one per line in UTF-8, so a name (entity, relation or alias) with a line break (``\n`` or
``\r``, however it was written: a quoted CSV field over two lines, a JSON or N-Triples escape, ``%0A`` in an
IRI) or with a lone surrogate (``\ud800``) is refused with its ``path:line`` rather than altered; every other
character is stored as written.  JSONL numbers are kept as written (``8.60`` stays ``8.60``, a 5,000-digit
integer is not converted); ``NaN`` and ``Infinity`` are not JSON and are refused.  A gzip input that is
corrupt is reported as such even when the garbage it decompresses to fails to parse first, and a line longer
than ``MAX_LINE`` (64 MiB) is refused rather than held in memory.
Parsing streams line by line and interns names immediately, so peak memory is the name dictionary plus
the int32 triple arrays, never a list of row objects.

This package is the one import users need; one module per input format (``delimited``, ``jsonl``,
``ntriples``, ``in_memory``), the shared name interning (``builder``) and line reading (``lines``), format
detection (``formats``) and ``writers``.
"""

from __future__ import annotations

import re
from pathlib import Path

from kgrag.errors import KGFormatError
from kgrag.graph.io.builder import TripleBuilder
from kgrag.graph.io.delimited import read_delimited, read_spo, read_vectorised
from kgrag.graph.io.formats import FORMATS, detect_format, detect_format_from_name
from kgrag.graph.io.in_memory import load_dataframe, load_networkx
from kgrag.graph.io.jsonl import read_jsonl
from kgrag.graph.io.lines import MAX_LINE, gzip_damage
from kgrag.graph.io.ntriples import read_nt
from kgrag.graph.io.writers import write_file
from kgrag.graph.kg import KnowledgeGraph

__all__ = [
    "FORMATS",
    "MAX_LINE",
    "TripleBuilder",
    "detect_format",
    "detect_format_from_name",
    "load_dataframe",
    "load_file",
    "load_networkx",
    "write_file",
]


def load_file(
    path: str | Path,
    format: str = "auto",
    *,
    head: str | int | None = None,
    relation: str | int | None = None,
    tail: str | int | None = None,
    header: bool | None = None,
    notes: list[str] | None = None,
) -> KnowledgeGraph:
    """Load a KG from a triples file.

    ``head/relation/tail`` pick columns (names, or 0-based numbers) for tsv/csv and keys for jsonl;
    ``header`` forces header detection on or off for tsv/csv. ``notes``, when given, receives what the reader
    chose (the format, which columns it took) for the user to check.

    >>> kg = load_file("kb.txt.gz")  # doctest: +SKIP
    """
    path = Path(path)
    if not path.exists():
        raise KGFormatError(str(path), None, "no such file")
    if path.is_dir():
        raise KGFormatError(str(path), None, "is a directory, expected a triples file")
    fmt = detect_format(path) if format == "auto" else format
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {format!r}; choose one of auto, {', '.join(FORMATS)}")
    builder = TripleBuilder(source=str(path))
    builder.notes.append(f"format: {fmt}" + (" (from the file's name and first lines)" if format == "auto" else ""))
    kg = _load(path, fmt, builder, (head, relation, tail), header)
    opaque = [r for r in kg.relations if _IDENTIFIER.fullmatch(r)]
    if len(opaque) * 2 >= kg.num_relations:
        builder.notes.append(
            f"warning: {len(opaque)} of {kg.num_relations} relation names look like identifiers "
            f"({', '.join(opaque[:3])}{', …' if len(opaque) > 3 else ''}): every method matches relation names to "
            "the question's words, so give them names (an rdfs:label per predicate in N-Triples, or rename them)"
        )
    if notes is not None:
        notes.extend(dict.fromkeys(builder.notes))  # the fast reader and the line reader may both note a choice
    return kg


# A relation named like an identifier (Wikidata's P50, r12, REL_0042) says nothing a question could match.
_IDENTIFIER = re.compile(r"[A-Za-z]{0,4}[-_:]?[0-9]+")

Columns = tuple[str | int | None, str | int | None, str | int | None]  # head, relation, tail


def _load(path: Path, fmt: str, builder: TripleBuilder, columns: Columns, header: bool | None) -> KnowledgeGraph:
    """The vectorised reader where the format allows and the file is clean, else the line-by-line one."""
    if fmt in ("spo", "tsv", "csv"):
        from kgrag.graph.fastparse import Irregular

        try:
            if fmt == "spo":
                return read_vectorised(path, builder, "|", fixed_width=3)
            return read_vectorised(
                path,
                builder,
                "\t" if fmt == "tsv" else ",",
                columns=columns,
                header=header,
                quoted=fmt == "csv",
            )
        except Irregular:
            pass  # the line-by-line reader below finds and reports what is wrong
    try:
        _read_lines(path, fmt, builder, columns, header)
    except KGFormatError as exc:
        raise (gzip_damage(path) or exc) from None
    return builder.build()


def _read_lines(path: Path, fmt: str, builder: TripleBuilder, columns: Columns, header: bool | None) -> None:
    """The line-by-line reader of ``fmt``: slower than the vectorised one, but it names the bad line."""
    head, relation, tail = columns
    if fmt == "spo":
        read_spo(path, builder)
    elif fmt in ("tsv", "csv"):
        read_delimited(path, builder, "\t" if fmt == "tsv" else ",", head, relation, tail, header)
    elif fmt == "jsonl":
        read_jsonl(path, builder, str(head or "head"), str(relation or "relation"), str(tail or "tail"))
    else:
        read_nt(path, builder)
