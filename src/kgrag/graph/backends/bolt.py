"""Cypher over any Neo4j-protocol (Bolt) server — Neo4j, Memgraph, FalkorDB — via the ``neo4j`` driver.

Extra ``[bolt]``.  Loading uses batched ``UNWIND $rows`` statements (one round trip per few thousand rows);
untrusted queries pass :func:`kgrag.graph.backends.guard.guard_cypher` and run in a read transaction with a
timeout and a row cap.  Layout of a loaded triples KG: ``(:Entity {id, name})`` nodes and one relationship
type per KG relation (sanitised like the Ladybug tables, so the same Text2Cypher prompt works on both).

Read-only enforcement differs by server: Neo4j refuses writes in a READ transaction, but FalkorDB's
(experimental) Bolt endpoint was checked to execute a ``CREATE`` sent in a read transaction — against FalkorDB
the parser-level guard is the barrier, so never pass ``trusted=True`` with untrusted text.
"""

from __future__ import annotations

import contextlib
import csv
import re
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.errors import KGStoreError, MissingExtraError
from kgrag.graph.backends.base import NODE_TABLE, CypherBackend, plain_value, table_names
from kgrag.graph.backends.guard import Token, quote_name, serialise, tokenise_cypher
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.property_graph import STORE_DIR, read_stored_mapping
from kgrag.graph.store import read_manifest


