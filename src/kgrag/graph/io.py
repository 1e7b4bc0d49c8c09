"""Loading KGs from the formats users have, and writing them back.

Formats (auto-detected from the extension, then from the first line; ``.gz`` is always accepted):

==========  ==========================================================================================
``spo``     ``subject|relation|object`` per line, no header (MetaQA ``kb.txt``)
``tsv``     tab-separated; header optional (auto-detected), column mapping via ``head/relation/tail``
``csv``     comma-separated with quoting; same column rules as ``tsv``
``jsonl``   one JSON object per line with ``head``, ``relation``, ``tail`` (or the mapped keys)
``nt``      N-Triples; IRIs become their (percent-decoded) local names, ``rdfs:label`` values become
            entity names (two IRIs with the same short name keep their full IRIs apart)
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
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote, unquote

import numpy as np

from kgrag.errors import KGFormatError
from kgrag.graph.kg import KnowledgeGraph

FORMATS = ("spo", "tsv", "csv", "jsonl", "nt")
_EXTENSIONS = {
    ".spo": "spo",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".nt": "nt",
}
# Header names recognised without an explicit mapping: (head, relation, tail) synonyms.
_HEAD_NAMES = ("head", "subject", "source", "src", "from", "h", "s")
_REL_NAMES = ("relation", "predicate", "rel", "edge", "type", "label", "r", "p")
_TAIL_NAMES = ("tail", "object", "target", "dst", "to", "t", "o")


class TripleBuilder:
    """Interns names to ids as triples stream in, then builds a :class:`KnowledgeGraph`.

    ``source`` names the input in error messages; ``line`` arguments are 1-based.
    """

    def __init__(self, source: str = "<input>") -> None:
        self.source = source
        self.entity_ids: dict[str, int] = {}
        self.relation_ids: dict[str, int] = {}
        self.heads = array("i")
        self.rels = array("i")
        self.tails = array("i")
        self.aliases: dict[int, list[str]] = {}

    def fail(self, line: int | None, problem: str) -> KGFormatError:
        return KGFormatError(self.source, line, problem)

    def check_name(self, value: str, line: int | None, what: str) -> str:
        """``value`` if the store can keep it exactly (see the module doc), else a ``path:line`` error."""
        if not value or value.isspace():
            raise self.fail(line, f"empty {what}")
        if "\n" in value or "\r" in value:
            raise self.fail(line, f"{what} contains a line break: {value[:60]!r}")
        if not value.isascii():  # isascii is O(1); only non-ASCII names can hold a surrogate
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = ord(value[exc.start])
                raise self.fail(
                    line, f"{what} contains a lone surrogate (U+{bad:04X}), which UTF-8 cannot store"
                ) from None
        return value

    def _first_seen(self, ids: dict[str, int], name: str, line: int | None, what: str) -> int:
        """A new id for ``name`` once it passes :meth:`check_name`: each distinct name is checked once."""
        new = ids[self.check_name(name, line, what)] = len(ids)
        return new

    def add(self, head: str, relation: str, tail: str, line: int | None = None) -> None:
        ents, rels = self.entity_ids, self.relation_ids
        h, r, t = ents.get(head), rels.get(relation), ents.get(tail)  # inline: this runs once per triple
        if h is None:
            h = self._first_seen(ents, head, line, "head")
        if r is None:
            r = self._first_seen(rels, relation, line, "relation")
        if t is None:
            t = ents.get(tail)  # tail may equal head
            if t is None:
                t = self._first_seen(ents, tail, line, "tail")
        self.heads.append(h)
        self.rels.append(r)
        self.tails.append(t)

    def add_entity(self, name: str, line: int | None = None) -> int:
        """Intern an entity that may have no triples (e.g. an isolated node of a networkx graph)."""
        known = self.entity_ids.get(name)
        return known if known is not None else self._first_seen(self.entity_ids, name, line, "entity name")

    def add_aliases(self, name: str, aliases: Iterable[str], line: int | None = None) -> None:
        eid = self.entity_ids.get(name)
        if eid is None:
            return
        known = self.aliases.setdefault(eid, [])
        for alias in aliases:
            if alias and alias != name and alias not in known:
                known.append(self.check_name(alias, line, "alias"))

    def build(self) -> KnowledgeGraph:
        if not self.heads:
            raise self.fail(None, "no triples found (the input is empty)")
        return KnowledgeGraph(
            list(self.entity_ids),
            list(self.relation_ids),
            np.frombuffer(self.heads, dtype=np.int32),
            np.frombuffer(self.rels, dtype=np.int32),
            np.frombuffer(self.tails, dtype=np.int32),
            aliases={k: v for k, v in self.aliases.items() if v},
        )


# ---------------------------------------------------------------------- reading raw lines
_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)  # zlib.error: a damaged deflate stream
# Longest line (line ending included) the line-by-line reader holds in memory; a longer one is an error, so a
# few MB of gzip that expand to one multi-GB line (a "zip bomb") cannot exhaust memory.
MAX_LINE = 1 << 26


def _open_binary(path: Path) -> IO[bytes]:
    fh = open(path, "rb")  # noqa: SIM115 - returned to the caller, closed there
    magic = fh.read(2)
    fh.seek(0)
    if magic == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    return fh


def _decoded_lines(path: Path, counter: list[int]) -> Iterator[str]:
    """Yield text lines (line ending stripped), counting them in ``counter[0]``; bad UTF-8 is an error."""
    try:
        with _open_binary(path) as fh:
            for raw in iter(lambda: fh.readline(MAX_LINE + 1), b""):
                counter[0] += 1
                if len(raw) > MAX_LINE:
                    raise KGFormatError(
                        str(path), counter[0], f"line longer than {MAX_LINE} bytes; no triple line is that long"
                    )
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise KGFormatError(
                        str(path),
                        counter[0],
                        f"not valid UTF-8 (byte {raw[exc.start]:#04x} at column "
                        f"{exc.start + 1}); re-encode the file as UTF-8",
                    ) from None
                if counter[0] == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                yield line.rstrip("\r\n")
    except _GZIP_ERRORS as exc:
        raise KGFormatError(str(path), counter[0] or None, f"corrupt gzip data ({exc})") from None


def _gzip_damage(path: Path) -> KGFormatError | None:
    """The error for a corrupt gzip ``path``, else None (also None for a file that is not gzip).

    Deflate decodes damaged data into plausible garbage, and the CRC is checked only at the end, so a parse
    error in a gzip file may really be corruption; this decompresses the whole file to tell which.
    """
    with open(path, "rb") as fh:
        if fh.read(2) != _GZIP_MAGIC:
            return None
    counter = [0]
    try:
        for _ in _decoded_lines(path, counter):
            pass
    except KGFormatError as exc:
        return exc if "corrupt gzip" in exc.problem else None
    return None


def detect_format(path: str | Path) -> str:
    """Guess the format of ``path`` from its extension (``.gz`` ignored), else from its first line."""
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".gzip"):
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _EXTENSIONS:
        return _EXTENSIONS[suffixes[-1]]
    counter = [0]
    first = ""
    for line in _decoded_lines(path, counter):
        if line.strip() and not line.startswith("#"):
            first = line
            break
    if not first:
        raise KGFormatError(str(path), None, "the file is empty")
    if first.lstrip().startswith("{"):
        return "jsonl"
    if _NT_LINE.match(first):
        return "nt"
    if first.count("|") == 2:
        return "spo"
    if "\t" in first:
        return "tsv"
    if "," in first:
        return "csv"
    raise KGFormatError(
        str(path),
        counter[0],
        "cannot tell the format from the first line; pass --format (spo|tsv|csv|jsonl|nt)",
    )


# ---------------------------------------------------------------------- format readers
def _read_spo(path: Path, builder: TripleBuilder, separator: str = "|") -> None:
    counter = [0]
    add = builder.add
    for line in _decoded_lines(path, counter):
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


def _read_delimited(
    path: Path,
    builder: TripleBuilder,
    delimiter: str,
    head: str | int | None,
    relation: str | int | None,
    tail: str | int | None,
    header: bool | None,
) -> None:
    counter = [0]
    lines = _decoded_lines(path, counter)
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


def _read_vectorised(
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
        with _open_binary(path) as fh:
            data = fh.read(fastparse.MAX_BYTES + 1)  # bounded: a gzip bomb must not expand in memory
    except _GZIP_ERRORS:
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


def _scalar(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, (int, float)):
        return str(value)
    return None


def _not_a_json_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


# Built once: json.loads(..., parse_int=...) would build a decoder per line (half the reader's time).
_JSON = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=_not_a_json_number)


def _parse_json_line(line: str, builder: TripleBuilder, line_no: int) -> Any:
    """One JSONL line, numbers kept as their text (no float rounding, no int digit limit)."""
    try:
        return _JSON.decode(line)
    except json.JSONDecodeError as exc:
        raise builder.fail(line_no, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise builder.fail(line_no, "JSON nested too deeply") from None
    except ValueError as exc:
        raise builder.fail(line_no, f"invalid JSON ({exc})") from None


def _aliases(value: Any, builder: TripleBuilder, line_no: int) -> dict[str, list[str]]:
    """A JSONL ``aliases`` value, which must map names to lists of strings (numbers are kept as written).

    Anything else is an error: it used to be skipped, or turned into text like ``"['x']"``, silently.
    """
    if isinstance(value, dict) and all(
        isinstance(names, list) and all(isinstance(n, str) for n in names) for names in value.values()
    ):
        return value
    raise builder.fail(line_no, f"'aliases' must map names to lists of strings, not {str(value)[:60]}")


def _read_jsonl(path: Path, builder: TripleBuilder, head: str, relation: str, tail: str) -> None:
    counter = [0]
    keys = (head, relation, tail)
    for line in _decoded_lines(path, counter):
        if not line.strip():
            continue
        obj = _parse_json_line(line, builder, counter[0])
        if not isinstance(obj, dict):
            raise builder.fail(counter[0], f"expected a JSON object, found {type(obj).__name__}")
        values = []
        for key in keys:
            if key not in obj:
                raise builder.fail(counter[0], f"missing key {key!r} (keys: {', '.join(map(str, obj))})")
            value = _scalar(obj[key])
            if value is None:
                raise builder.fail(counter[0], f"key {key!r} must be a string or number, not {obj[key]!r}")
            values.append(value)
        builder.add(values[0], values[1], values[2], counter[0])
        if "aliases" in obj:
            for name, names in _aliases(obj["aliases"], builder, counter[0]).items():
                builder.add_aliases(name, names, counter[0])


_NT_TERM = r'(<[^>]*>|_:[A-Za-z0-9_.\-]+|"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9\-]+|\^\^<[^>]*>)?)'
_NT_LINE = re.compile(rf"^\s*{_NT_TERM}\s+{_NT_TERM}\s+{_NT_TERM}\s*\.\s*(#.*)?$")
_LABEL_PREDICATES = {
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name",
    "https://schema.org/name",
}
_NT_ESCAPES = re.compile(r'\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf"\'\\])')
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


class _BadTerm(ValueError):
    """An N-Triples term that names no text (the reader adds the path and line)."""


def _unescape(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] not in "uU":
            return _SIMPLE_ESCAPES[code]
        if int(code[1:], 16) > 0x10FFFF:
            raise _BadTerm(f"escape \\{code} is not a Unicode code point")
        return chr(int(code[1:], 16))

    return _NT_ESCAPES.sub(repl, text)


def _iri_local_name(iri: str) -> str:
    body = iri.rstrip("/#")
    cut = max(body.rfind("#"), body.rfind("/"), body.rfind(":"))
    try:  # strict: invalid UTF-8 would otherwise become U+FFFD silently
        return unquote(body[cut + 1 :], errors="strict") or iri
    except UnicodeDecodeError:
        raise _BadTerm(f"percent-encoded bytes in <{iri[:80]}> are not UTF-8") from None


def _read_nt(path: Path, builder: TripleBuilder) -> None:
    """N-Triples: names come from label predicates when present, else from IRI local names."""
    counter = [0]
    raw: list[tuple[str, str, str, int]] = []
    labels: dict[str, str] = {}
    for line in _decoded_lines(path, counter):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _NT_LINE.match(line)
        if not m:
            raise builder.fail(counter[0], f"not an N-Triples statement: {stripped[:80]!r}")
        s, p, o = m.group(1), m.group(2), m.group(3)
        if p[0] != "<":
            raise builder.fail(counter[0], f"the predicate must be an IRI, found {p[:40]!r}")
        if s[0] == '"':
            raise builder.fail(counter[0], "the subject of a triple cannot be a literal")
        if p[1:-1] in _LABEL_PREDICATES and o[0] == '"':
            try:
                label = _unescape(o[1 : o.rindex('"')])
            except _BadTerm as exc:
                raise builder.fail(counter[0], str(exc)) from None
            if label.strip():  # an empty label is not used (the IRI names the entity), so it is no error
                builder.check_name(label, counter[0], "label")  # a bad one is blamed on its own line
            labels.setdefault(s, label)
            continue
        raw.append((s, p, o, counter[0]))
    names: dict[str, str] = {}
    taken: dict[str, str] = {}

    def name_of(term: str) -> str:
        known = names.get(term)
        if known is not None:
            return known
        if term[0] == '"':
            name = _unescape(term[1 : term.rindex('"')])
        else:
            name = labels.get(term) or (_iri_local_name(term[1:-1]) if term[0] == "<" else term)
            owner = taken.setdefault(name, term)
            if owner != term:  # two IRIs share a label/local name: keep them apart
                name = term[1:-1] if term[0] == "<" else term
        names[term] = name
        return name

    for s, p, o, line_no in raw:
        try:
            builder.add(name_of(s), _iri_local_name(p[1:-1]), name_of(o), line_no)
        except _BadTerm as exc:
            raise builder.fail(line_no, str(exc)) from None


# ---------------------------------------------------------------------- public loaders
def load_file(
    path: str | Path,
    format: str = "auto",
    *,
    head: str | int | None = None,
    relation: str | int | None = None,
    tail: str | int | None = None,
    header: bool | None = None,
) -> KnowledgeGraph:
    """Load a KG from a triples file.

    ``head/relation/tail`` pick columns (names, or 0-based numbers) for tsv/csv and keys for jsonl;
    ``header`` forces header detection on or off for tsv/csv.

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
    if fmt in ("spo", "tsv", "csv"):
        from kgrag.graph.fastparse import Irregular

        try:
            if fmt == "spo":
                return _read_vectorised(path, builder, "|", fixed_width=3)
            return _read_vectorised(
                path,
                builder,
                "\t" if fmt == "tsv" else ",",
                columns=(head, relation, tail),
                header=header,
                quoted=fmt == "csv",
            )
        except Irregular:
            pass  # the line-by-line reader below finds and reports what is wrong
    try:
        _read_lines(path, fmt, builder, head, relation, tail, header)
    except KGFormatError as exc:
        raise (_gzip_damage(path) or exc) from None
    return builder.build()


