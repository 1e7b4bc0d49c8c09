"""Local GGUF models through llama-cpp-python (extra ``[local]``).

The chat template comes from the GGUF metadata. One ``Llama`` object is shared per (file, settings) in the
process and guarded by a lock (llama.cpp contexts are not thread-safe).  llama-cpp-python keeps the KV cache
of the previous prompt and only evaluates the new suffix, so prompts that share a fixed prefix (schema,
instructions) pay for it once — methods put the fixed part first for that reason.

That alone helps only when the same prompt template runs twice in a row. Multi-call methods alternate
templates (ULTRAG: query writer, arbitrator; KG-RAG: decomposition, sub-answers, synthesis), so every call
would re-read a fixed system prompt of several hundred tokens (~60 tokens/s on two cores). A small LRU of
KV states keyed by token prefix (:func:`_keep_prefix_states`) restores the longest matching prefix instead.
"""

from __future__ import annotations

import atexit
import functools
import os
import threading
from concurrent.futures import Future
from typing import Any

from kgrag.errors import LLMError, MissingExtraError
from kgrag.models import manager
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages
from kgrag.models.llm.grammar_first import candidate_rows, greedy_grammar_chain, plain_greedy
from kgrag.models.llm.token_checks import new_check
from kgrag.types import TokenLogprob

_MODELS: dict[tuple[str, int, int, int], Any] = {}
_MODELS_LOCK = threading.Lock()


PREFIX_STATES_MB = 512  # KV states kept for prefix reuse (Qwen2.5-1.5B: ~28 KB per token, ~30 MB a prompt)


def _keep_prefix_states(llama: Any, capacity_mb: int) -> None:
    """Let ``llama`` restore the KV state of the longest earlier prompt sharing a prefix with a new one.

    llama-cpp-python's own ``LlamaRAMCache`` does the lookup, but its ``save_state`` also copies the logits
    buffer (n_batch x vocab floats: 311 MB for Qwen's 152k vocabulary) that sampling does not use unless
    ``logits_all`` is on, which would make each saved state ten times the size of its KV data. The two
    methods are replaced on this instance by versions that move only the KV data and the token ids.
    """
    import ctypes

    import llama_cpp as lc
    import numpy as np
    from llama_cpp.llama import LlamaState
    from llama_cpp.llama_cache import LlamaRAMCache

    if capacity_mb <= 0 or getattr(llama, "_logits_all", False):
        return
    no_scores = np.zeros((0, 0), dtype=np.single)

    def save_state() -> Any:
        size = lc.llama_state_get_size(llama._ctx.ctx)
        buffer = (ctypes.c_uint8 * int(size))()
        n_bytes = int(lc.llama_state_get_data(llama._ctx.ctx, buffer, size))
        return LlamaState(
            input_ids=llama.input_ids.copy(),
            scores=no_scores,
            n_tokens=llama.n_tokens,
            llama_state=bytes(buffer)[:n_bytes],
            llama_state_size=n_bytes,
            seed=llama._seed,
        )

    def load_state(state: Any) -> None:
        llama.input_ids = state.input_ids.copy()
        llama.n_tokens = state.n_tokens
        llama._requires_eval = True  # restored KV: decode at least one token before sampling
        llama._seed = state.seed
        buffer = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
        if lc.llama_state_set_data(llama._ctx.ctx, buffer, state.llama_state_size) != state.llama_state_size:
            raise RuntimeError("llama.cpp refused a saved KV state")

    llama.save_state = save_state
    llama.load_state = load_state
    llama.set_cache(LlamaRAMCache(capacity_bytes=capacity_mb << 20))


def _count_evaluated(llama: Any) -> None:
    """Record on ``llama`` the size of each ``eval`` call. ``Llama.generate`` evaluates what is left of the prompt
    after its prefix reuse in one first call and then one token per generated token, so the first size of a
    completion is the number of prompt tokens the model actually read (what a call's time follows)."""
    original = llama.eval
    llama.kgrag_eval_sizes = []

    def counted_eval(tokens: Any) -> Any:
        llama.kgrag_eval_sizes.append(len(tokens))
        return original(tokens)

    llama.eval = counted_eval


def _require_runtime() -> None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("local", "the llamacpp LLM backend", "llama-cpp-python") from exc


