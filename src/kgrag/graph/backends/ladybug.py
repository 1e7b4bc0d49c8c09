"""Embedded Cypher on Ladybug (the maintained Kuzu successor): no server, a database directory in the KG store.

Layout of a triples KG in Ladybug: one node table ``Entity(id INT64, name STRING)`` and one relationship table
per KG relation (``MATCH (m:Entity {name: 'Heat'})-[:directed_by]->(d) RETURN d.name``).  The database is
built once by bulk ``COPY`` from CSV files (never row by row), in a temp directory renamed into place, and
tagged with the KG checksum so a re-ingested KG gets a fresh database.  Untrusted queries go through
:func:`kgrag.graph.backends.guard.guard_cypher` and then run on a **read-only** database handle with a timeout
and a row cap, in a sandboxed child process that can open no file (:mod:`kgrag.graph.backends.sandbox`).

Dialect notes for Text2Cypher prompts (Ladybug vs Neo4j): the relationship type is ``label(r)`` (Neo4j:
``type(r)``); variable-length patterns need an upper bound (``-[*1..3]->``); shortest paths are written
``-[* SHORTEST 1..5]->``; labels are table names, so every node here is ``:Entity``.
"""

from __future__ import annotations

import csv
import json
import logging
import shutil
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.errors import MissingExtraError
from kgrag.graph.backends.base import NODE_TABLE, CypherBackend, table_names
from kgrag.graph.backends.guard import Token, serialise, tokenise_cypher
from kgrag.graph.backends.sandbox import DEFAULT_MEMORY_LIMIT, SandboxedEngine
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.property_graph import STORE_DIR, stored_mapping
from kgrag.graph.store import digest_files, replace_derived

_TYPES = {"STRING": "STRING", "INTEGER": "INT64", "FLOAT": "DOUBLE", "BOOLEAN": "BOOLEAN"}
log = logging.getLogger("kgrag.ladybug")
_TAG_FILES = frozenset({"tag.json"})  # in the database directory, not covered by its own digests

DIALECT_NOTES = (
    "Ladybug Cypher: every node has label Entity with properties id and name; relationship types are the KG "
    "relations with characters other than letters, digits and _ replaced by _; use label(r) for a "
    "relationship's type; bound variable-length patterns, e.g. -[*1..3]->; to_double/to_int64 instead of "
    "toFloat/toInteger."
)


