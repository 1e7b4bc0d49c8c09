"""Greedy decoding under a grammar that checks the likeliest tokens first (llama.cpp backend).

llama-cpp-python's sampler chain runs llama.cpp's grammar sampler over the whole vocabulary at every step —
152k tokens for Qwen2.5, each decoded and matched against the grammar's stacks — before the greedy pick. That
is ~20 ms a written token on two cores, ×1.3 the cost of the token itself (``benchmarks/grammar_cost.py``).
Under greedy decoding only the best allowed token matters, and it is nearly always among the few tokens the
model likes most: if any of the ``top`` likeliest tokens is allowed, the best allowed token of the whole
vocabulary is the best allowed one among them (every token outside has a lower logit). So the chain here moves
the ``top`` likeliest tokens to the front and lets the grammar see only those; when it allows none of them, the
grammar runs again over the whole vocabulary. The written text is the same token for token (the integration
test compares both chains on the real runtime); only the time changes.

One consequence for :class:`~kgrag.models.llm.llamacpp._TokenLogprobs`, the log-probability sampler at the
chain's end: it now normalises over the allowed tokens among the ``top`` likeliest rather than over all
allowed ones. What lies outside the 256 likeliest tokens carries a negligible share of the probability.
"""

from __future__ import annotations

import ctypes
from typing import Any

TOP = 256  # tokens the grammar sees first; the rest only when it allows none of them


def candidate_rows(candidates: Any, size: int) -> Any:
    """A sampler's candidate array, in place, as (size, 3) int32 rows: llama_token_data is {int32 id; float
    logit; float p}, so column 0 is the token id and columns 1-2 are floats to ``.view(np.float32)``."""
    import numpy as np

    array = candidates.contents
    address = ctypes.addressof(array.data.contents)
    return np.ctypeslib.as_array((ctypes.c_int32 * (3 * size)).from_address(address)).reshape(size, 3)


class _GrammarFirst:
    """The two custom steps around the grammar sampler: :meth:`narrow` before it, :meth:`widen` after it."""

    def __init__(self, top: int) -> None:
        self.top = top
        self.grammar: Any = None  # the chain's grammar sampler, for :meth:`widen`
        # while the grammar sees only the front of the array: its whole size and the front rows it overwrote
        # (the likeliest rows were copied there, not moved, so restoring the front restores the whole array)
        self.saved: tuple[int, Any] | None = None

    def narrow(self, candidates: Any) -> None:
        import numpy as np

        array = candidates.contents
        size = int(array.size)
        self.saved = None
        if size <= self.top:
            return
        rows = candidate_rows(candidates, size)
        logits = rows[:, 1].view(np.float32)
        # in vocabulary order, as the whole array is, so the greedy pick breaks a tie between equal logits alike
        best = rows[np.sort(np.argpartition(logits, size - self.top)[size - self.top :])]
        self.saved = (size, rows[: self.top].copy())
        rows[: self.top] = best
        array.size = self.top
        array.sorted = False

    def widen(self, candidates: Any) -> None:
        import numpy as np
        from llama_cpp import llama_cpp as lc

        if self.saved is None:
            return
        array = candidates.contents
        kept = candidate_rows(candidates, int(array.size))[:, 1].view(np.float32)
        if not np.isfinite(kept).any():  # the grammar allows none of the likeliest: let it read them all
            size, front = self.saved
            candidate_rows(candidates, size)[: self.top] = front
            array.size = size
            array.sorted = False
            lc.llama_sampler_apply(self.grammar, candidates)
        self.saved = None


def greedy_grammar_chain(llama: Any, grammar: Any, top: int = TOP) -> Any:
    """A sampler chain for ``llama`` that picks the token greedy decoding under ``grammar`` picks, letting the
    grammar check the ``top`` likeliest tokens first (an ``llama_cpp._internals.LlamaSampler``)."""
    from llama_cpp import _internals as internals
    from llama_cpp import llama_cpp as lc

    steps = _GrammarFirst(top)
    sampler = internals.LlamaSampler()
    sampler.add_custom(steps.narrow)
    sampler.add_grammar(llama._model, grammar)
    steps.grammar = lc.llama_sampler_chain_get(sampler.sampler, lc.llama_sampler_chain_n(sampler.sampler) - 1)
    sampler.add_custom(steps.widen)
    sampler.add_greedy()
    sampler.kgrag_grammar_first = steps  # the custom steps' callbacks must live as long as the chain
    return sampler


def plain_greedy(kwargs: dict[str, Any]) -> bool:
    """True when llama-cpp-python would build the plain greedy chain around a grammar — no temperature, no
    penalties, no logits processor — which :func:`greedy_grammar_chain` reproduces exactly."""
    return (
        kwargs.get("grammar") is not None
        and kwargs.get("temp") == 0.0
        and kwargs.get("repeat_penalty", 1.0) == 1.0
        and not kwargs.get("frequency_penalty")
        and not kwargs.get("presence_penalty")
        and kwargs.get("logits_processor") is None
        and not kwargs.get("mirostat_mode")
    )
