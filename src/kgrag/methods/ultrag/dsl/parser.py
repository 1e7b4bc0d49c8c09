"""Text → query tree, with a real grammar (``grammar.lark``, LALR) and error messages an LLM can act on.

:func:`parse` reads one query; :func:`extract_query` first peels off what models wrap queries in (code
fences, a ``Query:`` label, surrounding prose on other lines).  Syntax errors raise :class:`DSLSyntaxError`
whose message names the column, what was found and what was expected, in words rather than terminal names.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from kgrag.errors import KGRagError
from kgrag.methods.ultrag.dsl.nodes import Entity, Intersection, Projection, Query

MAX_QUERY_CHARS = 4000

_EXPECTED_WORDS = {
    "ARROW": "'->'",
    "AND": "AND(",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "LSQB": "'['",
    "RSQB": "']'",
    "STRING": "a quoted name",
    "SQ_STRING": "a quoted name",
    "BARE": "an entity name",
    "BRACKETED": "an entity name",
    "REL_NAME": "a relation name",
    "$END": "the end of the query",
}


class DSLSyntaxError(KGRagError, ValueError):
    """The text is not a query of the language; the message says where and why."""

    exit_code = 2


@cache
def _parser() -> Lark:
    grammar = resources.files("kgrag.methods.ultrag.dsl").joinpath("grammar.lark").read_text("utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", maybe_placeholders=False)


def _unquote(token: str) -> str:
    """Content of a ``"..."`` (JSON escapes) or ``'...'`` string; malformed escapes are kept verbatim."""
    if token.startswith('"'):
        try:
            return json.loads(token)
        except json.JSONDecodeError:
            return token[1:-1]
    body = token[1:-1]
    return re.sub(r"\\(.)", r"\1", body, flags=re.S)


class _ToTree(Transformer):
    @v_args(inline=True)
    def quoted(self, token: Token) -> str:
        return _unquote(str(token))

    single_quoted = quoted

    @v_args(inline=True)
    def bracketed(self, token: Token) -> str:
        return str(token).strip()

    @v_args(inline=True)
    def bare(self, token: Token) -> str:
        return str(token).strip()

    @v_args(inline=True)
    def entity(self, name: str) -> Entity:  # pragma: no cover - entity alternatives are all aliased
        return Entity(name)

    def relation(self, items: list) -> str:  # pragma: no cover - relation alternatives are all aliased
        return items[0]

    def projection(self, items: list) -> Projection:
        operand, _arrow, relation = items
        return Projection(_as_query(operand), relation)

    def intersection(self, items: list) -> Query:
        operands = tuple(_as_query(i) for i in items if not (isinstance(i, Token) and i.type == "AND"))
        if len(operands) == 1:  # AND(q) is just q
            return operands[0]
        return Intersection(operands)


def _as_query(item: object) -> Query:
    """Entity leaves arrive as plain strings from the aliased ``entity`` alternatives."""
    if isinstance(item, str):
        return Entity(item)
    return item  # type: ignore[return-value]


def parse(text: str) -> Query:
    """Parse one query; raises :class:`DSLSyntaxError` with a message fit to show the query writer."""
    if not isinstance(text, str):
        raise DSLSyntaxError("the query must be text")
    if len(text) > MAX_QUERY_CHARS:
        raise DSLSyntaxError(f"the query is too long ({len(text)} characters, at most {MAX_QUERY_CHARS})")
    if not text.strip():
        raise DSLSyntaxError("the query is empty")
    try:
        tree = _parser().parse(text)
        result = _as_query(_ToTree().transform(tree))
    except UnexpectedInput as exc:
        raise DSLSyntaxError(_describe(exc, text)) from None
    except VisitError as exc:  # e.g. an entity name that is empty after stripping
        raise DSLSyntaxError(f"invalid query: {exc.orig_exc}") from None
    for node in _entities(result):
        if not node.name.strip():
            raise DSLSyntaxError("an entity name is empty; write the entity's name between double quotes")
    return result


def _entities(query: Query) -> list[Entity]:
    from kgrag.methods.ultrag.dsl.nodes import walk

    return [n for n in walk(query) if isinstance(n, Entity)]


def _describe(exc: UnexpectedInput, text: str) -> str:
    column = getattr(exc, "column", None)
    where = f"at column {column}" if isinstance(column, int) and column > 0 else "at the end"
    snippet = exc.get_context(text, span=20).splitlines()[0].strip() if column and column > 0 else text[-30:]
    if isinstance(exc, UnexpectedEOF):
        expected = _expected_words(exc.expected)
        return f"the query ends too early; expected {expected}"
    if isinstance(exc, UnexpectedToken):
        if exc.token.type == "$END":
            return f"the query ends too early; expected {_expected_words(exc.expected)}"
        found, hint = str(exc.token), ""
        if exc.token.type == "BRACKETED":  # lexed by the fallback lexer: report the first character only
            found = found[:1]
            hint = " (a quote is not closed?)" if found in "\"'" else ""
        expected = _expected_words(exc.expected)
        return f"syntax error {where} near {snippet!r}: unexpected {found!r}{hint}; expected {expected}"
    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream] if 0 <= exc.pos_in_stream < len(text) else "?"
        hint = ""
        if char in "\"'":
            hint = " (a quote is not closed?)"
        allowed = getattr(exc, "allowed", None) or set()
        return f"syntax error {where} near {snippet!r}: unexpected {char!r}{hint}; expected {_expected_words(allowed)}"
    return f"syntax error {where}"


def _expected_words(names) -> str:  # type: ignore[no-untyped-def]
    words = sorted({_EXPECTED_WORDS.get(n, n.lower()) for n in names or ()})
    return " or ".join(words) if words else "something else"


_FENCE = re.compile(r"```[\w+-]*\s*\n?(.*?)```", re.S)
_LABEL = re.compile(r"^\s*(?:final\s+)?(?:query|dsl|answer)\s*[:=]\s*", re.I)


def extract_query(text: str | None) -> str:
    """The query inside an LLM reply: inside a code fence if there is one, without a ``Query:`` label.

    Models add explanations before or after the query, and a line of prose parses as a bare entity name, so
    the first candidate (the whole reply, then each line) that parses into a projection or intersection wins;
    a bare entity only when nothing better parses.  Returns the cleaned reply when nothing parses at all and
    ``""`` when the reply is empty.
    """
    if not text:
        return ""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    body = body.replace("```", "").strip()
    body = _LABEL.sub("", body).strip()
    if not body:
        return ""
    candidates = [body] + [_LABEL.sub("", line).strip().strip("`").strip() for line in body.splitlines()]
    fallback = None
    for candidate in candidates:
        if not candidate:
            continue
        try:
            query = parse(candidate)
        except DSLSyntaxError:
            continue
        if not isinstance(query, Entity):
            return candidate
        fallback = fallback or candidate
    return fallback or body