def _escape_name(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# Words that Ladybug's parser reserves but schemas use as labels or relationship types (Northwind's :Order).
RESERVED = frozenset(
    {
        "order",
        "group",
        "limit",
        "match",
        "return",
        "where",
        "with",
        "union",
        "end",
        "case",
        "contains",
        "count",
        "exists",
        "in",
        "is",
        "not",
        "or",
        "and",
        "xor",
        "by",
        "desc",
        "asc",
        "skip",
        "unwind",
        "call",
        "yield",
        "optional",
        "all",
        "any",
        "none",
        "single",
    }
)


# Neo4j function names and their Ladybug equivalents.
_FUNCTIONS = {"tofloat": "to_double", "tointeger": "to_int64", "tostring": "to_string", "toboolean": "to_bool"}


def ladybug_dialect(tokens: list[Token], labels: set[str]) -> list[Token]:
    """Rewrite Neo4j-isms Ladybug rejects, token by token (string literals are never touched).

    Labels/types that are reserved words get backticks (``(:Order)`` → ``(:`Order`)``); ``toFloat``,
    ``toInteger``, ``toString``, ``toBoolean`` become ``to_double``, ``to_int64``, ``to_string``, ``to_bool``;
    ``round(x)`` becomes ``round(x, 0)`` (Ladybug's round takes the digits to keep, and refuses one argument).
    """
    reserved = {lab for lab in labels if lab.lower() in RESERVED}
    digits = _one_argument_rounds(tokens)
    out: list[Token] = []
    for i, tok in enumerate(tokens):
        if i in digits:
            out += [Token("punct", ","), Token("num", "0", gap=True)]
        if tok.kind == "word":
            called = i + 1 < len(tokens) and tokens[i + 1].kind == "punct" and tokens[i + 1].value == "("
            after_colon = bool(out) and out[-1].kind == "punct" and out[-1].value == ":"
            if called and tok.value.lower() in _FUNCTIONS:
                tok = tok._replace(value=_FUNCTIONS[tok.value.lower()])
            elif after_colon and tok.value in reserved:
                tok = tok._replace(kind="name")
        out.append(tok)
    return out


def _one_argument_rounds(tokens: list[Token]) -> set[int]:
    """The positions of the ``)`` closing each ``round(…)`` call that has one argument."""
    closes: set[int] = set()
    for i, tok in enumerate(tokens[:-1]):
        if tok.kind != "word" or tok.value.lower() != "round" or tokens[i + 1].value != "(":
            continue
        depth, one = 0, True
        for j in range(i + 1, len(tokens)):
            if tokens[j].kind != "punct":
                continue
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(tokens[j].value, 0)
            one = one and not (depth == 1 and tokens[j].value == ",")
            if depth == 0:
                if one:
                    closes.add(j)
                break
    return closes


def to_ladybug_dialect(query: str, labels: set[str]) -> str:
    """:func:`ladybug_dialect` on query text (tokenised and serialised again)."""
    return serialise(ladybug_dialect(tokenise_cypher(query), labels))


class LadybugBackend(CypherBackend):
    """Cypher over a KnowledgeGraph through an embedded Ladybug database."""

    name = "ladybug"

    def __init__(
        self, kg: KnowledgeGraph, path: str | Path | None = None, *, memory_limit: int = DEFAULT_MEMORY_LIMIT
    ) -> None:
        try:
            import ladybug
        except ImportError as exc:
            raise MissingExtraError(None, "the Ladybug backend", "ladybug") from exc
        self._lb = ladybug
        self.kg = kg
        # a KG with no store gets a database in a temp directory of its own, removed on close or when the
        # backend is collected (a library user building backends in a loop would otherwise fill /tmp)
        self._remove_temp = None
        if path is None and kg.store_path:
            path = kg.store_path / "ladybug"
        elif path is None:
            path = tempfile.mkdtemp(prefix="kgrag-ladybug-")
            self._remove_temp = weakref.finalize(self, shutil.rmtree, path, True)
        self.path = Path(path)
        self.tables = table_names(self.kg.relations)
        self.mapping = stored_mapping(kg)  # a property graph keeps its labels and typed properties
        self.build_seconds = 0.0
        if not self._is_current():
            self._build()
        # queries run in a sandboxed child process (no files, bounded memory, killed past its timeout)
        self._engine = SandboxedEngine(self.path / "db", memory_limit=memory_limit)

    # ------------------------------------------------------------------ build
    def _tag(self) -> dict[str, Any]:
        return {
            "kg_checksum": self.kg.checksum,
            "triples": self.kg.num_triples,
            "layout": 3,  # 3: the tag also records the database's file digests
            "tables": self.tables,
            "property_graph": self.mapping is not None,
        }

    def _is_current(self) -> bool:
        """Whether the database was built from this KG and is byte for byte what was built.

        A database built from another KG (or by another kgrag) is rebuilt quietly; one whose files differ from
        the digests recorded at build time was edited or damaged, so it is rebuilt with a warning.  Checking
        costs one sha256 pass over the database (~10 ms for MetaQA's 9 MB).
        """
        tag_path = self.path / "tag.json"
        if self.kg.checksum is None or not tag_path.is_file() or not (self.path / "db").exists():
            return False
        try:
            tag = json.loads(tag_path.read_text("utf-8"))
        except (OSError, ValueError):
            return False
        files = tag.pop("files", None) if isinstance(tag, dict) else None
        if tag != self._tag():
            return False
        if files != digest_files(self.path, exclude=_TAG_FILES):
            log.warning("%s: the database differs from what was built (edited or damaged); rebuilding it", self.path)
            return False
        return True

    def _build(self) -> None:
        start = time.perf_counter()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.tmp-", dir=self.path.parent))
        try:
            db = self._lb.Database(str(tmp / "db"))
            conn = self._lb.Connection(db)
            if self.mapping is not None:
                self._build_property_graph(conn)
            else:
                self._build_triples(conn, tmp)
            del conn, db
            for f in tmp.glob("*.csv"):
                f.unlink()
            files = digest_files(tmp, exclude=_TAG_FILES)
            (tmp / "tag.json").write_text(json.dumps({**self._tag(), "files": files}), "utf-8")
            replace_derived(tmp, self.path, "tag.json")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.build_seconds = time.perf_counter() - start

    def _build_triples(self, conn: Any, tmp: Path) -> None:
        conn.execute(f"CREATE NODE TABLE {NODE_TABLE}(id INT64, name STRING, PRIMARY KEY(id))")
        ent_csv = tmp / "entities.csv"
        with open(ent_csv, "w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
            writer.writerow(["id", "name"])
            writer.writerows(enumerate(self.kg.entities))
        conn.execute(f"COPY {NODE_TABLE} FROM '{ent_csv}' (header=true, escape='\"')")
        order = np.argsort(self.kg.rels, kind="stable")
        bounds = np.searchsorted(self.kg.rels[order], np.arange(self.kg.num_relations + 1))
        for rid, rel in enumerate(self.tables):
            conn.execute(f"CREATE REL TABLE {_escape_name(rel)}(FROM {NODE_TABLE} TO {NODE_TABLE})")
            tids = order[bounds[rid] : bounds[rid + 1]]
            rel_csv = tmp / f"rel_{rid}.csv"
            pairs = np.column_stack([self.kg.heads[tids], self.kg.tails[tids]])
            np.savetxt(rel_csv, pairs, fmt="%d", delimiter=",", header="from,to", comments="")
            conn.execute(f"COPY {_escape_name(rel)} FROM '{rel_csv}' (header=true)")

    def _build_property_graph(self, conn: Any) -> None:
        """Typed node and relationship tables straight from the cleaned CSVs kept in the store."""
        assert self.mapping is not None and self.kg.store_path is not None
        tables = self.kg.store_path / STORE_DIR
        for node in self.mapping["nodes"]:
            cols = ", ".join(f"{_escape_name(p)} {_TYPES[t]}" for p, t in node["properties"].items())
            label = _escape_name(node["label"])
            conn.execute(f"CREATE NODE TABLE {label}({cols}, PRIMARY KEY({_escape_name(node['key'])}))")
            conn.execute(
                f"COPY {label} FROM '{tables / ('node_' + node['label'] + '.csv')}' (header=true, escape='\"')"
            )
        for rel in self.mapping["relationships"]:
            props = "".join(f", {_escape_name(p)} {_TYPES[t]}" for p, t in rel.get("properties", {}).items())
            name = _escape_name(rel["type"])
            src, dst = _escape_name(rel["from"]["label"]), _escape_name(rel["to"]["label"])
            conn.execute(f"CREATE REL TABLE {name}(FROM {src} TO {dst}{props})")
            conn.execute(f"COPY {name} FROM '{tables / ('rel_' + rel['type'] + '.csv')}' (header=true, escape='\"')")

    # ------------------------------------------------------------------ queries
    def _rewrite(self, tokens: list[Token], params: dict[str, Any] | None) -> tuple[list[Token], dict[str, Any] | None]:
        return ladybug_dialect(tokens, self._labels()), params

    def _execute(
        self, query: str, params: dict[str, Any] | None, timeout: float, row_cap: int
    ) -> tuple[list[str], list[list[Any]], bool]:
        return self._engine.execute(query, params, timeout, row_cap)

    def _labels(self) -> set[str]:
        if self.mapping is None:
            return set(self.tables)
        return {n["label"] for n in self.mapping["nodes"]} | {r["type"] for r in self.mapping["relationships"]}

    def schema(self) -> str:
        """Schema description for prompts: labels with typed properties, relationship patterns, dialect notes."""
        if self.mapping is not None:
            lines = ["Node properties:"]
            for node in self.mapping["nodes"]:
                props = ", ".join(f"{p}: {t}" for p, t in node["properties"].items())
                lines.append(f"- {node['label']}: {props}")
            lines.append("Relationships:")
            for rel in self.mapping["relationships"]:
                props = ", ".join(f"{p}: {t}" for p, t in rel.get("properties", {}).items())
                lines.append(
                    f"(:{rel['from']['label']})-[:{rel['type']}{' {' + props + '}' if props else ''}]->"
                    f"(:{rel['to']['label']})"
                )
            return "\n".join(lines)
        counts = np.bincount(self.kg.rels, minlength=self.kg.num_relations)
        rels = "\n".join(
            f"(:{NODE_TABLE})-[:{r}]->(:{NODE_TABLE})  # {int(c):,} edges" for r, c in zip(self.kg.relations, counts)
        )
        return f"Node label: {NODE_TABLE} (properties: id INT64, name STRING)\nRelationships:\n{rels}\n{DIALECT_NOTES}"

    def close(self) -> None:
        self._engine.close()
        if self._remove_temp is not None:
            self._remove_temp()
