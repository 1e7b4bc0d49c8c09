"""No file in src/ over 450 lines and no function over 60: a newcomer reads a module or a function whole.

A long file mixes jobs that want modules of their own; a long function mixes steps that want names. The limits
are the ones issue #23 set; when a change crosses one, split by what the code does rather than raise the limit.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "kgrag"
MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60


def _oversized() -> dict[str, str]:
    """``{"path": "path: N lines", "path name": "path:line name: N lines"}`` for every file and function over
    its limit."""
    problems = {}
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text("utf-8")
        where = path.relative_to(SRC.parent).as_posix()
        lines = len(text.splitlines())
        if lines > MAX_FILE_LINES:
            problems[where] = f"{where}: {lines} lines"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    problems[f"{where} {node.name}"] = f"{where}:{node.lineno} {node.name}: {size} lines"
    return problems


def test_no_file_or_function_is_over_its_limit():
    assert list(_oversized().values()) == []


def test_the_check_sees_a_long_file_and_a_long_function(tmp_path, monkeypatch):
    fake = tmp_path / "kgrag"
    fake.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))  # def line + 60 = 61 lines
    (fake / "long_function.py").write_text(f"async def step():\n{body}")
    (fake / "long_file.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1))
    (fake / "fine.py").write_text("def ok():\n" + "    pass\n" * (MAX_FUNCTION_LINES - 1))
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake)
    assert list(_oversized().values()) == ["kgrag/long_file.py: 451 lines", "kgrag/long_function.py:1 step: 61 lines"]
