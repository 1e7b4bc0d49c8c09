"""Property graphs (labelled nodes and typed relationships with properties) from CSV files + a JSON mapping.

The mapping names, per node label, its CSV file, key column, name column and typed properties, and per
relationship type the file and the key columns of its two ends (plus typed properties).  A property graph is
kept twice: as typed tables for the Cypher backends (so Text2Cypher queries written for the original
database run), and as a :class:`KnowledgeGraph` of triples for every other method — each node becomes an
entity named by its name property, each relationship a triple, and the properties listed under
``attribute_triples`` become ``(node, property, value)`` triples.
"""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgrag.errors import KGFormatError, KGStoreError
from kgrag.graph.backends.guard import quote_name
from kgrag.graph.io.builder import TripleBuilder
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.store import digest_files, read_manifest, replace_derived

TYPES = {"STRING", "INTEGER", "FLOAT", "BOOLEAN"}
STORE_DIR = "property_graph"
TABLES_TAG = "tag.json"  # digests of the tables and the KG checksum they were saved for


def _convert(value: str, kind: str) -> str:
    """CSV cell as the typed value Ladybug's COPY expects ('' = NULL for non-strings)."""
    if kind == "STRING":
        return value
    if value in ("", "NULL"):
        return ""
    if kind == "BOOLEAN":
        return "true" if value.strip().lower() in ("1", "true", "yes") else "false"
    if kind == "INTEGER":
        return str(int(float(value)))
    return str(float(value))


def _typed_cells(row: dict[str, str | None], props: dict[str, str], path: Path, line: int) -> list[str]:
    """``row``'s ``props`` as typed cells; a value that is not its declared type is a ``path:line`` error."""
    cells = []
    for prop, kind in props.items():
        value = row.get(prop) or ""
        try:
            cells.append(_convert(value, kind))
        except (ValueError, OverflowError):
            raise KGFormatError(str(path), line, f"column {prop!r}: {value!r} is not {kind}") from None
    return cells


