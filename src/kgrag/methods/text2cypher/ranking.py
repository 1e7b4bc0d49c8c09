"""What a ranking question fixes about its rows — how many ("the top 5", "which 3 suppliers"), in which order
("the most", "the lowest", "the first") and what each row shows — held to where the model left it out.

The 1.5B model drops the LIMIT of "list the first 3 orders" in about one query in four and the ORDER BY of
"the 3 suppliers with the highest average price" in about one in eight (Northwind dev), and the answer is then
every supplier in the engine's order. The wording read is plain English, not the database's:

- the count is a number right after top / first / last / bottom, or right after the opening verb or question
  word ("List three customers", "Which 3 suppliers ..."); "more than 50 units" and years are not counts of rows;
- the order is a superlative (most, highest, top, ...; lowest, least, fewest, ... read ascending), added only
  where the query returns exactly one aggregate under a name, since that is then what is ranked
  (:func:`rank_rows`); "the first N" of a node with no order is the earliest by its date (:func:`first_by_date`);
- a ranking shows names and the value ranked by, grouped only by what it ranks (:func:`name_ranked_nodes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgrag.graph.backends.guard import Token, serialise
from kgrag.methods.text2cypher.joins import identifier_words, question_words, said
from kgrag.methods.text2cypher.scope import (
    SCORES,
    aggregate_aliases,
    clauses,
    final_return,
    has_aggregate,
    is_keyword,
    is_word,
    split_at,
)

NUMBER_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
}  # fmt: skip  ("one" is left out: "the one who ...")
_NUMBER = r"(\d{1,3}|" + "|".join(NUMBER_WORDS) + r")"
_AFTER_RANK = re.compile(r"\b(?:top|first|last|bottom)\s+" + _NUMBER + r"\b", re.I)
_OPENING = re.compile(
    r"^\s*(?:list|name|show|find|give|get|identify|return|retrieve|display|which|what\s+are|who\s+are)"
    r"(?:\s+me)?(?:\s+the)?\s+" + _NUMBER + r"\s+(?!(?:times|units?|percent|years?|days?|of)\b)[a-z]",
    re.I,
)
_ASCENDING_WORDS = r"lowest|least|fewest|smallest|cheapest|minimum|bottom"
_DESCENDING_WORDS = r"most|highest|largest|biggest|greatest|top|maximum|best|longest|heaviest|expensive"
_ASCENDING = re.compile(rf"\b(?:{_ASCENDING_WORDS})\b", re.I)
_DESCENDING = re.compile(rf"\b(?:{_DESCENDING_WORDS})\b", re.I)
_SUPERLATIVE = rf"\b(?:{_ASCENDING_WORDS}|{_DESCENDING_WORDS})\b"


@dataclass(frozen=True)
class Ranking:
    rows: int | None = None  # the rows asked for
    order: str | None = None  # "DESC" or "ASC" when the question ranks


def asked_ranking(question: str) -> Ranking:
    """How many rows the question asks for and in which order, as far as its wording says."""
    found = _AFTER_RANK.search(question) or _OPENING.search(question)
    rows = None
    if found is not None:
        word = found.group(1).lower()
        n = int(word) if word.isdigit() else NUMBER_WORDS[word]
        rows = n if 0 < n <= 100 else None
    order = "ASC" if _ASCENDING.search(question) else "DESC" if _DESCENDING.search(question) else None
    return Ranking(rows, order)


def _ranked_alias(tokens: list[Token], ret: int) -> str | None:
    """The one name under which the final RETURN gives an aggregate: ``count(p) AS n`` in the RETURN itself,
    or a name it returns that a WITH before it gave to an aggregate; None unless there is exactly one. When the
    RETURN gives none, the one aggregate the WITH right before it names (``WITH s, count(p) AS n RETURN s``):
    it is still in scope, and :func:`name_ranked_nodes` then returns it."""
    aggregated = set(aggregate_aliases(tokens))
    returned = [t.value for t in tokens[ret + 1 :] if t.kind == "word" and t.value in aggregated]
    if not returned:
        last_with = max((c.start for c in clauses(tokens) if c.keyword == "WITH" and c.start < ret), default=None)
        if last_with is not None:  # (clauses: the WITH of STARTS WITH is no clause)
            returned = [t.value for t in tokens[last_with:ret] if t.kind == "word" and t.value in aggregated]
    return returned[0] if len(set(returned)) == 1 else None


def _ranked_property(tokens: list[Token], ret: int, question: str, typed: dict[str, dict]) -> list[Token] | None:
    """``var.prop`` for the one property of a returned variable that the words after the question's superlative
    name ("the 5 orders with the lowest *freight* charges": ``o.freight``; "the highest *unit price*":
    ``p.unitPrice``); None when they name none or several."""
    m = re.search(_SUPERLATIVE + r"((?:\s+[a-z]+){1,4})", question, re.I)
    if m is None:
        return None
    words = set(m.group(1).lower().split())
    returned = dict.fromkeys(t.value for t in tokens[ret + 1 :] if t.kind == "word" and t.value in typed)
    found = [
        (var, prop)
        for var in returned
        for prop in typed[var]
        if (parts := identifier_words(prop)) and all(said(p, words) for p in parts)
    ]
    if len(found) != 1:
        return None
    var, prop = found[0]
    return [Token("word", var, True), Token("punct", "."), Token("word", prop)]


def rank_rows(
    tokens: list[Token], ranking: Ranking, question: str = "", typed: dict[str, dict] | None = None
) -> tuple[list[Token], list[str]]:
    """``tokens`` with the ORDER BY and LIMIT the question asks for where the query has none, and what was done.
    The order is by the one aggregate the query names (:func:`_ranked_alias`), else by the one property of a
    returned variable (``typed``: variable → its properties) that the question's superlative names."""
    done: list[str] = []
    found = final_return(tokens)
    if found is None:
        return tokens, done
    ret = found[0]
    one_row = _one_row(tokens, found[1], len(tokens))
    if ranking.order and not one_row and not any(is_keyword(tokens, k, "ORDER") for k in range(len(tokens))):
        alias = _ranked_alias(tokens, ret)
        key = (
            [Token("word", alias, True)] if alias is not None else _ranked_property(tokens, ret, question, typed or {})
        )
        if key is not None:
            at = next((k for k in range(ret, len(tokens)) if is_keyword(tokens, k, "LIMIT", "SKIP")), len(tokens))
            order = [Token("word", "ORDER", True), Token("word", "BY", True), *key]
            tokens = [*tokens[:at], *order, Token("word", ranking.order, True), *tokens[at:]]
            done.append(f"the question ranks by {serialise(key)}: ORDER BY {serialise(key)} {ranking.order} added")
    if ranking.rows and not any(is_keyword(tokens, k, "LIMIT") for k in range(len(tokens))):
        tokens = [*tokens, Token("word", "LIMIT", True), Token("num", str(ranking.rows), True)]
        done.append(f"the question asks for {ranking.rows} rows: LIMIT {ranking.rows} added")
    return tokens, done


