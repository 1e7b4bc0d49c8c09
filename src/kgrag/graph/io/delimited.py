"""The readers of delimited text: ``subject|relation|object`` lines, TSV and CSV (header and column mapping).

Two readers per format: the vectorised one (:mod:`kgrag.graph.fastparse`) for clean files, and the
line-by-line one that is slower but names the bad line; both assign the same ids.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from kgrag.graph.io.builder import TripleBuilder
from kgrag.graph.io.lines import GZIP_ERRORS, decoded_lines, open_binary
from kgrag.graph.kg import KnowledgeGraph

# Header names recognised without an explicit mapping: (head, relation, tail) synonyms.
_HEAD_NAMES = ("head", "subject", "source", "src", "from", "h", "s")
_REL_NAMES = ("relation", "predicate", "rel", "edge", "type", "label", "r", "p")
_TAIL_NAMES = ("tail", "object", "target", "dst", "to", "t", "o")


def read_spo(path: Path, builder: TripleBuilder, separator: str = "|") -> None:
    """The line-by-line reader of ``subject|relation|object`` lines (MetaQA ``kb.txt``)."""
    counter = [0]
    add = builder.add
    for line in decoded_lines(path, counter):
        if not line or line.isspace():
            continue
        parts = line.split(separator)
        if len(parts) != 3:
            raise builder.fail(
                counter[0], f"expected 3 fields separated by {separator!r}, found {len(parts)}: {line[:80]!r}"
            )
        add(parts[0], parts[1], parts[2], counter[0])


def _resolve_columns(
    header: Sequence[str] | None,
    n_fields: int,
    head: str | int | None,
    relation: str | int | None,
    tail: str | int | None,
    builder: TripleBuilder,
) -> tuple[int, int, int]:
    """Map the head/relation/tail column choices to field indices (line 1 is the header for errors)."""
    wanted = (head, relation, tail)
    if header is None:
        if all(w is None for w in wanted):
            if n_fields != 3:
                raise builder.fail(
                    1, f"no header and {n_fields} columns; name the columns with --head/--relation/--tail"
                )
            return 0, 1, 2
        if not all(isinstance(w, int) for w in wanted):
            raise builder.fail(1, "the file has no header row, so --head/--relation/--tail must be column numbers")
        return wanted  # type: ignore[return-value]
    lowered = [h.strip().lower() for h in header]
    indices = []
    for choice, synonyms, what in (
        (head, _HEAD_NAMES, "head"),
        (relation, _REL_NAMES, "relation"),
        (tail, _TAIL_NAMES, "tail"),
    ):
        if isinstance(choice, int):
            idx = choice
        elif choice is not None:
            if choice not in header and choice.lower() not in lowered:
                raise builder.fail(1, f"unknown {what} column {choice!r}; columns are: {', '.join(header)}")
            idx = header.index(choice) if choice in header else lowered.index(choice.lower())
        else:
            idx = next((lowered.index(s) for s in synonyms if s in lowered), -1)
            if idx < 0:
                raise builder.fail(1, f"no {what} column found among {', '.join(header)}; pass --{what} COLUMN")
        if not 0 <= idx < len(header):
            raise builder.fail(1, f"{what} column {idx} out of range (the file has {len(header)} columns)")
        indices.append(idx)
    if len(set(indices)) != 3:
        raise builder.fail(1, f"head, relation and tail must be three different columns, got {indices}")
    return indices[0], indices[1], indices[2]


def _looks_like_header(row: Sequence[str]) -> bool:
    lowered = {c.strip().lower() for c in row}
    hits = sum(bool(lowered & set(names)) for names in (_HEAD_NAMES, _REL_NAMES, _TAIL_NAMES))
    return hits >= 2


def read_delimited(
    path: Path,
    builder: TripleBuilder,
    delimiter: str,
    head: str | int | None,
    relation: str | int | None,
    tail: str | int | None,
    header: bool | None,
) -> None:
    """The line-by-line TSV/CSV reader; ``header=None`` detects a header row from the column names."""
    counter = [0]
    lines = decoded_lines(path, counter)
    quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    reader: Iterator[list[str]] = csv.reader(lines, delimiter=delimiter, quoting=quoting, strict=True)
    if quoting != csv.QUOTE_NONE:  # only a quoted field can span lines
        reader = _rows_on_one_line(reader, builder)
    try:
        first = next(reader, None)
        while first is not None and not any(f.strip() for f in first):
            first = next(reader, None)
        if first is None:
            raise builder.fail(None, "the file is empty")
        if header is None:
            header = _looks_like_header(first) or any(isinstance(c, str) for c in (head, relation, tail))
        header_row = first if header else None
        hi, ri, ti = _resolve_columns(header_row, len(first), head, relation, tail, builder)
        width = len(first)
        add = builder.add
        rows: Iterable[list[str]] = reader if header else _chain_first(first, reader)
        for row in rows:
            if len(row) != width:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                raise builder.fail(counter[0], f"expected {width} fields, found {len(row)}")
            add(row[hi], row[ri], row[ti], counter[0])
    except csv.Error as exc:
        raise builder.fail(counter[0], f"malformed {'CSV' if delimiter == ',' else 'TSV'} ({exc})") from None


def read_vectorised(
    path: Path,
    builder: TripleBuilder,
    sep: str,
    *,
    columns: tuple[str | int | None, str | int | None, str | int | None] = (None, None, None),
    header: bool | None = False,
    quoted: bool = False,
    fixed_width: int = 0,
) -> KnowledgeGraph:
    """The fast path for clean files (see :mod:`kgrag.graph.fastparse`); raises ``Irregular`` otherwise."""
    from kgrag.graph import fastparse
    from kgrag.graph.fastparse import Irregular, read_delimited_bytes

    def resolve(first_row: list[str]) -> tuple[bool, tuple[int, int, int]]:
        if fixed_width and len(first_row) != fixed_width:
            raise Irregular("wrong number of fields")
        is_header = header
        if is_header is None:
            is_header = _looks_like_header(first_row) or any(isinstance(c, str) for c in columns)
        picks = _resolve_columns(first_row if is_header else None, len(first_row), *columns, builder)
        return bool(is_header), picks

    try:
        with open_binary(path) as fh:
            data = fh.read(fastparse.MAX_BYTES + 1)  # bounded: a gzip bomb must not expand in memory
    except GZIP_ERRORS:
        raise Irregular("corrupt gzip") from None
    if len(data) > fastparse.MAX_BYTES:
        raise Irregular("too large for the in-memory reader")
    if not data.strip():
        raise Irregular("empty")
    entities, relations, heads, rels, tails = read_delimited_bytes(data, sep, resolve, quoted=quoted)
    return KnowledgeGraph(entities, relations, heads, rels, tails)


def _rows_on_one_line(reader: Any, builder: TripleBuilder) -> Iterator[list[str]]:
    """Rows of ``reader``, refusing a quoted field that spans lines.

    The lines fed to csv have their line breaks stripped, so csv would silently join ``"r<newline>q"`` into
    ``rq``; names are stored one per line, so a line break cannot be kept either: it is an error.
    """
    before = 0
    for row in reader:
        if reader.line_num - before > 1:
            raise builder.fail(
                before + 1,
                f"a quoted field spans lines {before + 1}-{reader.line_num}; names cannot contain line breaks",
            )
        before = reader.line_num
        yield row


def _chain_first(first: list[str], rest: Iterable[list[str]]) -> Iterator[list[str]]:
    yield first
    yield from rest
