"""GBNF pieces (llama.cpp's constrained decoding) shared by the prompts that hold a model to what it may write.

Backends that cannot constrain decoding ignore a grammar, so whatever reads the output still checks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable


def literal(text: str) -> str:
    """A GBNF string literal (JSON escaping is compatible with GBNF's)."""
    return json.dumps(text, ensure_ascii=False)


def choice_grammar(options: Iterable[str], *, tag: str = "answers", max_items: int = 10) -> str | None:
    """GBNF for one to ``max_items`` of ``options`` between ``<tag>`` and ``</tag>``, one per line or separated
    by "; " (whichever the model starts with: a grammar that forces a layout the model would not choose moves
    its choice of names too — so the first name may also follow a space, as in ``<answers> Volt X2 Phone``, where
    a grammar without it made the model continue "Volt" as "Voltaic"); ``None`` when there is nothing to choose
    from.

    A small model asked for "entity names from the paths" also writes sentences, shortened names ("Germany"
    for "Nazi Germany") and lists run together; choosing is cheaper to get right than writing, and costs no
    prompt tokens (the options are the names the prompt already shows).

    >>> print(choice_grammar(["Heat", "Ali"]))
    root ::= "<answers>" ("\\n" | " ")? item (sep item){0,9} "\\n"? "</answers>"
    sep ::= "; " | "\\n"
    item ::= "Ali" | "Heat"
    """
    # sorted: the grammar text is part of the response-cache key and must not depend on the options' order
    names = sorted({o for o in options if o.strip() and "\n" not in o})
    if not names:
        return None
    return "\n".join(
        [
            f'root ::= "<{tag}>" ("\\n" | " ")? item (sep item){{0,{max_items - 1}}} "\\n"? "</{tag}>"',
            'sep ::= "; " | "\\n"',
            "item ::= " + " | ".join(literal(n) for n in names),
        ]
    )
