"""Property-based checks of the vectorised graph algorithms against networkx or brute-force references.

Every test draws a small random KG (2..25 entities, 1..4 relations, 0..60 triples, self-loops and
parallel triples allowed) and compares the numpy implementation in :mod:`kgrag.graph.algorithms` with an
independent reference: networkx where it has the same algorithm, plain Python loops over the triples
otherwise.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.graph.algorithms import (
    Paths,
    expand_ranges,
    follow_relation_path,
    k_hop,
    personalized_pagerank,
    shortest_path_lengths,
    shortest_paths,
    simple_paths,
    weighted_shortest_paths,
)
from kgrag.graph.kg import KnowledgeGraph

SETTINGS = settings(max_examples=60, deadline=None)
DIRECTIONS = st.sampled_from(["both", "out", "in"])
BIG = 10**6


# ---------------------------------------------------------------------- strategies and helpers
@st.composite
def kgs(draw, max_entities=25, max_relations=4, max_triples=60):
    """A random KG built from raw id triples (duplicates are dropped by the constructor)."""
    n_e = draw(st.integers(2, max_entities))
    n_r = draw(st.integers(1, max_relations))
    m = draw(st.integers(0, max_triples))  # drawn first so that dense graphs are common
    raw = draw(
        st.lists(
            st.tuples(st.integers(0, n_e - 1), st.integers(0, n_r - 1), st.integers(0, n_e - 1)),
            min_size=m,
            max_size=m,
        )
    )
    heads, rels, tails = (np.array([t[i] for t in raw], dtype=np.int64) for i in range(3))
    return KnowledgeGraph([f"e{i}" for i in range(n_e)], [f"r{j}" for j in range(n_r)], heads, rels, tails)


def id_sets(n, min_size=1, max_size=4):
    return st.lists(st.integers(0, n - 1), min_size=min_size, max_size=max_size, unique=True)


def relation_subsets(kg):
    """``None`` (no filter) or a non-empty subset of base relation ids."""
    return st.none() | st.lists(st.integers(0, kg.num_relations - 1), min_size=1, unique=True)


def triples(kg, relations=None):
    """``(tid, head, rel, tail)`` as Python ints, optionally only the given base relations."""
    allowed = None if relations is None else set(relations)
    return [
        (tid, h, r, t)
        for tid, (h, r, t) in enumerate(zip(kg.heads.tolist(), kg.rels.tolist(), kg.tails.tolist()))
        if allowed is None or r in allowed
    ]


def walk_graph(kg, direction, relations=None, weights=None):
    """The KG as networkx sees a walk in ``direction``: edge key = triple id, optional ``weight``."""
    graph = nx.MultiGraph() if direction == "both" else nx.MultiDiGraph()
    graph.add_nodes_from(range(kg.num_entities))
    for tid, h, _, t in triples(kg, relations):
        u, v = (t, h) if direction == "in" else (h, t)
        attrs = {} if weights is None else {"weight": float(weights[tid])}
        graph.add_edge(u, v, key=tid, **attrs)
    return graph


def simple_graph(kg, direction, relations=None):
    """Like :func:`walk_graph` but with parallel edges collapsed (Graph / DiGraph)."""
    return (
        nx.Graph(walk_graph(kg, direction, relations))
        if direction == "both"
        else nx.DiGraph(walk_graph(kg, direction, relations))
    )


def pagerank_graph(kg, direction, relations=None):
    """MultiDiGraph for PageRank: every triple once (``out``) or in both directions (``both``)."""
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(range(kg.num_entities))
    for _, h, _, t in triples(kg, relations):
        if direction in ("out", "both"):
            graph.add_edge(h, t)
        if direction in ("in", "both"):
            graph.add_edge(t, h)
    return graph


def step_ok(kg, u, v, tid, direction):
    """Whether triple ``tid`` joins ``u`` to ``v`` when walking in ``direction``."""
    h, t = int(kg.heads[tid]), int(kg.tails[tid])
    return {"out": (h, t) == (u, v), "in": (h, t) == (v, u), "both": (h, t) in ((u, v), (v, u))}[direction]


def assert_valid_walk(kg, nodes, edges, direction, relations=None):
    assert len(nodes) == len(edges) + 1
    for u, v, tid in zip(nodes, nodes[1:], edges):
        assert 0 <= tid < kg.num_triples
        assert step_ok(kg, u, v, tid, direction), (nodes, edges)
        if relations is not None:
            assert int(kg.rels[tid]) in set(relations)


def unpack(paths: Paths):
    """Check the padded-array layout of ``paths`` and return it as a list of (nodes, edges) tuples."""
    assert paths.nodes.shape[0] == paths.edges.shape[0] == len(paths.lengths)
    if len(paths):
        assert paths.nodes.shape[1] == paths.edges.shape[1] + 1
        assert paths.lengths.max() <= paths.edges.shape[1]
    out = []
    for i, (nodes, edges) in enumerate(paths):
        n = int(paths.lengths[i])
        assert (paths.nodes[i, n + 1 :] == -1).all() and (paths.edges[i, n:] == -1).all()
        assert min(nodes, default=0) >= 0 and min(edges, default=0) >= 0
        out.append((tuple(nodes), tuple(edges)))
    if len(paths):
        assert paths.endpoints().tolist() == [p[0][-1] for p in out]
    return out


def multi_source_lengths(graph, sources, cutoff=None):
    """Hop distances from the nearest source (networkx BFS, min over sources)."""
    best: dict[int, int] = {}
    for s in sources:
        for node, d in nx.single_source_shortest_path_length(graph, s, cutoff=cutoff).items():
            best[node] = min(d, best.get(node, d))
    return best


def dense(result, n):
    x = np.zeros(n)
    x[result.nodes] = result.scores
    return x


# ---------------------------------------------------------------------- 1. personalized PageRank
def _check_ranking(res):
    assert (res.scores > 0).all()
    assert (np.diff(res.scores) <= 0).all()
    assert len(np.unique(res.nodes)) == len(res.nodes)
    assert res.converged


@SETTINGS
@given(data=st.data(), direction=st.sampled_from(["both", "out"]), damping=st.floats(0.05, 0.95))
def test_ppr_matches_networkx(data, direction, damping):
    """Full PPR vector (uniform or weighted seeds) equals networkx.pagerank with a personalization vector."""
    kg = data.draw(kgs())
    n = kg.num_entities
    seed_ids = data.draw(id_sets(n))
    style = data.draw(st.sampled_from(["ids", "dict", "weights"]))
    seed_w = data.draw(st.lists(st.floats(0.1, 10.0), min_size=len(seed_ids), max_size=len(seed_ids)))
    if style == "ids":
        res = personalized_pagerank(kg, seed_ids, damping=damping, tol=1e-12, max_iter=10000, direction=direction)
        personalization = dict.fromkeys(seed_ids, 1.0)
    elif style == "dict":
        seeds = dict(zip(seed_ids, seed_w))
        res = personalized_pagerank(kg, seeds, damping=damping, tol=1e-12, max_iter=10000, direction=direction)
        personalization = seeds
    else:
        res = personalized_pagerank(
            kg, np.array(seed_ids), np.array(seed_w), damping=damping, tol=1e-12, max_iter=10000, direction=direction
        )
        personalization = dict(zip(seed_ids, seed_w))
    expected = nx.pagerank(
        pagerank_graph(kg, direction), alpha=damping, personalization=personalization, tol=1e-14, max_iter=100_000
    )
    _check_ranking(res)
    np.testing.assert_allclose(dense(res, n), [expected[i] for i in range(n)], atol=1e-9)
    assert dense(res, n).sum() == pytest.approx(1.0)


@SETTINGS
@given(data=st.data(), direction=st.sampled_from(["both", "out"]), damping=st.floats(0.05, 0.95))
def test_ppr_relation_filter_matches_networkx(data, direction, damping):
    """PPR with a relation filter equals networkx.pagerank on the graph of only those triples."""
    kg = data.draw(kgs())
    n = kg.num_entities
    seeds = data.draw(id_sets(n))
    rels = data.draw(st.lists(st.integers(0, kg.num_relations - 1), min_size=1, unique=True))
    res = personalized_pagerank(
        kg, seeds, damping=damping, tol=1e-12, max_iter=10000, direction=direction, relations=rels
    )
    expected = nx.pagerank(
        pagerank_graph(kg, direction, rels),
        alpha=damping,
        personalization=dict.fromkeys(seeds, 1.0),
        tol=1e-14,
        max_iter=100_000,
    )
    _check_ranking(res)
    np.testing.assert_allclose(dense(res, n), [expected[i] for i in range(n)], atol=1e-9)


@SETTINGS
@given(data=st.data(), direction=st.sampled_from(["both", "out"]), damping=st.floats(0.05, 0.95))
def test_ppr_restrict_to_matches_induced_subgraph(data, direction, damping):
    """``restrict_to`` equals networkx.pagerank on the induced subgraph; seeds outside it are ignored."""
    kg = data.draw(kgs())
    n = kg.num_entities
    local = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1)))
    inside = data.draw(st.lists(st.sampled_from(local), min_size=1, max_size=3, unique=True))
    outside = (
        data.draw(st.lists(st.integers(0, n - 1).filter(lambda e: e not in local), max_size=2, unique=True))
        if len(local) < n
        else []
    )
    seeds = {e: data.draw(st.floats(0.1, 10.0)) for e in inside + outside}
    res = personalized_pagerank(
        kg,
        seeds,
        damping=damping,
        tol=1e-12,
        max_iter=10000,
        top_k=None,
        direction=direction,
        restrict_to=np.array(local),
    )
    sub = pagerank_graph(kg, direction).subgraph(local)
    expected = nx.pagerank(
        sub, alpha=damping, personalization={e: seeds[e] for e in inside}, tol=1e-14, max_iter=100_000
    )
    _check_ranking(res)
    assert set(res.nodes.tolist()) <= set(local)
    got = dense(res, n)
    np.testing.assert_allclose(got[local], [expected[i] for i in local], atol=1e-9)
    assert got.sum() == pytest.approx(1.0)


@SETTINGS
@given(data=st.data(), k=st.integers(1, 10))
def test_ppr_top_k_is_prefix_of_full_ranking(data, k):
    """``top_k`` returns the k best entities (ties broken by id), i.e. a prefix of the full ranking."""
    kg = data.draw(kgs())
    seeds = data.draw(id_sets(kg.num_entities))
    full = personalized_pagerank(kg, seeds, tol=1e-12, max_iter=10000)
    top = personalized_pagerank(kg, seeds, tol=1e-12, max_iter=10000, top_k=k)
    assert top.nodes.tolist() == full.nodes[:k].tolist()
    np.testing.assert_allclose(top.scores, full.scores[:k])


# ---------------------------------------------------------------------- 2. shortest path lengths
@SETTINGS
@given(data=st.data(), direction=DIRECTIONS)
def test_bfs_lengths_match_networkx(data, direction):
    """BFS hop distances (with relation filter and max_length) equal networkx shortest path lengths."""
    kg = data.draw(kgs())
    n = kg.num_entities
    sources = data.draw(id_sets(n))
    rels = data.draw(relation_subsets(kg))
    max_length = data.draw(st.none() | st.integers(1, 5))
    got = shortest_path_lengths(kg, sources, direction=direction, relations=rels, max_length=max_length)
    expected = multi_source_lengths(walk_graph(kg, direction, rels), sources, cutoff=max_length)
    assert got.dtype == np.int32
    assert got.tolist() == [expected.get(i, -1) for i in range(n)]


@SETTINGS
@given(data=st.data(), direction=DIRECTIONS)
def test_weighted_lengths_match_networkx_dijkstra(data, direction):
    """Weighted distances equal networkx multi-source Dijkstra (parallel triples: the lightest counts)."""
    kg = data.draw(kgs())
    n = kg.num_entities
    sources = data.draw(id_sets(n))
    rels = data.draw(relation_subsets(kg))
    weights = np.array(
        data.draw(st.lists(st.floats(0.1, 5.0), min_size=kg.num_triples, max_size=kg.num_triples)), dtype=np.float64
    )
    got = shortest_path_lengths(kg, sources, direction=direction, relations=rels, weights=weights)
    expected = nx.multi_source_dijkstra_path_length(walk_graph(kg, direction, rels, weights), set(sources))
    np.testing.assert_allclose(got, [expected.get(i, math.inf) for i in range(n)], rtol=1e-9)


# ---------------------------------------------------------------------- 3. shortest paths
def _multiplicity(kg, u, v, direction):
    return sum(step_ok(kg, u, v, tid, direction) for tid in range(kg.num_triples))


def _expected_shortest(kg, sources, targets, direction, max_length):
    """{node sequence: number of triple sequences} over all shortest source→target paths (networkx)."""
    graph = simple_graph(kg, direction)
    per_source = {s: nx.single_source_shortest_path_length(graph, s) for s in sources}
    expected: Counter = Counter()
    for t in targets:
        if t in sources:
            continue
        ds = {s: per_source[s][t] for s in sources if t in per_source[s]}
        if not ds or min(ds.values()) > max_length:
            continue
        best = min(ds.values())
        for s in (s for s, d in ds.items() if d == best):
            for seq in nx.all_shortest_paths(graph, s, t):
                steps = itertools.pairwise(seq)
                expected[tuple(seq)] = math.prod(_multiplicity(kg, u, v, direction) for u, v in steps)
    return expected


@SETTINGS
@given(data=st.data(), direction=DIRECTIONS)
def test_shortest_paths_match_networkx(data, direction):
    """With big caps: exactly all shortest source→target walks, one per triple sequence, valid and minimal."""
    kg = data.draw(kgs())
    n = kg.num_entities
    sources = data.draw(id_sets(n))
    targets = data.draw(id_sets(n, max_size=6))
    max_length = data.draw(st.integers(1, 8))
    res = shortest_paths(kg, sources, targets, direction=direction, max_length=max_length, max_paths=BIG)
    dist = shortest_path_lengths(kg, sources, direction=direction)
    got = unpack(res)
    assert not res.truncated
    assert len(set(got)) == len(got)  # no path twice
    for nodes, edges in got:
        assert nodes[0] in sources and nodes[-1] in targets
        assert len(edges) == dist[nodes[-1]] <= max_length
        assert_valid_walk(kg, nodes, edges, direction)
    expected = _expected_shortest(kg, sources, targets, direction, max_length)
    assert Counter(nodes for nodes, _ in got) == expected


@SETTINGS
@given(data=st.data(), direction=DIRECTIONS)
def test_shortest_paths_caps(data, direction):
    """Caps keep min(count, per_target) paths per target, at most max_paths overall; truncated says so."""
    kg = data.draw(kgs())
    n = kg.num_entities
    sources = data.draw(id_sets(n))
    targets = data.draw(id_sets(n, max_size=6))
    full = unpack(shortest_paths(kg, sources, targets, direction=direction, max_paths=BIG))
    # caps around the actual counts, so that the "exactly at the cap" boundary is exercised
    max_paths = data.draw(st.just(BIG) | st.integers(1, len(full) + 1))
    most = max(Counter(nodes[-1] for nodes, _ in full).values(), default=0)
    per_target = data.draw(st.none() | st.integers(1, 2) | st.integers(1, most + 1))
    res = shortest_paths(
        kg, sources, targets, direction=direction, max_paths=max_paths, max_paths_per_target=per_target
    )
    got = unpack(res)
    cap = per_target or max_paths
    full_counts = Counter(nodes[-1] for nodes, _ in full)
    kept = sum(min(c, cap) for c in full_counts.values())
    assert set(got) <= set(full)
    assert len(got) == min(kept, max_paths)
    assert all(c <= cap for c in Counter(nodes[-1] for nodes, _ in got).values())
    assert res.truncated == (any(c > cap for c in full_counts.values()) or kept > max_paths)
    # one path per target: every reachable target exactly once
    one = shortest_paths(kg, sources, targets, direction=direction, max_paths=BIG, max_paths_per_target=1)
    got_one = unpack(one)
    assert set(got_one) <= set(full)
    assert sorted(nodes[-1] for nodes, _ in got_one) == sorted(full_counts)
    assert one.truncated == any(c > 1 for c in full_counts.values())


# ---------------------------------------------------------------------- 4. weighted shortest paths
@SETTINGS
@given(data=st.data(), direction=DIRECTIONS)
def test_weighted_shortest_paths_have_dijkstra_weight(data, direction):
    """One valid path per reachable non-source target whose weight equals the Dijkstra distance."""
    kg = data.draw(kgs())
    n = kg.num_entities
    sources = data.draw(id_sets(n))
    targets = data.draw(id_sets(n, max_size=6))
    rels = data.draw(relation_subsets(kg))
    weights = np.array(
        data.draw(st.lists(st.floats(0.1, 5.0), min_size=kg.num_triples, max_size=kg.num_triples)), dtype=np.float64
    )
    res = weighted_shortest_paths(kg, sources, targets, weights, direction=direction, relations=rels)
    expected = nx.multi_source_dijkstra_path_length(walk_graph(kg, direction, rels, weights), set(sources))
    got = unpack(res)
    assert sorted(nodes[-1] for nodes, _ in got) == sorted(t for t in targets if t in expected and t not in sources)
    for nodes, edges in got:
        assert nodes[0] in sources
        assert_valid_walk(kg, nodes, edges, direction, rels)
        assert sum(weights[list(edges)]) == pytest.approx(expected[nodes[-1]], rel=1e-9)


# ---------------------------------------------------------------------- 5. k-hop neighbourhoods
@SETTINGS
@given(data=st.data(), direction=DIRECTIONS, hops=st.integers(0, 4))
def test_k_hop_matches_networkx(data, direction, hops):
    """Nodes/distances equal networkx BFS (cutoff=hops); edges: allowed triples walked from dist < hops."""
    kg = data.draw(kgs())
    n = kg.num_entities
    seeds = data.draw(id_sets(n))
    rels = data.draw(relation_subsets(kg))
    res = k_hop(kg, seeds, hops, direction=direction, relations=rels)
    expected = multi_source_lengths(walk_graph(kg, direction, rels), seeds, cutoff=hops)
    assert res.nodes.tolist() == sorted(expected)
    assert res.distance.tolist() == [expected[i] for i in sorted(expected)]

    def near(e):
        return e in expected and expected[e] < hops

    want = sorted(
        tid
        for tid, h, _, t in triples(kg, rels)
        if (direction in ("out", "both") and near(h)) or (direction in ("in", "both") and near(t))
    )
    assert res.edges.tolist() == want


# ---------------------------------------------------------------------- 6. relation paths
def _brute_reached(kg, sources, path):
    n_rel = kg.num_relations
    cur = set(sources)
    for rid in path:
        nxt = set()
        for _, h, r, t in triples(kg):
            if rid < n_rel and r == rid and h in cur:
                nxt.add(t)
            if rid >= n_rel and r == rid - n_rel and t in cur:
                nxt.add(h)
        cur = nxt
    return sorted(cur)


def _brute_walks(kg, sources, path):
    n_rel = kg.num_relations
    walks = [((s,), ()) for s in sorted(set(sources))]
    for rid in path:
        longer = []
        for nodes, edges in walks:
            for tid, h, r, t in triples(kg):
                if rid < n_rel and r == rid and h == nodes[-1]:
                    longer.append(((*nodes, t), (*edges, tid)))
                if rid >= n_rel and r == rid - n_rel and t == nodes[-1]:
                    longer.append(((*nodes, h), (*edges, tid)))
        walks = longer
    return walks


def _relation_path(data, kg):
    path = data.draw(st.lists(st.integers(0, 2 * kg.num_relations - 1), max_size=3))
    as_names = data.draw(st.booleans())
    return path, [kg.relation_name(r) for r in path] if as_names else path


@SETTINGS
@given(data=st.data())
def test_follow_relation_path_matches_brute_force(data):
    """Reached set and (uncapped) paths equal a brute-force walk over the triples, ``_inv`` included."""
    kg = data.draw(kgs(max_entities=12, max_triples=40))
    sources = data.draw(id_sets(kg.num_entities))
    path, arg = _relation_path(data, kg)
    res = follow_relation_path(kg, sources, arg, max_paths=BIG)
    assert res.reached.tolist() == _brute_reached(kg, sources, path)
    got = unpack(res.paths)
    n_rel = kg.num_relations
    for nodes, edges in got:
        assert nodes[0] in sources and nodes[-1] in res.reached
        assert len(edges) == len(path)
        for u, v, tid, rid in zip(nodes, nodes[1:], edges, path):
            assert int(kg.rels[tid]) == rid % n_rel
            assert step_ok(kg, u, v, tid, "out" if rid < n_rel else "in")
    assert sorted(got) == sorted(_brute_walks(kg, sources, path))
    assert not res.truncated and not res.paths.truncated


@SETTINGS
@given(data=st.data())
def test_follow_relation_path_cap(data):
    """A small max_paths returns min(total, max_paths) complete paths; truncated iff paths were cut."""
    kg = data.draw(kgs(max_entities=12, max_triples=40))
    sources = data.draw(id_sets(kg.num_entities))
    path, arg = _relation_path(data, kg)
    everything = _brute_walks(kg, sources, path)
    max_paths = data.draw(st.integers(1, len(everything) + 1))
    res = follow_relation_path(kg, sources, arg, max_paths=max_paths)
    got = unpack(res.paths)
    assert res.reached.tolist() == _brute_reached(kg, sources, path)
    assert len(got) == min(len(everything), max_paths)
    assert set(got) <= set(everything)
    assert res.truncated == res.paths.truncated == (len(everything) > max_paths)


# ---------------------------------------------------------------------- 7. simple paths
def _nx_simple_paths(kg, sources, targets, direction, max_length, relations=None):
    """{(source, triple ids)} of all simple paths with 1..max_length edges ending in ``targets``."""
    graph = walk_graph(kg, direction, relations)
    found = set()
    for s in sources:
        for edge_path in nx.all_simple_edge_paths(graph, s, set(targets), cutoff=max_length):
            if edge_path:
                found.add((s, tuple(key for _, _, key in edge_path)))
    return found


def _as_keys(got):
    return [(nodes[0], edges) for nodes, edges in got]


def _check_simple(kg, got, sources, targets, direction, max_length, relations=None):
    for nodes, edges in got:
        assert 1 <= len(edges) <= max_length
        assert len(set(nodes)) == len(nodes)
        assert nodes[0] in sources and nodes[-1] in targets
        assert_valid_walk(kg, nodes, edges, direction, relations)


@SETTINGS
@given(data=st.data(), direction=DIRECTIONS, max_length=st.integers(1, 4))
def test_simple_paths_to_targets_match_networkx(data, direction, max_length):
    """With targets and big caps: exactly networkx's simple edge paths of length <= max_length."""
    kg = data.draw(kgs(max_entities=15, max_triples=35))
    n = kg.num_entities
    sources = data.draw(id_sets(n, max_size=3))
    targets = data.draw(id_sets(n, max_size=5))
    rels = data.draw(relation_subsets(kg))
    res = simple_paths(kg, sources, targets, max_length=max_length, max_paths=BIG, direction=direction, relations=rels)
    got = unpack(res)
    _check_simple(kg, got, sources, targets, direction, max_length, rels)
    keys = _as_keys(got)
    assert len(set(keys)) == len(keys)
    assert set(keys) == _nx_simple_paths(kg, sources, targets, direction, max_length, rels)
    assert not res.truncated


