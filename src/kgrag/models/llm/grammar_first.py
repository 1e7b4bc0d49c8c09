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

A token check (:mod:`kgrag.models.llm.token_checks`) runs in the same step after the grammar: it refuses some
of the tokens the grammar allowed; when it refuses all of the likeliest ones, the grammar and then the check
read the whole vocabulary, and the check reads the allowed tokens from the likeliest down until it allows one
(what greedy decoding needs), at most ``WIDE`` of them; when it allows none of those, it is set aside for that
token. A check that refused whatever the model wanted made it read all ~150k tokens in Python at every step
(427 s for one Northwind question, a query nested deeper than the check allows). A last step tells it the
token chosen.

One consequence for :class:`~kgrag.models.llm.llamacpp._TokenLogprobs`, the log-probability sampler at the
chain's end: it now normalises over the allowed tokens among the ``top`` likeliest rather than over all
allowed ones. What lies outside the 256 likeliest tokens carries a negligible share of the probability.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from kgrag.models.llm.token_checks import TokenCheck

TOP = 256  # tokens the grammar sees first; the rest only when it allows none of them
WIDE = 2048  # allowed tokens a token check reads, from the likeliest, when it refused the TOP likeliest


def candidate_rows(candidates: Any, size: int) -> Any:
    """A sampler's candidate array, in place, as (size, 3) int32 rows: llama_token_data is {int32 id; float
    logit; float p}, so column 0 is the token id and columns 1-2 are floats to ``.view(np.float32)``."""
    import numpy as np

    array = candidates.contents
    address = ctypes.addressof(array.data.contents)
    return np.ctypeslib.as_array((ctypes.c_int32 * (3 * size)).from_address(address)).reshape(size, 3)


class _GrammarFirst:
    """The custom steps around the grammar sampler: :meth:`narrow` before it, :meth:`widen` after it, and
    :meth:`chosen` after the greedy pick (for a token check)."""

    def __init__(self, top: int, check: TokenCheck | None = None, piece: Callable[[int], str] | None = None) -> None:
        self.top = top
        self.check, self.piece = check, piece
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

        if self.saved is not None:
            kept = candidate_rows(candidates, int(candidates.contents.size))[:, 1].view(np.float32)
            if not np.isfinite(kept).any():  # the grammar allows none of the likeliest: let it read them all
                self._whole_vocabulary(candidates)
        if self.check is not None and not self._hold_to_check(candidates) and self.saved is not None:
            self._whole_vocabulary(candidates)  # the check refused all the likeliest the grammar allowed
            self._first_allowed(candidates)
        self.saved = None

    def _whole_vocabulary(self, candidates: Any) -> None:
        """Restore the whole candidate array (after :meth:`narrow`) and let the grammar read it."""
        from llama_cpp import llama_cpp as lc

        assert self.saved is not None
        array = candidates.contents
        size, front = self.saved
        candidate_rows(candidates, size)[: self.top] = front
        array.size = size
        array.sorted = False
        self.saved = None
        lc.llama_sampler_apply(self.grammar, candidates)

    def _hold_to_check(self, candidates: Any) -> bool:
        """Set the tokens the check refuses to -inf, unless it refuses every allowed one (False: unchanged)."""
        import numpy as np

        assert self.check is not None and self.piece is not None
        rows = candidate_rows(candidates, int(candidates.contents.size))
        logits = rows[:, 1].view(np.float32)
        allowed = np.flatnonzero(np.isfinite(logits))
        refused = [k for k in allowed if not self.check.allows(self.piece(int(rows[k, 0])))]
        if len(refused) == len(allowed):
            return False
        logits[refused] = -np.inf
        return True

    def _first_allowed(self, candidates: Any) -> None:
        """Over the whole vocabulary: the tokens the grammar allows, likeliest first, up to the first the check
        allows (at most ``WIDE`` read), set to -inf; none when the check allows none of those."""
        import numpy as np

        assert self.check is not None and self.piece is not None
        rows = candidate_rows(candidates, int(candidates.contents.size))
        logits = rows[:, 1].view(np.float32)
        allowed = np.flatnonzero(np.isfinite(logits))
        order = allowed[np.argsort(-logits[allowed], kind="stable")][:WIDE]
        for n, k in enumerate(order):
            if self.check.allows(self.piece(int(rows[k, 0]))):
                logits[order[:n]] = -np.inf
                return

    def chosen(self, candidates: Any) -> None:
        """After the greedy pick: tell the check which token was written."""
        array = candidates.contents
        size, selected = int(array.size), int(array.selected)
        if self.check is not None and self.piece is not None and 0 <= selected < size:
            self.check.accept(self.piece(int(candidate_rows(candidates, size)[selected, 0])))


def greedy_grammar_chain(llama: Any, grammar: Any, top: int = TOP, check: TokenCheck | None = None) -> Any:
    """A sampler chain for ``llama`` that picks the token greedy decoding under ``grammar`` picks, letting the
    grammar check the ``top`` likeliest tokens first (an ``llama_cpp._internals.LlamaSampler``); with a token
    ``check``, the best token both allow."""
    from llama_cpp import _internals as internals
    from llama_cpp import llama_cpp as lc

    pieces: dict[int, str] = {}

    def piece(token: int) -> str:
        if token not in pieces:
            pieces[token] = llama.detokenize([token]).decode("utf-8", errors="replace")
        return pieces[token]

    steps = _GrammarFirst(top, check, piece)
    sampler = internals.LlamaSampler()
    sampler.add_custom(steps.narrow)
    sampler.add_grammar(llama._model, grammar)
    steps.grammar = lc.llama_sampler_chain_get(sampler.sampler, lc.llama_sampler_chain_n(sampler.sampler) - 1)
    sampler.add_custom(steps.widen)
    sampler.add_greedy()
    if check is not None:
        sampler.add_custom(steps.chosen)
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
