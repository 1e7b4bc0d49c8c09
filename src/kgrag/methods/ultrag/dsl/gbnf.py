"""A GBNF grammar (llama.cpp's constrained decoding) for queries over one KG's relations.

With it a local model can only emit well-formed queries whose relations exist: entity names are double-
quoted strings, relations are the KG's names (optionally ``_inv``), intersections are ``AND(q, q, ...)``.
Backends that cannot constrain decoding simply ignore the grammar; the validator still checks the output.
"""

from __future__ import annotations

import json

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.ultrag.dsl.nodes import INVERSE_SUFFIX
from kgrag.methods.ultrag.dsl.printer import format_relation

MAX_GRAMMAR_RELATIONS = 4000


def _literal(text: str) -> str:
    """A GBNF string literal (JSON escaping is compatible with GBNF's)."""
    return json.dumps(text, ensure_ascii=False)


def query_grammar(kg: KnowledgeGraph, *, max_entity_chars: int = 120, max_and: int = 4) -> str | None:
    """GBNF for one query over ``kg``'s relations; ``None`` when the KG has too many relations to list."""
    if not kg.num_relations or kg.num_relations > MAX_GRAMMAR_RELATIONS:
        return None
    # longest first (so "has_tags_inv" is tried before "has_tags"), ties by name: the grammar text must not depend
    # on set order (hash-randomised per process), or every process would miss the LLM response cache
    names = sorted(
        {format_relation(n) for r in kg.relations for n in (r, r + INVERSE_SUFFIX)}, key=lambda n: (-len(n), n)
    )
    rel = " | ".join(_literal(n) for n in names)
    more = " ".join('("," ws query)?' for _ in range(max_and - 2))
    return "\n".join(
        [
            "root ::= query",
            'query ::= atom (ws "->" ws rel)*',
            f'atom ::= entity | "AND(" ws query "," ws query {more} ws ")"',
            f'entity ::= "\\"" char{{1,{max_entity_chars}}} "\\""',
            r'char ::= [^"\\\n]',
            f"rel ::= {rel}",
            'ws ::= " "?',
        ]
    )