_FIRST = re.compile(r"\bfirst\s+" + _NUMBER + r"\b", re.I)
# words by which a question bounds its rows without a number or a superlative ("some", "the latest order")
_BOUNDED = re.compile(
    r"\b(?:some|few|several|sample|examples?|first|last|latest|earliest|newest|oldest|recent(?:ly)?)\b", re.I
)


def unasked_limit(tokens: list[Token], ranking: Ranking, question: str) -> tuple[list[Token], list[str]]:
    """The final RETURN's ``LIMIT n`` dropped where the ``question`` asks for no number of rows and ranks nothing:
    without examples the 1.5B model ends "Which orders were placed in 1996?" and "How many products does each
    supplier supply?" with ``ORDER BY … LIMIT 10`` by habit, and the answer is then ten of the rows asked for.
    A question that bounds its rows in words ("some", "the latest") keeps it; so does a LIMIT inside a WITH."""
    if not question.strip() or ranking.rows is not None or ranking.order is not None or _BOUNDED.search(question):
        return tokens, []
    found = final_return(tokens)
    if found is None:
        return tokens, []
    at = next((k for k in range(found[0], len(tokens) - 1) if is_keyword(tokens, k, "LIMIT")), None)
    if at is None or at + 2 != len(tokens) or tokens[at + 1].kind != "num" or _counts(question, tokens[at + 1].value):
        return tokens, []
    return tokens[:at], [f"the question asks for no number of rows: LIMIT {tokens[at + 1].value} dropped"]


