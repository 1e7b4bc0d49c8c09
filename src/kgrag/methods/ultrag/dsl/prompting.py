"""What the query writer is shown about a KG: each relation with an example in both directions, and examples.

Small models mostly get the *direction* of a relation wrong (``"Lya De Putti" -> starred_actors`` for "what
did Lya De Putti act in"), so every relation is listed with one real fact read both ways:
``"Titanic" -> starred_actors gives "Kate Winslet"; "Kate Winslet" -> starred_actors_inv gives "Titanic"``
(or forward only, where the list is read anew for every question: ULTRAG's ``relation_examples``).
Example facts are chosen once per KG (names with letters, from well-connected heads; never an unnamed node's
identifier such as Freebase's ``m.0abc12``), so each relation's line is the same in every prompt.  Questions in
the examples read a relation by its last word group (``film.film.genre`` → "genre"), so that ids from any
namespace read as words; queries spell relations exactly as the KG does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.verbalize import humanize
from kgrag.methods.ultrag.dsl.aliases import query_names
from kgrag.methods.ultrag.dsl.nodes import INVERSE_SUFFIX
from kgrag.methods.ultrag.dsl.printer import format_entity, format_relation

_WORDY = re.compile(r"[^\W\d_]{2}")
_NAMESPACE_SEPARATORS = re.compile(r"[./#:]")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _readable(kg: KnowledgeGraph) -> np.ndarray:
    """Entities whose names read as names (two letters in a row, at most 40 characters, not an identifier)."""

    def build() -> np.ndarray:
        wordy = np.fromiter(
            (len(n) <= 40 and _WORDY.search(n) is not None for n in kg.entities), dtype=bool, count=kg.num_entities
        )
        return wordy & ~unnamed_entities(kg)

    return kg.resources.get("dsl_readable_names", build)


def relation_words(name: str) -> str:
    """A relation name as words for a question: the last part of a namespaced id, underscores and camelCase
    as spaces (``film.film.genre`` → ``genre``, ``http://x.org/birthPlace`` → ``birth Place``,
    ``directed_by`` → ``directed by``)."""
    parts = [p for p in _NAMESPACE_SEPARATORS.split(name) if p.strip()]
    last = parts[-1] if parts else name
    return humanize(_CAMEL.sub(" ", last)).strip() or humanize(name)


def example_facts(kg: KnowledgeGraph) -> np.ndarray:
    """One triple id per relation (``-1`` when unused): readable names preferred, then the best-connected head."""
    return kg.resources.get("dsl_example_facts", lambda: _example_facts(kg))


def _example_facts(kg: KnowledgeGraph) -> np.ndarray:
    examples = np.full(kg.num_relations, -1, dtype=np.int64)
    if kg.num_triples:
        readable = _readable(kg)
        several_words = np.fromiter((" " in n for n in kg.entities), dtype=bool, count=kg.num_entities)
        # a head of several words ("Les Misérables", not "War": one-word titles read like genres), then
        # readable names at both ends, then the best-connected head
        score = 2 * (readable & several_words)[kg.heads].astype(np.int64) + readable[kg.tails] + readable[kg.heads]
        degree = kg.degree("both")
        order = np.lexsort((-degree[kg.heads], -score, kg.rels))
        rels = kg.rels[order]
        first = np.ones(len(order), dtype=bool)
        first[1:] = rels[1:] != rels[:-1]
        examples[rels[first]] = order[first]
    return examples


def relation_line(
    kg: KnowledgeGraph, rid: int, example: int | None = None, *, both_ways: bool = True, short: bool = False
) -> str:
    """``- r: "h" -> r gives "t"; "t" -> r_inv gives "h"`` (the relation spelled exactly as a query writes it:
    its alias when ``short``, :mod:`.aliases`), with the fact ``example`` (a triple id of relation ``rid``) or
    else the KG's example for the relation; the part after ``;`` only ``both_ways``."""
    tid = int(example_facts(kg)[rid]) if example is None else int(example)
    written = query_names(kg, short)[int(rid)]
    name, inverse = format_relation(written), format_relation(written + INVERSE_SUFFIX)
    if tid < 0:
        return f"- {name} (no facts)"
    h, _, t = kg.triple(tid)
    forward = f"- {name}: {format_entity(h)} -> {name} gives {format_entity(t)}"
    return f"{forward}; {format_entity(t)} -> {inverse} gives {format_entity(h)}" if both_ways else forward


def relation_lines(kg: KnowledgeGraph, relations: Sequence[int], *, short: bool = False) -> str:
    """:func:`relation_line` for each relation, one per line."""
    return "\n".join(relation_line(kg, int(rid), short=short) for rid in relations)


def query_examples(kg: KnowledgeGraph, *, short: bool = False) -> str:
    """Question → query pairs built from the KG's own facts: forward, backward, chains of 2 and 3 steps, an AND;
    relations as the list names them (``short``: their aliases)."""
    ex = example_facts(kg)
    ex = ex[ex >= 0]
    if not len(ex):
        return "(the graph is empty)"
    # the head with the most distinct relations among the examples' heads gives the chain examples
    h_id = int(kg.heads[ex[0]])
    best = -1
    for tid in ex.tolist():
        head = int(kg.heads[tid])
        out = kg.out_edge_ids(head)
        n = len(np.unique(kg.rels[out]))
        if n > best and _readable(kg)[head]:
            h_id, best = head, n
    out = kg.out_edge_ids(h_id)
    readable = _readable(kg)
    out = out[readable[kg.tails[out]]] if readable[kg.tails[out]].any() else out
    first_rel = {}
    for tid in out.tolist():
        first_rel.setdefault(int(kg.rels[tid]), tid)
    tids = list(first_rel.values())
    h, r1, t1 = kg.triple(tids[0])
    q = format_entity
    alias = dict(zip(kg.relations, query_names(kg, short)))
    w1, f1, i1 = relation_words(r1), format_relation(alias[r1]), format_relation(alias[r1] + INVERSE_SUFFIX)
    lines = [
        f"Question: what is {q(h)} {w1}?  Query: {q(h)} -> {f1}",
        f"Question: what is {w1} {q(t1)}?  Query: {q(t1)} -> {i1}",
        f"Question: what else is {w1} the same as {q(h)}?  Query: {q(h)} -> {f1} -> {i1}",
    ]
    if len(tids) > 1:
        _, r2, t2 = kg.triple(tids[1])
        w2, f2, i2 = relation_words(r2), format_relation(alias[r2]), format_relation(alias[r2] + INVERSE_SUFFIX)
        lines += [
            f"Question: what is {w2} for the things {w1} {q(t1)}?  Query: {q(t1)} -> {i1} -> {f2}",
            f"Question: what is {w2} for the other things {w1} the same as {q(h)}?  "
            f"Query: {q(h)} -> {f1} -> {i1} -> {f2}",
            f"Question: what is both {w1} {q(t1)} and {w2} {q(t2)}?  Query: AND({q(t1)} -> {i1}, {q(t2)} -> {i2})",
        ]
    return "\n".join(lines)