def _load_llama(path: str, n_ctx: int, n_threads: int, seed: int) -> Any:
    from llama_cpp import Llama  # present: LlamaCppLLM checked the runtime before starting this load

    key = (path, n_ctx, n_threads, seed)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                seed=seed,
                verbose=False,
            )
            _keep_prefix_states(_MODELS[key], int(os.environ.get("KGRAG_LLAMA_PREFIX_STATES_MB", PREFIX_STATES_MB)))
            _count_evaluated(_MODELS[key])
            _note_logprobs(_MODELS[key])
        return _MODELS[key]


_QUIET: list[Any] = []  # the log callback installed by _quiet_runtime, kept alive for llama.cpp


def _quiet_runtime() -> None:
    """Let llama-cpp-python load a model without touching the process's stdout and stderr (once per process).

    Its quiet load (``verbose=False``) points file descriptors 1 and 2 at /dev/null for the whole process while
    the weights load. In a background thread that swallowed whatever the main thread printed meanwhile: an
    answer that needed no LLM call, an error message. Instead its ``suppress_stdout_stderr`` is made a no-op
    (llama-cpp-python is pinned, ``==0.3.36``) and llama.cpp's log lines are dropped by a log callback, which
    keeps the load as quiet without redirecting anything. Load failures still raise (``ValueError``)."""
    if _QUIET:
        return
    import ctypes

    import llama_cpp
    import llama_cpp._internals
    import llama_cpp.llama

    class _NoRedirect:
        def __init__(self, disable: bool = True) -> None:
            pass

        def __enter__(self) -> _NoRedirect:
            return self

        def __exit__(self, *exc: object) -> bool:
            return False

    @llama_cpp.llama_log_callback  # type: ignore[misc]
    def _drop(level: int, text: bytes, user_data: Any) -> None:
        return None

    llama_cpp.llama.suppress_stdout_stderr = _NoRedirect  # type: ignore[attr-defined]
    llama_cpp._internals.suppress_stdout_stderr = _NoRedirect  # type: ignore[attr-defined]
    llama_cpp.llama_log_set(_drop, ctypes.c_void_p(0))
    _QUIET.append(_drop)


def _load_in_background(path: str, n_ctx: int, n_threads: int, seed: int) -> Future[Any]:
    """Start :func:`_load_llama` in a daemon thread: reading and mapping the weights (~3 s for the 1.5B model,
    longer from a cold disk) overlaps with what a method does before its first call (linking, the embedder,
    retrieval), so a user's first answer comes sooner. The future re-raises a failed load at first use."""
    future: Future[Any] = Future()

    def run() -> None:
        try:
            future.set_result(_load_llama(path, n_ctx, n_threads, seed))
        except BaseException as exc:  # handed to whoever uses the model first
            future.set_exception(exc)

    threading.Thread(target=run, name="kgrag-llm-load", daemon=True).start()
    # a process that ends before the load does (an error in linking) waits for it: llama.cpp calls back into
    # Python while loading, which an interpreter shutting down around a daemon thread does not survive
    atexit.register(future.exception)
    return future


class _TokenLogprobs:
    """Notes how likely the model found each token it wrote, as the last sampler of llama.cpp's chain.

    llama-cpp-python gives log-probabilities only with ``logits_all``, which keeps the logits of every prompt
    token (n_ctx x 152k floats for Qwen); its ``logits_processor`` hook sees the logits before the grammar and
    does not say which token was chosen. A sampler added at the end of the chain reads the candidates in place:
    by then a grammar has set what it forbids to -inf, so the probabilities are among the continuations the
    grammar allows (under greedy decoding, those among the 256 likeliest tokens:
    :mod:`kgrag.models.llm.grammar_first`), and ``selected`` is the token chosen.
    """

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.ids: list[int] = []
        self.steps: list[tuple[float, float, float]] = []  # (chosen, best, entropy)

    def __call__(self, candidates: Any) -> None:
        import numpy as np

        array = candidates.contents
        size, selected = int(array.size), int(array.selected)
        if size <= 0 or not 0 <= selected < size:
            return
        rows = candidate_rows(candidates, size)
        logits = rows[:, 1].view(np.float32).astype(np.float64)
        allowed = np.isfinite(logits)
        top = logits[allowed].max()
        lse = top + np.log(np.exp(logits[allowed] - top).sum())
        p = np.exp(logits[allowed] - lse)
        self.ids.append(int(rows[selected, 0]))
        self.steps.append((float(logits[selected] - lse), float(top - lse), float(-(p * np.log(p + 1e-30)).sum())))

    def tokens(self) -> list[TokenLogprob]:
        """Every token the model chose, with what it thought of it."""
        pieces = [self.llama.detokenize([t]).decode("utf-8", errors="replace") for t in self.ids]
        return [TokenLogprob(piece, *step) for piece, step in zip(pieces, self.steps)]


