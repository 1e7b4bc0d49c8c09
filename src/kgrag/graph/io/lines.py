"""Reading an input file as text lines: gzip detected by its magic bytes, UTF-8 checked, line length bounded.

Every line-by-line reader goes through :func:`decoded_lines`, so bad UTF-8, a corrupt gzip stream and a line
too long to hold in memory are reported the same way for every format.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from kgrag.errors import KGFormatError

_GZIP_MAGIC = b"\x1f\x8b"
GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)  # zlib.error: a damaged deflate stream
# Longest line (line ending included) the line-by-line reader holds in memory; a longer one is an error, so a
# few MB of gzip that expand to one multi-GB line (a "zip bomb") cannot exhaust memory.
MAX_LINE = 1 << 26


def open_binary(path: Path) -> IO[bytes]:
    fh = open(path, "rb")  # noqa: SIM115 - returned to the caller, closed there
    magic = fh.read(2)
    fh.seek(0)
    if magic == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    return fh


def decoded_lines(path: Path, counter: list[int]) -> Iterator[str]:
    """Yield text lines (line ending stripped), counting them in ``counter[0]``; bad UTF-8 is an error."""
    try:
        with open_binary(path) as fh:
            for raw in iter(lambda: fh.readline(MAX_LINE + 1), b""):
                counter[0] += 1
                if len(raw) > MAX_LINE:
                    raise KGFormatError(
                        str(path), counter[0], f"line longer than {MAX_LINE} bytes; no triple line is that long"
                    )
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise KGFormatError(
                        str(path),
                        counter[0],
                        f"not valid UTF-8 (byte {raw[exc.start]:#04x} at column "
                        f"{exc.start + 1}); re-encode the file as UTF-8",
                    ) from None
                if counter[0] == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                yield line.rstrip("\r\n")
    except GZIP_ERRORS as exc:
        raise KGFormatError(str(path), counter[0] or None, f"corrupt gzip data ({exc})") from None


def gzip_damage(path: Path) -> KGFormatError | None:
    """The error for a corrupt gzip ``path``, else None (also None for a file that is not gzip).

    Deflate decodes damaged data into plausible garbage, and the CRC is checked only at the end, so a parse
    error in a gzip file may really be corruption; this decompresses the whole file to tell which.
    """
    with open(path, "rb") as fh:
        if fh.read(2) != _GZIP_MAGIC:
            return None
    counter = [0]
    try:
        for _ in decoded_lines(path, counter):
            pass
    except KGFormatError as exc:
        return exc if "corrupt gzip" in exc.problem else None
    return None
