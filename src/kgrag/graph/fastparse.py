"""Vectorised reader for clean delimited triple files (spo, TSV, unquoted CSV): no Python object per row.

The whole file is one byte array.  Separator and newline positions come from ``np.flatnonzero``; every field
is hashed 8 bytes at a time with two independent 64-bit hashes (an unaligned ``<u8`` view of the buffer);
fields are grouped by sorting the first hash, and the second hash plus the length must agree within each
group — otherwise (a collision, astronomically unlikely) the caller falls back to dictionary interning.
Only distinct names are decoded to Python strings.  Ids follow first appearance (head before tail, row by
row), exactly as the line-by-line reader assigns them.

Anything irregular — blank lines, ragged rows, empty or blank fields, quotes in CSV, stray ``\\r``, bad UTF-8 —
raises :class:`Irregular`, and the caller re-reads with the line-by-line reader, which reports the exact
``path:line``.  Files above ``MAX_BYTES`` also take the line-by-line path (this one holds the file in memory).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

MAX_BYTES = 1 << 31
LONG_FIELD = 256  # bytes; longer fields are hashed one by one (see _field_hashes)
_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xC2B2AE3D27D4EB4F)
_ALL_ONES = np.uint64(2**64 - 1)


class Irregular(Exception):
    """The input needs the line-by-line reader."""


def _field_hashes(
    data: bytes, words: np.ndarray, starts: np.ndarray, lens: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Both hashes of every field, computed in slices so the temporaries stay small.

    The vectorised mixer takes one pass over *all* fields per 8 bytes of the *longest* one, so a single 100 KB
    name made a 200k-triple file 170x slower; fields above ``LONG_FIELD`` bytes (rare) are hashed one by one
    with BLAKE2b instead, which keeps the cost proportional to the file size.
    """
    h1 = np.empty(len(starts), dtype=np.uint64)
    h2 = np.empty(len(starts), dtype=np.uint64)
    step = 1 << 20
    for i in range(0, len(starts), step):
        h1[i : i + step], h2[i : i + step] = _hash_slice(words, starts[i : i + step], lens[i : i + step])
    for i in np.flatnonzero(lens > LONG_FIELD).tolist():
        start = int(starts[i])
        digest = hashlib.blake2b(data[start : start + int(lens[i])], digest_size=16).digest()
        h1[i], h2[i] = np.frombuffer(digest, dtype="<u8")
    return h1, h2


