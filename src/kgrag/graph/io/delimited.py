"""The readers of delimited text: ``subject|relation|object`` lines, TSV and CSV (header and column mapping).

Two readers per format: the vectorised one (:mod:`kgrag.graph.fastparse`) for clean files, and the
line-by-line one that is slower but names the bad line; both assign the same ids.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator, Sequence
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


_SEPARATOR_HINTS = (
    (";", "the fields look separated by semicolons, which kgrag does not read: use commas (csv), tabs (tsv) or '|'"),
    ("|", "the fields look separated by '|': pass --format spo"),
    ("\t", "the fields look separated by tabs: pass --format tsv"),
    (",", "the fields look separated by commas: pass --format csv"),
)


def _column_hint(first_row: Sequence[str] | None) -> str:
    """What to do about a first line that does not split into three columns: name another separator when the
    line splits into three by it (a ``;``-separated file read as CSV is one column, not a missing header)."""
    line = "".join(first_row or ())
    hints = [hint for sep, hint in _SEPARATOR_HINTS if len(line.split(sep)) == 3]
    return hints[0] if hints else "name the columns with --head/--relation/--tail"


def _resolve_columns(
    header: Sequence[str] | None,
    n_fields: int,
    head: str | int | None,
    relation: str | int | None,
    tail: str | int | None,
    builder: TripleBuilder,
    header_line: Sequence[str] | None = None,
) -> tuple[int, int, int]:
    """Map the head/relation/tail column choices to field indices (line 1 is the header for errors);
    ``header_line`` is the first row as read, for the hint when it is not three columns."""
    wanted = (head, relation, tail)
    if header is None:
        if all(w is None for w in wanted):
            if n_fields != 3:
                raise builder.fail(1, f"no header and {n_fields} columns; {_column_hint(header_line)}")
            builder.notes.append("no header row: columns 1, 2, 3 → head, relation, tail")
            return 0, 1, 2
        if not all(isinstance(w, int) for w in wanted):
            raise builder.fail(1, "the file has no header row, so --head/--relation/--tail must be column numbers")
        numbers = ", ".join(str(int(w) + 1) for w in wanted)  # type: ignore[arg-type]
        builder.notes.append(f"no header row: columns {numbers} → head, relation, tail")
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
    builder.notes.append(
        "header row: " + ", ".join(f"{header[i]!r} → {what}" for i, what in zip(indices, ("head", "relation", "tail")))
    )
    return indices[0], indices[1], indices[2]


def _header_hits(row: Sequence[str]) -> int:
    """How many of head / relation / tail the row names with a recognised column name."""
    lowered = {c.strip().lower() for c in row}
    return sum(bool(lowered & set(names)) for names in (_HEAD_NAMES, _REL_NAMES, _TAIL_NAMES))


def _looks_like_header(row: Sequence[str]) -> bool:
    return _header_hits(row) >= 2


LOOKAHEAD_ROWS = 1000


def _header_by_lookahead(first: Sequence[str], later: Sequence[Sequence[str]]) -> bool:
    """Whether ``first`` is a header row, judged with the rows after it where its names alone cannot tell.

    Two recognised column names make a header. One (``node_a,edge,node_b``) could as well be a triple whose
    relation is called ``edge`` or ``type``: it is a header when, in the rows after it, its middle value is never
    a relation and its other values are never entities — a header's names are not data.
    """
    if _looks_like_header(first):
        return True
    if _header_hits(first) != 1 or len(first) != 3:
        return False
    relations = {row[1] for row in later if len(row) == 3}
    entities = {v for row in later if len(row) == 3 for v in (row[0], row[2])}
    return first[1] not in relations and first[0] not in entities and first[2] not in entities


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
    done = [0]  # the line the last whole row ended on: a row that fails started on the next one
    if quoting != csv.QUOTE_NONE:  # only a quoted field can span lines
        reader = _rows_on_one_line(reader, builder, done)
    numbered = ((row, counter[0]) for row in reader)  # each row with the line it ends on, for errors
    try:
        first, first_line = next(numbered, (None, 0))
        while first is not None and not any(f.strip() for f in first):
            first, first_line = next(numbered, (None, 0))
        if first is None:
            raise builder.fail(None, "the file is empty")
        later = list(itertools.islice(numbered, LOOKAHEAD_ROWS))
        if header is None:
            header = _header_by_lookahead(first, [row for row, _ in later])
            header = header or any(isinstance(c, str) for c in (head, relation, tail))
        header_row = first if header else None
        hi, ri, ti = _resolve_columns(header_row, len(first), head, relation, tail, builder, first)
        width = len(first)
        add = builder.add
        rows = itertools.chain([] if header else [(first, first_line)], later, numbered)
        for row, line in rows:
            if len(row) != width:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                raise builder.fail(line, f"expected {width} fields, found {len(row)}")
            add(row[hi], row[ri], row[ti], line)
    except csv.Error as exc:
        kind = "CSV" if delimiter == "," else "TSV"
        if "end of data" in str(exc):  # csv read on to the end looking for the quote that closes a field
            raise builder.fail(done[0] + 1, f"malformed {kind}: a quote opens here and is never closed") from None
        raise builder.fail(counter[0], f"malformed {kind} ({exc})") from None


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
        if is_header is None and _header_hits(first_row) == 1:
            raise Irregular("a header row only the rows after it can tell")  # the line reader looks ahead
        if is_header is None:
            is_header = _looks_like_header(first_row) or any(isinstance(c, str) for c in columns)
        picks = _resolve_columns(first_row if is_header else None, len(first_row), *columns, builder, first_row)
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


def _rows_on_one_line(reader: Any, builder: TripleBuilder, done: list[int]) -> Iterator[list[str]]:
    """Rows of ``reader``, refusing a quoted field that spans lines; ``done[0]`` is kept at the line the last
    row ended on.

    The lines fed to csv have their line breaks stripped, so csv would silently join ``"r<newline>q"`` into
    ``rq``; names are stored one per line, so a line break cannot be kept either: it is an error.
    """
    for row in reader:
        before = done[0]
        if reader.line_num - before > 1:
            raise builder.fail(
                before + 1,
                f"a quoted field spans lines {before + 1}-{reader.line_num}; names cannot contain line breaks",
            )
        done[0] = reader.line_num
        yield row
