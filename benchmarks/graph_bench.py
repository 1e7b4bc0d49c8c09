"""Graph-layer benchmarks: ingest, store loading, and algorithm speed against networkx / a bare scipy loop.

Usage::

    python benchmarks/graph_bench.py            # everything (MetaQA + 1M-entity synthetic KG), a few minutes
    python benchmarks/graph_bench.py --quick    # MetaQA only (skips the synthetic part), well under a minute

Writes pretty JSON (``benchmarks/results/graph.json``; ``graph-quick.json`` with ``--quick``) and prints a
summary table.  Every measured quantity is recorded as ``value`` / ``budget`` / ``pass`` (``budget`` and
``pass`` are ``null`` for informational numbers).

Method: the target machine is small (2 cores) and shared, so every number is a median of repeated runs,
and every comparison (kgrag vs networkx, kgrag PPR vs a bare scipy loop) is measured interleaved, in the
same run, on the same inputs; ratios are taken between those medians.  The synthetic ingest and PPR also
get a CPU-time twin of their wall-time metric (other processes inflate wall time far more than CPU time),
and the ingest is paired with a same-run floor (reading + csv-tokenising the file only).  When a budget is
missed the script profiles the offending operation (cProfile) and stores the top functions under
``profiles``.

Part A uses the MetaQA movie KB (``src/kgrag/data/metaqa/kb.txt.gz``).  Part B generates a synthetic KG
(1,000,000 entities, 5,000,000 triples, 200 relations; power-law head degrees) as a TSV file in a temporary
directory, ingests it in a fresh subprocess (wall time and peak RSS from ``getrusage``), then times
20-step personalized PageRank and 2-hop neighbourhoods on the stored KG.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import functools
import gc
import hashlib
import importlib.util
import itertools
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench_common import first_line_value, module_version

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
RESULTS = ROOT / "benchmarks" / "results"
GRAPH_SRC = SRC / "kgrag" / "graph"
METAQA_KB = SRC / "kgrag" / "data" / "metaqa" / "kb.txt.gz"
METAQA_KB_SHARED = Path("/work/shared/data/metaqa/kb.txt.gz")

if importlib.util.find_spec("kgrag") is None:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(SRC))

perf = time.perf_counter
GB = 1e9  # budgets in decimal gigabytes (the stricter reading of "1.5 GB")

# Code run in a fresh interpreter to measure ingest time and peak RSS without this script's own memory.
CHILD_PRELUDE = r"""
import json, resource, sys, time