def _hash_slice(words: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h1 = lens.astype(np.uint64) * _M1
    h2 = lens.astype(np.uint64) * _M2 + np.uint64(1)
    last = len(words) - 1
    longest = min(int(lens.max()), LONG_FIELD) if len(lens) else 0
    for offset in range(0, longest, 8):
        left = np.clip(lens - offset, 0, 8).astype(np.uint64)
        mask = np.where(left == 8, _ALL_ONES, (np.uint64(1) << (left * np.uint64(8))) - np.uint64(1))
        word = words[np.minimum(starts + offset, last)] & mask
        h1 = (h1 ^ word) * _M1
        h1 ^= h1 >> np.uint64(29)
        h2 = (h2 + word) * _M2
        h2 ^= h2 >> np.uint64(31)
    return h1, h2


def intern_fields(data: bytes, words: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Ids (first-appearance order) of the byte ranges ``[starts, ends)`` and the distinct decoded names."""
    lens = ends - starts
    h1, h2 = _field_hashes(data, words, starts, lens)
    ordered = np.sort(h1)
    distinct = ordered[np.r_[True, ordered[1:] != ordered[:-1]]]
    del ordered
    group = np.searchsorted(distinct, h1).astype(np.int32)
    del h1
    first = np.full(len(distinct), len(group), dtype=np.int32)
    np.minimum.at(first, group, np.arange(len(group), dtype=np.int32))
    if not (np.array_equal(h2, h2[first][group]) and np.array_equal(lens, lens[first][group])):
        raise Irregular("hash collision")
    del h2, lens
    by_first = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int32)
    rank[by_first] = np.arange(len(first), dtype=np.int32)
    reps = first[by_first]
    names = [data[a:b].decode("utf-8") for a, b in zip(starts[reps].tolist(), ends[reps].tolist())]
    if any(not n.strip() for n in names):
        raise Irregular("blank name")
    return rank[group], names


def _regular_bytes(data: bytes, quoted: bool) -> bytes:
    """``data`` without a BOM, with ``\\n`` line endings and a final newline; ``Irregular`` for anything the byte
    reader cannot parse exactly (too large, bad UTF-8, a stray carriage return, quoting), which the line-by-line
    reader then handles or reports."""
    if len(data) > MAX_BYTES:
        raise Irregular("too large for the in-memory reader")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise Irregular("bad UTF-8") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if b"\r" in data:
            raise Irregular("stray carriage return")
    if quoted and b'"' in data:
        raise Irregular("quoted CSV")
    if not data.endswith(b"\n"):
        data += b"\n"
    return data


def read_delimited_bytes(
    data: bytes,
    sep: str,
    resolve_columns: Callable[[list[str]], tuple[bool, tuple[int, int, int]]],
    *,
    quoted: bool = False,
) -> tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(entity names, relation names, heads, rels, tails) of a clean delimited file's bytes.

    ``resolve_columns(first_row) -> (first_row_is_header, (head, relation, tail) column indices)``.
    """
    data = _regular_bytes(data, quoted)
    first_end = data.index(b"\n")
    first_row = data[:first_end].decode("utf-8").split(sep)
    if not any(f.strip() for f in first_row):
        raise Irregular("blank first line")
    is_header, (hi, ri, ti) = resolve_columns(first_row)
    width = len(first_row)
    start = first_end + 1 if is_header else 0
    buf = np.frombuffer(data, dtype=np.uint8)
    # byte offsets fit int32 (files above MAX_BYTES take the other reader); halves the index arrays
    newlines = (np.flatnonzero(buf[start:] == 10) + start).astype(np.int32)
    seps = (np.flatnonzero(buf[start:] == ord(sep)) + start).astype(np.int32)
    n = len(newlines)
    if n == 0 or len(seps) != (width - 1) * n:
        raise Irregular("no rows, or rows of different widths")
    line_starts = np.empty(n, dtype=np.int32)
    line_starts[0] = start
    line_starts[1:] = newlines[:-1] + 1
    # With (width-1)·n separators in all, every line has exactly width-1 of them iff each line's first
    # one comes after its start and its last one before its newline (both arrays are sorted).
    if width > 1 and not (
        np.all(seps[0 :: width - 1] >= line_starts) and np.all(seps[width - 2 :: width - 1] < newlines)
    ):
        raise Irregular("rows of different widths")

    def column(c: int) -> tuple[np.ndarray, np.ndarray]:
        begin = line_starts if c == 0 else seps[c - 1 :: width - 1] + 1
        end = newlines if c == width - 1 else seps[c :: width - 1]
        if np.any(end == begin):
            raise Irregular("empty field")
        return begin, end

    (hs, he), (rs, re_), (ts, te) = column(hi), column(ri), column(ti)
    padded = np.zeros(len(data) + 8, dtype=np.uint8)  # 8 spare bytes: the last field's word may overrun
    padded[: len(data)] = buf
    del buf
    words = np.ndarray(shape=(len(data),), dtype="<u8", buffer=padded.data, strides=(1,))
    ent_starts = np.empty(2 * n, dtype=np.int32)
    ent_ends = np.empty(2 * n, dtype=np.int32)
    ent_starts[0::2], ent_starts[1::2] = hs, ts
    ent_ends[0::2], ent_ends[1::2] = he, te
    del hs, he, ts, te
    ent_ids, entities = intern_fields(data, words, ent_starts, ent_ends)
    rel_ids, relations = intern_fields(data, words, rs, re_)
    return entities, relations, ent_ids[0::2], rel_ids, ent_ids[1::2]
