"""Building a KG from objects already in memory: a pandas DataFrame or a networkx graph."""

from __future__ import annotations

from typing import Any

import numpy as np

from kgrag.graph.io.builder import TripleBuilder
from kgrag.graph.kg import KnowledgeGraph


def load_dataframe(df: Any, head: str = "head", relation: str = "relation", tail: str = "tail") -> KnowledgeGraph:
    """Build a KG from a pandas DataFrame; errors name the row as ``<DataFrame>:ROW`` (1-based)."""
    builder = TripleBuilder(source="<DataFrame>")
    columns = [str(c) for c in df.columns]
    for choice, what in ((head, "head"), (relation, "relation"), (tail, "tail")):
        if choice not in df.columns:
            raise builder.fail(None, f"unknown {what} column {choice!r}; columns are: {', '.join(columns)}")
    if len(df) == 0:
        raise builder.fail(None, "the DataFrame has no rows")
    cols = []
    for choice, what in ((head, "head"), (relation, "relation"), (tail, "tail")):
        series = df[choice]
        missing = series.isna().to_numpy()
        if missing.any():
            raise builder.fail(int(np.argmax(missing)) + 1, f"missing value in {what} column {choice!r}")
        values = series.astype(str).tolist()
        cols.append(values)
    add = builder.add
    for i, (h, r, t) in enumerate(zip(*cols), start=1):
        add(h, r, t, i)
    return builder.build()


def load_networkx(graph: Any, relation_attr: str = "relation") -> KnowledgeGraph:
    """Build a KG from a networkx (Multi)(Di)Graph.

    The relation of an edge is its ``relation_attr`` attribute, else its ``label`` or ``type`` attribute, else
    (for multigraphs) its string key.  A node's name is its ``name`` attribute if set, else ``str(node)``.
    """
    builder = TripleBuilder(source="<networkx graph>")
    names = {node: str(data.get("name", node)) for node, data in graph.nodes(data=True)}
    for node in graph.nodes:
        builder.add_entity(names[node])
    if graph.is_multigraph():
        edges = ((u, v, k, d) for u, v, k, d in graph.edges(keys=True, data=True))
    else:
        edges = ((u, v, None, d) for u, v, d in graph.edges(data=True))
    for i, (u, v, key, data) in enumerate(edges, start=1):
        rel = data.get(relation_attr, data.get("label", data.get("type")))
        if rel is None and isinstance(key, str):
            rel = key
        if rel is None:
            raise builder.fail(i, f"edge ({u!r}, {v!r}) has no {relation_attr!r} attribute")
        builder.add(names[u], str(rel), names[v], i)
    return builder.build()
