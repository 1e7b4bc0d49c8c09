"""The bundled ULTRAQUERY checkpoint: located in the package, verified by sha256, loaded with ``strict=True``.

The published file is a ``torch.save`` of ``{"model": state_dict, "optimizer": ...}`` whose parameter
names carry the original training wrappers' prefix ``model.model.``; only those tensors are read
(``weights_only=True``: no pickled code runs), the prefix is removed, and every name and shape must match
:class:`~kgrag.methods.ultrag.neural.model.Ultra` exactly.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from kgrag.errors import KGRagError
from kgrag.graph.store import file_digest

CHECKPOINT = "ultraquery.pth"
SHA256 = "9b6dc20801c35e7c9ebe65764acb4ed9cb5bffc6b0a0a727bd48935589e9388d"
PREFIX = "model.model."


class CheckpointError(KGRagError, RuntimeError):
    """The checkpoint file is missing, altered, or does not fit the network."""

    exit_code = 2


def checkpoint_path() -> Path:
    path = Path(str(resources.files("kgrag").joinpath("data", "ultra", CHECKPOINT)))
    if not path.exists():
        raise CheckpointError(f"{path}: the ULTRAQUERY checkpoint is missing from the kgrag package")
    return path


def load_state_dict(path: Path | None = None, *, expected_sha256: str | None = SHA256) -> dict:
    """The model tensors of the checkpoint, names without the training prefix."""
    import torch

    path = path or checkpoint_path()
    if expected_sha256 is not None and file_digest(path) != expected_sha256:
        raise CheckpointError(f"{path}: sha256 mismatch (expected {expected_sha256}); the file was altered")
    data = torch.load(path, map_location="cpu", weights_only=True)
    state = data.get("model", data) if isinstance(data, dict) else None
    if not isinstance(state, dict) or not state:
        raise CheckpointError(f"{path}: no model state dict in the checkpoint")
    if not all(k.startswith(PREFIX) for k in state):
        odd = next(k for k in state if not k.startswith(PREFIX))
        raise CheckpointError(f"{path}: unexpected parameter {odd!r} (expected the prefix {PREFIX!r})")
    return {k[len(PREFIX) :]: v for k, v in state.items()}


@cache
def load_ultraquery():  # type: ignore[no-untyped-def]
    """The ULTRAQUERY network with the bundled weights, in eval mode (shared in the process)."""
    from kgrag.methods.ultrag.neural.model import Ultra

    model = Ultra()
    try:
        model.load_state_dict(load_state_dict(), strict=True)
    except RuntimeError as exc:
        raise CheckpointError(f"the ULTRAQUERY checkpoint does not fit the network: {exc}") from None
    return model.eval()
