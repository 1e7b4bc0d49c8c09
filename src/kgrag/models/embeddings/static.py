"""Static token-vector embeddings (a model2vec distillation of all-MiniLM-L6-v2, shipped in ``assets/``).

~100× faster than the transformer: an embedding is the mean of per-token vectors, so millions of entity
names can be indexed in seconds.  Lower quality — use it for first-stage candidate scoring.  The safetensors
file is read directly (it is a JSON header plus a raw array), so this needs only ``tokenizers``.
"""

from __future__ import annotations

import json
import struct
from importlib import resources
from pathlib import Path

import numpy as np

from kgrag.errors import MissingExtraError
from kgrag.models.embeddings.base import Embedder, l2_normalise

_DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Minimal reader for safetensors files (little-endian header length, JSON header, raw buffers)."""
    with open(path, "rb") as fh:
        (header_len,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(header_len))
        base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        arr = np.memmap(path, dtype=_DTYPES[info["dtype"]], mode="r", offset=base + start, shape=tuple(info["shape"]))
        assert arr.nbytes == end - start
        tensors[name] = arr
    return tensors


def _default_dir() -> Path:
    return Path(str(resources.files("kgrag.models.embeddings").joinpath("assets/minilm-static-256")))


class StaticEmbedder(Embedder):
    def __init__(self, model_dir: str | Path | None = None) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtraError(None, "the static embedder", "tokenizers") from exc
        model_dir = Path(model_dir) if model_dir else _default_dir()
        config = json.loads((model_dir / "config.json").read_text())
        self._vectors = np.asarray(read_safetensors(model_dir / "model.safetensors")["embeddings"], dtype=np.float32)
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(int(config.get("max_length", 512)))
        unk = self._tokenizer.token_to_id("[UNK]")
        self._unk = -1 if unk is None else unk
        self.dim = int(self._vectors.shape[1])
        self.id = f"static-{model_dir.name}"

    def vocabulary(self) -> tuple[list[str], np.ndarray]:
        """The model's whole-word tokens (alphabetic, no ``##`` pieces) and their unit vectors, in token order.

        A word's vector is exactly what :meth:`encode` gives for the word alone, so the words nearest to a
        phrase are a free thesaurus: ``kgrag adapt`` words questions about "cast member" with "actors" too.
        """
        vocab = self._tokenizer.get_vocab()
        pairs = sorted((i, w) for w, i in vocab.items() if w.isalpha() and w.isascii() and i != self._unk)
        ids = np.array([i for i, _ in pairs], dtype=np.int64)
        return [w for _, w in pairs], l2_normalise(self._vectors[ids])

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        ids = [i[i != self._unk] for i in ids]
        lengths = np.array([len(i) for i in ids])
        flat = np.concatenate(ids)
        sums = np.zeros((len(ids), self.dim), dtype=np.float32)
        nonempty = lengths > 0
        if nonempty.any():  # segment sums over the flat token list (empty texts stay zero vectors)
            starts = (np.cumsum(lengths) - lengths)[nonempty]
            sums[nonempty] = np.add.reduceat(self._vectors[flat], starts, axis=0)
        return sums / np.maximum(lengths, 1)[:, None]
