"""Graph algorithms every retrieval method shares, vectorised over the KG's CSR arrays.

All functions take entity ids as integer arrays and return numpy arrays of ids (triple ids index
``kg.heads/kg.rels/kg.tails``).  No function loops over edges in Python: a step over a frontier of
nodes gathers all their incident edges with one ``np.repeat``-based range expansion.

Directions: ``"out"`` follows head→tail, ``"in"`` tail→head, ``"both"`` treats the KG as undirected.
Relation filters in ``k_hop``/``shortest_paths``/``simple_paths``/``personalized_pagerank`` name *base*
relations (allowed in whichever direction is being followed); ``follow_relation_path`` takes *directed*
relation ids, where ``r + num_relations`` (``<rel>_inv``) walks ``r`` backwards.

One module per family (the results types, the edge primitives, neighbourhoods, relation paths, shortest and
simple paths, PageRank); this package is the one import users need.
"""

from __future__ import annotations

from kgrag.graph.algorithms.edges import expand_ranges, incident_edges, relation_edges, reversed_relation
from kgrag.graph.algorithms.neighbourhood import k_hop
from kgrag.graph.algorithms.pagerank import personalized_pagerank, seppr, transition_matrix
from kgrag.graph.algorithms.relation_paths import follow_relation_path
from kgrag.graph.algorithms.results import IdsLike, Neighborhood, Paths, RankedNodes, RelationPathResult
from kgrag.graph.algorithms.shortest_paths import shortest_path_lengths, shortest_paths, weighted_shortest_paths
from kgrag.graph.algorithms.simple_paths import simple_paths

__all__ = [
    "IdsLike",
    "Neighborhood",
    "Paths",
    "RankedNodes",
    "RelationPathResult",
    "expand_ranges",
    "follow_relation_path",
    "incident_edges",
    "k_hop",
    "personalized_pagerank",
    "relation_edges",
    "reversed_relation",
    "seppr",
    "shortest_path_lengths",
    "shortest_paths",
    "simple_paths",
    "transition_matrix",
    "weighted_shortest_paths",
]
