"""A GBNF grammar (llama.cpp's constrained decoding) for queries over one KG's relations.

With it a local model can only emit well-formed queries whose relations exist: entity names are double-
quoted strings, relations are the KG's names (optionally ``_inv``), intersections are ``AND(q, q, ...)``.
Backends that cannot constrain decoding simply ignore the grammar; the validator still checks the output.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.ultrag.dsl.aliases import query_names
from kgrag.methods.ultrag.dsl.nodes import INVERSE_SUFFIX
from kgrag.methods.ultrag.dsl.printer import format_relation
from kgrag.prompts.gbnf import literal as _literal

MAX_GRAMMAR_RELATIONS = 4000


def query_grammar(
    kg: KnowledgeGraph,
    relations: Sequence[int] | None = None,
    *,
    max_entity_chars: int = 120,
    max_and: int = 4,
    short: bool = False,
) -> str | None:
    """GBNF for one query over ``kg``'s relations, or over the relation ids ``relations`` only (the ones the
    prompt shows: the model is held to what it was told); ``None`` when there are too many or none.

    >>> from kgrag.graph.kg import KnowledgeGraph
    >>> kg = KnowledgeGraph.from_triples([("Heat", "directed_by", "Michael Mann"), ("Heat", "year", "1995")])
    >>> query_grammar(kg, [1]).splitlines()[-2]
    'rel ::= "year_inv" | "year"'
    """
    written = query_names(kg, short)  # the relations as the prompt names them (``short``: :mod:`.aliases`)
    chosen = written if relations is None else [written[int(r)] for r in relations]
    if not chosen or len(chosen) > MAX_GRAMMAR_RELATIONS:
        return None
    # longest first (so "has_tags_inv" is tried before "has_tags"), ties by name: the grammar text must not depend
    # on set order (hash-randomised per process), or every process would miss the LLM response cache
    names = sorted({format_relation(n) for r in chosen for n in (r, r + INVERSE_SUFFIX)}, key=lambda n: (-len(n), n))
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
