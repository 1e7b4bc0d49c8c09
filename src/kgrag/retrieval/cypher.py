"""Guard for untrusted Cypher (from an LLM or a user) before it reaches any graph engine.

Defence in depth: this parser-level check is the first layer; backends also execute in a read-only
database/transaction with a timeout and a row cap.  A query passes only if, after Unicode normalisation
(NFKC, zero-width and bidi controls removed), it tokenises cleanly (strings, backticks and comments
understood), is one statement, starts with a read clause, uses no write/DDL/admin keyword outside strings,
calls only allow-listed procedures and functions, and has non-ASCII characters only inside strings or
backticked names.  A query without ``LIMIT`` gets one.

>>> guard_cypher("MATCH (m:Movie) RETURN m.name").query
'MATCH (m:Movie) RETURN m.name LIMIT 100'
>>> guard_cypher("MATCH (n) DETACH DELETE n").reason
'write or admin keyword DETACH is not allowed'
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

DEFAULT_ROW_CAP = 100

# Keywords that write, change schema, administer or reach outside the graph.
FORBIDDEN = frozenset(
    """create merge set delete detach remove drop load copy alter install attach export import use grant revoke
    deny foreach truncate checkpoint begin commit rollback start terminate kill show_users""".split()
)
READ_STARTS = frozenset({"match", "optional", "with", "unwind", "return", "call"})
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
    }
)
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)


@dataclass
class GuardResult:
    """``ok`` with the query to run (normalised, LIMIT added), or a ``reason`` an LLM can be re-prompted with."""

    ok: bool
    query: str = ""
    reason: str = ""
    tokens: list[str] = field(default_factory=list, repr=False)


class _Reject(Exception):
    pass


def _tokenise(query: str) -> list[tuple[str, str]]:
    """(kind, text) tokens; kinds: str, name (backticked), word, num, param, punct. Comments dropped."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif query.startswith("//", i):
            end = query.find("\n", i)
            i = n if end < 0 else end + 1
        elif query.startswith("/*", i):
            end = query.find("*/", i + 2)
            if end < 0:
                raise _Reject("unterminated /* comment")
            i = end + 2
        elif ch in "'\"":
            j = i + 1
            while j < n and query[j] != ch:
                j += 2 if query[j] == "\\" else 1
            if j >= n:
                raise _Reject("unterminated string literal")
            tokens.append(("str", query[i : j + 1]))
            i = j + 1
        elif ch == "`":
            j = query.find("`", i + 1)
            while j >= 0 and query.startswith("``", j):  # doubled backtick escapes one
                j = query.find("`", j + 2)
            if j < 0:
                raise _Reject("unterminated `quoted name`")
            tokens.append(("name", query[i : j + 1]))
            i = j + 1
        elif ch == "$":
            m = re.match(r"\$[A-Za-z_][A-Za-z0-9_]*|\$\d+", query[i:])
            if not m:
                raise _Reject("bad parameter")
            tokens.append(("param", m.group()))
            i += len(m.group())
        elif ch.isdigit():
            m = re.match(r"\d+(\.\d+)?([eE][+-]?\d+)?", query[i:])
            assert m
            tokens.append(("num", m.group()))
            i += len(m.group())
        elif ch.isalpha() or ch == "_":
            m = re.match(r"[^\W\d]\w*", query[i:])
            assert m
            word = m.group()
            if not word.isascii():
                raise _Reject(f"non-ASCII characters outside strings ({word!r}); quote names with backticks")
            tokens.append(("word", word))
            i += len(word)
        elif ord(ch) > 127:
            raise _Reject(f"unexpected character {ch!r} (U+{ord(ch):04X}) outside strings")
        else:
            tokens.append(("punct", ch))
            i += 1
    return tokens


def _dotted_name(tokens: list[tuple[str, str]], start: int) -> str:
    """The dotted identifier starting at ``start``, lower-cased (``apoc.cypher.runWrite``)."""
    parts = [tokens[start][1]]
    i = start + 1
    while i + 1 < len(tokens) and tokens[i] == ("punct", ".") and tokens[i + 1][0] in ("word", "name"):
        parts.append(tokens[i + 1][1].strip("`"))
        i += 2
    return ".".join(parts).lower()


def _check(tokens: list[tuple[str, str]]) -> None:
    if not tokens:
        raise _Reject("empty query")
    while tokens and tokens[-1] == ("punct", ";"):
        tokens.pop()
    if ("punct", ";") in tokens:
        raise _Reject("only one statement is allowed (found ';')")
    if tokens[0][0] != "word" or tokens[0][1].lower() not in READ_STARTS:
        raise _Reject(
            f"a query must start with a read clause (MATCH, OPTIONAL MATCH, WITH, UNWIND, RETURN, CALL), "
            f"not {tokens[0][1]!r}"
        )
    for i, (kind, text) in enumerate(tokens):
        if kind != "word":
            continue
        low = text.lower()
        after_dot = i > 0 and tokens[i - 1] == ("punct", ".")
        if after_dot:
            continue  # a property or namespace segment: n.set, db.labels
        map_key = i + 1 < len(tokens) and tokens[i + 1] == ("punct", ":") and i > 0 and tokens[i - 1][1] in "{,"
        if low in FORBIDDEN and not map_key:
            raise _Reject(f"write or admin keyword {text.upper()} is not allowed")
        if low == "call":
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
            if nxt == ("punct", "{"):
                raise _Reject("CALL { } subqueries are not allowed")
            name = _dotted_name(tokens, i + 1) if nxt[0] == "word" else ""
            if name not in ALLOWED_PROCEDURES:
                raise _Reject(f"procedure {name or '?'!r} is not allow-listed")
        if low in ("apoc", "dbms", "gds", "db") and i + 1 < len(tokens) and tokens[i + 1] == ("punct", "."):
            name = _dotted_name(tokens, i)
            is_call = i > 0 and tokens[i - 1][1].lower() == "call"
            namespace = name.rsplit(".", 1)[0]
            if not (is_call and name in ALLOWED_PROCEDURES) and namespace not in ALLOWED_NAMESPACES:
                raise _Reject(f"{name!r} is not allow-listed")
        if low == "periodic" or (low == "in" and i + 1 < len(tokens) and tokens[i + 1][1].lower() == "transactions"):
            raise _Reject("batched writes (IN TRANSACTIONS / periodic commit) are not allowed")


def normalise_unicode(query: str) -> str:
    """NFKC, then remove zero-width, bidi and other invisible format characters."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", query))


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
    text = text.rstrip().rstrip(";").rstrip()
    if not any(kind == "word" and t.lower() == "limit" for kind, t in tokens):
        text = f"{text} LIMIT {row_cap}"
    return GuardResult(True, query=text, tokens=[t for _, t in tokens])
