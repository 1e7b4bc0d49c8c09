"""Cypher over any Neo4j-protocol (Bolt) server — Neo4j, Memgraph, FalkorDB — via the ``neo4j`` driver.

Extra ``[bolt]``.  Loading uses batched ``UNWIND $rows`` statements (one round trip per few thousand rows);
untrusted queries pass :func:`kgrag.retrieval.cypher.guard_cypher` and run in a read transaction with a
timeout and a row cap.  Layout of a loaded triples KG: ``(:Entity {id, name})`` nodes and one relationship
type per KG relation (sanitised like the Ladybug tables, so the same Text2Cypher prompt works on both).

Read-only enforcement differs by server: Neo4j refuses writes in a READ transaction, but FalkorDB's
(experimental) Bolt endpoint was checked to execute a ``CREATE`` sent in a read transaction — against FalkorDB
the parser-level guard is the barrier, so never pass ``trusted=True`` with untrusted text.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import numpy as np

from kgrag.errors import MissingExtraError
from kgrag.graph.backends.ladybug import NODE_TABLE, CypherResult, plain_value, table_names
from kgrag.graph.kg import KnowledgeGraph
from kgrag.retrieval.cypher import DEFAULT_ROW_CAP, guard_cypher


class BoltBackend:
    supports_cypher = True
    supports_paths = True
    name = "bolt"

    def __init__(self, uri: str, *, auth: tuple[str, str] | None = None, database: str | None = None) -> None:
        try:
            import neo4j
        except ImportError as exc:
            raise MissingExtraError("bolt", "the Bolt backend", "neo4j") from exc
        self._neo4j = neo4j
        self.uri = uri
        self.database = database
        self._driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        self._lock = threading.Lock()

    def _session(self, read: bool) -> Any:
        mode = self._neo4j.READ_ACCESS if read else self._neo4j.WRITE_ACCESS
        return self._driver.session(database=self.database, default_access_mode=mode)

    def load(self, kg: KnowledgeGraph, *, batch: int = 5000) -> float:
        """Write ``kg`` into the server (an empty graph is expected); returns seconds taken."""
        start = time.perf_counter()
        with self._session(read=False) as session:
            # the index may exist already, or the server may spell index creation differently
            with contextlib.suppress(self._neo4j.exceptions.Neo4jError):
                session.run(f"CREATE INDEX FOR (n:{NODE_TABLE}) ON (n.id)").consume()
            for lo in range(0, kg.num_entities, batch):
                rows = [{"id": i, "name": kg.entities[i]} for i in range(lo, min(lo + batch, kg.num_entities))]
                session.run(
                    f"UNWIND $rows AS row CREATE (:{NODE_TABLE} {{id: row.id, name: row.name}})", rows=rows
                ).consume()
            order = np.argsort(kg.rels, kind="stable")
            bounds = np.searchsorted(kg.rels[order], np.arange(kg.num_relations + 1))
            for rid, rel in enumerate(table_names(kg.relations)):
                tids = order[bounds[rid] : bounds[rid + 1]]
                heads, tails = kg.heads[tids].tolist(), kg.tails[tids].tolist()
                for lo in range(0, len(tids), batch):
                    rows = [{"h": h, "t": t} for h, t in zip(heads[lo : lo + batch], tails[lo : lo + batch])]
                    session.run(
                        f"UNWIND $rows AS row MATCH (a:{NODE_TABLE} {{id: row.h}}), (b:{NODE_TABLE} {{id: row.t}}) "
                        f"CREATE (a)-[:`{rel}`]->(b)",
                        rows=rows,
                    ).consume()
        return time.perf_counter() - start

    def run(
        self,
        query: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float = 10.0,
        row_cap: int = DEFAULT_ROW_CAP,
        trusted: bool = False,
    ) -> CypherResult:
        """Run a query (guarded unless ``trusted``) in a read transaction; errors come back as results."""
        start = time.perf_counter()
        if not trusted:
            guard = guard_cypher(query, row_cap=row_cap + 1)
            if not guard.ok:
                return CypherResult(query=query, error=guard.reason, rejected=True)
            query = guard.query

        @self._neo4j.unit_of_work(timeout=timeout)
        def work(tx: Any) -> tuple[list[str], list[list[Any]], bool]:
            result = tx.run(query, params or {})
            rows = []
            for record in result:
                if len(rows) == row_cap:
                    return list(result.keys()), rows, True
                rows.append([plain_value(v) for v in record.values()])
            return list(result.keys()), rows, False

        try:
            with self._session(read=True) as session:
                columns, rows, truncated = session.execute_read(work)
        except Exception as exc:  # server-side syntax/runtime errors, timeouts, lost connections
            return CypherResult(query=query, error=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - start)
        return CypherResult(
            query=query, columns=columns, rows=rows, truncated=truncated, seconds=time.perf_counter() - start
        )

    def schema(self) -> str:
        labels = self.run("CALL db.labels()", trusted=True)
        types = self.run("CALL db.relationshipTypes()", trusted=True)
        return (
            f"Node labels: {', '.join(str(r[0]) for r in labels.rows)}\n"
            f"Relationship types: {', '.join(str(r[0]) for r in types.rows)}"
        )

    def close(self) -> None:
        self._driver.close()
