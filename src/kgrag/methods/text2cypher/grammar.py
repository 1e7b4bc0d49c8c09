"""A GBNF grammar of the read-only Cypher a question needs, in which only this database's schema can be written.

With it llama.cpp cannot sample a label the database lacks, a property of the wrong label in a node pattern, or
a relationship against its direction: the path rules carry the label of the node they stand on, so after
``(p:Product)`` only ``-[:PART_OF]->(…:Category)``, ``<-[:SUPPLIES]-(…:Supplier)`` and
``<-[:ORDERS]-(…:Order)`` may follow. A node written without a label may be followed by any relationship type,
but the node after it still gets the type's own label in the type's direction. Clauses are the read-only
subset (MATCH, OPTIONAL MATCH, WHERE, WITH, RETURN, ORDER BY, LIMIT, aggregation, variable-length paths); the
guard still checks what comes out, and property reads in expressions (``x.prop``) are held to the variable's
label afterwards by :mod:`.check`, which a context-free grammar cannot do. A WHERE condition has no aggregate
(``wcond``): Cypher aggregates in WITH and RETURN only, and the 1.5B model, shown solved examples, wrote
``WHERE p.unitPrice > avg(p.unitPrice)``, which the engine rejects; what it means is a WITH first. A list (of
literals) stands only after IN, the one place this subset reads one: as an operand of arithmetic it let the
model spell a pattern, ``count((p)-[o]-(c))`` — parenthesised ``p`` minus the list ``[o]`` minus ``c`` to the
grammar, a pattern with a new variable to the engine, which rejects it (Northwind dev, with examples); and IN
reads a list or a variable (or its property), not any expression: ``s.supplierID IN (1000000…`` ran on to the
token budget where a subquery was wanted (Northwind dev, with and without examples). ORDER
BY keeps aggregates: held to row expressions like WHERE (tried on 2026-12-05), the model, wanting
``ORDER BY count(o)``, wrote ``count`` or ``countDistincto`` as a variable instead (without examples 26 of 299
dev queries did not run, against 12 with examples), and :mod:`.check` makes an aggregate ordered by a column.

Arithmetic reads numbers only. ``-``, ``*``, ``/`` and the calls that take a number (``sum``, ``avg``,
``round``, ``abs``, ``toFloat``, ``toInteger``) read properties that hold numbers (``nprop``: typed as numbers,
or stored as text that is always a number's, such as Northwind's ``Order.freight`` '32.38', which :mod:`.check`
then reads through ``toFloat``), numbers, aliases and what counts or keeps a number (``count``, ``size``,
``min``, ``coalesce`` …); ``+`` also joins text. Where the model wanted a subquery ("above the average"), it
wrote ``coalesce(c.customerID) - 1``, ``toFloat(o.orderDate)`` or ``(c.picture) - …`` into the comparison,
which the engine refuses (5 of the 8 Northwind dev queries with examples that did not run at 78e15f6).

Layout is free where a model lays a query out over lines: clauses, ORDER BY, LIMIT and the closing tag may
each start a new line. When only a space was allowed before ORDER BY, LIMIT and ``</cypher>``, a model that had
seen solved examples written over lines wanted a line break there, could not write one, and padded the RETURN
with columns up to the cap instead (14 of 60 Northwind dev queries with examples, all of them wrong).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from kgrag.methods.text2cypher.schema import GraphSchema, RelationshipType
from kgrag.methods.text2cypher.scope import AGGREGATES

# no ``exists``: the grammar has no pattern predicates, and ``exists((a)-[:R]->(b))`` came out as a
# parenthesised list expression the engine rejected (Northwind dev, with examples)
FUNCTIONS = [
    *sorted(AGGREGATES),
    "size", "round", "abs", "toFloat", "toInteger", "toString", "toLower", "toUpper", "trim", "coalesce", "length",
    "head", "last", "labels", "type",
]  # fmt: skip
# what each function makes of a number (the arithmetic rules below): a number whatever it is given; a number
# only from a number; the kind of what it is given. The rest give no number (text, a list).
COUNTING = frozenset({"count", "size", "length"})
NUMERIC = frozenset({"sum", "avg", "round", "abs", "toFloat", "toInteger"})
SAME_KIND = frozenset({"min", "max", "coalesce", "head", "last"})
_NUMBER_TYPE = re.compile(r"(U?INT\d*|INTEGER|LONG|SERIAL|FLOAT|DOUBLE|DECIMAL.*|NUMBER)", re.IGNORECASE)


def number_properties(schema: GraphSchema, numbers_in_text: Iterable[str] = ()) -> frozenset[str]:
    """The property names that hold numbers: typed as numbers on some label or relationship type, or stored as
    text that is always a number's (``numbers_in_text``, from the stored values: Northwind's ``Order.freight``
    '32.38', which :mod:`.coercion` reads through ``toFloat``)."""
    typed = [*schema.labels.values(), *(r.properties for r in schema.relationships)]
    return frozenset(p for props in typed for p, t in props.items() if _NUMBER_TYPE.fullmatch(t)) | frozenset(
        numbers_in_text
    )


_FIXED = r"""
root ::= "<cypher>" "\n"? query "\n"? "</cypher>"
query ::= match (sep clause)* sep "RETURN " body
clause ::= match | "WHERE " wcond | "WITH " body
match ::= ("OPTIONAL ")? "MATCH " path ("," " "? path)*
sep ::= " " | "\n"
body ::= ("DISTINCT ")? item ("," " "? item){0,5} (sep "ORDER BY " order ("," " "? order)*)? (sep "LIMIT " int)?
item ::= expr (" AS " var)?
order ::= expr (" DESC" | " ASC")?
cond ::= ("NOT ")? test ((" AND " | " OR ") ("NOT ")? test)*
test ::= expr (cmp expr | " IN " (list | var ("." prop)?) | " IS NULL" | " IS NOT NULL")?
cmp ::= " "? ("=" | "<>" | "<=" | ">=" | "<" | ">") " "? | " CONTAINS " | " STARTS WITH " | " ENDS WITH "
expr ::= term (" "? "+" " "? term)* | nterm (op nterm)+
term ::= var ("." prop)? | func args | nfunc nargs | literal | "(" cond ")"
nexpr ::= nterm (op nterm)*
nterm ::= var ("." nprop)? | cfunc args | nfunc nargs | kfunc nargs | number | "(" nexpr ")"
args ::= "(" ("DISTINCT ")? (expr | "*") ")"
nargs ::= "(" ("DISTINCT ")? nexpr ")"
op ::= " "? ("+" | "-" | "*" | "/") " "?
list ::= "[" (literal ("," " "? literal)*)? "]"
wcond ::= ("NOT ")? wtest ((" AND " | " OR ") ("NOT ")? wtest)*
wtest ::= wexpr (cmp wexpr | " IN " (list | var ("." prop)?) | " IS NULL" | " IS NOT NULL")?
wexpr ::= wterm (" "? "+" " "? wterm)* | wnterm (op wnterm)+
wterm ::= var ("." prop)? | rowfunc "(" wexpr ")" | nrowfunc wnargs | literal | "(" wcond ")"
wnexpr ::= wnterm (op wnterm)*
wnterm ::= var ("." nprop)? | crowfunc "(" wexpr ")" | nrowfunc wnargs | krowfunc wnargs | number | wnargs
wnargs ::= "(" wnexpr ")"
literal ::= string | number | "true" | "false" | "null"
string ::= "'" ([^'\\\n] | "\\" [^\n])* "'"
number ::= "-"? [0-9]+ ("." [0-9]+)?
int ::= [1-9] [0-9]{0,2}
var ::= [a-z] [a-zA-Z0-9_]{0,23}
range ::= "*" [1-4]? (".." [1-4])?
node-any ::= "(" var ")"
chain-any ::= node-any step-any?
"""


def _lit(text: str) -> str:
    return json.dumps(text)


def _rule(name: str) -> str:
    """A GBNF rule name for a label or type (letters, digits and dashes only)."""
    return re.sub(r"[^a-zA-Z0-9]+", "-", name).strip("-").lower() or "x"


def _alternatives(names: list[str]) -> str:
    return " | ".join(_lit(n) for n in sorted(set(names))) if names else '"x"'


MAX_HOPS = 4  # relationships in one path pattern: the model otherwise loops (p)-[:R]->(c)<-[:R]-(q)-... to max_tokens


def _step(rel: RelationshipType, direction: str, depth: int) -> str:
    """One relationship hop and the chain it leads to, one hop deeper. A variable only where the type has
    properties to read: the 1.5B model named ``-[o:PURCHASED]->`` and then read ``o.orderDate`` as if ``o`` were
    the order."""
    var = "var? " if rel.properties else ""
    if direction == "out":
        return f'"-[" {var}":" {_lit(rel.name)} range? "]->" chain-{_rule(rel.target)}-{depth + 1}'
    return f'"<-[" {var}":" {_lit(rel.name)} range? "]-" chain-{_rule(rel.source)}-{depth + 1}'


_MAP_VALUES = {"STRING": "string", "BOOLEAN": '("true" | "false")'}


def _map_rules(r: str, label: str, props: dict[str, str]) -> list[str]:
    """``node-L`` and its property map, in which a property takes a value of its own type, and only a text or
    boolean property may appear at all. A number is compared in WHERE: the map can only say "equals", and the
    1.5B model, asked for "a unit price less than 10", wrote ``{unitPrice: '<10'}`` (which the engine cannot cast)
    or ``{unitPrice: 10}`` (which returns the wrong rows) into it (3 of 60 Northwind dev questions)."""
    pairs = [f'{_lit(p)} ": " {_MAP_VALUES[t.upper()]}' for p, t in props.items() if t.upper() in _MAP_VALUES]
    if not pairs:
        return [f'node-{r} ::= "(" var? ":" {_lit(label)} ")"']
    return [
        f'node-{r} ::= "(" var? ":" {_lit(label)} (" "? props-{r})? ")"',
        f'props-{r} ::= "{{" pair-{r} (", " pair-{r})* "}}"',
        f"pair-{r} ::= " + " | ".join(pairs),
    ]


def _label_rules(schema: GraphSchema, label: str) -> list[str]:
    """``node-L`` and, per number of hops already walked, ``chain-L-d`` and ``step-L-d`` of one label."""
    r = _rule(label)
    rules = _map_rules(r, label, schema.labels[label])
    ways = [(rel, "out") for rel in schema.relationships if rel.source == label]
    ways += [(rel, "in") for rel in schema.relationships if rel.target == label]
    for depth in range(MAX_HOPS + 1):
        if ways and depth < MAX_HOPS:
            rules.append(f"chain-{r}-{depth} ::= node-{r} step-{r}-{depth}?")
            rules.append(f"step-{r}-{depth} ::= " + " | ".join(_step(rel, d, depth) for rel, d in ways))
        else:
            rules.append(f"chain-{r}-{depth} ::= node-{r}")
    return rules


def cypher_grammar(schema: GraphSchema, numbers: frozenset[str] | None = None) -> str:
    """The GBNF grammar for ``schema`` (see the module docstring); ``numbers``: the property names holding
    numbers (:func:`number_properties`; by default those the schema types as numbers)."""
    rules = [_FIXED.strip()]
    labels = list(schema.labels)
    rules.append("path ::= " + " | ".join([f"chain-{_rule(x)}-0" for x in labels] + ["chain-any"]))
    any_steps = []
    for rel in schema.relationships:
        any_steps += [_step(rel, "out", 0), _step(rel, "in", 0)]
    rules.append("step-any ::= " + (" | ".join(dict.fromkeys(any_steps)) if any_steps else '"-->" node-any'))
    for label in labels:
        rules += _label_rules(schema, label)
    every_prop = [p for props in schema.labels.values() for p in props]
    every_prop += [p for rel in schema.relationships for p in rel.properties]
    rules.append(f"prop ::= {_alternatives(every_prop) if every_prop else '[a-zA-Z_]+'}")
    numbers = number_properties(schema) if numbers is None else numbers
    held = sorted(p for p in every_prop if p in numbers)
    if held:
        rules.append(f"nprop ::= {_alternatives(held)}")
    else:  # no property holds a number: arithmetic reads none
        rules[0] = rules[0].replace('var ("." nprop)?', "var")
    rules += _function_rules("", FUNCTIONS) + _function_rules("row", [f for f in FUNCTIONS if f not in AGGREGATES])
    return "\n".join(rules) + "\n"


def _function_rules(kind: str, functions: list[str]) -> list[str]:
    """``func`` (given anything), ``nfunc`` (given a number), ``cfunc`` (a number of anything) and ``kfunc``
    (a number of a number) for expressions, the same with ``row`` for a WHERE's, from ``functions``."""
    given_any = [f for f in functions if f not in NUMERIC]
    return [
        f"{kind}func ::= {_alternatives(given_any)}",
        f"n{kind}func ::= {_alternatives([f for f in functions if f in NUMERIC])}",
        f"c{kind}func ::= {_alternatives([f for f in functions if f in COUNTING])}",
        f"k{kind}func ::= {_alternatives([f for f in functions if f in SAME_KIND])}",
    ]


__all__ = ["cypher_grammar"]
