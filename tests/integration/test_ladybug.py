"""Ladybug backend: bulk-built database, guarded read-only Cypher, attacks change nothing."""

from __future__ import annotations

import json

import pytest

from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import MOVIES, run_cli
from tests.unit.test_cypher_guard import ATTACKS, LEGIT

pytestmark = pytest.mark.integration
ladybug = pytest.importorskip("ladybug")

TRIPLES = [*MOVIES, ("Amélie", "directed_by", "Jean-Pierre Jeunet"), ('Film, "quoted"', "odd.relation/name", "x")]


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(TRIPLES).save(tmp_path_factory.mktemp("kg") / "kg"))


@pytest.fixture(scope="module")
def db(kg):
    from kgrag.graph.backends.ladybug import LadybugBackend

    return LadybugBackend(kg)


def counts(db):
    nodes = db.run("MATCH (n) RETURN count(n)").rows[0][0]
    edges = db.run("MATCH ()-[r]->() RETURN count(r)").rows[0][0]
    return nodes, edges


def test_database_mirrors_the_kg(kg, db):
    assert counts(db) == (kg.num_entities, kg.num_triples)
    res = db.run("MATCH (m:Entity {name: 'Heat'})-[:directed_by]->(d) RETURN d.name")
    assert res.ok and res.rows == [["Michael Mann"]]
    odd = db.run("MATCH (a)-[:odd_relation_name]->(b) RETURN a.name, b.name")
    assert odd.rows == [['Film, "quoted"', "x"]]
    assert (kg.store_path / "ladybug" / "tag.json").exists()
    assert "directed_by" in db.schema()


@pytest.mark.parametrize("query", LEGIT)
def test_legit_reads_run(db, query):
    res = db.run(query, {"name": "Heat"} if "$name" in query else None)
    assert res.ok, res.error


def test_attacks_rejected_and_database_unchanged(db):
    before = counts(db)
    for query in ATTACKS:
        assert db.run(query).rejected, query
        db.run(query, trusted=True)  # bypass the guard: the read-only engine must still refuse
    assert counts(db) == before


def test_errors_are_results_not_exceptions(db):
    res = db.run("MATCH (n:NoSuchLabel) RETURN n")
    assert not res.ok and not res.rejected and res.error
    capped = db.run("MATCH (n) RETURN n.name", row_cap=3)
    assert len(capped.rows) == 3 and capped.truncated and capped.query.endswith("LIMIT 4")
    exact = db.run("MATCH (n:Entity {name: 'Heat'}) RETURN n.name", row_cap=3)
    assert exact.rows == [["Heat"]] and not exact.truncated


def test_table_names_are_sanitised():
    from kgrag.graph.backends.base import table_names

    assert table_names(["people.person.place_of_birth", "a-b", "A_B", "1st", "Entity"]) == [
        "people_person_place_of_birth",
        "a_b",
        "A_B_2",
        "r_1st",
        "Entity_2",
    ]


def test_rebuilt_only_when_the_kg_changes(kg, db):
    from kgrag.graph.backends.ladybug import LadybugBackend

    again = LadybugBackend(kg)
    assert again.build_seconds == 0.0  # reused


