"""Numbers compared with properties the database stores as strings.

A property imported from CSV text stays a string (Northwind's ``Order.freight``: '32.38'), and the question asks
for "a freight cost less than 10". The engine refuses ``o.freight < 10`` (it cannot cast '32.38' to an integer),
and comparing with the string '10' would compare text ('9.5' > '10'). What the question means is the number,
so the property is read as one: ``toFloat(o.freight) < 10``. The same holds for an average or sum over such a
property ("the average discount": ``avg(r.discount)`` over '0.15', '0'), which the engine refuses on text,
and for one multiplied, divided or subtracted ("the top 5 products by revenue": ``r.unitPrice * r.quantity``,
refused as "Function * did not receive correct arguments: (STRING, INT64)"), also in brackets or a call that
keeps its value (``(c.categoryID) - 1``, ``coalesce(o.shipVia) - 1``), or rounded (``round(o.freight)``).
``+`` is left alone: on text it joins strings.
"""

from __future__ import annotations

from kgrag.graph.backends.guard import Token
from kgrag.methods.text2cypher.grammar import NUMERIC, SAME_KIND
from kgrag.methods.text2cypher.patterns import property_read
from kgrag.methods.text2cypher.scope import is_word

_ORDERING = {"<", ">", "<=", ">=", "=", "<>"}


def _operator(tokens: list[Token], i: int) -> tuple[str, int] | None:
    """The comparison operator starting at ``tokens[i]`` (one or two punct tokens) and its length."""
    if i >= len(tokens) or tokens[i].kind != "punct":
        return None
    if i + 1 < len(tokens) and tokens[i + 1].kind == "punct" and not tokens[i + 1].gap:
        two = tokens[i].value + tokens[i + 1].value
        if two in _ORDERING:
            return two, 2
    return (tokens[i].value, 1) if tokens[i].value in _ORDERING else None


def _number_before(tokens: list[Token], k: int) -> bool:
    """Whether ``number <op>`` ends just before ``tokens[k]``."""
    for length in (2, 1):
        start = k - length
        if start >= 1 and _operator(tokens, start) == ("".join(t.value for t in tokens[start:k]), length):
            return tokens[start - 1].kind == "num"
    return False


# the grammar's kinds of call, lower-cased (a query written without the grammar may spell them otherwise): those
# that take a number only, less the conversions, which read text themselves; those whose value is what they were
# given
_NUMERIC_CALLS = frozenset(f.lower() for f in NUMERIC - {"toFloat", "toInteger"})
_SAME_KIND_CALLS = frozenset(f.lower() for f in SAME_KIND)


def _summed(tokens: list[Token], k: int) -> bool:
    """Whether the read at ``tokens[k]`` is the whole argument of a call that takes a number only (``avg``,
    ``sum``, ``round``, ``abs``; DISTINCT allowed)."""
    j = k - 1 - int(k >= 1 and is_word(tokens[k - 1], "DISTINCT"))
    if j < 1 or tokens[j].value != "(" or k + 3 >= len(tokens) or tokens[k + 3].value != ")":
        return False
    return tokens[j - 1].kind == "word" and tokens[j - 1].value.lower() in _NUMERIC_CALLS


_ARITHMETIC = {"*", "/", "-"}


def _around(tokens: list[Token], start: int, end: int) -> tuple[int, int]:
    """The span ``tokens[start:end]`` widened by the brackets and value-keeping calls right around it:
    ``(o.shipVia)``, ``coalesce(o.shipVia)`` are the read's value still."""
    while start >= 1 and end < len(tokens) and tokens[start - 1].value == "(" and tokens[end].value == ")":
        opened = tokens[start - 1]  # a word right before the bracket calls it; a keyword is spaced (WHERE (…)
        call = tokens[start - 2] if start >= 2 and tokens[start - 2].kind == "word" and not opened.gap else None
        if call is not None and call.value.lower() not in _SAME_KIND_CALLS:
            break
        start, end = start - 1 - (call is not None), end + 1
    return start, end


def _in_arithmetic(tokens: list[Token], k: int) -> bool:
    """Whether the read ``tokens[k:k+3]`` is an operand of ``*``, ``/`` or ``-`` (a leading minus included),
    itself or in the brackets and value-keeping calls around it (``coalesce(o.shipVia) - 1``)."""
    start, end = _around(tokens, k, k + 3)
    before = start >= 1 and tokens[start - 1].kind == "punct" and tokens[start - 1].value in _ARITHMETIC
    after = end < len(tokens) and tokens[end].kind == "punct" and tokens[end].value in _ARITHMETIC
    return before or after


def numbers_against_strings(tokens: list[Token], types: dict[str, dict[str, str]]) -> tuple[list[Token], list[str]]:
    """``var.prop <op> number`` (either side) where ``prop`` is a string property of the variable's label or type
    (``types``: variable → its properties' types), with the property read through ``toFloat``."""
    out = list(tokens)
    done: list[str] = []
    k = 0
    while k + 2 < len(out):
        read = property_read(out, k)
        if read is None or types.get(read[0], {}).get(read[1], "").upper() != "STRING":
            k += 1
            continue
        after = _operator(out, k + 3)
        number_after = after is not None and k + 3 + after[1] < len(out) and out[k + 3 + after[1]].kind == "num"
        before = _number_before(out, k)
        summed = _summed(out, k)
        computed = _in_arithmetic(out, k)
        if not (number_after or before or summed or computed):
            k += 3
            continue
        var, prop = read
        first = out[k]
        wrapped = [
            Token("word", "toFloat", first.gap),
            Token("punct", "("),
            first._replace(gap=False),
            *out[k + 1 : k + 3],
        ]
        out[k : k + 3] = [*wrapped, Token("punct", ")")]
        how = "given to a call that takes numbers" if summed else "computed" if computed else "compared"
        done.append(f"{var}.{prop} is stored as text: {how} as toFloat({var}.{prop})")
        k += len(wrapped) + 1
    return out, done


__all__ = ["numbers_against_strings"]
