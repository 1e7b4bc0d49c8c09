"""The N-Triples reader: IRIs become their local names, label predicates name entities."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from kgrag.graph.io.builder import TripleBuilder
from kgrag.graph.io.lines import decoded_lines

_NT_TERM = r'(<[^>]*>|_:[A-Za-z0-9_.\-]+|"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9\-]+|\^\^<[^>]*>)?)'
NT_LINE = re.compile(rf"^\s*{_NT_TERM}\s+{_NT_TERM}\s+{_NT_TERM}\s*\.\s*(#.*)?$")
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


def read_nt(path: Path, builder: TripleBuilder) -> None:
    """N-Triples: names come from label predicates when present, else from IRI local names."""
    counter = [0]
    raw: list[tuple[str, str, str, int]] = []
    labels: dict[str, str] = {}
    for line in decoded_lines(path, counter):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = NT_LINE.match(line)
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