# words by which a question asks for an order without ranking by a superlative
_ORDER_WORDS = re.compile(
    r"\b(?:sort(?:ed)?|order(?:ed)?\s+by|rank(?:ed|ing)?|alphabetical(?:ly)?|chronological(?:ly)?|ascending|"
    r"descending|in\s+order)\b",
    re.I,
)
_AMOUNT_WORDS = re.compile(r"\b(?:how\s+many|number|count|total|sum|average|mean)\b", re.I)
_DIRECTION = ("ASC", "DESC", "ASCENDING", "DESCENDING")


def unasked_order(tokens: list[Token], ranking: Ranking, question: str) -> tuple[list[Token], list[str]]:
    """An ORDER BY the ``question`` does not ask for, dropped, with the column that only showed its key.

    With examples in the prompt the 1.5B model ranks where nothing is ranked: "Which 3 categories contain
    products with no units on order?" came out as ``RETURN c.categoryName, count(p) AS n ORDER BY n DESC LIMIT
    3`` and "List three products in the 'Dairy Products' category" as ``RETURN p.productName, p.unitsOnOrder
    ORDER BY p.unitsOnOrder DESC LIMIT 3``: the rows are then the categories with the most such products, or
    the products with the most units on order, which no one asked for. Of the 299 clean Northwind dev pairs'
    gold queries, two order by something their question does not rank by. Only an order by an aggregate, or by
    a property the question says no word of, goes; a question with a superlative, an order in words ("sorted",
    "alphabetically"), or a bound such as "the first 3" or "the latest" keeps it. The key's column goes from the
    RETURN unless the question asks for an amount ("how many", "number", "total") or it is the only column;
    an aggregate gone from a RETURN that has no other one lists its rows once (DISTINCT), as its grouping did."""
    if not question.strip() or ranking.order is not None or _BOUNDED.search(question) or _ORDER_WORDS.search(question):
        return tokens, []
    orders = [c for c in clauses(tokens) if c.keyword == "ORDER"]
    if len(orders) != 1:
        return tokens, []
    order = orders[0]
    key = tokens[order.start + 2 : order.end]
    if key and is_word(key[-1], *_DIRECTION):
        key = key[:-1]
    words = question_words(question)
    if len(key) == 1 and key[0].kind == "word" and key[0].value in aggregate_aliases(tokens):
        shown_only = not _AMOUNT_WORDS.search(question)
    elif len(key) == 3 and key[0].kind == "word" and key[1].value == "." and key[2].kind == "word":
        if any(said(w, words) for w in identifier_words(key[2].value) if len(w) >= 3):
            return tokens, []
        shown_only = True
    else:
        return tokens, []
    out = tokens[: order.start] + tokens[order.end :]
    done = [f"the question ranks nothing: ORDER BY {serialise(key)} dropped"]
    return (_drop_key_column(out, key) if shown_only else out), done


def _drop_key_column(tokens: list[Token], key: list[Token]) -> list[Token]:
    """``tokens`` without the final RETURN's item that is ``key`` (itself, or an expression named ``key``), unless
    it is the only item; DISTINCT added when the item was the RETURN's last aggregate."""
    found = final_return(tokens)
    if found is None:
        return tokens
    ret, first = found
    end = next((c.start for c in clauses(tokens) if c.start > ret), len(tokens))
    items = split_at(tokens, first, end, ",")
    target = _key(key)
    hits = [
        (a, b)
        for a, b in items
        if _key(tokens[a:b]) == target
        or (b - a >= 3 and is_word(tokens[b - 2], "AS") and _key(tokens[b - 1 : b]) == target)
    ]
    if len(items) < 2 or len(hits) != 1:
        return tokens
    a, b = hits[0]
    cut = (items[items.index(hits[0]) - 1][1], b) if hits[0] != items[0] else (a, items[1][0])
    out = tokens[: cut[0]] + tokens[cut[1] :]
    if has_aggregate(tokens[a:b]) and not has_aggregate(out[first : end - (cut[1] - cut[0])]) and first == ret + 1:
        out.insert(first, Token("word", "DISTINCT", True))
    return out


def _counts(question: str, number: str) -> bool:
    """Whether the question counts things by ``number`` ("the names of three customers"), not compares by it
    ("more than three times")."""
    spelled = [w for w, n in NUMBER_WORDS.items() if str(n) == number]
    counted = re.compile(
        rf"(?<!than )(?<!least )(?<!most )\b(?:{'|'.join([re.escape(number), *spelled])})\s+"
        r"(?!(?:times|units?|percent|years?|days?|of)\b)[a-z]",
        re.I,
    )
    return counted.search(question) is not None