def _note_logprobs(llama: Any) -> None:
    """Append the current call's :class:`_TokenLogprobs` (``llama.kgrag_noter``, when set) to every sampler
    chain ``llama`` builds; a greedy chain under a grammar lets the grammar check the likeliest tokens first
    (``llama.kgrag_grammar_first``, :mod:`kgrag.models.llm.grammar_first`)."""
    original = llama._init_sampler
    llama.kgrag_noter = None
    llama.kgrag_grammar_first = True
    llama.kgrag_token_check = None  # the current call's token check: held only in the grammar-first chain

    def init_sampler(*args: Any, **kwargs: Any) -> Any:
        if llama.kgrag_grammar_first and not args and plain_greedy(kwargs):
            sampler = greedy_grammar_chain(llama, kwargs["grammar"], check=llama.kgrag_token_check)
        else:
            sampler = original(*args, **kwargs)
        if llama.kgrag_noter is not None:
            sampler.add_custom(llama.kgrag_noter)
        return sampler

    llama._init_sampler = init_sampler


class LlamaCppLLM(LLM):
    def __init__(
        self,
        model: str = manager.DEFAULT_MODEL,
        *,
        n_ctx: int = 4096,
        n_threads: int = 2,
        seed: int = 0,
        grammar_first: bool = True,
        **kwargs: Any,
    ) -> None:
        """``grammar_first``: under a grammar, greedy decoding checks the likeliest tokens against it first (the
        same text, ~25% less time a written token; :mod:`kgrag.models.llm.grammar_first`)."""
        super().__init__(**kwargs)
        self.grammar_first = grammar_first
        self.path = manager.resolve(model)
        self.model_id = f"llamacpp:{model if model in manager.MODELS else self.path.name}"
        self.n_ctx = n_ctx
        self.context_window = n_ctx
        _require_runtime()  # a missing extra fails here, not at the first call
        _quiet_runtime()  # before the thread starts: nothing may redirect the process's output while it loads
        self._loading = _load_in_background(str(self.path), n_ctx, n_threads, seed)
        self._lock = threading.Lock()

    @property
    def _llama(self) -> Any:
        """The loaded model, waiting for the background load if it is still running; a failed load is an
        :class:`LLMError` (what a failing call is), e.g. a damaged model file."""
        try:
            return self._loading.result()
        except (OSError, ValueError, RuntimeError) as exc:
            raise LLMError(f"{self.model_id}: cannot load {self.path}: {exc}") from exc

    def wait_loaded(self) -> None:
        """Block until the weights are loaded (raises :class:`LLMError` when they cannot be)."""
        self._llama  # noqa: B018 - the property waits and raises

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        kwargs: dict[str, Any] = {
            "messages": messages,
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "stop": params.stop or None,
        }
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.top_k is not None:
            kwargs["top_k"] = params.top_k
        if params.min_p is not None:
            kwargs["min_p"] = params.min_p
        if params.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": params.json_schema}
        elif params.grammar is not None:
            from llama_cpp import LlamaGrammar

            kwargs["grammar"] = LlamaGrammar.from_string(params.grammar, verbose=False)
        noted = _TokenLogprobs(self._llama)
        check = new_check(params.token_check) if params.token_check and "grammar" in kwargs else None
        with self._lock:
            self._llama.kgrag_noter = noted
            self._llama.kgrag_grammar_first = self.grammar_first
            self._llama.kgrag_token_check = check
            sizes = self._llama.kgrag_eval_sizes
            sizes.clear()
            try:
                out = self._llama.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. "Requested tokens (5000) exceed context window of 4096"
                raise LLMError(f"{self.model_id}: {exc}") from exc
            finally:
                self._llama.kgrag_noter = self._llama.kgrag_token_check = None
            evaluated = sizes[0] if sizes else 0
        text = out["choices"][0]["message"].get("content") or ""
        usage = out.get("usage") or {}
        return Generation(
            text,
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
            evaluated_prompt_tokens=evaluated,
            token_logprobs=noted.tokens(),
        )

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False))

    @functools.cached_property
    def _chat_formatter(self) -> Any:
        """The model's own chat template (GGUF metadata) as a formatter, compiled once: the prompt text a chat
        becomes, which :meth:`_score_reply` needs as tokens; None when the file carries no template."""
        llama = self._llama
        template = (getattr(llama, "metadata", None) or {}).get("tokenizer.chat_template")
        if not template:
            return None
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        eos, bos = llama.token_eos(), llama.token_bos()
        return Jinja2ChatFormatter(
            template=template,
            eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
            bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
        )

    def _score_reply(self, chats: list[Messages], reply: str) -> list[tuple[float, int, int]] | None:
        llama, formatter = self._llama, self._chat_formatter
        if formatter is None:
            return None
        answer = llama.tokenize(reply.encode("utf-8"), add_bos=False, special=False)
        out = []
        with self._lock:
            kept = llama.n_tokens
            for chat in chats:
                prompt = formatter(messages=chat).prompt
                head = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
                size = len(head) + len(answer)
                if size > self.n_ctx:
                    raise LLMError(f"{self.model_id}: {size} tokens exceed the context window of {self.n_ctx}")
                try:
                    logprob, start = _reply_logprob(llama, head, answer)
                except RuntimeError as exc:  # llama.cpp refused the batch (out of KV slots, ...)
                    raise LLMError(f"{self.model_id}: cannot score: {exc}") from exc
                kept = min(kept, start)
                out.append((logprob, size, size - start))
            # what scoring decoded goes again: a later generation reuses only what generations decoded, so its
            # output does not depend on what was scored before it (llama.cpp's sums differ in the last bits with
            # how a prompt was cut into batches, enough to turn a near tie of a small model)
            llama._ctx.kv_cache_seq_rm(-1, kept, -1)
            llama.n_tokens = kept
        return out