def _read_lines(
    path: Path,
    fmt: str,
    builder: TripleBuilder,
    head: str | int | None,
    relation: str | int | None,
    tail: str | int | None,
    header: bool | None,
) -> None:
    """The line-by-line reader of ``fmt``: slower than the vectorised one, but it names the bad line."""
    if fmt == "spo":
        _read_spo(path, builder)
    elif fmt in ("tsv", "csv"):
        _read_delimited(path, builder, "\t" if fmt == "tsv" else ",", head, relation, tail, header)
    elif fmt == "jsonl":
        _read_jsonl(path, builder, str(head or "head"), str(relation or "relation"), str(tail or "tail"))
    else:
        _read_nt(path, builder)


def load_dataframe(df: Any, head: str = "head", relation: str = "relation", tail: str = "tail") -> KnowledgeGraph:
    """Build a KG from a pandas DataFrame; errors name the row as ``<DataFrame>:ROW`` (1-based)."""
    builder = TripleBuilder(source="<DataFrame>")
    columns = [str(c) for c in df.columns]
    for choice, what in ((head, "head"), (relation, "relation"), (tail, "tail")):
        if choice not in df.columns:
            raise builder.fail(None, f"unknown {what} column {choice!r}; columns are: {', '.join(columns)}")
    if len(df) == 0:
        raise builder.fail(None, "the DataFrame has no rows")
    cols = []
    for choice, what in ((head, "head"), (relation, "relation"), (tail, "tail")):
        series = df[choice]
        missing = series.isna().to_numpy()
        if missing.any():
            raise builder.fail(int(np.argmax(missing)) + 1, f"missing value in {what} column {choice!r}")
        values = series.astype(str).tolist()
        cols.append(values)
    add = builder.add
    for i, (h, r, t) in enumerate(zip(*cols), start=1):
        add(h, r, t, i)
    return builder.build()