def first_by_date(
    tokens: list[Token], question: str, labels: dict[str, str], properties: dict[str, dict[str, str]]
) -> tuple[list[Token], list[str]]:
    """ "The first 3 orders shipped to France" are the earliest three: a query that returns a node without any
    ORDER BY is ordered by that node's date — the date property the question's words name ("shipped" →
    ``shippedDate``, "required" → ``requiredDate``), else the one named for its label (``Order.orderDate``);
    none when that is not one property. ``labels``: node variable → label; ``properties``: label → its
    properties."""
    if not _FIRST.search(question) or any(is_keyword(tokens, k, "ORDER") for k in range(len(tokens))):
        return tokens, []
    found = final_return(tokens)
    if found is None:
        return tokens, []
    first = found[1]
    var = tokens[first].value if first < len(tokens) else ""
    label = labels.get(var)
    dates = [p for p in properties.get(label or "", {}) if "date" in p.lower()]
    stems = {w.lower()[:4] for w in re.findall(r"[A-Za-z]{4,}", question)}
    own_words = {"date", (label or "").lower()}  # "orders" names the things asked for, not orderDate
    named = [p for p in dates if {w[:4] for w in identifier_words(p) if w not in own_words} & stems]
    own = [p for p in dates if label and label.lower() in p.lower()]
    chosen = named if len(named) == 1 else own if len(own) == 1 else []
    if not chosen:
        return tokens, []
    at = next((k for k in range(first, len(tokens)) if is_keyword(tokens, k, "LIMIT", "SKIP")), len(tokens))
    order = [Token("word", "ORDER", True), Token("word", "BY", True), Token("word", var, True)]
    order += [Token("punct", "."), Token("word", chosen[0])]
    return [*tokens[:at], *order, *tokens[at:]], [
        f"the first rows asked for are the earliest: ORDER BY {var}.{chosen[0]}"
    ]


def name_ranked_nodes(
    tokens: list[Token], labels: dict[str, str], names: dict[str, str], ranks: bool = True, question: str = ""
) -> tuple[list[Token], list[str]]:
    """A ranking (the final RETURN ordered by an aggregate or by a node's property) gives each node it returns
    by the property that names its label and shows the value it ranks by (``RETURN s ORDER BY n DESC`` →
    ``RETURN s.companyName, n ORDER BY n DESC``; ``RETURN p ORDER BY p.unitPrice`` → ``RETURN p.productName,
    p.unitPrice ORDER BY p.unitPrice``): "the 3 suppliers with the most products" are three names and their
    counts, not three records without them. An order by a property is a ranking only when the question ``ranks``
    (has a superlative): "which 3 orders had a required date in 1996" orders only to choose three. An aggregate
    ranking keeps one grouping key and what the ``question`` names (:func:`_one_group`).
    ``labels``: node variable → label; ``names``: label → its naming property."""
    found = final_return(tokens)
    if found is None:
        return tokens, []
    ret, start = found
    order = next((k for k in range(ret, len(tokens) - 1) if is_keyword(tokens, k, "ORDER")), None)
    if order is None:
        return tokens, []
    end = next(
        (k for k in range(order + 2, len(tokens)) if is_keyword(tokens, k, "ASC", "DESC", "LIMIT", "SKIP")), None
    )
    key = tokens[order + 2 : end if end is not None else len(tokens)]
    ranked = _ranked_value(key, tokens, labels)
    if ranked is None or (len(ranked) == 3 and not ranks):
        return tokens, []
    items = split_at(tokens, start, order, ",")
    if len(ranked) == 3 and _aggregates_only(tokens, items):
        # "the minimum reorder level": RETURN min(p.reorderLevel) ORDER BY p.reorderLevel is one row, and the
        # property returned beside it would group by itself (one row per level, each its own minimum)
        stop = len(tokens) if end is None else end + int(is_keyword(tokens, end, "ASC", "DESC"))
        return [*tokens[:order], *tokens[stop:]], [
            f"an aggregate of every row is one row: ORDER BY {serialise(key)} dropped"
        ]
    done: list[str] = []
    if len(ranked) != 3:  # ranked by an aggregate: grouped by what it ranks
        items, dropped = _one_group(tokens, items, question)
        done += [f"a ranking groups by what it ranks: {x} dropped" for x in dropped]
    out = list(tokens[:start])
    for n, (a, b) in enumerate(items):
        if n:
            out.append(Token("punct", ","))
        var = tokens[a].value if b - a == 1 and tokens[a].kind == "word" else None
        prop = names.get(labels.get(var or "", ""))
        if var is not None and prop:
            out += [tokens[a], Token("punct", "."), Token("word", prop)]
            done.append(f"a ranking gives {var} by its name: {var}.{prop}")
        else:
            out += tokens[a:b]
    shown = set()
    for x, y in split_at(out, start, len(out), ","):
        shown.add(_key(out[x:y]))
        if y - x >= 3 and is_word(out[y - 2], "AS"):  # aliased: by its name and by what it names
            shown |= {_key(out[y - 1 : y]), _key(out[x : y - 2])}
    if ranked and _key(ranked) not in shown:
        out += [Token("punct", ","), *([ranked[0]._replace(gap=True), *ranked[1:]])]
        done.append(f"a ranking shows the value it ranks by: {serialise(ranked)} returned")
    if not done:
        return tokens, []
    return [*out, *tokens[order:]], done


