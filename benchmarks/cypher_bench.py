"""Cypher backends: Northwind gold queries on Ladybug, and MetaQA load + 2-hop latency vs in-memory.

Writes benchmarks/results/cypher.json.  Usage: python benchmarks/cypher_bench.py
"""

from __future__ import annotations

import json
import platform
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from kgrag.graph.algorithms import follow_relation_path
from kgrag.graph.backends.ladybug import LadybugBackend
from kgrag.graph.io import load_file
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.property_graph import PropertyGraph

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT.parent / "shared" / "data" / "northwind" / "text2cypher_northwind.jsonl"
MAPPING = ROOT / "src" / "kgrag" / "data" / "northwind" / "mapping.json"
KB = ROOT / "src" / "kgrag" / "data" / "metaqa" / "kb.txt.gz"
OUT = ROOT / "benchmarks" / "results" / "cypher.json"


def northwind(tmp: Path) -> dict:
    graph = PropertyGraph.load(MAPPING)
    store = graph.to_knowledge_graph().save(tmp / "northwind")
    graph.save_tables(store)
    out = {"ladybug": gold_queries(LadybugBackend(KnowledgeGraph.load(store)))}
    try:
        from kgrag.graph.backends.bolt import BoltBackend
        from kgrag.graph.backends.falkordb_local import local_falkordb

        with local_falkordb(tmp / "falkordb-nw") as uri:
            bolt = BoltBackend(uri)
            load = bolt.load_property_graph(store)
            out["falkordb_bolt"] = {"load_seconds": round(load, 2), **gold_queries(bolt)}
            bolt.close()
    except Exception as exc:
        out["falkordb_bolt"] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def gold_queries(db) -> dict:
    """Run every gold Text2Cypher query through the guard on ``db``; shares that run / return rows."""
    pairs = [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]
    outcome: Counter = Counter()
    upstream_ok = Counter()
    errors: Counter = Counter()
    examples = []
    for pair in pairs:
        res = db.run(pair["cypher"], row_cap=1000, timeout=10)
        kind = "rejected" if res.rejected else "error" if not res.ok else "rows" if res.rows else "empty"
        outcome[kind] += 1
        good_upstream = pair["returns_results"] and not pair["syntax_error"] and not pair["timeout"]
        upstream_ok[(good_upstream, kind)] += 1
        if kind in ("error", "rejected"):
            errors[(res.error or "").split(":")[0] + ": " + (res.error or "").split(":")[-1][:60]] += 1
            if len(examples) < 25:
                examples.append({"cypher": pair["cypher"], "error": res.error})
    n = len(pairs)
    n_good = sum(1 for p in pairs if p["returns_results"] and not p["syntax_error"] and not p["timeout"])
    return {
        "pairs": n,
        "outcomes": dict(outcome),
        "share_runs": round((outcome["rows"] + outcome["empty"]) / n, 4),
        "share_returns_rows": round(outcome["rows"] / n, 4),
        "upstream_share_returns_rows_on_neo4j": round(n_good / n, 4),
        "of_upstream_good_returning_rows_here": round(upstream_ok[(True, "rows")] / max(n_good, 1), 4),
        "top_errors": errors.most_common(12),
        "error_examples": examples,
    }


def two_hop(kg: KnowledgeGraph, db, sample: np.ndarray) -> dict:
    """p50 of the same 2-hop question (films sharing a director) on ``db`` and in memory, interleaved."""
    lb_times, mem_times, agree = [], [], 0
    for m in sample:
        name = kg.entities[int(m)]
        t0 = time.perf_counter()
        res = db.run(
            "MATCH (m:Entity {name: $n})-[:directed_by]->(d)<-[:directed_by]-(o) RETURN DISTINCT o.name",
            {"n": name},
            row_cap=10_000,
        )
        lb_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        mem = follow_relation_path(kg, [int(m)], ["directed_by", "directed_by_inv"], max_paths=0)
        mem_names = {kg.entities[e] for e in mem.reached}
        mem_times.append(time.perf_counter() - t0)
        agree += {r[0] for r in res.rows} == mem_names
    p50_db, p50_mem = statistics.median(lb_times), statistics.median(mem_times)
    return {
        "two_hop_queries": len(sample),
        "backend_p50_ms": round(1e3 * p50_db, 3),
        "in_memory_p50_ms": round(1e3 * p50_mem, 3),
        "ratio_backend_over_memory": round(p50_db / p50_mem, 1),
        "results_agree": f"{agree}/{len(sample)}",
    }


def metaqa(tmp: Path) -> dict:
    kg = KnowledgeGraph.load(load_file(KB).save(tmp / "metaqa"))
    start = time.perf_counter()
    db = LadybugBackend(kg)
    load = time.perf_counter() - start
    rng = np.random.default_rng(0)
    directed = kg.relation_id("directed_by")
    movies = np.unique(kg.heads[kg.rels == directed])
    sample = rng.choice(movies, 100, replace=False)
    out = {"ladybug": {"load_seconds": round(load, 2), **two_hop(kg, db, sample)}}
    try:
        from kgrag.graph.backends.bolt import BoltBackend
        from kgrag.graph.backends.falkordb_local import local_falkordb

        with local_falkordb(tmp / "falkordb") as uri:
            bolt = BoltBackend(uri)
            out["falkordb_bolt"] = {"load_seconds": round(bolt.load(kg), 2), **two_hop(kg, bolt, sample)}
            bolt.close()
    except Exception as exc:  # report, do not fail the whole benchmark
        out["falkordb_bolt"] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = {
            "machine": {"python": platform.python_version(), "date": time.strftime("%Y-%m-%d %H:%M")},
            "northwind_gold_queries": northwind(Path(tmp)),
            "metaqa_two_hop": metaqa(Path(tmp)),
        }
    OUT.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(
        json.dumps(
            {k: {kk: vv for kk, vv in v.items() if kk not in ("error_examples",)} for k, v in result.items()},
            indent=1,
            default=str,
        )
    )


if __name__ == "__main__":
    main()