@SETTINGS
@given(data=st.data(), direction=DIRECTIONS, max_length=st.integers(1, 3))
def test_simple_paths_without_targets_match_networkx(data, direction, max_length):
    """Without targets: every simple path of 1..max_length edges from the sources."""
    kg = data.draw(kgs(max_entities=15, max_triples=35))
    n = kg.num_entities
    sources = data.draw(id_sets(n, max_size=3))
    res = simple_paths(kg, sources, max_length=max_length, max_paths=BIG, direction=direction)
    got = unpack(res)
    _check_simple(kg, got, sources, range(n), direction, max_length)
    keys = _as_keys(got)
    assert len(set(keys)) == len(keys)
    assert set(keys) == _nx_simple_paths(kg, sources, range(n), direction, max_length)
    assert not res.truncated


@SETTINGS
@given(data=st.data(), direction=DIRECTIONS)
def test_simple_paths_cap(data, direction):
    """A small max_paths returns a subset of at most max_paths paths; truncated whenever some were dropped."""
    kg = data.draw(kgs(max_entities=15, max_triples=35))
    n = kg.num_entities
    sources = data.draw(id_sets(n, max_size=3))
    targets = data.draw(st.none() | id_sets(n, max_size=5))
    full = set(_as_keys(unpack(simple_paths(kg, sources, targets, max_length=3, max_paths=BIG, direction=direction))))
    max_paths = data.draw(st.integers(1, len(full) + 1))
    res = simple_paths(kg, sources, targets, max_length=3, max_paths=max_paths, direction=direction)
    keys = _as_keys(unpack(res))
    assert len(keys) == min(len(full), max_paths)
    assert set(keys) <= full
    if len(full) > max_paths:
        assert res.truncated
    if len(full) < max_paths:
        assert not res.truncated


# ---------------------------------------------------------------------- 8. expand_ranges
@SETTINGS
@given(
    ranges=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 6)), max_size=20),
    dtype=st.sampled_from([np.int32, np.int64]),
)
def test_expand_ranges_matches_python(ranges, dtype):
    """``expand_ranges`` lists every index of every range [start, end) with its owner, in order."""
    starts = np.array([s for s, _ in ranges], dtype=dtype)
    ends = np.array([s + k for s, k in ranges], dtype=dtype)
    owner, index = expand_ranges(starts, ends)
    want = [(i, s + j) for i, (s, k) in enumerate(ranges) for j in range(k)]
    assert owner.tolist() == [o for o, _ in want]
    assert index.tolist() == [x for _, x in want]
