"""Which format a file is in: from its extension (``.gz`` ignored), else from its first line."""

from __future__ import annotations

from pathlib import Path

from kgrag.errors import KGFormatError
from kgrag.graph.io.lines import decoded_lines
from kgrag.graph.io.ntriples import NT_LINE

FORMATS = ("spo", "tsv", "csv", "jsonl", "nt")
_EXTENSIONS = {
    ".spo": "spo",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".nt": "nt",
}


def detect_format(path: str | Path) -> str:
    """Guess the format of ``path`` from its extension (``.gz`` ignored), else from its first line."""
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".gzip"):
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _EXTENSIONS:
        return _EXTENSIONS[suffixes[-1]]
    counter = [0]
    first = ""
    for line in decoded_lines(path, counter):
        if line.strip() and not line.startswith("#"):
            first = line
            break
    if not first:
        raise KGFormatError(str(path), None, "the file is empty")
    if first.lstrip().startswith("{"):
        return "jsonl"
    if NT_LINE.match(first):
        return "nt"
    if first.count("|") == 2:
        return "spo"
    if "\t" in first:
        return "tsv"
    if "," in first:
        return "csv"
    raise KGFormatError(
        str(path),
        counter[0],
        "cannot tell the format from the first line; pass --format (spo|tsv|csv|jsonl|nt)",
    )


def detect_format_from_name(path: Path) -> str:
    """The format a written file should have, from its name alone (the file need not exist yet)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _EXTENSIONS:
        return _EXTENSIONS[suffixes[-1]]
    if suffixes and suffixes[-1] == ".txt":
        return "spo"
    raise ValueError(f"cannot tell the format from {path.name!r}; pass format=")