def _peaks():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    hwm = None
    try:
        with open("/proc/self/status") as fh:
            hwm = next((int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:")), None)
    except OSError:
        pass
    return {"peak_rss_kib": usage.ru_maxrss, "vm_hwm_kib": hwm, "cpu_s": usage.ru_utime + usage.ru_stime}
"""

# Ingest in a fresh interpreter, so time and peak RSS are the ingest's own (argv: tsv store profile top).
CHILD_INGEST = (
    CHILD_PRELUDE
    + r"""
t0 = time.perf_counter()
from kgrag.graph.io import load_file
t1 = time.perf_counter()
cpu1 = time.process_time()
prof = None
if sys.argv[3] == "1":
    import cProfile
    prof = cProfile.Profile()
    prof.enable()
t2 = time.perf_counter()
kg = load_file(sys.argv[1])
t3 = time.perf_counter()
kg.save(sys.argv[2])
t4 = time.perf_counter()
if prof is not None:
    prof.disable()
out = {
    "import_s": t1 - t0, "load_file_s": t3 - t2, "save_s": t4 - t3, "ingest_s": t4 - t2,
    "ingest_cpu_s": time.process_time() - cpu1, **_peaks(),
    "entities": kg.num_entities, "relations": kg.num_relations, "triples": kg.num_triples,
}
if prof is not None:
    import pstats
    stats = pstats.Stats(prof).stats
    top = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[: int(sys.argv[4])]
    out["profile"] = [
        {"function": f"{fn[0]}:{fn[1]}({fn[2]})", "ncalls": v[1], "tottime_s": round(v[2], 4),
         "cumtime_s": round(v[3], 4)}
        for fn, v in top
    ]
print("RESULT " + json.dumps(out))
"""
)

# Same-run floor for the ingest: only reading and tokenising the file with the csv module (argv: tsv).
CHILD_PARSE_FLOOR = (
    CHILD_PRELUDE
    + r"""
import csv
t0, c0 = time.perf_counter(), time.process_time()
rows = 0
with open(sys.argv[1], encoding="utf-8", newline="") as fh:
    for _ in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
        rows += 1
print("RESULT " + json.dumps({"parse_s": time.perf_counter() - t0, "parse_cpu_s": time.process_time() - c0,
                              "rows": rows}))
"""
)

CHILD_BASELINE = (
    CHILD_PRELUDE
    + r"""
import kgrag.graph.io
print("RESULT " + json.dumps(_peaks()))
"""
)


# ---------------------------------------------------------------------- recording
@dataclass
class Metric:
    name: str
    value: float
    unit: str
    budget: float | None = None
    cmp: str = "<="  # the value passes when ``value <cmp> budget``
    note: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool | None:
        if self.budget is None or self.value is None or not np.isfinite(self.value):
            return None if self.budget is None else False
        return self.value <= self.budget if self.cmp == "<=" else self.value >= self.budget

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "unit": self.unit,
            "budget": self.budget,
            "cmp": self.cmp if self.budget is not None else None,
            "pass": self.passed,
            "note": self.note,
            **({"details": self.details} if self.details else {}),
        }


@dataclass
class Recorder:
    metrics: list[Metric] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    profile_deadline_s: float = 330.0  # optional profiling is skipped after this much total run time

    def may_profile(self, mode: str, *metrics: Metric) -> bool:
        """Profile when asked to, unless the run is already long (it must finish in ~10 minutes)."""
        wanted = any(want_profile(mode, m) for m in metrics)
        if wanted and perf() - self.started > self.profile_deadline_s:
            for m in metrics:
                self.profiles[m.name] = "skipped: run time budget for profiling exhausted"
            return False
        return wanted

    def add(self, name: str, value: float, unit: str, budget: float | None = None, **kw: Any) -> Metric:
        metric = Metric(name, float(value), unit, budget, **kw)
        self.metrics.append(metric)
        return metric


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def time_once(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = perf()
    result = fn()
    return perf() - start, result


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall time, CPU time of this process, and the result of ``fn()``."""
    wall, cpu = perf(), time.process_time()
    result = fn()
    return perf() - wall, time.process_time() - cpu, result


def time_repeat(fn: Callable[[], Any], repeat: int) -> list[float]:
    return [time_once(fn)[0] for _ in range(repeat)]


def profile_rows(fn: Callable[[], Any], top: int = 15) -> list[dict[str, Any]]:
    """Run ``fn`` under cProfile; the ``top`` functions by own time."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    ranked = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    return [
        {
            "function": f"{Path(fn_[0]).name}:{fn_[1]}({fn_[2]})",
            "ncalls": v[1],
            "tottime_s": round(v[2], 4),
            "cumtime_s": round(v[3], 4),
        }
        for fn_, v in ranked
    ]


def want_profile(mode: str, metric: Metric) -> bool:
    return mode == "always" or (mode == "auto" and metric.passed is False)


# ---------------------------------------------------------------------- machine info
def _git(*args: str) -> str | None:
    try:  # read-only queries
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def machine_info() -> dict[str, Any]:
    mem_kib = first_line_value("/proc/meminfo", "MemTotal")
    status = _git("status", "--porcelain")
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "scipy": module_version("scipy"),
        "networkx": module_version("networkx"),
        "pandas": module_version("pandas"),
        "kgrag": module_version("kgrag"),
        "nproc": os.cpu_count(),
        "nproc_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": first_line_value("/proc/cpuinfo", "model name"),
        "mem_total_gib": round(int(mem_kib.split()[0]) / 2**20, 1) if mem_kib else None,
        "platform": platform.platform(),
        "loadavg_start": list(os.getloadavg()),
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "graph_source_sha256": {  # the sources measured (the working tree may differ from the commit)
            f.name: hashlib.sha256(f.read_bytes()).hexdigest()[:16] for f in sorted(GRAPH_SRC.glob("*.py"))
        },
    }


# ---------------------------------------------------------------------- part A: MetaQA
def bench_metaqa(kb: Path, rec: Recorder, args: argparse.Namespace, tmp: Path) -> None:
    from kgrag.graph.io import load_file
    from kgrag.graph.kg import KnowledgeGraph

    section: dict[str, Any] = {"kb": str(kb)}
    rec.sections["metaqa"] = section

    # (1) text -> store
    load_s, save_s, total_s = [], [], []
    for i in range(3):
        t_load, kg = time_once(functools.partial(load_file, kb))
        t_save, _ = time_once(functools.partial(kg.save, tmp / f"metaqa-{i}"))
        load_s.append(t_load)
        save_s.append(t_save)
        total_s.append(t_load + t_save)
    store = tmp / "metaqa-0"
    section["kg"] = {"entities": kg.num_entities, "relations": kg.num_relations, "triples": kg.num_triples}
    m = rec.add(
        "A1 MetaQA text->store (load_file + save)",
        median(total_s),
        "s",
        1.5,
        note="median of 3",
        details={"load_file_s": median(load_s), "save_s": median(save_s), "runs_s": total_s},
    )
    if rec.may_profile(args.profile, m):
        rec.profiles[m.name] = profile_rows(lambda: load_file(kb).save(tmp / "metaqa-prof"))
    print(f"  A1 text->store      {m.value:8.3f} s   (load_file {median(load_s):.3f}, save {median(save_s):.3f})")

    # (2) store -> memory, verify on/off interleaved
    KnowledgeGraph.load(store)  # warm the page cache
    verify_s, noverify_s = [], []
    for _ in range(10):
        verify_s.append(time_once(functools.partial(KnowledgeGraph.load, store))[0])
        noverify_s.append(time_once(functools.partial(KnowledgeGraph.load, store, verify=False))[0])
    m1 = rec.add("A2 MetaQA store->memory (verify=True)", median(verify_s), "s", 0.1, note="median of 10")
    m2 = rec.add("A2 MetaQA store->memory (verify=False)", median(noverify_s), "s", 0.1, note="median of 10")
    for mm, verify in ((m1, True), (m2, False)):
        if rec.may_profile(args.profile, mm):
            rec.profiles[mm.name] = profile_rows(lambda v=verify: KnowledgeGraph.load(store, verify=v))
    print(f"  A2 store->memory    {m1.value * 1e3:8.2f} ms (verify=False {m2.value * 1e3:.2f} ms)")

    # (3) algorithms vs networkx
    try:
        import networkx  # noqa: F401
    except ImportError:
        section["networkx"] = "skipped: networkx is not installed (pip install 'kgrag[frames]')"
        print("  A3 skipped: networkx is not installed")
        return
    bench_vs_networkx(KnowledgeGraph.load(store), store, rec, args, section)


def build_networkx(kg: Any) -> tuple[dict[str, Any], dict[str, float]]:
    import networkx as nx

    heads, tails = kg.heads.tolist(), kg.tails.tolist()
    rel_names = [kg.relations[r] for r in kg.rels.tolist()]
    nodes = range(kg.num_entities)
    times = {}
    start = perf()
    multi = nx.MultiDiGraph()
    multi.add_nodes_from(nodes)
    multi.add_edges_from(zip(heads, tails, rel_names, itertools.repeat({})))  # key = relation name
    times["multidigraph_s"] = perf() - start
    start = perf()
    simple = nx.Graph()
    simple.add_nodes_from(nodes)
    simple.add_edges_from(zip(heads, tails))
    times["undirected_graph_s"] = perf() - start
    start = perf()
    multi_und = nx.MultiGraph()  # parallel edges count, like kgrag's direction="both" adjacency
    multi_und.add_nodes_from(nodes)
    multi_und.add_edges_from(zip(heads, tails))
    times["undirected_multigraph_s"] = perf() - start
    return {"multi": multi, "simple": simple, "multi_und": multi_und}, times


def nx_follow_relation_path(graph: Any, sources: Sequence[int], path: Sequence[str], relations: set) -> set:
    """Set propagation over a MultiDiGraph keyed by relation name (``<rel>_inv`` walks backwards)."""
    frontier = set(sources)
    for rel in path:
        inverse = rel not in relations and rel.endswith("_inv")
        base = rel[: -len("_inv")] if inverse else rel
        adjacency = graph.pred if inverse else graph.succ
        reached = set()
        for u in frontier:
            for v, keys in adjacency[u].items():
                if base in keys:
                    reached.add(v)
        frontier = reached
    return frontier


@dataclass
class Rival:
    """A networkx counterpart of a kgrag call: how often to time it and how to check it agrees."""

    fn: Callable[[Any], Any]
    repeat: int
    check: Callable[[Any, Any, Any], bool]


def compare(
    samples: Sequence[Any], ours: Callable[[Any], Any], repeat_ours: int, rivals: dict[str, Rival]
) -> dict[str, dict[str, Any]]:
    """Per-sample median call times, interleaved (the order flips every sample), and networkx/kgrag ratios.

    Everything is called once on the first sample before timing starts (lazy caches, imports).
    """
    ours(samples[0])
    for rival in rivals.values():
        rival.fn(samples[0])
    t_ours: list[float] = []
    t_rival: dict[str, list[float]] = {name: [] for name in rivals}
    agree = dict.fromkeys(rivals, 0)
    for i, sample in enumerate(samples):
        calls = [("kgrag", ours, repeat_ours)] + [(k, r.fn, r.repeat) for k, r in rivals.items()]
        results: dict[str, Any] = {}
        for name, fn, repeat in calls if i % 2 == 0 else calls[::-1]:
            times = []
            for _ in range(repeat):
                elapsed, results[name] = time_once(functools.partial(fn, sample))
                times.append(elapsed)
            (t_ours if name == "kgrag" else t_rival[name]).append(median(times))
        for name, rival in rivals.items():
            agree[name] += bool(rival.check(sample, results["kgrag"], results[name]))
    out = {}
    for name, times in t_rival.items():
        ratios = [b / a for a, b in zip(t_ours, times)]
        out[name] = {
            "samples": len(samples),
            "kgrag_median_s": median(t_ours),
            "networkx_median_s": median(times),
            "ratio_of_medians": median(times) / median(t_ours),
            "median_of_ratios": median(ratios),
            "min_ratio": min(ratios),
            "max_ratio": max(ratios),
            "results_agree": f"{agree[name]}/{len(samples)}",
        }
    return out


def bench_vs_networkx(kg: Any, store: Path, rec: Recorder, args: argparse.Namespace, section: dict) -> None:
    import networkx as nx

    from kgrag.graph import algorithms as alg
    from kgrag.graph.kg import KnowledgeGraph

    rng = np.random.default_rng(args.seed)
    n = kg.num_entities
    graphs, build = build_networkx(kg)
    simple, multi, multi_und = graphs["simple"], graphs["multi"], graphs["multi_und"]
    section["networkx_build"] = build
    rec.add(
        "A3 networkx graph build (MultiDiGraph + Graph + MultiGraph)",
        sum(build.values()),
        "s",
        note="one-off, not part of any ratio",
        details=build,
    )
    print(f"  A3 networkx build   {sum(build.values()):8.3f} s")
    results: dict[str, Any] = {}
    section["vs_networkx"] = results
    sample = rng.choice(n, size=min(args.samples, n), replace=False).tolist()

    # 2-hop neighbourhood
    results.update(
        compare(
            sample,
            lambda s: alg.k_hop(kg, [s], 2),
            3,
            {
                "k_hop_2": Rival(
                    lambda s: nx.single_source_shortest_path_length(simple, s, cutoff=2),
                    3,
                    lambda s, a, b: set(a.nodes.tolist()) == set(b),
                )
            },
        )
    )

    # shortest paths between random connected pairs (distance <= kgrag's default max_length of 6)
    pairs: list[tuple[int, int]] = []
    distances = []
    while len(pairs) < min(args.sp_samples, n // 2):
        s, t = (int(x) for x in rng.choice(n, size=2, replace=False))
        try:
            distance = nx.shortest_path_length(simple, s, t)
        except nx.NetworkXNoPath:
            continue
        if distance <= 6:
            pairs.append((s, t))
            distances.append(distance)
    results.update(
        compare(
            pairs,
            lambda st: alg.shortest_paths(kg, [st[0]], [st[1]]),
            3,
            {
                "shortest_paths_all": Rival(
                    lambda st: list(itertools.islice(nx.all_shortest_paths(simple, st[0], st[1]), 100)),
                    1,
                    lambda st, a, b: len(a) > 0 and int(a.lengths[0]) == len(b[0]) - 1,
                ),
                "shortest_path_single": Rival(
                    lambda st: nx.shortest_path(simple, st[0], st[1]),
                    3,
                    lambda st, a, b: len(a) > 0 and int(a.lengths[0]) == len(b) - 1,
                ),
            },
        )
    )
    for key in ("shortest_paths_all", "shortest_path_single"):
        results[key]["distance_mean"] = float(np.mean(distances))
        results[key]["note"] = (
            "kgrag returns up to 100 triple-level paths (parallel edges are distinct paths); networkx "
            "up to 100 node paths (all_shortest_paths) or one (shortest_path, bidirectional BFS)"
        )

    # personalized PageRank: transition-matrix build (first call) measured separately on a fresh load
    t_matrix, _ = time_once(functools.partial(alg.transition_matrix, KnowledgeGraph.load(store)))
    t_first, _ = time_once(
        functools.partial(alg.personalized_pagerank, KnowledgeGraph.load(store), [sample[0]], tol=1e-6)
    )
    iterations = []

    def ours_ppr(s: int) -> Any:
        res = alg.personalized_pagerank(kg, [s], damping=0.85, tol=1e-6)
        iterations.append(res.iterations)
        return res

    def top10_overlap(s: int, a: Any, b: dict) -> bool:
        theirs = sorted(b, key=b.get, reverse=True)[:10]
        return len(set(a.nodes[:10].tolist()) & set(theirs)) >= 9

    results.update(
        compare(
            sample[: args.ppr_samples],
            ours_ppr,
            3,
            {
                "personalized_pagerank": Rival(
                    lambda s: nx.pagerank(multi_und, personalization={s: 1.0}, alpha=0.85, tol=1e-6),
                    1,
                    top10_overlap,
                ),
                "personalized_pagerank_equal_criterion": Rival(
                    lambda s: nx.pagerank(multi_und, personalization={s: 1.0}, alpha=0.85, tol=1e-6 / n),
                    1,
                    top10_overlap,
                ),
            },
        )
    )
    results["personalized_pagerank"].update(
        transition_matrix_build_s=t_matrix,
        first_call_cold_s=t_first,
        kgrag_iterations=sorted(set(iterations)),
        note="networkx (on the undirected MultiGraph) stops when the L1 change < N*tol (N = #nodes), "
        "kgrag when it is < tol; 'equal_criterion' reruns networkx with tol=1e-6/N",
    )

    # relation-path following from movies
    rid = kg.relation_id("directed_by")
    movies = np.unique(np.asarray(kg.heads)[np.asarray(kg.rels) == rid])
    movie_sample = rng.choice(movies, size=min(args.samples, len(movies)), replace=False).tolist()
    path = ["directed_by", "directed_by_inv"]
    rel_set = set(kg.relations)
    results.update(
        compare(
            movie_sample,
            lambda m: alg.follow_relation_path(kg, [m], path),
            3,
            {
                "follow_relation_path": Rival(
                    lambda m: nx_follow_relation_path(multi, [m], path, rel_set),
                    3,
                    lambda m, a, b: set(a.reached.tolist()) == b,
                )
            },
        )
    )
    results["follow_relation_path"]["note"] = "networkx side computes the reached set only (no paths)"

    labels = {
        "k_hop_2": "k_hop(2) vs single_source_shortest_path_length(cutoff=2)",
        "shortest_paths_all": "shortest_paths vs all_shortest_paths",
        "shortest_path_single": "shortest_paths vs shortest_path (one path)",
        "personalized_pagerank": "personalized_pagerank vs nx.pagerank",
        "personalized_pagerank_equal_criterion": "personalized_pagerank vs nx.pagerank (tol=1e-6/N)",
        "follow_relation_path": "follow_relation_path vs neighbour iteration",
    }
    for key, label in labels.items():
        r = results[key]
        rec.add(
            f"A3 speed-up {label}",
            r["ratio_of_medians"],
            "x (networkx/kgrag)",
            note=f"median per call over {r['samples']} samples; results agree {r['results_agree']}",
            details={k: v for k, v in r.items() if k != "samples"},
        )
        print(
            f"  A3 {key:38s} kgrag {r['kgrag_median_s'] * 1e3:9.3f} ms  networkx "
            f"{r['networkx_median_s'] * 1e3:9.3f} ms  x{r['ratio_of_medians']:7.2f}  agree {r['results_agree']}"
        )
    rec.add("A3 PPR transition-matrix build (first call)", t_matrix, "s", note="one-off per KG, cached")
    print(f"  A3 PPR transition matrix build {t_matrix * 1e3:.1f} ms, cold first call {t_first * 1e3:.1f} ms")


# ---------------------------------------------------------------------- part B: synthetic
def _fixed_width(names: Sequence[str] | np.ndarray, width: int) -> np.ndarray:
    """ASCII names as an ``(n, width)`` uint8 matrix, NUL-padded."""
    return np.asarray(names, dtype=f"S{width}").view(np.uint8).reshape(len(names), width)


def write_synthetic_tsv(
    path: Path, n_entities: int, n_triples: int, n_relations: int, seed: int, exponent: float = 0.8
) -> dict[str, Any]:
    """Write a ``head\\trelation\\ttail`` TSV with power-law head degrees, vectorised (no per-row Python).

    Heads: entity of popularity rank ``i`` is drawn with probability ∝ ``i**-exponent`` (ranks shuffled
    over ids), giving a degree distribution with tail exponent ``1 + 1/exponent``.  Tails: the first
    ``n_entities`` are a permutation of all entities (so every entity occurs), the rest uniform.
    Relations: Zipf(1) over ``n_relations``.  Rows are built as one byte matrix with NUL padding,
    which is then dropped.
    """
    rng = np.random.default_rng(seed)
    popularity = np.arange(1, n_entities + 1, dtype=np.float64) ** -exponent
    heads = rng.permutation(n_entities)[rng.choice(n_entities, size=n_triples, p=popularity / popularity.sum())]
    tails = np.concatenate([rng.permutation(n_entities), rng.integers(0, n_entities, n_triples - n_entities)])
    rel_weight = 1.0 / np.arange(1, n_relations + 1, dtype=np.float64)
    rels = rng.choice(n_relations, size=n_triples, p=rel_weight / rel_weight.sum())

    e_width = len(f"e{n_entities - 1}")
    rel_names = [f"rel_{i}" for i in range(n_relations)]
    r_width = max(map(len, rel_names))
    ents = _fixed_width(np.char.add("e", np.arange(n_entities).astype(str)), e_width)
    relb = _fixed_width(rel_names, r_width)
    with open(path, "wb") as fh:
        fh.write(b"head\trelation\ttail\n")
        chunk = 1_000_000
        for lo in range(0, n_triples, chunk):
            hi = min(lo + chunk, n_triples)
            rows = np.zeros((hi - lo, 2 * e_width + r_width + 3), dtype=np.uint8)
            rows[:, :e_width] = ents[heads[lo:hi]]
            rows[:, e_width] = ord("\t")
            rows[:, e_width + 1 : e_width + 1 + r_width] = relb[rels[lo:hi]]
            rows[:, e_width + 1 + r_width] = ord("\t")
            rows[:, e_width + 2 + r_width : -1] = ents[tails[lo:hi]]
            rows[:, -1] = ord("\n")
            fh.write(rows[rows != 0].tobytes())
    return {
        "entities": n_entities,
        "triples_written": n_triples,
        "relations": n_relations,
        "head_popularity_exponent": exponent,
        "seed": seed,
        "file_bytes": path.stat().st_size,
    }


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    return env


def run_child(code: str, *argv: str, timeout: float = 300) -> tuple[dict[str, Any], float]:
    """Run ``python -c code argv...`` in a fresh interpreter; returns its RESULT json and the wall time.

    Linux keeps ``ru_maxrss`` across ``execve``, and subprocess (v)forks from *this* process, so a child
    exec'd directly would report this process's peak (hundreds of MB here) as its own.  Launching through
    ``/bin/sh``, which forks a new process for the command, gives the interpreter a fresh peak counter.
    """
    cmd = [sys.executable, "-c", code, *argv]
    if os.path.exists("/bin/sh"):
        cmd = ["/bin/sh", "-c", '"$0" "$@"; exit $?', *cmd]
    start = perf()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_child_env())
    wall = perf() - start
    if proc.returncode != 0:
        raise RuntimeError(f"child process failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    line = next(ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :]), wall


def bench_synthetic(rec: Recorder, args: argparse.Namespace, tmp: Path) -> None:
    from kgrag.graph import algorithms as alg
    from kgrag.graph.kg import KnowledgeGraph

    section: dict[str, Any] = {}
    rec.sections["synthetic"] = section
    tsv = tmp / "synthetic.tsv"
    t_gen, info = time_once(lambda: write_synthetic_tsv(tsv, args.entities, args.triples, args.relations, args.seed))
    section["generator"] = {**info, "generate_s": t_gen}
    print(f"  B  generated {tsv.name}: {info['file_bytes'] / 1e6:.0f} MB in {t_gen:.1f} s")

    # (1) ingest in a fresh interpreter, interleaved with a same-run floor (read + csv-tokenise only)
    baseline = [run_child(CHILD_BASELINE)[0] for _ in range(3)]
    runs, floors = [], []
    for i in range(args.ingest_runs):
        store = tmp / f"store-{i}"
        jobs = [("ingest", CHILD_INGEST, (str(tsv), str(store), "0", "0")), ("floor", CHILD_PARSE_FLOOR, (str(tsv),))]
        for kind, code, argv in jobs if i % 2 == 0 else jobs[::-1]:
            out, wall = run_child(code, *argv, timeout=600)
            out["process_wall_s"] = wall
            (runs if kind == "ingest" else floors).append(out)
        out = runs[-1]
        print(
            f"  B1 ingest run {i + 1}: {out['ingest_s']:.1f} s wall / {out['ingest_cpu_s']:.1f} s CPU "
            f"(load_file {out['load_file_s']:.1f}, save {out['save_s']:.2f}), peak RSS "
            f"{out['peak_rss_kib'] * 1024 / GB:.2f} GB; csv-only floor {floors[-1]['parse_s']:.1f} s"
        )
        if i:
            shutil.rmtree(tmp / f"store-{i - 1}", ignore_errors=True)
    store = tmp / f"store-{args.ingest_runs - 1}"
    section["ingest_runs"] = runs
    section["parse_floor_runs"] = floors
    section["kg"] = {k: runs[-1][k] for k in ("entities", "relations", "triples")}
    floor_s = median([f["parse_s"] for f in floors])
    m_time = rec.add(
        "B1 synthetic ingest TSV->store (load_file + save)",
        median([r["ingest_s"] for r in runs]),
        "s",
        20,
        note=f"wall, median of {len(runs)} fresh subprocesses; excludes interpreter start-up and imports",
        details={
            "load_file_s": median([r["load_file_s"] for r in runs]),
            "save_s": median([r["save_s"] for r in runs]),
            "process_wall_s": median([r["process_wall_s"] for r in runs]),
            "runs_s": [r["ingest_s"] for r in runs],
            "csv_tokenise_floor_s": floor_s,
            "ratio_to_csv_floor": median([r["ingest_s"] for r in runs]) / floor_s,
        },
    )
    m_cpu = rec.add(
        "B1 synthetic ingest TSV->store, CPU time",
        median([r["ingest_cpu_s"] for r in runs]),
        "s",
        20,
        note="user+sys of the same runs: less sensitive to other processes on the machine than wall time",
        details={
            "runs_s": [r["ingest_cpu_s"] for r in runs],
            "csv_floor_cpu_s": median([f["parse_cpu_s"] for f in floors]),
        },
    )
    peak = [r["peak_rss_kib"] * 1024 for r in runs]
    m_rss = rec.add(
        "B1 synthetic ingest peak RSS (raw ru_maxrss)",
        max(peak) / GB,
        "GB",
        1.5,
        note="max over runs, nothing subtracted; 1 GB = 1e9 bytes",
        details={
            "runs_gb": [p / GB for p in peak],
            "vm_hwm_gb": [r["vm_hwm_kib"] * 1024 / GB for r in runs if r.get("vm_hwm_kib")],
            "baseline_import_gb": median([b["peak_rss_kib"] for b in baseline]) * 1024 / GB,
        },
    )
    rec.add(
        "B1 baseline RSS of bare `import kgrag.graph.io`",
        median([b["peak_rss_kib"] for b in baseline]) * 1024 / GB,
        "GB",
        note="median of 3 fresh subprocesses (ru_maxrss); not subtracted from the peak above",
    )
    if rec.may_profile(args.profile, m_time, m_cpu, m_rss):
        print("  B1 profiling the ingest (cProfile, one more subprocess) ...")
        out, _ = run_child(CHILD_INGEST, str(tsv), str(tmp / "store-prof"), "1", "20", timeout=900)
        rec.profiles[m_time.name] = out["profile"]
        shutil.rmtree(tmp / "store-prof", ignore_errors=True)
    tsv.unlink()

    # load the stored KG (memory-mapped) the way applications do
    t_load, kg = time_once(lambda: KnowledgeGraph.load(store))
    section["store_load_s"] = t_load
    n = kg.num_entities
    rng = np.random.default_rng(args.seed + 1)
    if m_time.name in rec.profiles and isinstance(rec.profiles[m_time.name], list):
        rec.profiles[m_time.name + " (dedup step re-created with numpy)"] = dedup_substeps(kg, rng)

    # (2) 20-step PPR vs a bare scipy loop on the same CSR matrix
    t_matrix, (matrix, dangling) = time_once(lambda: alg.transition_matrix(kg))
    seeds = rng.choice(n, size=3, replace=False)
    d = 0.85
    p = np.zeros(n)
    p[seeds] = 1.0 / len(seeds)

    def ours() -> Any:
        return alg.personalized_pagerank(kg, seeds, damping=d, max_iter=20, tol=0)

    def bare() -> np.ndarray:
        x = p.copy()
        for _ in range(20):
            x = d * (matrix @ x) + (1 - d) * p
        return x

    res, x_bare = ours(), bare()  # warm-up, and the two must agree
    max_diff = float(np.abs(res.scores - x_bare[res.nodes]).max())
    wall: dict[str, list[float]] = {"kgrag": [], "bare": []}
    cpu: dict[str, list[float]] = {"kgrag": [], "bare": []}
    for i in range(args.ppr_rounds):
        pair = (("kgrag", ours), ("bare", bare))
        for name, fn in pair if i % 2 == 0 else pair[::-1]:
            gc.collect()
            t_wall, t_cpu, _ = timed(fn)
            wall[name].append(t_wall)
            cpu[name].append(t_cpu)
    m_ppr = rec.add(
        "B2 PPR 20 iterations: kgrag / bare scipy loop",
        median(wall["kgrag"]) / median(wall["bare"]),
        "ratio",
        1.3,
        note=f"wall, median of {args.ppr_rounds} interleaved runs each",
        details={
            "kgrag_s": median(wall["kgrag"]),
            "bare_loop_s": median(wall["bare"]),
            "kgrag_runs_s": wall["kgrag"],
            "bare_runs_s": wall["bare"],
            "per_round_ratios": [a / b for a, b in zip(wall["kgrag"], wall["bare"])],
            "nnz": int(matrix.nnz),
            "dangling": len(dangling),
            "max_abs_score_diff": max_diff,
            "transition_matrix_build_s": t_matrix,
            "nonzero_scores": len(res.nodes),
        },
    )
    m_ppr_cpu = rec.add(
        "B2 PPR 20 iterations: kgrag / bare scipy loop, CPU time",
        median(cpu["kgrag"]) / median(cpu["bare"]),
        "ratio",
        1.3,
        note="CPU time of the same runs",
        details={"kgrag_s": median(cpu["kgrag"]), "bare_loop_s": median(cpu["bare"])},
    )
    rec.add("B2 PPR transition-matrix build (first call)", t_matrix, "s", note="one-off per KG, cached")
    print(
        f"  B2 PPR x20: kgrag {median(wall['kgrag']):.3f} s, bare loop {median(wall['bare']):.3f} s, "
        f"ratio {m_ppr.value:.2f} (CPU {m_ppr_cpu.value:.2f}; matrix build {t_matrix:.2f} s, nnz {matrix.nnz:,})"
    )
    section["ppr_overhead_breakdown"] = ppr_breakdown(matrix, res, d)
    if rec.may_profile(args.profile, m_ppr, m_ppr_cpu):
        rec.profiles[m_ppr.name] = profile_rows(ours)

    # (3) 2-hop neighbourhoods of median-degree entities
    degree = np.asarray(kg.degree("both"))
    med = int(np.median(degree))
    candidates = np.flatnonzero(degree == med)
    nodes = rng.choice(candidates, size=min(args.samples, len(candidates)), replace=False).tolist()
    sizes = []
    for node in nodes:  # warm-up (pages the memory-mapped arrays in) and sizes
        hood = alg.k_hop(kg, [node], 2)
        sizes.append((len(hood.nodes), len(hood.edges)))
    per_call = [median(time_repeat(functools.partial(alg.k_hop, kg, [node], 2), 5)) for node in nodes]
    m_khop = rec.add(
        "B3 2-hop neighbourhood of a median-degree entity",
        median(per_call) * 1e3,
        "ms",
        5,
        note=f"median over {len(nodes)} entities of degree {med} (median of 5 calls each)",
        details={
            "median_degree": med,
            "p90_ms": float(np.percentile(per_call, 90)) * 1e3,
            "max_ms": max(per_call) * 1e3,
            "median_nodes": median([s[0] for s in sizes]),
            "median_edges": median([s[1] for s in sizes]),
            "max_edges": max(s[1] for s in sizes),
            "numpy_reference": unique_reference(n, rng),
        },
    )
    print(
        f"  B3 2-hop (degree {med}): median {m_khop.value:.2f} ms, p90 "
        f"{m_khop.details['p90_ms']:.2f} ms, median size {m_khop.details['median_nodes']:.0f} nodes / "
        f"{m_khop.details['median_edges']:.0f} edges"
    )
    if rec.may_profile(args.profile, m_khop):
        rec.profiles[m_khop.name] = profile_rows(lambda: [alg.k_hop(kg, [nd], 2) for nd in nodes])


def ppr_breakdown(matrix: Any, res: Any, damping: float) -> dict[str, float]:
    """Reference costs of the work a PPR call does beyond the bare loop, re-created with numpy/scipy.

    ``matrix * damping`` copies the matrix once per call; sorting every non-zero score is what returning
    all entities ranked (``top_k=None``) costs.
    """
    x = np.zeros(matrix.shape[0])
    x[res.nodes] = res.scores
    positive = np.flatnonzero(x > 0)
    return {
        "one_spmv_s": median(time_repeat(lambda: matrix @ x, 5)),
        "scale_matrix_copy_s (matrix * damping)": median(time_repeat(lambda: matrix * damping, 5)),
        "sort_all_nonzero_scores_s (lexsort)": median(time_repeat(lambda: np.lexsort((positive, -x[positive])), 5)),
    }


def unique_reference(n: int, rng: np.random.Generator) -> dict[str, float]:
    """np.unique (hash-based for integers since numpy 2.3) vs sort-based dedup at frontier-like sizes."""
    out = {}
    for size in (500, 5_000, 50_000):
        ids = rng.integers(0, n, size)
        out[f"np.unique({size} int64)_ms"] = median(time_repeat(lambda a=ids: np.unique(a), 20)) * 1e3
        out[f"sort-based unique({size} int64)_ms"] = median(time_repeat(lambda a=ids: _sorted_unique(a), 20)) * 1e3
    return out


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    s = np.sort(a)
    keep = np.empty(len(s), dtype=bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def dedup_substeps(kg: Any, rng: np.random.Generator) -> dict[str, float]:
    """The sort+dedup of packed (head, relation, tail) keys that building a KG does, with and without np.unique.

    Re-created from the stored KG (keys shuffled back into arbitrary order), so no re-parse is needed.
    """
    n_e, n_r = kg.num_entities, kg.num_relations
    heads, rels, tails = (np.asarray(a, dtype=np.int64) for a in (kg.heads, kg.rels, kg.tails))
    key = rng.permutation((heads * n_r + rels) * n_e + tails)
    return {
        "np.unique(packed keys)_s": time_once(lambda: np.unique(key))[0],
        "sort + neighbour-compare unique(packed keys)_s": time_once(lambda: _sorted_unique(key))[0],
        "argsort(tails, kind=stable)_s": time_once(lambda: np.argsort(tails, kind="stable"))[0],
    }


# ---------------------------------------------------------------------- reporting
def print_summary(rec: Recorder) -> None:
    width = max(len(m.name) for m in rec.metrics)
    print()
    print(f"{'metric':{width}s}  {'value':>12s}  {'budget':>10s}  result")
    print("-" * (width + 40))
    for m in rec.metrics:
        budget = "" if m.budget is None else f"{m.cmp}{m.budget:g}"
        verdict = {True: "PASS", False: "FAIL", None: "info"}[m.passed]
        print(f"{m.name:{width}s}  {m.value:12.4g}  {budget:>10s}  {verdict}  {m.unit}")
    failed = [m.name for m in rec.metrics if m.passed is False]
    print()
    print(f"{len(failed)} budget(s) missed" + (": " + "; ".join(failed) if failed else ""))
    for name, rows in rec.profiles.items():
        print(f"\nprofile: {name}")
        if isinstance(rows, dict):
            for k, v in rows.items():
                print(f"  {k:55s} {v:9.3f}")
            continue
        for row in rows[:8]:
            print(
                f"  {row['tottime_s']:8.3f} s own  {row['cumtime_s']:8.3f} s cum  {row['ncalls']:>9}  {row['function']}"
            )


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip the synthetic 1M-entity part (B)")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="JSON output (default benchmarks/results/graph.json, graph-quick.json with --quick)",
    )
    ap.add_argument("--kb", type=Path, default=None, help="MetaQA kb.txt(.gz) (default: the bundled copy)")
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--samples", type=int, default=50, help="entities/pairs per algorithm comparison")
    ap.add_argument("--sp-samples", type=int, default=20, help="entity pairs for the shortest-path comparison")
    ap.add_argument("--ppr-samples", type=int, default=3, help="seeds for the networkx PageRank comparison")
    ap.add_argument("--ppr-rounds", type=int, default=5, help="interleaved rounds for the synthetic PPR ratio")
    ap.add_argument("--ingest-runs", type=int, default=3, help="fresh-subprocess ingests of the synthetic TSV")
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--triples", type=int, default=5_000_000)
    ap.add_argument("--relations", type=int, default=200)
    ap.add_argument(
        "--profile",
        choices=("auto", "always", "never"),
        default="auto",
        help="cProfile operations that miss their budget (auto), all of them, or none",
    )
    args = ap.parse_args(argv)
    if args.triples < args.entities:
        ap.error("--triples must be at least --entities (every entity gets one triple)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    kb = args.kb or (METAQA_KB if METAQA_KB.exists() else METAQA_KB_SHARED)
    out_path = args.out or RESULTS / ("graph-quick.json" if args.quick else "graph.json")
    started = perf()
    rec = Recorder()
    info = machine_info()
    print(
        f"kgrag graph benchmarks — python {info['python']}, numpy {info['numpy']}, scipy {info['scipy']}, "
        f"networkx {info['networkx']}, nproc {info['nproc']}, load {info['loadavg_start'][0]:.2f}"
    )
    with tempfile.TemporaryDirectory(prefix="kgrag-bench-") as tmp_name:
        tmp = Path(tmp_name)
        print("A. MetaQA KB")
        bench_metaqa(kb, rec, args, tmp)
        if not args.quick:
            print("B. synthetic KG")
            bench_synthetic(rec, args, tmp)
    info["loadavg_end"] = list(os.getloadavg())
    report = {
        "benchmark": "kgrag graph layer",
        "machine": info,
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "metrics": [m.as_dict() for m in rec.metrics],
        **rec.sections,
        "profiles": rec.profiles,
        "total_runtime_s": perf() - started,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(report, indent=2, default=_json_default) + "\n", encoding="utf-8")
    print_summary(rec)
    print(f"\nwrote {out_path} ({report['total_runtime_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