def _reply_logprob(llama: Any, head: list[int], answer: list[int]) -> tuple[float, int]:
    """log P(answer | head) from one decode of what the KV cache does not already hold (the longest common
    prefix with the tokens it holds is kept, as ``Llama.generate`` keeps it), with logits asked for the
    positions that predict ``answer``'s tokens only. Leaves the KV cache holding ``head + answer`` and the
    ``Llama`` object's token record saying so. Returns the log-probability and the first position decoded."""
    import numpy as np
    from scipy.special import log_softmax

    if not answer:
        return 0.0, llama.n_tokens
    ids = head + answer
    common = llama.longest_token_prefix(llama.input_ids[: llama.n_tokens], ids)
    first = len(head) - 1  # the position whose logits predict answer[0]
    start = min(common, first)
    llama._ctx.kv_cache_seq_rm(-1, start, -1)
    llama.n_tokens = start
    rows: list[Any] = []
    n_vocab = llama.n_vocab()
    for i in range(start, len(ids), llama.n_batch):
        chunk = ids[i : i + llama.n_batch]
        batch = llama._batch.batch
        batch.n_tokens = len(chunk)
        for j, token in enumerate(chunk):
            batch.token[j] = token
            batch.pos[j] = i + j
            batch.seq_id[j][0] = 0
            batch.n_seq_id[j] = 1
            batch.logits[j] = first <= i + j < len(ids) - 1
        batch.logits[len(chunk) - 1] = True  # llama.cpp expects the last token's logits
        llama._ctx.decode(llama._batch)
        llama.input_ids[i : i + len(chunk)] = chunk
        llama.n_tokens = i + len(chunk)
        for j in range(len(chunk)):
            if first <= i + j < len(ids) - 1:
                rows.append(np.ctypeslib.as_array(llama._ctx.get_logits_ith(j), shape=(n_vocab,)).astype(np.float64))
    llama._requires_eval = True  # the sampler has not seen these logits: decode again before sampling
    logprobs = log_softmax(np.stack(rows), axis=1)
    return float(logprobs[np.arange(len(answer)), answer].sum()), start
