"""A token check (:mod:`kgrag.models.llm.token_checks`) that a query under text2cypher's grammar reads only
names it has bound.

The grammar lets an expression name any variable (``var ::= [a-z] …``): a context-free grammar cannot know
which names a MATCH bound. Where the 1.5B model wanted something the grammar does not have — a subquery
``(SELECT avg(…))``, ``shortestPath(…)``, ``count(e:Employee)`` — the grammar still let it write letters, and
it wrote them as one name: ``(selectavgReorderLevel)``, ``shortestPath``, ``countemployeeID``, each a variable
no pattern bound, which the engine rejects; with the error in front of it the repair call wrote the same
(every one of the first 119 Northwind dev pairs with examples whose final query did not run, 4 of 119). With
this check a name in an expression must be one the query bound before it — a pattern's variable (``(p:…)``,
``[r:…]``) or an alias (``AS n``) — or a keyword or function of the grammar, and a name still being written
must be the beginning of one; so after ``count`` the model writes ``(`` rather than ``employeeID``.

Only the grammar's subset is read: patterns bind in MATCH, ``AS`` binds, strings are skipped, a word after
``.`` is a property and after ``:`` a label, type or map value, a word in a node's ``{…}`` map a key; the tags
around the query are words after ``<`` / ``</``. Scope across WITH is not tracked (a name the WITH dropped
still passes here): the check's mends move such reads, and forbidding them would only make the model write
something else (:mod:`.scope`).

It also stops runaways the grammar allows and the model fell into until its token budget ran out (4 of the 14
dev queries with examples that did not run, 4 of the 29 without): brackets opened inside brackets beyond
``MAX_DEPTH`` (``(p IN (p IN (p IN …``), a number longer than ``MAX_DIGITS`` (``IN (1000000000…``), more than
``MAX_MATCHES`` MATCH clauses (``MATCH (p)-[:PART_OF]->(c) MATCH (p)-[:PART_OF]->(c)<-… MATCH …``; refused at
its first letter, since refused where the word ends the grammar allows nothing else and the check is set
aside), more than ``MAX_LIST`` literals in a list (``IN ['Customer{city: ','Berlin', …``), and the same
stretch of text a fourth time in a row (`` + p + p + p``, `` AND c.categoryID IN c.categoryID`` …): held
to a depth, the model went on flat. And a node or relationship is no number: written bare (not ``p.price``),
it is not added, subtracted, multiplied or ordered with ``<`` / ``>`` (``count((p)--1)``, ``size((p)-(c))``,
which the engine rejects as arithmetic on a node); ``=`` and ``<>`` compare two of them.

Version 5 holds values to their kind where the engine would refuse the query (each a Northwind dev query, with
or without examples, that did not run). A bare node stands only where a node may — a projection, ``count`` /
``collect`` / ``labels`` / ``type`` / ``coalesce``, ``=`` / ``<>`` with another node — so not in ``min(p)``,
``size((p))``, ``x < (p)``, ``p IN [1, 2]``, ``(p) <> -1``; refused where a value is wanted, the model can still
write ``p.`` and a property. A string is no operand of ``-``, ``*``, ``/``, ``%`` (``coalesce(o.shipVia) -
'3'``). ``true`` and ``false`` stand only after ``=`` / ``<>`` (not ``avg(true)``, nor in a list: ``s.supplierID
IN [true, false, …]``). A pattern variable keeps its label (``(p:Customer)`` … ``(p:Product)``). No aggregate
inside an aggregate, nor in the ORDER BY of a WITH that aggregates nothing. Brackets where a value is wanted
hold arithmetic, not a test (``p.unitPrice > (c.categoryName IN [...])``, where the model wanted a subquery the
grammar has not). The state is read on past a character the check was set aside for, so one dead end does not
refuse all that follows. Version 6 offers, where the grammar wants a number (after ``-``, ``*``, ``/``, in a call
that takes one), only the calls that give one, as the grammar does since arithmetic reads numbers only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kgrag.methods.text2cypher.grammar import COUNTING, FUNCTIONS, NUMERIC, SAME_KIND
from kgrag.methods.text2cypher.scope import AGGREGATES
from kgrag.models.llm.token_checks import register

NAME = "cypher-bound-names:6"  # the version changes with what the check refuses (a cache key part)
MAX_DEPTH = 5  # brackets open at once: count(DISTINCT toFloat(x)) needs 2, a pattern 1
MAX_DIGITS = 12  # digits in one number literal
MAX_REPEATS = 3  # the same stretch of text (3 to _LONGEST characters) written this often in a row may not go on
MAX_LIST = 20  # literals in one list (IN [...])
MAX_MATCHES = 4  # MATCH clauses in one query (the Northwind dev file's gold queries have at most 2)
_KEYWORDS = frozenset(
    """MATCH OPTIONAL WHERE WITH RETURN ORDER BY LIMIT DESC ASC AND OR NOT IS NULL DISTINCT AS CONTAINS STARTS ENDS
    IN true false null""".split()
)
_CLAUSES = frozenset({"MATCH", "WHERE", "WITH", "RETURN", "ORDER", "LIMIT"})
_NEW_MATCH = frozenset({"MATCH", "OPTIONAL"})
_TAG = "cypher"
_ALL_FUNCTIONS = frozenset(FUNCTIONS)
_NUMBER_CALLS = COUNTING | NUMERIC | SAME_KIND  # the calls whose value may be a number
_ROW_FUNCTIONS = _ALL_FUNCTIONS - AGGREGATES
_NODE_ARGS = frozenset({"count", "collect", "labels", "type", "coalesce"})  # the calls a node may be given to
_NOT_AFTER_NODE = frozenset({"IN", "AND", "OR", "CONTAINS", "STARTS", "ENDS"})  # words of values, not of nodes
_TESTS = _NOT_AFTER_NODE | {"IS", "NOT"}  # words that make a test (true or false) of what they stand in
_BOOLEANS = frozenset({"true", "false"})  # written only where a test compares with one: avg(true) is no value
_BOOLEAN_AFTER = ("=", ">")  # "=" and "<>"
_ARITHMETIC = "-*/%"  # what a string is not an operand of ("+" joins strings)


@dataclass(slots=True)
class _State:
    """Where the lexer stands: in a string, inside a word (and the word's role), what came before."""

    quote: str = ""  # the open string's quote character
    escaped: bool = False
    word: str = ""
    role: str = ""  # of the word being written: bind, alias, expr, free (property, label, key) or tag
    prev: str = ""  # the last character that is neither space nor part of a word
    before: str = ""  # the one before it ("</")
    gap: bool = False  # whether a space came after prev
    last_word: str = ""  # the word just finished, when only spaces followed it
    clause: str = ""
    braces: int = 0
    depth: int = 0  # open ( and [
    groups: tuple[str, ...] = ()  # the open parentheses: a call's function name; "=" for one where a value is
    # wanted (a bare node may not stand in it), "" for another
    element: str = ""  # "node" after a bare node or relationship variable in an expression, "<" after its "<",
    # "cmp" after its "=" or "<>" (what follows is another node)
    after: str = ""  # of the word being written: "cmp" after a node's "=" / "<>", "node" right after a bare node,
    # "value" where a value is wanted (an operand, a call's argument): not a bare node
    binding: str = ""  # the pattern variable whose label (after ":") is being written
    label: str = ""  # the label that variable already has: it may not take another
    matches: int = 0  # MATCH clauses begun
    projection: str = ""  # the last WITH or RETURN begun
    aggregated: bool = False  # whether its items call an aggregate
    items: int = 0  # literals in the list being written (0: none open)
    digits: int = 0  # of the number being written


@dataclass
class BoundNames:
    """The check (see the module docstring): :meth:`accept` what was written, ask :meth:`allows` of a token."""

    bound: dict[str, str] = field(default_factory=dict)  # name -> its label ("*" unlabelled) if a pattern bound
    # it (a node or edge), "" for an alias
    state: _State = field(default_factory=_State)
    text: str = ""  # the last characters written
    loop: str = ""  # the stretch the text has repeated MAX_REPEATS times, which may not come again

    def accept(self, piece: str) -> None:
        for ch in piece:
            self._feed(self.state, ch, self.bound)
        self.text = (self.text + piece)[-_LONGEST * (MAX_REPEATS + 1) :]
        self.loop = "" if self.state.quote else _repeated(self.text)  # a value may repeat itself: '1000000'

    def allows(self, piece: str) -> bool:
        if self.loop and (self.loop * (len(piece) // len(self.loop) + 1)).startswith(piece):
            return False
        state = replace(self.state)
        bound = dict(self.bound)
        for ch in piece:
            if self._feed(state, ch, bound) is False:
                return False
        return not state.word or self._may_continue(state, bound)

    # ------------------------------------------------------------------ the lexer
    def _feed(self, s: _State, ch: str, bound: dict[str, str]) -> bool:
        """Read ``ch``; False when the query may not go on with it. The state is read on either way: where the
        check refuses every token the grammar allows it is set aside for one token, and goes on from there."""
        if s.quote:
            if s.escaped:
                s.escaped = False
            elif ch == "\\":
                s.escaped = True
            elif ch == s.quote:
                s.quote, s.prev, s.last_word = "", ch, ""
            return True
        if (ch.isalnum() or ch == "_") and (s.word or not ch.isdigit()):  # a digit starts no word
            ok = True
            if not s.word:
                ok = s.element != "<"  # p <q: an ordering, not p <> q
                s.after = s.element if s.element in ("cmp", "node") else "value" if _wants_value(s) else ""
                s.role, s.element = self._role(s), ""
            s.word += ch
            return ok
        call = s.word  # a "(" right after a word opens a call
        ok = self._finish(s, bound, ch) if s.word else True
        s.digits = s.digits + 1 if ch.isdigit() else 0
        ok = ok and s.digits <= MAX_DIGITS and not (ch in "([" and s.depth >= MAX_DEPTH)
        ok = self._operand(s, ch) and ok
        s.depth = s.depth + 1 if ch in "([" else max(0, s.depth - 1) if ch in ")]" else s.depth
        if s.clause != "MATCH" and ch in "[,]":  # outside a pattern a bracket is a list (only after IN)
            s.items = 1 if ch == "[" else 0 if ch == "]" else s.items + bool(s.items)
            ok = ok and s.items <= MAX_LIST
        if ch == "(":
            s.groups = (*s.groups, call or ("=" if _wants_value(s) else ""))
            s.aggregated = s.aggregated or (call in AGGREGATES and s.clause == s.projection)
        elif ch == ")":
            if s.groups and s.element == "node":  # min(p), size((p)), x < (p): a node is no value
                ok = ok and s.groups[-1] in ("", *_NODE_ARGS)
            if not s.groups or _is_call(s.groups[-1]):  # a call's value is no element: count(p) + 1
                s.element = ""
            s.groups = s.groups[:-1]
        if ch in "'\"":
            s.quote = ch
        elif ch == "{":
            s.braces += 1
        elif ch == "}":
            s.braces = max(0, s.braces - 1)
        if not ch.isspace():
            s.before, s.prev, s.last_word = s.prev, ch, ""
        s.gap = ch.isspace()
        return ok

    @staticmethod
    def _operand(s: _State, ch: str) -> bool:
        """Whether ``ch`` (no part of a word) may follow in an expression. A string is no operand of ``-``, ``*``,
        ``/``, ``%``. After a bare node or relationship (``p``, ``(p)``): no arithmetic and no ordering, only
        ``=`` / ``<>``, and those with another node, not a literal. In brackets where a value is wanted, no comparison.
        Updates what the state knows."""
        if s.clause != "MATCH" and (
            (ch in "'\"" and s.prev and s.prev in _ARITHMETIC) or (s.prev and s.prev in "'\"" and ch in _ARITHMETIC)
        ):
            return False  # '1' - 2, x * '3'
        if ch in "<>=" and s.groups and s.groups[-1] == "=":
            return False  # x > (a < b): a value's brackets hold arithmetic, not a test
        if s.element == "<":
            s.element = "cmp" if ch == ">" else ""
            return ch in ">/"  # p <> q, or the closing tag after RETURN p
        if s.element == "cmp":
            refused = ch.isdigit() or ch in "'\"-["  # p <> -1, p = '3'
            s.element = "cmp" if ch.isspace() or ch == "(" else ""
            return not refused
        if not s.element or ch.isspace():
            return True
        if ch in "+-*/%>":
            s.element = ""
            return False
        if ch in "<=":
            s.element = "<" if ch == "<" else "cmp"
        elif ch != ")":
            s.element = ""
        return True

    @staticmethod
    def _role(s: _State) -> str:
        if not s.gap and (s.prev == "<" or (s.prev == "/" and s.before == "<")):
            return "tag"  # <cypher>, </cypher>; "x < y" compares
        if s.prev in (".", ":"):
            return "free"
        if s.last_word == "AS":
            return "alias"
        if s.clause == "MATCH":
            if s.braces:
                return "free"  # a map key (a value follows ':')
            if s.prev in ("(", "["):
                return "bind"
        return "expr"

    def _finish(self, s: _State, bound: dict[str, str], after: str) -> bool:
        """End the word being written at the character ``after``; False when the query may not read it."""
        word, role = s.word, s.role
        s.word, s.role = "", ""
        ok = True
        if role == "bind":  # its label follows a ":"; one it already has may not change
            s.binding, s.label = (word, bound.get(word, "*")) if after == ":" else ("", "")
            bound[word] = bound.get(word) or "*"
        elif role == "alias":
            bound[word] = ""
        elif role == "free" and s.binding:
            ok = s.label in ("*", word)
            bound[s.binding], s.binding = word, ""
        elif role == "expr":
            ok = self._readable(s, bound, word, after)
            s.element = "node" if bound.get(word) and after != "." and s.after != "cmp" else ""  # p = q: a test
            if word in _CLAUSES and s.last_word not in ("STARTS", "ENDS"):
                s.clause = word
                s.matches += word == "MATCH"
                if word in ("WITH", "RETURN"):
                    s.projection, s.aggregated = word, False
                ok = ok and s.matches <= MAX_MATCHES
        elif role == "tag":
            ok = word == _TAG
        s.last_word = word
        s.prev = ""  # what comes before the next word is this one: in "p.price AS x" x follows AS, not the "."
        return ok

    @staticmethod
    def _readable(s: _State, bound: dict[str, str], word: str, after: str) -> bool:
        """Whether an expression may read ``word``: a bound name, a keyword, or a function's name as a call
        (``(avg)`` is a variable to the engine); a node after a node's ``=``, no value word after a bare node,
        and no word at all in a list (its booleans are never meant: ``p.categoryID IN [true, false]``)."""
        if s.items:
            return False
        if s.after == "cmp":
            return bool(bound.get(word))
        if s.after == "value" and bound.get(word) and after != ".":
            return False  # p.unitPrice < p
        if word in _KEYWORDS and word not in _keywords(s):
            return False
        return word in bound or word in _KEYWORDS or (word in _functions(s) and after == "(")

    @staticmethod
    def _may_continue(s: _State, bound: dict[str, str]) -> bool:
        """Whether the word being written can still become one the query may read: refused at its first letter,
        the model writes another word (refused only when it ends, where the grammar forces what follows, the
        check would be set aside)."""
        if s.role == "tag":
            return _TAG.startswith(s.word)
        if s.role == "free" and s.binding:
            return s.label == "*" or s.label.startswith(s.word)
        if s.role != "expr":
            return True
        if s.items:
            return False
        if s.after == "cmp":
            return any(w.startswith(s.word) for w, label in bound.items() if label)
        calls = _functions(s) if s.depth < MAX_DEPTH else ()  # a call needs a "(" the depth has no room for
        keywords = _keywords(s) - _NEW_MATCH if s.matches >= MAX_MATCHES else _keywords(s)
        return any(w.startswith(s.word) for w in (*bound, *keywords, *calls))


_LONGEST = 100  # the longest stretch :func:`_repeated` looks for (two MATCH lines alternating p and s: 90)


def _repeated(text: str) -> str:
    """The shortest stretch of 3 to ``_LONGEST`` characters that ``text`` ends with ``MAX_REPEATS`` times in a
    row, as it would go on (its last ``len`` characters); "" when there is none."""
    for n in range(3, _LONGEST + 1):
        span = n * MAX_REPEATS
        if len(text) >= span and text[-span:-n] == text[-span + n :]:
            return text[-n:]
    return ""


_OPERATORS = "<>=+-*/%"


def _is_call(group: str) -> bool:
    return group not in ("", "=")


def _keywords(s: _State) -> frozenset[str]:
    """The keywords an expression may write here (:meth:`BoundNames._readable` and ``_may_continue`` alike): no
    value word after a bare node, no test in a value's brackets, a boolean only after ``=`` / ``<>``."""
    keywords = _KEYWORDS
    if s.after == "node":
        keywords -= _NOT_AFTER_NODE
    if _in_value(s):
        keywords -= _TESTS
    if s.prev not in _BOOLEAN_AFTER:
        keywords -= _BOOLEANS
    return keywords


def _in_value(s: _State) -> bool:
    """Whether the innermost open bracket stands where a value is wanted (``x > (…)``)."""
    return bool(s.groups) and s.groups[-1] == "="


def _wants_value(s: _State) -> bool:
    """Whether what begins here is a value, which a bare node is not: an operand of an operator (not a node's
    ``=`` / ``<>``), or what stands directly in a group that wants one (a call other than ``count`` & co.)."""
    if s.clause == "MATCH" or s.element == "cmp":
        return False
    if s.prev and s.prev in _OPERATORS:
        return True
    if s.prev in ("(", ",") and s.groups:
        inner = s.groups[-1]
        return inner == "=" or (_is_call(inner) and inner not in _NODE_ARGS)
    return False


def _functions(s: _State) -> frozenset[str]:
    """The functions the grammar lets the clause call: no aggregate in a WHERE (``wterm``), nor inside another
    aggregate (``count(DISTINCT sum(…))``, which the engine refuses as nested), nor in the ORDER BY of a WITH
    that aggregates nothing (``WITH p ORDER BY avg(p.unitPrice)``: "Cannot evaluate expression with type
    AGGREGATE_FUNCTION"; a RETURN's is made a column by :mod:`.check`). Offered ``avg`` in a WHERE anyway, the
    model wrote ``(avg`` and then found no way on the grammar and the check both allowed. Where the grammar
    wants a number (after ``-``, ``*``, ``/``, in a call that takes one), only calls that give one: offered
    ``type`` in ``avg(…``, the model wrote ``avg(type)``, a name the grammar then could only close."""
    unaggregated = s.clause == "ORDER" and s.projection == "WITH" and not s.aggregated
    calls = _ALL_FUNCTIONS
    if s.clause == "WHERE" or unaggregated or any(g in AGGREGATES for g in s.groups):
        calls = _ROW_FUNCTIONS
    return calls & _NUMBER_CALLS if _wants_number(s) else calls


def _wants_number(s: _State) -> bool:
    """Whether the grammar wants a number here: an operand of ``-``, ``*``, ``/`` (``+`` also joins text), or
    what stands directly in a call that takes a number."""
    return bool(s.prev) and (s.prev in "-*/" or (s.prev == "(" and bool(s.groups) and s.groups[-1] in NUMERIC))


register(NAME)(BoundNames)

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "MAX_LIST", "MAX_MATCHES", "MAX_REPEATS", "NAME", "BoundNames"]
