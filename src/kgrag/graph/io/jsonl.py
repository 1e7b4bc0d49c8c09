"""The JSON-lines reader: one object per line, numbers kept as their text, optional ``aliases``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgrag.graph.io.builder import TripleBuilder
from kgrag.graph.io.lines import decoded_lines


def _scalar(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, (int, float)):
        return str(value)
    return None


def _not_a_json_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


# Built once: json.loads(..., parse_int=...) would build a decoder per line (half the reader's time).
_JSON = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=_not_a_json_number)


def _parse_json_line(line: str, builder: TripleBuilder, line_no: int) -> Any:
    """One JSONL line, numbers kept as their text (no float rounding, no int digit limit)."""
    try:
        return _JSON.decode(line)
    except json.JSONDecodeError as exc:
        raise builder.fail(line_no, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise builder.fail(line_no, "JSON nested too deeply") from None
    except ValueError as exc:
        raise builder.fail(line_no, f"invalid JSON ({exc})") from None


def _aliases(value: Any, builder: TripleBuilder, line_no: int) -> dict[str, list[str]]:
    """A JSONL ``aliases`` value, which must map names to lists of strings (numbers are kept as written).

    Anything else is an error: it used to be skipped, or turned into text like ``"['x']"``, silently.
    """
    if isinstance(value, dict) and all(
        isinstance(names, list) and all(isinstance(n, str) for n in names) for names in value.values()
    ):
        return value
    raise builder.fail(line_no, f"'aliases' must map names to lists of strings, not {str(value)[:60]}")


def read_jsonl(path: Path, builder: TripleBuilder, head: str, relation: str, tail: str) -> None:
    """One JSON object per line; ``head/relation/tail`` name the keys, ``aliases`` adds entity aliases."""
    counter = [0]
    keys = (head, relation, tail)
    for line in decoded_lines(path, counter):
        if not line.strip():
            continue
        obj = _parse_json_line(line, builder, counter[0])
        if not isinstance(obj, dict):
            raise builder.fail(counter[0], f"expected a JSON object, found {type(obj).__name__}")
        values = []
        for key in keys:
            if key not in obj:
                raise builder.fail(counter[0], f"missing key {key!r} (keys: {', '.join(map(str, obj))})")
            value = _scalar(obj[key])
            if value is None:
                raise builder.fail(counter[0], f"key {key!r} must be a string or number, not {obj[key]!r}")
            values.append(value)
        builder.add(values[0], values[1], values[2], counter[0])
        if "aliases" in obj:
            for name, names in _aliases(obj["aliases"], builder, counter[0]).items():
                builder.add_aliases(name, names, counter[0])
