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


def parse_value(text: str):
    """A ``--set KEY=VALUE`` value as int, float, bool/None or text."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def emit_json(report: dict, *paths) -> None:
    """Print ``report`` as indented JSON and write the same text to each of ``paths`` that is given."""
    import json

    text = json.dumps(report, indent=2) + "\n"
    for path in paths:
        if path:
            path.write_text(text, "utf-8")
    print(text)
