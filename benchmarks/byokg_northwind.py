"""Execution accuracy of BYOKG-RAG's ``<opencypher>`` artifact on Northwind Text2Cypher pairs.

One KG-Linker call per question (round 1, no context), the generated query run guarded on the Ladybug backend,
its rows compared with the gold query's rows (multisets; ordered when the gold query orders).  A handful of
questions only: each call takes ~10 s on the default local model (minutes on a loaded machine).

    python benchmarks/byokg_northwind.py KG_DIR [--n 10] [--llm SPEC] [--out benchmarks/results/byokg_northwind.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from kgrag.eval.datasets import load_dataset, select
from kgrag.eval.metrics import rows_match
from kgrag.eval.runner import fill_gold_from_cypher
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods.base import Trace
from kgrag.methods.byokg import _Context
from kgrag.models.llm import load_llm

PAIRS = Path(__file__).resolve().parents[2] / "shared" / "data" / "northwind" / "text2cypher_northwind.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kg_dir")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--llm", default=None)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--out", default="benchmarks/results/byokg_northwind.json")
    args = ap.parse_args()

    kg = KnowledgeGraph.load(args.kg_dir, verify=False)
    llm = load_llm(args.llm, cache=args.cache)
    method = get_method("byokg-scoring")(kg, llm=llm, cypher_row_cap=1000)
    examples = select(load_dataset(f"text2cypher:{PAIRS}"), sample=2, seed=args.seed)
    fill_gold_from_cypher(examples, method.backend)
    examples = [ex for ex in examples if "gold_rows" in ex.meta][: args.n]
    rows: list[dict] = []
    for ex in examples:
        rows.append(run_one(method, ex))
        print(json.dumps(rows[-1]), flush=True)
        write(args, llm, rows)  # after every question: a slow run can be stopped and still report


def run_one(method, ex) -> dict:
    start = time.perf_counter()
    trace = Trace()
    art = method._kg_linker(ex.question, _Context(), [], 1, trace)
    if art.query:
        method._graph_query(art.query, _Context(), trace)
    step = next((s for s in trace.steps if s.name == "cypher"), None)
    result_rows = step.outputs["result_rows"] if step else []
    ordered = "order by" in ex.meta["cypher"].lower()
    match = bool(step and step.outputs["ok"] and rows_match(result_rows, ex.meta["gold_rows"], ordered))
    return {
        "question": ex.question,
        "type": ex.group,
        "gold_cypher": ex.meta["cypher"],
        "generated": art.query,
        "executed": step.outputs.get("executed") if step else None,
        "ok": bool(step and step.outputs["ok"]),
        "error": step.outputs.get("error") if step else "no query written",
        "rows": len(result_rows),
        "gold_rows": len(ex.meta["gold_rows"]),
        "execution_match": match,
        "seconds": round(time.perf_counter() - start, 2),
    }


def write(args, llm, rows: list[dict]) -> None:
    n = len(rows)
    summary = {
        "method": "byokg (KG-Linker <opencypher> artifact, round 1)",
        "kg": args.kg_dir,
        "llm": getattr(llm, "model_id", str(llm)),
        "pairs": str(PAIRS),
        "selection": f"2 per question type, seed {args.seed}, first {args.n} with gold rows",
        "n": n,
        "query_written": sum(1 for r in rows if r["generated"]),
        "executes": sum(1 for r in rows if r["ok"]),
        "execution_accuracy": round(sum(r["execution_match"] for r in rows) / n, 4) if n else None,
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