def _schema_names(mapping: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every label, relationship type and property name of a mapping, with what it is: each is written into
    Cypher kgrag runs (loading a Bolt server, the text2cypher value index), so each must quote cleanly."""
    names: list[tuple[str, Any]] = []
    for node in mapping.get("nodes", []):
        names.append(("label", node.get("label")))
        names += [(f"property of {node.get('label')}", p) for p in node.get("properties", {})]
        names += [(f"{key} column of {node.get('label')}", node.get(key)) for key in ("key", "name") if key in node]
    for rel in mapping.get("relationships", []):
        names.append(("relationship type", rel.get("type")))
        names += [(f"property of {rel.get('type')}", p) for p in rel.get("properties", {})]
    return names


@dataclass
class PropertyGraph:
    """A mapping plus the directory holding its CSV files."""

    mapping: dict[str, Any]
    directory: Path

    @classmethod
    def load(cls, mapping_path: str | Path, directory: str | Path | None = None) -> PropertyGraph:
        path = Path(mapping_path)
        try:
            mapping = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise KGFormatError(str(path), None, f"cannot read the mapping ({exc})") from None
        for node in mapping.get("nodes", []):
            bad = {t for t in node.get("properties", {}).values()} - TYPES
            if bad:
                raise KGFormatError(str(path), None, f"label {node.get('label')}: unknown types {sorted(bad)}")
        for what, name in _schema_names(mapping):
            try:
                quote_name(str(name))
            except ValueError as exc:
                raise KGFormatError(str(path), None, f"{what}: {exc}") from None
        return cls(mapping, Path(directory) if directory else path.parent)

    def _rows(self, file: str) -> tuple[list[str], list[dict[str, str]]]:
        path = self.directory / file
        if not path.exists():
            raise KGFormatError(str(path), None, "file named in the mapping does not exist")
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
            return list(reader.fieldnames or []), rows

    def node_names(self) -> dict[tuple[str, str], str]:
        """(label, key) → entity name (name property, with the label's prefix; clashes get ' (Label)')."""
        names: dict[tuple[str, str], str] = {}
        used: dict[str, str] = {}
        for node in self.mapping["nodes"]:
            _, rows = self._rows(node["file"])
            for i, row in enumerate(rows, start=2):
                key, name = row.get(node["key"]), row.get(node["name"])
                if not key or not name:
                    raise KGFormatError(str(self.directory / node["file"]), i, f"empty {node['key']} or {node['name']}")
                name = node.get("name_prefix", "") + name
                if used.get(name, node["label"]) != node["label"]:
                    name = f"{name} ({node['label']})"
                used[name] = node["label"]
                names[(node["label"], key)] = name
        return names

    def to_knowledge_graph(self) -> KnowledgeGraph:
        builder = TripleBuilder(source=str(self.directory))
        names = self.node_names()
        for node in self.mapping["nodes"]:
            for name in (n for (label, _), n in names.items() if label == node["label"]):
                builder.add_entity(name)
        for rel in self.mapping["relationships"]:
            _, rows = self._rows(rel["file"])
            src, dst = rel["from"], rel["to"]
            for row in rows:
                a, b = names.get((src["label"], row[src["column"]])), names.get((dst["label"], row[dst["column"]]))
                if a and b:
                    builder.add(a, rel["type"], b)
        attributes = self.mapping.get("attribute_triples", {})
        for node in self.mapping["nodes"]:
            props = attributes.get(node["label"], [])
            if not props:
                continue
            _, rows = self._rows(node["file"])
            for row in rows:
                name = names[(node["label"], row[node["key"]])]
                for prop in props:
                    value = (row.get(prop) or "").strip()
                    if value and value != "NULL":
                        builder.add(name, prop, value)
        return builder.build()

    def save_tables(self, store: Path) -> Path:
        """Write typed, cleaned CSVs + the mapping into ``store/property_graph`` (atomically).

        Pass it as ``save_kg(..., derive=graph.save_tables)`` so the tables are written into the new store before
        it replaces the old one: a bad value then leaves the old store whole, not a new one without tables.
        """
        target = store / STORE_DIR
        tmp = Path(tempfile.mkdtemp(prefix=f".{STORE_DIR}.tmp-", dir=store))
        try:
            for node in self.mapping["nodes"]:
                props = node["properties"]
                _, rows = self._rows(node["file"])
                with open(tmp / f"node_{node['label']}.csv", "w", encoding="utf-8", newline="") as fh:
                    writer = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
                    writer.writerow(list(props))
                    seen: set[str] = set()
                    for line, row in enumerate(rows, start=2):
                        if row[node["key"]] in seen:
                            continue
                        seen.add(row[node["key"]])
                        writer.writerow(_typed_cells(row, props, self.directory / node["file"], line))
            for rel in self.mapping["relationships"]:
                props = rel.get("properties", {})
                _, rows = self._rows(rel["file"])
                with open(tmp / f"rel_{rel['type']}.csv", "w", encoding="utf-8", newline="") as fh:
                    writer = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
                    writer.writerow(["from", "to", *props])
                    for line, row in enumerate(rows, start=2):
                        ends = row.get(rel["from"]["column"]), row.get(rel["to"]["column"])
                        if ends[0] and ends[1]:
                            writer.writerow([*ends, *_typed_cells(row, props, self.directory / rel["file"], line)])
            (tmp / "mapping.json").write_text(json.dumps(self.mapping, indent=2), "utf-8")
            tag = {"kg_checksum": read_manifest(store)["checksum"], "files": digest_files(tmp)}
            (tmp / TABLES_TAG).write_text(json.dumps(tag), "utf-8")
            replace_derived(tmp, target, "mapping.json")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return target


def read_stored_mapping(store: Path, kg_checksum: str | None) -> dict[str, Any] | None:
    """The property-graph mapping saved in ``store``, if any, once its tables are checked.

    The Cypher backends load these tables as they are, and they cannot be rebuilt from the store (they come
    from the user's CSV files), so tables that differ from the digests recorded by ``save_tables`` — or that
    were saved for another KG — are an error rather than data.
    """
    tables = store / STORE_DIR
    if not (tables / "mapping.json").exists():
        return None
    try:
        tag = json.loads((tables / TABLES_TAG).read_text("utf-8"))
    except (OSError, ValueError):
        tag = None
    if (
        not isinstance(tag, dict)
        or tag.get("kg_checksum") != kg_checksum
        or tag.get("files") != digest_files(tables, exclude=frozenset({TABLES_TAG}))
    ):
        raise KGStoreError(
            f"{tables}: the property-graph tables differ from what `kgrag ingest` wrote for this KG "
            "(edited, damaged or older than this kgrag); re-run `kgrag ingest`"
        )
    return json.loads((tables / "mapping.json").read_text("utf-8"))


def stored_mapping(kg: KnowledgeGraph) -> dict[str, Any] | None:
    """The property-graph mapping saved with a KG store, if the KG came from a property graph (checked once
    per loaded KG, see :func:`read_stored_mapping`)."""
    if kg.store_path is None:
        return None
    store = kg.store_path
    return kg.resources.get(("stored_mapping",), lambda: read_stored_mapping(store, kg.checksum))
