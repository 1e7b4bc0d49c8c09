"""ULTRAG executors on hand-written gold queries for 30 MetaQA dev questions; writes ``benchmarks/results/ultrag.json``.

Usage::

    python benchmarks/ultrag_bench.py                      # every configuration below, KG store .kgrag/metaqa
    python benchmarks/ultrag_bench.py --configs symbolic@30000 --repeats 5

A configuration is ``executor@k`` (k = SEPPR subgraph size); the default runs the symbolic executor at the
paper's k = 30,000 and the neural one at k = 2,000, 5,000 and 30,000.

The gold queries (``tests/fixtures/ultrag_gold_queries.jsonl``: 10 questions per hop, one question per
question type, picked by a seeded shuffle of each dev file) are run exactly as ``ultrag`` runs an LLM's
query, without the LLM: leaves linked (crisp here: the bracketed topic names are KG names), SEPPR subgraph
(α = 0.85, T = 5, top k), execution.  Measured per executor and per hop:

* Ranking quality against MetaQA's gold answers: MRR, Hit@1, Hit@10 of the best-ranked gold answer, in the
  *filtered* setting (the question's topic entity is removed from the ranking, since MetaQA never counts it
  as an answer: "films with the same director as X" excludes X).  Ties are common (the symbolic executor
  gives every crisp answer 1.0), so a gold entity's rank is its *expected* rank under random tie-breaking:
  ``1 + (#non-gold scored higher) + (#non-gold tied)/2``.
* Non-LLM time per question, split into linking, SEPPR and execution (median, p95 over questions × repeats;
  the neural time includes building the subgraph's entity and relation graphs).

``--llm-check ID,ID,...`` instead runs the query writer (the default local LLM, GBNF-constrained, topics given)
on those gold questions and writes ``benchmarks/results/ultrag_query_writer.json``: valid queries, exact matches
with the gold query, and whether a gold answer is among the top 50 after direction repair and execution.

The machine is small (2 cores) and shared with long LLM evaluations; the load average is recorded with the
timings, which are only comparable between runs on a quiet machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
if importlib.util.find_spec("kgrag") is None:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(SRC))

from bench_common import first_line_value, module_version  # noqa: E402
from kgrag.graph.io import load_file  # noqa: E402
from kgrag.graph.kg import KnowledgeGraph  # noqa: E402
from kgrag.linking.hybrid import HybridLinker  # noqa: E402
from kgrag.methods.ultrag.dsl import executors, leaves, parse_and_validate  # noqa: E402
from kgrag.methods.ultrag.dsl.anchors import link_leaves, seed_distribution, seppr_subgraph  # noqa: E402

GOLD = ROOT / "tests" / "fixtures" / "ultrag_gold_queries.jsonl"
RESULTS = ROOT / "benchmarks" / "results"
KB_BUNDLED = SRC / "kgrag" / "data" / "metaqa" / "kb.txt.gz"
perf = time.perf_counter


def load_kg(store: Path) -> KnowledgeGraph:
    if (store / "manifest.json").exists():
        return KnowledgeGraph.load(store)
    return load_file(KB_BUNDLED)


def expected_rank(scores: np.ndarray, gold: set[int], exclude: set[int]) -> float:
    """Expected rank of the best gold entity (random order among ties); ``inf`` when no gold scores > 0."""
    scores = scores.copy()
    for e in exclude - gold:
        scores[e] = -1.0
    gold_ids = np.fromiter(gold, dtype=np.int64)
    best = float(scores[gold_ids].max()) if len(gold_ids) else 0.0
    if best <= 0:
        return float("inf")
    non_gold = np.ones(len(scores), dtype=bool)
    non_gold[gold_ids] = False
    higher = int((scores[non_gold] > best).sum())
    tied = int((scores[non_gold] == best).sum())
    return 1.0 + higher + tied / 2.0


def ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(1e3 * statistics.median(ordered), 3),
        "p95_ms": round(1e3 * ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 3),
        "mean_ms": round(1e3 * statistics.fmean(ordered), 3),
    }


def quality(ranks: list[float]) -> dict[str, float]:
    r = np.asarray(ranks, dtype=np.float64)
    return {
        "n": len(r),
        "mrr": round(float(np.mean(1.0 / r)), 4),
        "hit@1": round(float(np.mean(r <= 1)), 4),
        "hit@10": round(float(np.mean(r <= 10)), 4),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    kg = load_kg(Path(args.kg))
    rows = [json.loads(line) for line in GOLD.read_text("utf-8").splitlines() if line.strip()]
    linker = HybridLinker(kg)
    configs = [(c.split("@")[0], int(c.split("@")[1])) for c in args.configs]
    names = [f"{e}@{k}" for e, k in configs]
    if any(e == "neural" for e, _ in configs):
        import kgrag.methods.ultrag.neural  # noqa: F401 - registers the neural executor
    # warm-up: name index, fuzzy index, transition matrix, model load
    for row in rows[:2]:
        q = parse_and_validate(row["query"], kg).query
        linked = link_leaves(kg, leaves(q), linker=linker)
        for executor, k in configs:
            sub = seppr_subgraph(kg, seed_distribution(linked), top_k=k)
            anchors = {m: leaf.members for m, leaf in linked.items()}
            executors.get(executor)(kg, nodes=sub.nodes).execute(q, anchors)
    per_question: list[dict[str, Any]] = []
    times: dict[str, dict[str, list[float]]] = {n: {"link": [], "seppr": [], "execute": [], "total": []} for n in names}
    ranks: dict[str, dict[int, list[float]]] = {n: {1: [], 2: [], 3: []} for n in names}
    missing_answers = 0
    for row in rows:
        check = parse_and_validate(row["query"], kg)
        assert check.ok, (row["id"], check.errors)
        query = check.query
        gold = {kg.find_entity(a) for a in row["answers"]} - {None}
        missing_answers += len(row["answers"]) - len(gold)
        topics = {kg.find_entity(t) for t in row["topic_entities"]} - {None}
        record: dict[str, Any] = {"id": row["id"], "hop": row["hop"], "query": row["query"], "gold": len(gold)}
        for name, (executor, k) in zip(names, configs):
            for rep in range(args.repeats):
                t0 = perf()
                linked = link_leaves(kg, leaves(query), linker=linker)
                t1 = perf()
                sub = seppr_subgraph(kg, seed_distribution(linked), top_k=k)
                t2 = perf()
                nodes = None if len(sub.nodes) >= kg.num_entities else sub.nodes
                execution = executors.get(executor)(kg, nodes=nodes).execute(
                    query, {m: leaf.members for m, leaf in linked.items()}
                )
                t3 = perf()
                for key, value in (("link", t1 - t0), ("seppr", t2 - t1), ("execute", t3 - t2), ("total", t3 - t0)):
                    times[name][key].append(value)
                if rep == 0:
                    rank = expected_rank(execution.scores, gold, topics)
                    ranks[name][row["hop"]].append(rank)
                    top = execution.top(3)[0].tolist()
                    record[name] = {
                        "rank": rank if rank != float("inf") else None,
                        "top3": [kg.entities[i] for i in top],
                        "subgraph": len(sub.nodes),
                    }
        per_question.append(record)
    load = os.getloadavg()
    results: dict[str, Any] = {}
    for name in names:
        by_hop = {f"{h}hop": quality(r) for h, r in ranks[name].items()}
        every = [x for r in ranks[name].values() for x in r]
        results[name] = {
            "quality": {"all": quality(every), **by_hop},
            "time": {k: ms(v) for k, v in times[name].items()},
        }
    return {
        "benchmark": "ultrag executors on hand-written gold queries (MetaQA dev, 10 per hop)",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python benchmarks/ultrag_bench.py " + " ".join(sys.argv[1:]),
        "kg": {"entities": kg.num_entities, "relations": kg.num_relations, "triples": kg.num_triples},
        "settings": {
            "seppr": {"alpha": 0.85, "iterations": 5, "top_k": "per configuration (executor@k)"},
            "repeats": args.repeats,
            "ranking": "filtered (topic entity removed), expected rank under random tie-breaking",
        },
        "gold_answers_missing_from_kg": missing_answers,
        "machine": {
            "python": platform.python_version(),
            "cpu": first_line_value("/proc/cpuinfo", "model name"),
            "cores": os.cpu_count(),
            "load_average_at_end": [round(x, 2) for x in load],
            "numpy": module_version("numpy"),
            "scipy": module_version("scipy"),
            "torch": module_version("torch"),
        },
        "goal": {"symbolic@30000 total median_ms": 50.0},
        "results": results,
        "questions": per_question,
    }


def llm_check(args: argparse.Namespace) -> dict[str, Any]:
    from kgrag.methods.base import Trace
    from kgrag.methods.ultrag import Ultrag
    from kgrag.methods.ultrag.dsl import format_query
    from kgrag.models.llm import DEFAULT_LLM, load_llm
    from kgrag.retrieval.topics import resolve_topics

    kg = load_kg(Path(args.kg))
    wanted = args.llm_check.split(",")
    rows = [r for r in (json.loads(x) for x in GOLD.read_text("utf-8").splitlines() if x.strip()) if r["id"] in wanted]
    method = Ultrag(kg, llm=load_llm(args.llm or DEFAULT_LLM))
    out = []
    for row in rows:
        trace = Trace()
        topics = resolve_topics(kg, row["question"], row["topic_entities"])
        t0 = perf()
        query = method._write_query(row["question"], topics, trace)
        seconds = perf() - t0
        gold = format_query(parse_and_validate(row["query"], kg).query)
        record: dict[str, Any] = {
            "id": row["id"],
            "question": row["question"],
            "gold_query": gold,
            "outputs": [a["output"] for a in trace.steps[0].outputs["attempts"]],
            "query": format_query(query) if query else None,
            "valid": query is not None,
            "exact": query is not None and format_query(query) == gold,
            "seconds": round(seconds, 2),
        }
        if query is not None:
            executed, execution = method.run_query(query, Trace())
            top = {kg.entities[i] for i in execution.top(50)[0]} if execution is not None else set()
            record["executed"] = format_query(executed)
            record["gold_answer_in_top50"] = bool(top & set(row["answers"]))
        out.append(record)
        print(f"{row['id']}: {record['query']} (gold {gold}) top50 hit {record.get('gold_answer_in_top50')}")
    n = len(out)
    return {
        "check": "ultrag query writer with the default local LLM on gold-query questions (topics given, GBNF)",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python benchmarks/ultrag_bench.py " + " ".join(sys.argv[1:]),
        "llm": method.llm.model_id if method.llm else None,
        "summary": {
            "questions": n,
            "valid": sum(r["valid"] for r in out),
            "exact": sum(r["exact"] for r in out),
            "gold_answer_in_top50": sum(bool(r.get("gold_answer_in_top50")) for r in out),
            "llm_calls": sum(len(r["outputs"]) for r in out),
        },
        "questions": out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kg", default=str(ROOT / ".kgrag" / "metaqa"), help="KG store (else the bundled KB)")
    parser.add_argument(
        "--configs",
        nargs="+",
        default=["symbolic@30000", "neural@2000", "neural@5000", "neural@30000"],
        help="executor@k (k = SEPPR subgraph size)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per question and configuration")
    parser.add_argument("--out", default=None, help="JSON output (default under benchmarks/results/)")
    parser.add_argument("--llm-check", default=None, help="gold ids: check the query writer with a real LLM")
    parser.add_argument("--llm", default=None, help="LLM spec for --llm-check (default: the local default)")
    args = parser.parse_args()
    if args.llm_check:
        report = llm_check(args)
        out = args.out or str(RESULTS / "ultrag_query_writer.json")
        Path(out).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
        print(report["summary"], "->", out)
        return
    args.out = args.out or str(RESULTS / "ultrag.json")
    report = run(args)
    Path(args.out).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    for name, res in report["results"].items():
        q, t = res["quality"], res["time"]["total"]
        print(
            f"{name:15s} MRR {q['all']['mrr']:.3f} Hit@1 {q['all']['hit@1']:.3f} Hit@10 {q['all']['hit@10']:.3f} | "
            + " | ".join(f"{h} MRR {q[h]['mrr']:.3f}" for h in ("1hop", "2hop", "3hop"))
            + f" | non-LLM median {t['median_ms']:.1f} ms p95 {t['p95_ms']:.1f} ms"
        )
    print(f"-> {args.out} (load average {report['machine']['load_average_at_end']})")


if __name__ == "__main__":
    main()
