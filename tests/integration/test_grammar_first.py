"""Greedy decoding that lets a grammar check the likeliest tokens first writes what llama-cpp-python's own chain
(the grammar over the whole vocabulary) writes, token for token, on the real runtime — including where the
grammar allows none of the likeliest tokens and must read the whole vocabulary after all."""

from __future__ import annotations

import pytest

from kgrag.methods.byokg.artifacts import linker_grammar
from kgrag.prompts.gbnf import choice_grammar

pytestmark = pytest.mark.integration

PROMPT = [
    {"role": "system", "content": "Answer from the facts, between <answers> and </answers>."},
    {"role": "user", "content": "Facts:\nHeat -[directed by]-> Michael Mann\n\nQuestion: who directed Heat?"},
]
GRAMMARS = {
    "choice": choice_grammar(["Michael Mann", "Al Pacino", "Robert De Niro", "Los Angeles"]),
    "linker": linker_grammar(["directed by", "starred actors", "release year"], query=False),
    "free lines": 'root ::= line{1,4}\nline ::= [^\\n<] [^\\n]{0,40} "\\n"',
    # no likely token starts this: the grammar must fall back to reading the whole vocabulary
    "unlikely": 'root ::= "Qzx Vprk Wq" [0-9] [0-9]',
}


def _written(llm, grammar: str, first: bool):
    llm.grammar_first = first
    try:
        return llm.generate(PROMPT, max_tokens=48, grammar=grammar)
    finally:
        llm.grammar_first = True


@pytest.mark.parametrize("name", list(GRAMMARS))
def test_likeliest_first_writes_what_the_whole_vocabulary_chain_writes(smollm, name):
    grammar = GRAMMARS[name]
    _written(smollm, grammar, False)  # both measured calls then reuse the same kept prompt state
    whole, first = _written(smollm, grammar, False), _written(smollm, grammar, True)
    assert first.text == whole.text and first.completion_tokens == whole.completion_tokens
    if name == "unlikely":
        assert first.text.startswith("Qzx Vprk Wq") and first.text[-2:].isdigit(), first.text
    steps = list(zip(whole.token_logprobs, first.token_logprobs, strict=True))
    assert steps and all(a.token == b.token for a, b in steps)
    # the log-probabilities are now among the allowed tokens of the likeliest 256, a subset of all allowed ones
    assert all(b.logprob >= a.logprob - 1e-3 for a, b in steps)
    if name == "choice":  # what the confidence reads: a choice among names, whose tokens are all likely ones
        assert max(abs(a.logprob - b.logprob) for a, b in steps) < 0.05


def test_a_token_check_refuses_what_the_grammar_allows(smollm):
    """A registered token check narrows the grammar's choice token by token: here no written token may hold an
    'e' (a check that refuses nearly everything forces the whole vocabulary to be read); a check that would
    refuse every token the grammar allows is set aside for that token (the grammar's string has an 'e')."""
    from kgrag.models.llm.token_checks import register

    class NoE:
        def accept(self, piece: str) -> None:
            pass

        def allows(self, piece: str) -> bool:
            return "e" not in piece.lower()

    register("test-no-e")(NoE)
    free = GRAMMARS["free lines"]
    plain = smollm.generate(PROMPT, max_tokens=24, grammar=free)
    held = smollm.generate(PROMPT, max_tokens=24, grammar=free, token_check="test-no-e")
    assert "e" in plain.text.lower() and held.text and "e" not in held.text.lower(), (plain.text, held.text)
    fixed = smollm.generate(PROMPT, max_tokens=24, grammar='root ::= "Heat here"', token_check="test-no-e")
    assert fixed.text == "Heat here"