def cypher_literal(value: Any) -> str:
    """A Python value as a Cypher literal (strings escaped), for servers whose parameter handling is unsafe."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, dict):
        keys = [k if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(k)) else quote_name(str(k)) for k in value]
        return "{" + ", ".join(f"{k}: {cypher_literal(v)}" for k, v in zip(keys, value.values())) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as a Cypher literal")


def inline_tokens(tokens: list[Token], params: dict[str, Any]) -> list[Token]:
    """Replace each ``$name`` token by the tokens of the literal value of ``params[name]``."""
    out: list[Token] = []
    for tok in tokens:
        name = tok.value[1:]
        if tok.kind != "param" or name not in params:
            out.append(tok)
            continue
        literal = tokenise_cypher(cypher_literal(params[name]))
        out += [literal[0]._replace(gap=tok.gap), *literal[1:]]
    return out


def inline_parameters(query: str, params: dict[str, Any]) -> str:
    """Replace ``$name`` outside string literals by the literal value of ``params[name]``."""
    return serialise(inline_tokens(tokenise_cypher(query), params))


def _typed_rows(path: Path, types: dict[str, str]) -> list[dict[str, Any]]:
    """Rows of a cleaned property-graph CSV with typed values ('' is null for non-strings)."""
    casts = {"INTEGER": int, "FLOAT": float, "BOOLEAN": lambda v: v == "true", "STRING": str}
    rows = []
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            rows.append(
                {
                    k: (casts[types.get(k, "STRING")](v) if v != "" or types.get(k, "STRING") == "STRING" else None)
                    for k, v in row.items()
                }
            )
    return rows


class BoltBackend(CypherBackend):
    name = "bolt"

    def __init__(self, uri: str, *, auth: tuple[str, str] | None = None, database: str | None = None) -> None:
        try:
            import neo4j
        except ImportError as exc:
            raise MissingExtraError("bolt", "the Bolt backend", "neo4j") from exc
        self._neo4j = neo4j
        self.uri = uri
        self.database = database
        # no retries: a query that failed once (a timeout, a parse the server gave up on) is not sent again
        self._driver = neo4j.GraphDatabase.driver(uri, auth=auth, max_transaction_retry_time=0)
        self._lock = threading.Lock()
        # FalkorDB's Bolt endpoint splices string parameters into the query unescaped ("'71" breaks it and can
        # crash the server) while announcing itself as Neo4j, so probe: a server that cannot echo a quote
        # back through a parameter gets every parameter as an escaped literal instead.
        self.inline_params = not self._parameters_safe()

    def _parameters_safe(self) -> bool:
        probe = "it's \\ fine"
        try:
            with self._session(read=True) as session:
                return session.run("RETURN $p AS p", p=probe).single()[0] == probe
        except self._neo4j.exceptions.ServiceUnavailable:
            return True  # unreachable: run() reports that as a result later
        except Exception:
            return False

    def _write(self, session: Any, query: str, **params: Any) -> Any:
        if self.inline_params and params:
            return session.run(inline_parameters(query, params))
        return session.run(query, **params)

    def _session(self, read: bool) -> Any:
        mode = self._neo4j.READ_ACCESS if read else self._neo4j.WRITE_ACCESS
        return self._driver.session(database=self.database, default_access_mode=mode)

    def load(self, kg: KnowledgeGraph, *, batch: int = 1000) -> float:
        """Write ``kg`` into the server (an empty graph is expected); returns seconds taken."""
        start = time.perf_counter()
        with self._session(read=False) as session:
            # the index may exist already, or the server may spell index creation differently
            with contextlib.suppress(self._neo4j.exceptions.Neo4jError):
                session.run(f"CREATE INDEX FOR (n:{NODE_TABLE}) ON (n.id)").consume()
            for lo in range(0, kg.num_entities, batch):
                rows = [{"id": i, "name": kg.entities[i]} for i in range(lo, min(lo + batch, kg.num_entities))]
                query = f"UNWIND $rows AS row CREATE (:{NODE_TABLE} {{id: row.id, name: row.name}})"
                self._write(session, query, rows=rows).consume()
            order = np.argsort(kg.rels, kind="stable")
            bounds = np.searchsorted(kg.rels[order], np.arange(kg.num_relations + 1))
            for rid, rel in enumerate(table_names(kg.relations)):
                tids = order[bounds[rid] : bounds[rid + 1]]
                heads, tails = kg.heads[tids].tolist(), kg.tails[tids].tolist()
                for lo in range(0, len(tids), batch):
                    rows = [{"h": h, "t": t} for h, t in zip(heads[lo : lo + batch], tails[lo : lo + batch])]
                    self._write(
                        session,
                        f"UNWIND $rows AS row MATCH (a:{NODE_TABLE} {{id: row.h}}), (b:{NODE_TABLE} {{id: row.t}}) "
                        f"CREATE (a)-[:`{rel}`]->(b)",
                        rows=rows,
                    ).consume()
        return time.perf_counter() - start

    def load_property_graph(self, store: Path, *, batch: int = 1000) -> float:
        """Write a property graph saved with a KG store (typed labels and relationship properties)."""
        start = time.perf_counter()
        tables = store / STORE_DIR
        mapping = read_stored_mapping(store, read_manifest(store)["checksum"])
        if mapping is None:
            raise KGStoreError(f"{store}: not a property-graph store (no {STORE_DIR}/mapping.json)")
        with self._session(read=False) as session:
            for node in mapping["nodes"]:
                label, key = quote_name(node["label"]), quote_name(node["key"])
                with contextlib.suppress(self._neo4j.exceptions.Neo4jError):
                    session.run(f"CREATE INDEX FOR (n:{label}) ON (n.{key})").consume()
                rows = _typed_rows(tables / f"node_{node['label']}.csv", node["properties"])
                for lo in range(0, len(rows), batch):
                    query = f"UNWIND $rows AS row CREATE (n:{label}) SET n = row"
                    self._write(session, query, rows=rows[lo : lo + batch]).consume()
            for rel in mapping["relationships"]:
                src, dst = rel["from"], rel["to"]
                src_key = next(n["key"] for n in mapping["nodes"] if n["label"] == src["label"])
                dst_key = next(n["key"] for n in mapping["nodes"] if n["label"] == dst["label"])
                types = {"from": "STRING", "to": "STRING", **rel.get("properties", {})}
                rows = _typed_rows(tables / f"rel_{rel['type']}.csv", types)
                props = ", ".join(f"{quote_name(p)}: row.{quote_name(p)}" for p in rel.get("properties", {}))
                query = (
                    f"UNWIND $rows AS row MATCH (a:{quote_name(src['label'])} {{{quote_name(src_key)}: row.from}}), "
                    f"(b:{quote_name(dst['label'])} {{{quote_name(dst_key)}: row.to}}) "
                    f"CREATE (a)-[:{quote_name(rel['type'])} {{{props}}}]->(b)"
                )
                for lo in range(0, len(rows), batch):
                    self._write(session, query, rows=rows[lo : lo + batch]).consume()
        return time.perf_counter() - start

    def _rewrite(self, tokens: list[Token], params: dict[str, Any] | None) -> tuple[list[Token], dict[str, Any] | None]:
        if self.inline_params and params:
            return inline_tokens(tokens, params), None
        return tokens, params

    def _execute(
        self, query: str, params: dict[str, Any] | None, timeout: float, row_cap: int
    ) -> tuple[list[str], list[list[Any]], bool]:
        @self._neo4j.unit_of_work(timeout=timeout)
        def work(tx: Any) -> tuple[list[str], list[list[Any]], bool]:
            result = tx.run(query, params or {})
            rows: list[list[Any]] = []
            for record in result:
                if len(rows) == row_cap:
                    return list(result.keys()), rows, True
                rows.append([plain_value(v) for v in record.values()])
            return list(result.keys()), rows, False

        with self._session(read=True) as session:
            return session.execute_read(work)

    def schema(self) -> str:
        labels = self.run("CALL db.labels()", trusted=True)
        types = self.run("CALL db.relationshipTypes()", trusted=True)
        return (
            f"Node labels: {', '.join(str(r[0]) for r in labels.rows)}\n"
            f"Relationship types: {', '.join(str(r[0]) for r in types.rows)}"
        )

    def close(self) -> None:
        self._driver.close()