def load_networkx(graph: Any, relation_attr: str = "relation") -> KnowledgeGraph:
    """Build a KG from a networkx (Multi)(Di)Graph.

    The relation of an edge is its ``relation_attr`` attribute, else its ``label`` or ``type`` attribute, else
    (for multigraphs) its string key.  A node's name is its ``name`` attribute if set, else ``str(node)``.
    """
    builder = TripleBuilder(source="<networkx graph>")
    names = {node: str(data.get("name", node)) for node, data in graph.nodes(data=True)}
    for node in graph.nodes:
        builder.add_entity(names[node])
    if graph.is_multigraph():
        edges = ((u, v, k, d) for u, v, k, d in graph.edges(keys=True, data=True))
    else:
        edges = ((u, v, None, d) for u, v, d in graph.edges(data=True))
    for i, (u, v, key, data) in enumerate(edges, start=1):
        rel = data.get(relation_attr, data.get("label", data.get("type")))
        if rel is None and isinstance(key, str):
            rel = key
        if rel is None:
            raise builder.fail(i, f"edge ({u!r}, {v!r}) has no {relation_attr!r} attribute")
        builder.add(names[u], str(rel), names[v], i)
    return builder.build()


# ---------------------------------------------------------------------- writers
_NT_BASE = "urn:kgrag:"


