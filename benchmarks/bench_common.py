"""Helpers the benchmark scripts share (machine facts recorded next to every result)."""

from __future__ import annotations

import importlib


def module_version(module: str) -> str | None:
    """``module.__version__``, or ``None`` when it is not importable."""
    try:
        return str(importlib.import_module(module).__version__)
    except Exception:
        return None


def first_line_value(path: str, prefix: str) -> str | None:
    """The value after ``:`` on the first line of ``path`` starting with ``prefix`` (e.g. /proc/meminfo)."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(prefix):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None
