"""The N-Triples reader: IRIs become their local names, label predicates name entities and relations."""

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
_ALIAS_PREDICATES = {
    "http://www.w3.org/2004/02/skos/core#altLabel",
    "http://schema.org/alternateName",
    "https://schema.org/alternateName",
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


def _rank(language: str) -> int:
    """How much a label in ``language`` is preferred as a name: untagged 0, English 1, any other 2."""
    return 0 if not language else 1 if language.split("-")[0] == "en" else 2


class _Labels:
    """The names a file gives its IRIs: one label each becomes the name, others become aliases.

    A file may label an IRI in many languages (a Wikidata export carries hundreds per entity). The name is the
    IRI's first label without a language tag, else its first English one (kgrag's prompts are English), else its
    first. Alternative labels (``skos:altLabel``, ``schema:alternateName``) and further labels in the name's
    language (or untagged or English) become aliases, which linking reads; labels in other languages are left out.
    """

    def __init__(self) -> None:
        self._labels: dict[str, list[tuple[str, str, bool, int]]] = {}  # term -> (text, language, alternative, line)
        self._chosen: dict[str, tuple[str, str] | None] = {}

    def add(self, term: str, text: str, language: str, alternative: bool, line: int) -> None:
        known = self._labels.setdefault(term, [])
        if _rank(language) == 2 and any(lang != language for _, lang, _, _ in known):
            return  # neither a name nor an alias, and a Wikidata export has hundreds of these per entity
        known.append((text, language, alternative, line))

    def __contains__(self, term: str) -> bool:
        return self.name(term) is not None

    def terms(self, named: bool = True) -> list[str]:
        """The IRIs a label names (``named``) or that have any label, name or alternative."""
        return [term for term in self._labels if not named or term in self]

    def name(self, term: str) -> str | None:
        """The label that names ``term`` (None: the file gives it none, only alternatives or empty labels)."""
        if term not in self._chosen:
            names = [
                (_rank(lang), i, text, lang)
                for i, (text, lang, alt, _) in enumerate(self._labels.get(term, ()))
                if not alt and text.strip()
            ]
            best = min(names, default=None)
            self._chosen[term] = (best[2], best[3]) if best else None
        chosen = self._chosen[term]
        return chosen[0] if chosen else None

    def aliases(self, term: str) -> list[tuple[str, int]]:
        """``term``'s other labels and alternative labels, untagged, English or in its name's language, with lines."""
        name = self.name(term)
        language = (self._chosen.get(term) or ("", ""))[1]
        return [
            (text, line)
            for text, lang, alt, line in self._labels.get(term, ())
            if text.strip() and text != name and (_rank(lang) < 2 or lang == language)
        ]


def _label(o: str, line: int, check: TripleBuilder) -> tuple[str, str]:
    """The text and language tag of a label literal (``"Douglas Adams"@en``), checked as a stored name."""
    end = o.rindex('"')
    try:
        text = _unescape(o[1:end])
    except _BadTerm as exc:
        raise check.fail(line, str(exc)) from None
    if text.strip():  # an empty label is not used (the IRI names the entity), so it is no error
        check.check_name(text, line, "label")  # a bad one is blamed on its own line
    tag = o[end + 1 :]
    return text, tag[1:].lower() if tag.startswith("@") else ""


def read_nt(path: Path, builder: TripleBuilder) -> None:
    """N-Triples: names come from label predicates when present, else from IRI local names (see
    :func:`_predicate_names` for relations)."""
    counter = [0]
    raw: list[tuple[str, str, str, int]] = []
    labels = _Labels()
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
        alternative = p[1:-1] in _ALIAS_PREDICATES
        if (alternative or p[1:-1] in _LABEL_PREDICATES) and o[0] == '"':
            labels.add(s, *_label(o, counter[0], builder), alternative, counter[0])
            continue
        raw.append((s, p, o, counter[0]))
    _add_triples(raw, labels, builder)


def _predicate_names(predicates: set[str], labels: _Labels) -> dict[str, str]:
    """Each predicate IRI's relation name: its own label when the file gives one; else the label of the one
    labelled IRI with the same local name — Wikidata labels the property ``wd:P50`` ("author") and states facts
    with ``wdt:P50``, and a relation named "P50" tells no method what it means —; else its local name."""
    local_of = {p: _iri_local_name(p[1:-1]) for p in predicates}
    wanted = set(local_of.values())
    by_local: dict[str, list[str]] = {}
    for term in labels.terms():  # only the local names of predicates: a dump labels millions of entities
        local = _iri_local_name(term[1:-1]) if term[0] == "<" else None
        if local in wanted:
            by_local.setdefault(local, []).append(term)
    names = {}
    for p, local in local_of.items():
        same = by_local.get(local, [])
        names[p] = labels.name(p) or (labels.name(same[0]) if len(same) == 1 else None) or local
    return names


def _add_triples(raw: list[tuple[str, str, str, int]], labels: _Labels, builder: TripleBuilder) -> None:
    names: dict[str, str] = {}
    taken: dict[str, str] = {}

    def name_of(term: str) -> str:
        known = names.get(term)
        if known is not None:
            return known
        if term[0] == '"':
            name = _unescape(term[1 : term.rindex('"')])
        else:
            name = labels.name(term) or (_iri_local_name(term[1:-1]) if term[0] == "<" else term)
            owner = taken.setdefault(name, term)
            if owner != term:  # two IRIs share a label/local name: keep them apart
                name = term[1:-1] if term[0] == "<" else term
        names[term] = name
        return name

    try:
        relations = _predicate_names({p for _, p, _, _ in raw}, labels)
    except _BadTerm as exc:
        raise builder.fail(None, str(exc)) from None
    for s, p, o, line_no in raw:
        try:
            builder.add(name_of(s), relations[p], name_of(o), line_no)
        except _BadTerm as exc:
            raise builder.fail(line_no, str(exc)) from None
    for term in labels.terms(named=False):
        if term in names and term[0] != '"':
            for alias, line_no in labels.aliases(term):
                builder.add_aliases(names[term], [alias], line_no)
