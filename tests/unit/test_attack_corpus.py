"""Every hostile input in tests/fixtures/attacks/ingest through the CLI: one-line error or faithful storage.

The expected outcome of each file is the table in that directory's README.md (so the corpus documents itself);
the names a "stored" case must keep exactly are listed here.  Each plain-text case runs again gzipped.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import sys
from pathlib import Path

import pytest

from kgrag.graph.store import load_kg
from tests.conftest import REPO

CORPUS = REPO / "tests" / "fixtures" / "attacks" / "ingest"
_ROW = re.compile(r"^\| `([^`]+)` \| .+ \| (stored|`(.+)`) \|$")
KEPT = {  # names a "stored" case must keep exactly as written
    "jsonl_5000_digits.jsonl": ["9" * 5000],
    "jsonl_numbers_as_written.jsonl": ["1e999", "8.60"],
    "spo_100kb_name.txt.gz": ["x" * 100_000],
    "spo_unicode_separators.txt": ["a\u2028b", "r\x85q", "c\x0bd\x0ce"],
    "spo_nul_byte.txt": ["a\x00b"],
    "spo_bidi_and_zero_width.txt": ["\u202eevil\u200b", "\ufeffb"],
}


def _expectations() -> dict[str, str | None]:
    """file -> expected ``:LINE: PROBLEM`` prefix, or None for "stored", from the README table."""
    rows = (_ROW.match(line) for line in (CORPUS / "README.md").read_text("utf-8").splitlines())
    return {m.group(1): m.group(3) for m in rows if m}


EXPECTED = _expectations()
CASES = [(name, False) for name in EXPECTED] + [(name, True) for name in EXPECTED if not name.endswith(".gz")]


def _snapshot(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def _ingest(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """Run ``kgrag ingest ARGS`` through the console-script entry point; (exit status, stderr)."""
    from kgrag.cli import main

    monkeypatch.setattr(sys, "argv", ["kgrag", "ingest", *args])
    with pytest.raises(SystemExit) as info:
        main()
    return int(info.value.code or 0), capsys.readouterr().err


def test_the_readme_lists_every_file_and_the_corpus_is_large_enough():
    assert set(EXPECTED) == {p.name for p in CORPUS.iterdir()} - {"README.md"}
    assert {name for name, problem in EXPECTED.items() if problem is None} == set(KEPT)
    assert len(EXPECTED) >= 20


@pytest.mark.parametrize(("name", "gzipped"), CASES, ids=[f"{n}{'.gz' if g else ''}" for n, g in CASES])
def test_hostile_input_is_refused_on_one_line_or_stored_faithfully(name, gzipped, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    before, neighbours = _snapshot(CORPUS), sorted(p.name for p in tmp_path.parent.iterdir())
    source = CORPUS / name
    if gzipped:
        source = tmp_path / f"{name}.gz"
        source.write_bytes(gzip.compress((CORPUS / name).read_bytes()))
    status, err = _ingest(monkeypatch, capsys, str(source), "--out", str(tmp_path / "kg"), "--json")
    problem = EXPECTED[name]
    if problem is None:
        assert status == 0, err
        kg = load_kg(tmp_path / "kg")
        names = set(kg.entities) | set(kg.relations)
        assert all(kept in names for kept in KEPT[name])
    else:
        assert status == 2, err
        assert err.startswith(f"error: {source}{problem}") and err.count("\n") == 1 and err.endswith("\n")
        assert sorted(p.name for p in tmp_path.iterdir()) == ([source.name] if gzipped else [])
    assert _snapshot(CORPUS) == before
    assert sorted(p.name for p in tmp_path.parent.iterdir()) == neighbours
