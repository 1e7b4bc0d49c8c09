"""Guard for untrusted Cypher (from an LLM or a user) before it reaches any graph engine.

Defence in depth: this parser-level check is the first layer; backends also execute in a read-only
database/transaction with a timeout and a row cap, and the embedded engine runs in a sandboxed process
(``graph/backends/sandbox.py``).  A query passes only if, after Unicode normalisation (NFKC, zero-width and
bidi controls removed), it tokenises cleanly (strings, backticks and comments understood), is one
statement, starts with a read clause, uses no write/DDL/admin keyword outside strings, calls only
allow-listed procedures and functions (quoted namespaces count like bare ones), and has non-ASCII characters
only inside strings or backticked names.  A query without ``LIMIT`` gets one.

The engine never sees the text the guard was given: it sees the query **re-written from the guard's own
tokens** (comments dropped, every string literal and quoted name in one canonical spelling).  Engines
disagree about where comments end and which escapes a string knows; re-writing removes every place where
such a disagreement could turn what the guard read as data into code.

>>> guard_cypher("MATCH (m:Movie) RETURN m.name").query
'MATCH (m:Movie) RETURN m.name LIMIT 100'
>>> guard_cypher("MATCH (n) DETACH DELETE n").reason
'write or admin keyword DETACH is not allowed'
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import NamedTuple

DEFAULT_ROW_CAP = 100

# Keywords that write, change schema, administer or reach outside the graph.
FORBIDDEN = frozenset(
    """create insert merge set delete detach remove drop load copy alter install attach export import use grant
    revoke deny foreach truncate checkpoint begin commit rollback start terminate kill show_users""".split()
)
READ_STARTS = frozenset({"match", "optional", "with", "unwind", "return", "call"})
# How deep brackets, CASE ... END and runs of NOT / unary signs may nest. FalkorDB's parser takes time doubling
# with each level (0.01 s at 12, 7 s at 22, minutes from 26, and a client timeout does not stop it); a query
# a question needs nests 3-5 deep.
MAX_NESTING = 12
_OPENERS, _CLOSERS, _UNARY = frozenset("([{"), frozenset(")]}"), frozenset({"not", "-", "+"})
# Read-only procedures that may be CALLed (lower-case, dotted).
ALLOWED_PROCEDURES = frozenset(
    {
        "db.labels",
        "db.relationshiptypes",
        "db.propertykeys",
        "db.schema.visualization",
        "db.schema.nodetypeproperties",
        "db.schema.reltypeproperties",
        "show_tables",
        "table_info",
        "show_connection",
    }
)
# Function namespaces that only compute values.
ALLOWED_NAMESPACES = frozenset(
    {
        "apoc.coll",
        "apoc.text",
        "apoc.map",
        "apoc.math",
        "apoc.number",
        "apoc.convert",
        "apoc.date",
        "apoc.temporal",
        "apoc.agg",
        "apoc.label",
        # Neo4j's built-in namespaced functions (temporal, spatial, vector)
        "date",
        "datetime",
        "localdatetime",
        "time",
        "localtime",
        "duration",
        "point",
        "vector.similarity",
    }
)
# Namespaces of server plugins: any reference to them is checked, called or not.
_PLUGIN_ROOTS = frozenset({"apoc", "dbms", "gds", "db"})
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)


class Token(NamedTuple):
    """One lexical token of a guarded query.

    ``kind`` is ``str`` (string literal), ``name`` (backticked name), ``word``, ``num``, ``param`` or ``punct``;
    ``value`` is what the token means (a string literal's characters, a backticked name without its quotes,
    otherwise the text); ``gap`` says whether whitespace or a comment separated it from the previous token.
    """

    kind: str
    value: str
    gap: bool = False

    @property
    def text(self) -> str:
        """The token as written back for the engine, in one canonical spelling per value."""
        if self.kind == "str":
            return "'" + "".join(_STRING_ESCAPES.get(ch, ch) for ch in self.value) + "'"
        if self.kind == "name":
            return "`" + self.value.replace("`", "``") + "`"
        return self.value


@dataclass
class GuardResult:
    """``ok`` with the query to run (re-written from the checked tokens, LIMIT added), or a ``reason``."""

    ok: bool
    query: str = ""
    reason: str = ""
    tokens: list[Token] = field(default_factory=list, repr=False)


class _Reject(Exception):
    pass


# How a string literal's characters are written back: only these are escaped, the rest stay as they are.
_STRING_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# What an escape inside a string literal means (openCypher); an unknown escape keeps its backslash.
_UNESCAPE = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def _string_value(query: str, i: int) -> tuple[str, int]:
    """Decode the string literal opening at ``query[i]``; returns its characters and the index after it."""
    quote, j, n = query[i], i + 1, len(query)
    out: list[str] = []
    while j < n and query[j] != quote:
        ch = query[j]
        if ch != "\\":
            out.append(ch)
            j += 1
            continue
        if j + 1 >= n:
            break
        esc = query[j + 1]
        if esc in "uU":
            width = 4 if esc == "u" else 8
            digits = query[j + 2 : j + 2 + width]
            if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise _Reject(f"bad \\{esc} escape in a string literal")
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise _Reject(f"\\{esc}{digits} is not a character")
            out.append(chr(code))
            j += 2 + width
        else:
            out.append(_UNESCAPE.get(esc, "\\" + esc))
            j += 2
    if j >= n:
        raise _Reject("unterminated string literal")
    value = "".join(out)
    if _CONTROL.search(value):
        raise _Reject("control characters are not allowed in string literals")
    return value, j + 1


def _skip_gap(query: str, i: int) -> int | None:
    """The index after the whitespace character or comment at ``i``; ``None`` when a token starts there.

    Comments are dropped rather than passed on, so an engine that reads them differently sees none.
    """
    if query[i].isspace():
        return i + 1
    if query.startswith("//", i):
        end = query.find("\n", i)
        return len(query) if end < 0 else end + 1
    if query.startswith("/*", i):
        end = query.find("*/", i + 2)
        if end < 0:
            raise _Reject("unterminated /* comment")
        return end + 2
    return None


def _breaks_a_name(text: str) -> bool:
    """Whether ``text`` holds a control character or a line break, which no quoted name may hold."""
    return bool(_CONTROL.search(text)) or "\n" in text or "\r" in text


def _quoted_name(query: str, i: int) -> tuple[str, int]:
    """The `quoted name` starting at ``i`` (doubled backticks unescaped) and the index after it."""
    j = query.find("`", i + 1)
    while j >= 0 and query.startswith("``", j):  # doubled backtick escapes one
        j = query.find("`", j + 2)
    if j < 0:
        raise _Reject("unterminated `quoted name`")
    value = query[i + 1 : j].replace("``", "`")
    if _breaks_a_name(value):
        raise _Reject("control characters are not allowed in `quoted names`")
    if "`" in value:  # engines disagree on doubled backticks (FalkorDB fails on them)
        raise _Reject("a `quoted name` may not contain a backtick")
    return value, j + 1


def _tokenise(query: str) -> list[Token]:
    """The query as tokens, comments dropped: what the guard checks is exactly what the engine will run."""
    tokens: list[Token] = []
    i, n = 0, len(query)
    gap = False
    while i < n:
        after_gap = _skip_gap(query, i)
        if after_gap is not None:
            i, gap = after_gap, True
            continue
        ch = query[i]
        if ch in "'\"":
            value, i = _string_value(query, i)
            tokens.append(Token("str", value, gap))
        elif ch == "`":
            value, i = _quoted_name(query, i)
            tokens.append(Token("name", value, gap))
        elif ch == "$":
            m = re.match(r"\$[A-Za-z_][A-Za-z0-9_]*|\$\d+", query[i:])
            if not m:
                raise _Reject("bad parameter")
            tokens.append(Token("param", m.group(), gap))
            i += len(m.group())
        elif ch in "0123456789":  # ASCII only: other scripts' digits are no Cypher number
            m = _NUMBER.match(query, i)
            assert m
            if m.end() < n and (query[m.end()].isalnum() or query[m.end()] == "_"):
                # "0x1LOAD": an engine with hex literals reads 0x1 and then LOAD, where a guard might read x1LOAD
                raise _Reject("a number may not run into a name; put a space between them")
            tokens.append(Token("num", m.group(), gap))
            i = m.end()
        elif ch.isalpha() or ch == "_":
            m = re.match(r"[^\W\d]\w*", query[i:])
            assert m
            word = m.group()
            if not word.isascii():
                raise _Reject(f"non-ASCII characters outside strings ({word!r}); quote names with backticks")
            tokens.append(Token("word", word, gap))
            i += len(word)
        elif ord(ch) > 127:
            raise _Reject(f"unexpected character {ch!r} (U+{ord(ch):04X}) outside strings")
        elif not ch.isprintable() or ch == "\\":
            raise _Reject(f"unexpected character {ch!r} outside strings")
        else:
            tokens.append(Token("punct", ch, gap))
            i += 1
        gap = False
    return tokens


def serialise(tokens: list[Token]) -> str:
    """The text the engine runs: each token in its canonical spelling, one space where the source had a gap."""
    return "".join((" " if tok.gap and k else "") + tok.text for k, tok in enumerate(tokens))


def _is(tok: Token, kind: str, value: str) -> bool:
    return tok.kind == kind and tok.value == value


def _dotted_name(tokens: list[Token], start: int) -> tuple[str, int]:
    """The dotted identifier starting at ``start``, lower-cased (``apoc.cypher.runwrite``), and its end index.

    Backticked segments count like bare ones: ```apoc`.cypher`` names the same function as ``apoc.cypher``.
    """
    parts = [tokens[start].value]
    i = start + 1
    while i + 1 < len(tokens) and _is(tokens[i], "punct", ".") and tokens[i + 1].kind in ("word", "name"):
        parts.append(tokens[i + 1].value)
        i += 2
    return ".".join(parts).lower(), i


def _check(tokens: list[Token]) -> None:
    while tokens and _is(tokens[-1], "punct", ";"):
        tokens.pop()
    if not tokens:
        raise _Reject("empty query")
    if any(_is(tok, "punct", ";") for tok in tokens):
        raise _Reject("only one statement is allowed (found ';')")
    if tokens[0].kind != "word" or tokens[0].value.lower() not in READ_STARTS:
        raise _Reject(
            f"a query must start with a read clause (MATCH, OPTIONAL MATCH, WITH, UNWIND, RETURN, CALL), "
            f"not {tokens[0].text!r}"
        )
    _check_nesting(tokens)
    for i, tok in enumerate(tokens):
        if tok.kind not in ("word", "name"):
            continue
        after_dot = i > 0 and _is(tokens[i - 1], "punct", ".")
        if after_dot:
            continue  # a property or namespace segment: n.set, db.labels
        low = tok.value.lower()
        nxt = tokens[i + 1] if i + 1 < len(tokens) else Token("", "")
        if tok.kind == "word":
            map_key = _is(nxt, "punct", ":") and i > 0 and tokens[i - 1].kind == "punct" and tokens[i - 1].value in "{,"
            if low in FORBIDDEN and not map_key:
                raise _Reject(f"write or admin keyword {tok.value.upper()} is not allowed")
            if low == "call":
                if _is(nxt, "punct", "{"):
                    raise _Reject("CALL { } subqueries are not allowed")
                name = _dotted_name(tokens, i + 1)[0] if nxt.kind in ("word", "name") else ""
                if name not in ALLOWED_PROCEDURES:
                    raise _Reject(f"procedure {name or '?'!r} is not allow-listed")
                continue
            if low == "periodic" or (low == "in" and nxt.value.lower() == "transactions"):
                raise _Reject("batched writes (IN TRANSACTIONS / periodic commit) are not allowed")
        _check_namespaced_call(tokens, i)


def _check_nesting(tokens: list[Token]) -> None:
    """Refuse expressions nested deeper than :data:`MAX_NESTING` (see there): brackets, CASE ... END, and runs
    of NOT or unary signs, which nest the same way in a parser."""
    depth = run = 0
    for i, tok in enumerate(tokens):
        value = tok.value.lower() if tok.kind in ("word", "punct") else ""
        if tok.kind == "word" and i > 0 and _is(tokens[i - 1], "punct", "."):
            value = ""  # a property named case or end
        if value in _OPENERS or value == "case":
            depth += 1
        elif value in _CLOSERS or value == "end":
            depth = max(depth - 1, 0)
        run = run + 1 if value in _UNARY else 0
        if depth + run > MAX_NESTING:
            raise _Reject(f"expressions nested more than {MAX_NESTING} deep are not allowed")


def _check_namespaced_call(tokens: list[Token], i: int) -> None:
    """A namespaced function (``ns.fn(...)``, quoted or not) runs only if its namespace computes values."""
    dotted = tokens[i].kind == "name" and "." in tokens[i].value  # `apoc.cypher.run`(...) is one quoted name
    if not (dotted or (i + 1 < len(tokens) and _is(tokens[i + 1], "punct", "."))):
        return
    name, end = _dotted_name(tokens, i)
    is_call = i > 0 and tokens[i - 1].kind == "word" and tokens[i - 1].value.lower() == "call"
    invoked = end < len(tokens) and _is(tokens[end], "punct", "(")
    root = name.split(".", 1)[0]
    if not (invoked or is_call or root in _PLUGIN_ROOTS):
        return  # a property lookup: n.name
    if is_call and name in ALLOWED_PROCEDURES:
        return
    if name.rsplit(".", 1)[0] not in ALLOWED_NAMESPACES:
        raise _Reject(f"{name!r} is not allow-listed")


def quote_name(name: str) -> str:
    """``name`` as a backticked Cypher name, for queries kgrag writes from a schema's labels, types and
    properties (which come from the user's files or server). A name with a backtick, a line break or a control
    character raises ValueError: engines disagree on escaping a backtick inside one (FalkorDB fails on doubled
    ones), and a name that ends the quote early turns the rest into Cypher that runs trusted."""
    if not name or "`" in name or _breaks_a_name(name):
        raise ValueError(f"{name!r} cannot be written as a Cypher name (empty, or a backtick or control character)")
    return f"`{name}`"


class CypherSyntaxError(ValueError):
    """A query the guard's tokeniser cannot read (unterminated string, control character, ...)."""


def tokenise_cypher(query: str) -> list[Token]:
    """Tokens of a (trusted) query, without the read-only checks; raises :class:`CypherSyntaxError`."""
    try:
        return _tokenise(normalise_unicode(query).strip())
    except _Reject as exc:
        raise CypherSyntaxError(str(exc)) from None


def check_tokens(tokens: list[Token]) -> str | None:
    """Why the guard refuses these tokens, or None; for tokens a dialect rewrite produced after the guard."""
    try:
        _check(list(tokens))
    except _Reject as exc:
        return str(exc)
    return None


def normalise_unicode(query: str) -> str:
    """NFKC, then remove zero-width, bidi and other invisible format characters."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", query))


def _has_limit(tokens: list[Token]) -> bool:
    """Whether a LIMIT clause is there: the keyword, not a property or map key named limit."""
    return any(
        tok.kind == "word"
        and tok.value.lower() == "limit"
        and not (k > 0 and _is(tokens[k - 1], "punct", "."))
        and not (k + 1 < len(tokens) and _is(tokens[k + 1], "punct", ":"))
        for k, tok in enumerate(tokens)
    )


def guard_cypher(query: str, *, row_cap: int = DEFAULT_ROW_CAP) -> GuardResult:
    """Check an untrusted query; on success the returned query is safe to send to a read-only session."""
    if not isinstance(query, str):
        return GuardResult(False, reason="the query must be a string")
    if len(query) > 20_000:
        return GuardResult(False, reason="query too long")
    text = normalise_unicode(query).strip()
    try:
        tokens = _tokenise(text)
        _check(tokens)
    except _Reject as exc:
        return GuardResult(False, reason=str(exc))
    if not _has_limit(tokens):
        tokens += [Token("word", "LIMIT", True), Token("num", str(int(row_cap)), True)]
    return GuardResult(True, query=serialise(tokens), tokens=tokens)
