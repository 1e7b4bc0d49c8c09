"""No import runs up the layers: graph ← linking/models ← retrieval ← methods ← eval/service/cli.

A lower layer that imports a higher one makes the higher one impossible to change without the lower one, and
pulls its dependencies into every user of the lower one. Modules outside the layers (errors, types, registry,
cancel, processes, prompts, demo, data) may be imported from anywhere and import only each other.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "kgrag"
LAYERS = {"graph": 0, "linking": 1, "models": 1, "retrieval": 2, "methods": 3, "eval": 4, "service": 4, "cli": 4}
BASE = {"errors", "types", "registry", "cancel", "processes", "prompts", "demo", "data", "__init__", "__main__"}


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "kgrag" and len(parts) > 1 else None


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def _upward_imports() -> list[str]:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        own = path.relative_to(SRC).parts[0].removesuffix(".py")
        for line, module in _imports(path):
            target = _package(module)
            if target is None or target == own:
                continue
            where = f"{path.relative_to(SRC.parent)}:{line}: {own} imports {module}"
            if own in BASE and target in LAYERS:
                if own not in ("__init__", "__main__", "demo"):  # the package's front doors may reach in
                    problems.append(where)
            elif own in LAYERS and target in LAYERS and LAYERS[target] > LAYERS[own]:
                problems.append(where)
    return problems


def test_no_import_runs_up_the_layers():
    assert _upward_imports() == []


def test_the_check_sees_an_upward_import(tmp_path, monkeypatch):
    fake = tmp_path / "kgrag"
    (fake / "graph").mkdir(parents=True)
    (fake / "graph" / "bad.py").write_text("from kgrag.methods.base import Method\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake)
    assert _upward_imports() == ["kgrag/graph/bad.py:1: graph imports kgrag.methods.base"]


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_every_layer_exists(layer):
    assert (SRC / layer).is_dir() or (SRC / f"{layer}.py").is_file()