def _one_group(
    tokens: list[Token], items: list[tuple[int, int]], question: str = ""
) -> tuple[list[tuple[int, int]], list[str]]:
    """The RETURN items of an aggregate ranking with one grouping key, the first: "the top 5 products ordered
    by customers from the USA" ranks products, and a returned ``c.companyName`` or ``o.orderID`` beside
    ``p.productName`` would count per customer and order instead; "the most frequently shipped cities" counts
    per ``o.shipCity``, and ``o.shipVia`` or ``o.shipRegion`` beside it would split each city's count (the 1.5B
    model adds such columns). Another property of the first key's variable stays when the ``question`` names
    each of its words ("customers and their countries": ``c.country``)."""
    aggregated = set(aggregate_aliases(tokens))
    words = question_words(question)

    def is_aggregate(a: int, b: int) -> bool:
        return has_aggregate(tokens[a:b], SCORES) or (b - a == 1 and tokens[a].value in aggregated)

    def named(a: int, b: int) -> bool:
        prop = tokens[a + 2].value if b - a >= 3 and tokens[a + 1].value == "." else ""
        parts = identifier_words(prop)
        return bool(parts) and all(said(p, words) for p in parts)

    keys = [(a, b) for a, b in items if not is_aggregate(a, b)]
    if not keys:
        return items, []
    main = tokens[keys[0][0]].value
    kept = [
        (a, b) for a, b in items if is_aggregate(a, b) or (a, b) == keys[0] or (tokens[a].value == main and named(a, b))
    ]
    return kept, [serialise(tokens[a:b]) for a, b in items if (a, b) not in kept]


def _one_row(tokens: list[Token], start: int, end: int) -> bool:
    """Whether the RETURN items in ``tokens[start:end]`` (up to its ORDER BY, SKIP or LIMIT) are all aggregates:
    the query returns one row, which no ORDER BY ranks."""
    stop = next((k for k in range(start, end) if is_keyword(tokens, k, "ORDER", "SKIP", "LIMIT")), end)
    return _aggregates_only(tokens, split_at(tokens, start, stop, ","))


def _aggregates_only(tokens: list[Token], items: list[tuple[int, int]]) -> bool:
    return bool(items) and all(has_aggregate(tokens[a:b], SCORES) for a, b in items)


def _key(tokens: list[Token]) -> tuple[str, ...]:
    return tuple(t.value for t in tokens)


def _ranked_value(key: list[Token], tokens: list[Token], labels: dict[str, str]) -> list[Token] | None:
    """What a sort key ranks by, to be shown: a named aggregate or a node's property (its tokens); ``[]`` for an
    aggregate written out (ranked, nothing to add); None when the order is no ranking."""
    if len(key) == 1 and key[0].kind == "word" and key[0].value in set(aggregate_aliases(tokens)):
        return key
    if len(key) == 3 and key[0].value in labels and key[1].value == "." and key[2].kind == "word":
        return key
    if any(t.kind == "word" and t.value.lower() in SCORES for t in key):
        return []
    return None


__all__ = ["Ranking", "asked_ranking", "first_by_date", "name_ranked_nodes", "rank_rows", "unasked_limit"]