def test_cli_cypher_exit_codes(kg, db):
    ok = run_cli(
        "cypher",
        str(kg.store_path),
        "MATCH (m:Entity {name: 'Alien'})-[:release_year]->(y) RETURN y.name",
        "--json",
        ok=False,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["rows"] == [["1979"]]
    bad = run_cli("cypher", str(kg.store_path), "MATCH (n) DELETE n", ok=False, timeout=120)
    assert bad.returncode == 3 and "rejected: write or admin keyword DELETE" in bad.stderr


def test_dialect_rewrite_outside_strings():
    from kgrag.graph.backends.ladybug import to_ladybug_dialect

    q = "MATCH (o:Order {note: ':Order toFloat(x)'}) RETURN toFloat(o.freight), toInteger('3')"
    assert to_ladybug_dialect(q, {"Order", "Product"}) == (
        "MATCH (o:`Order` {note: ':Order toFloat(x)'}) RETURN to_double(o.freight), to_int64('3')"
    )
    # Ladybug's round wants the digits to keep: Cypher's one-argument round keeps none
    rounded = "RETURN round(avg(toFloat(o.freight))) AS a, round(p.unitPrice, 2), ROUND((1 + 2) * 3)"
    assert to_ladybug_dialect(rounded, set()) == (
        "RETURN round(avg(to_double(o.freight)), 0) AS a, round(p.unitPrice, 2), ROUND((1 + 2) * 3, 0)"
    )


def test_northwind_property_graph(tmp_path):
    from kgrag.demo import demo_path
    from kgrag.graph.backends.ladybug import LadybugBackend
    from kgrag.graph.property_graph import PropertyGraph

    graph = PropertyGraph.load(demo_path("northwind"))
    store = graph.to_knowledge_graph().save(tmp_path / "nw")
    graph.save_tables(store)
    kg = KnowledgeGraph.load(store)
    assert kg.has_triple(kg.entity_id("Chai"), kg.relation_id("PART_OF"), kg.entity_id("Beverages"))
    assert kg.has_triple(kg.entity_id("Chai"), kg.relation_id("unitPrice"), kg.entity_id("18.00"))
    db = LadybugBackend(kg)
    top = db.run(
        "MATCH (p:Product)<-[:ORDERS]-(:Order) WITH p, count(*) AS n ORDER BY n DESC LIMIT 1 RETURN p.productName, n"
    )
    assert top.ok and top.rows == [["Raclette Courdavault", 54]]
    typed = db.run("MATCH (o:Order)-[r:ORDERS]->(p:Product {productName: 'Chai'}) RETURN sum(r.quantity)")
    assert typed.ok and isinstance(typed.rows[0][0], int)
    assert "ORDERS {orderID: STRING" in db.schema()


def test_a_database_path_holding_user_files_is_refused_not_wiped(kg, tmp_path):
    from kgrag.errors import KGStoreError
    from kgrag.graph.backends.ladybug import LadybugBackend

    (tmp_path / "notes.txt").write_text("precious")
    with pytest.raises(KGStoreError, match="not built by kgrag"):
        LadybugBackend(kg, path=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def _fresh(tmp_path):
    from kgrag.graph.backends.ladybug import LadybugBackend

    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(TRIPLES).save(tmp_path / "kg"))
    LadybugBackend(kg).close()
    return kg, LadybugBackend


DIRECTOR = "MATCH (m:Entity {name: 'Heat'})-[:directed_by]->(d) RETURN d.name"


def test_an_edited_database_is_rebuilt_with_a_warning(tmp_path, caplog):
    kg, LadybugBackend = _fresh(tmp_path)
    db_file = tmp_path / "kg" / "ladybug" / "db"
    data = db_file.read_bytes()
    assert data.count(b"Michael Mann") == 1
    db_file.write_bytes(data.replace(b"Michael Mann", b"Hacked! Mann"))
    backend = LadybugBackend(kg)
    assert backend.run(DIRECTOR).rows == [["Michael Mann"]]
    assert backend.build_seconds > 0 and "differs from what was built" in caplog.text


def test_a_planted_file_in_the_database_is_rebuilt(tmp_path, caplog):
    kg, LadybugBackend = _fresh(tmp_path)
    (tmp_path / "kg" / "ladybug" / "db.wal").write_bytes(b"\0" * 64)
    backend = LadybugBackend(kg)
    assert backend.build_seconds > 0 and "differs from what was built" in caplog.text
    assert not (tmp_path / "kg" / "ladybug" / "db.wal").exists()


def test_an_intact_database_is_reused_silently(tmp_path, caplog):
    kg, LadybugBackend = _fresh(tmp_path)
    backend = LadybugBackend(kg)
    assert backend.build_seconds == 0 and backend.run(DIRECTOR).rows == [["Michael Mann"]]
    assert "rebuilding" not in caplog.text


def test_a_kg_without_a_store_gets_a_temp_database_removed_on_close():
    """An in-memory KG's database lives in a temp directory of its own, gone after close (not left in /tmp)."""
    from kgrag.graph.backends.ladybug import LadybugBackend

    backend = LadybugBackend(KnowledgeGraph.from_triples(MOVIES))
    assert backend.run("MATCH (n) RETURN count(n)").ok
    path = backend.path
    assert (path / "db").exists()
    backend.close()
    assert not path.exists()