def write_file(kg: KnowledgeGraph, path: str | Path, format: str | None = None) -> Path:
    """Write ``kg``'s triples to ``path`` in ``format`` (default: from the extension); ``.gz`` compresses.

    Used for export and for round-trip tests: loading the written file gives back the same KG.
    """
    path = Path(path)
    fmt = format or detect_format_from_name(path)
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        _write_triples(kg, tmp, fmt, opener)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(path)
    return path


def _write_triples(kg: KnowledgeGraph, tmp: Path, fmt: str, opener: Any) -> None:
    with opener(tmp, "wt", encoding="utf-8", newline="") as fh:
        triples = kg.iter_triples()
        if fmt == "spo":
            for h, r, t in triples:
                if "|" in h + r + t:
                    raise ValueError(f"cannot write {h!r} {r!r} {t!r} as spo: a name contains '|'")
                fh.write(f"{h}|{r}|{t}\n")
        elif fmt == "tsv":
            fh.write("head\trelation\ttail\n")
            for h, r, t in triples:
                if "\t" in h + r + t:
                    raise ValueError(f"cannot write {h!r} {r!r} {t!r} as tsv: a name contains a tab")
                fh.write(f"{h}\t{r}\t{t}\n")
        elif fmt == "csv":
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["head", "relation", "tail"])
            writer.writerows(triples)
        elif fmt == "jsonl":
            for h, r, t in triples:
                fh.write(json.dumps({"head": h, "relation": r, "tail": t}, ensure_ascii=False) + "\n")
        elif fmt == "nt":
            for h, r, t in triples:
                fh.write(
                    f"<{_NT_BASE}e/{quote(h, safe='')}> <{_NT_BASE}r/{quote(r, safe='')}> "
                    f"<{_NT_BASE}e/{quote(t, safe='')}> .\n"
                )
        else:
            raise ValueError(f"unknown format {fmt!r}")


def detect_format_from_name(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _EXTENSIONS:
        return _EXTENSIONS[suffixes[-1]]
    if suffixes and suffixes[-1] == ".txt":
        return "spo"
    raise ValueError(f"cannot tell the format from {path.name!r}; pass format=")
