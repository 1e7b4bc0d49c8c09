"""decompose (KG-RAG) on MetaQA dev: non-LLM time per question, and answer recall of its LLM-free retrieval.

Per sampled question (topic entity from MetaQA's brackets, as `kgrag eval` does) we time everything the
method does besides LLM calls: linking, the 3-hop candidate set (computed once per question), and three
rankings of that set — against the whole question (what ``retrieve`` returns) and against two sub-questions.
Real sub-questions need the LLM, so two stand-ins of realistic length take their place and exercise the same
code path: step 1 anchored at the topics, step 2 anchored at the entities of (up to 10) gold answers, as if
step 1 had answered them. Answer recall is that of the whole-question ranking (top-K triples).

Caches are warm: the embedding models are loaded and the per-KG triple vectors are read from the store
(``kgrag index KG --triples`` fills them; the share already embedded is recorded before and after the run).
A cold triple cache costs one MiniLM encode per never-seen candidate triple (~3 ms each here).

Thread wake-ups used to dominate on this loaded 2-core machine: a BLAS mat-vec of 2000 x 384 took ~8 ms
multi-threaded; scoring now goes through ``dot_scores`` (single-threaded, ~0.2 ms) and one-text encodes run on a
single-threaded ONNX session. ``decompose_timing_before_218b1cb.json`` is this script at the commit before
that change, run in the same conditions (local LLM evaluation running alongside).

    python benchmarks/decompose_bench.py [--per-hop 100] [--seed 0] [--kg .kgrag/metaqa] [--set hops=3 ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from bench_common import module_version, parse_value
from kgrag.eval.datasets import read_metaqa
from kgrag.eval.metrics import answer_recall
from kgrag.graph.store import load_kg
from kgrag.methods import Trace
from kgrag.methods import get as get_method
from kgrag.methods.decompose import join_names
from kgrag.retrieval.triples import kg_vectors

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "metaqa"
FILES = {1: "qa_1hop_dev.txt", 2: "qa_2hop_dev.txt.gz", 3: "qa_3hop_dev.txt.gz"}


def triple_cache_share(method) -> float:
    """Share of the KG's triples whose vectors are already in the store's cache."""
    _, done = kg_vectors(method.kg, method.text_embedder)._triple_store()
    return round(float(np.count_nonzero(done)) / max(len(done), 1), 4)


def time_question(method, ex) -> dict:
    """Seconds of each non-LLM step for one question, and the recall of the whole-question ranking."""
    out: dict = {}
    start = time.perf_counter()
    topics, pool = method._candidates(ex.question, ex.topic_entities, Trace())
    t1 = time.perf_counter()
    evidence = method._rank(ex.question, pool, "decompose")
    t2 = time.perf_counter()
    topic_names = join_names([method.kg.entities[t] for t in topics])
    method._rank(f"{ex.question} (step 1, about {topic_names})", pool, "sub1", topics)
    t3 = time.perf_counter()
    anchors = method._entities_named(ex.answers[:10])
    method._rank(f"{ex.question} (step 2, about {join_names(ex.answers, 10)})", pool, "sub2", anchors)
    t4 = time.perf_counter()
    out["link_and_candidates"] = t1 - start
    out["rank_question"] = t2 - t1
    out["rank_subquestion_1"] = t3 - t2
    out["rank_subquestion_2"] = t4 - t3
    out["total"] = t4 - start
    out["candidates"] = len(pool.tids)
    out["recall"] = answer_recall([e for ev in evidence for e in ev.entities], ex.answers)
    return out


def summarise(rows: list[dict], cap: int) -> dict:
    keys = ["total", "link_and_candidates", "rank_question", "rank_subquestion_1", "rank_subquestion_2"]
    res: dict = {"questions": len(rows)}
    for key in keys:
        ms = np.asarray([r[key] for r in rows]) * 1000
        res[f"{key}_ms"] = {"median": round(float(np.median(ms)), 2), "p95": round(float(np.percentile(ms, 95)), 2)}
    cands = np.asarray([r["candidates"] for r in rows])
    res["candidates"] = {"median": int(np.median(cands)), "max": int(cands.max()), "capped": int((cands >= cap).sum())}
    res["answer_recall_question_ranking"] = round(float(np.mean([r["recall"] for r in rows])), 4)
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kg", type=Path, default=ROOT / ".kgrag" / "metaqa")
    parser.add_argument("--per-hop", type=int, default=100, help="questions per hop file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", dest="settings", action="append", default=[], help="method setting KEY=VALUE")
    parser.add_argument(
        "--threads", type=int, default=None, help="onnxruntime threads of the MiniLM embedder (default: as shipped)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "decompose_timing.json")
    args = parser.parse_args()
    settings = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.settings)}

    kg = load_kg(args.kg)
    embedder = None
    if args.threads is not None:  # same model (same vectors and cache), different thread count
        from kgrag.models.embeddings.onnx_minilm import OnnxMiniLM

        embedder = OnnxMiniLM(threads=args.threads)
    method = get_method("decompose")(kg, embedder=embedder, **settings)
    rng = np.random.default_rng(args.seed)
    samples = {}
    for hops, name in FILES.items():
        examples = read_metaqa(str(DATA / name))
        samples[hops] = [examples[i] for i in sorted(rng.choice(len(examples), args.per_hop, replace=False))]
    cache_before = triple_cache_share(method)
    for ex in read_metaqa(str(DATA / FILES[1]))[:5]:  # warm-up: models, static vectors, name index
        time_question(method, ex)
    load_before = os.getloadavg()
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    rows: dict[int, list[dict]] = {h: [time_question(method, ex) for ex in exs] for h, exs in samples.items()}
    wall = time.perf_counter() - wall_start
    cpu = time.process_time() - cpu_start

    everything = [r for rs in rows.values() for r in rs]
    encode_ms = []  # one MiniLM query encode, the fixed cost of every ranking (3 per question)
    for ex in (ex for exs in samples.values() for ex in exs):
        start = time.perf_counter()
        method.text_embedder.encode([ex.question])
        encode_ms.append((time.perf_counter() - start) * 1000)
    results = {
        "what": "non-LLM seconds per question of decompose: linking + candidates once + 3 rankings "
        "(whole question + 2 sub-question stand-ins); warm model and triple-vector caches",
        "settings": method.config.model_dump(),
        "sample": {"per_hop": args.per_hop, "seed": args.seed, "files": FILES},
        "embedder_threads": args.threads or "default (2)",
        "overall": summarise(everything, method.config.max_candidates),
        "per_hop": {f"{h}hop": summarise(rs, method.config.max_candidates) for h, rs in rows.items()},
        "query_encode_ms": {
            "median": round(float(np.median(encode_ms)), 2),
            "p95": round(float(np.percentile(encode_ms, 95)), 2),
        },
        "process_cpu_seconds_per_question": round(cpu / len(everything), 4),
        "wall_seconds_per_question": round(wall / len(everything), 4),
        "triple_cache_share": {"before": cache_before, "after": triple_cache_share(method)},
        "machine": {
            "python": platform.python_version(),
            "numpy": module_version("numpy"),
            "onnxruntime": module_version("onnxruntime"),
            "cpu_count": os.cpu_count(),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
            "load_average_1m_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
            "note": "2-core machine shared with other jobs (local LLM evaluations) during the run",
        },
    }
    print(json.dumps(results["overall"], indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
