"""Names from a user's schema written into Cypher that kgrag runs trusted (no guard): they must quote cleanly.

A property graph's labels, relationship types and property names come from the user's mapping file or server.
kgrag writes them into queries it runs with ``trusted=True`` (the text2cypher value index, loading a Bolt
server); a name that closes its backtick quote early would turn the rest of it into Cypher — on FalkorDB a
write, since its read transactions execute writes.
"""

from __future__ import annotations

import json

import pytest

from kgrag.errors import KGFormatError
from kgrag.graph.backends.base import CypherResult
from kgrag.graph.backends.guard import quote_name
from kgrag.graph.property_graph import PropertyGraph
from kgrag.methods.text2cypher.schema import GraphSchema, RelationshipType
from kgrag.methods.text2cypher.values import ValueIndex

EVIL = "name AS v LIMIT 1 UNION ALL MATCH (q:Entity) SET q.pwned = 1 RETURN 1 AS v //"


@pytest.mark.parametrize("name", ["a`b", "x` RETURN 1 //", "a\nb", "a\x00b", ""])
def test_a_name_that_cannot_be_quoted_is_refused(name):
    with pytest.raises(ValueError):
        quote_name(name)


def test_plain_and_spaced_names_are_backticked():
    assert quote_name("unitPrice") == "`unitPrice`"
    assert quote_name(EVIL) == f"`{EVIL}`"  # inside one quoted name it is only a (strange) name


class Recorder:
    """A backend that records the trusted queries it is given and returns one string row."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def run(self, query: str, *, trusted: bool = False, row_cap: int = 100, timeout: float | None = None):
        self.queries.append(query)
        return CypherResult(query, ["v"], [["Seafood"]])


def test_the_value_index_quotes_schema_names_and_skips_unquotable_ones():
    schema = GraphSchema(
        {"Category": {EVIL: "STRING", "bad`name": "STRING", "count": "INTEGER"}},
        [RelationshipType("IN`X", "Category", "Category", {"note": "STRING"})],
    )
    backend = Recorder()
    ValueIndex.from_backend(backend, schema)
    assert backend.queries == [f"MATCH (x:`Category`) RETURN DISTINCT x.`{EVIL}` LIMIT 20001"]


def test_a_mapping_with_a_name_that_cannot_be_quoted_is_refused(tmp_path):
    mapping = {
        "nodes": [{"label": "Product", "file": "p.csv", "key": "id", "name": "name", "properties": {"a`b": "STRING"}}],
        "relationships": [],
    }
    path = tmp_path / "mapping.json"
    path.write_text(json.dumps(mapping))
    with pytest.raises(KGFormatError, match="property of Product"):
        PropertyGraph.load(path)
