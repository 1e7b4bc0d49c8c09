"""BYOKG-RAG on Northwind Text2Cypher pairs: execution accuracy of its graph query, and the accuracy of the full
method's answers — both from one public ``Method.answer`` call per question.

The query is round 1's: on a property graph text2cypher's writer's (the attempt it answered from), else the
``<opencypher>`` KG-Linker wrote (``--set``-free: the method's default ``cypher_writer``), run guarded on the
Ladybug backend: its rows are compared with the gold query's rows (multisets; ordered when the gold query
orders). The final answers are scored like ``kgrag eval`` scores Text2Cypher questions: against the first
column of the gold rows (Hit@1: the first answer is one of them). A handful of questions only: a question
takes 3+ LLM calls of ~10 s each on the default local model.

    python benchmarks/byokg_northwind.py KG_DIR [--n 10] [--method byokg] [--llm SPEC] [--pairs FILE] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kgrag.eval.datasets import load_dataset, select
from kgrag.eval.metrics import normalize_answer, rows_match
from kgrag.eval.runner import fill_gold_from_cypher
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods.base import answer_or_failure
from kgrag.models.llm import load_llm

WRITERS = ("kg_linker", "write_cypher")  # the trace steps that hold a written query (KG-Linker's or text2cypher's)
PAIRS = Path(__file__).resolve().parents[2] / "shared" / "data" / "northwind" / "text2cypher_northwind.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kg_dir")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--llm", default=None)
    ap.add_argument(
        "--method", default="byokg", help="a byokg variant (byokg, byokg-scoring, byokg-agentic) or the cypher baseline"
    )
    ap.add_argument("--pairs", type=Path, default=PAIRS, help="the Northwind question/Cypher pairs (JSONL)")
    ap.add_argument("--cache", default=None)
    ap.add_argument("--out", default="benchmarks/results/byokg_northwind.json")
    args = ap.parse_args()

    kg = KnowledgeGraph.load(args.kg_dir, verify=False)
    llm = load_llm(args.llm, cache=args.cache)
    row_cap = {"row_cap": 1000} if args.method == "cypher" else {"cypher_row_cap": 1000}
    method = get_method(args.method)(kg, llm=llm, **row_cap)
    examples = select(load_dataset(f"text2cypher:{args.pairs}"), sample=2, seed=args.seed)
    fill_gold_from_cypher(examples, method.backend)
    examples = [ex for ex in examples if "gold_rows" in ex.meta][: args.n]
    rows: list[dict] = []
    for ex in examples:
        rows.append(run_one(method, ex))
        print(json.dumps(rows[-1]), flush=True)
        write(args, llm, rows)  # after every question: a slow run can be stopped and still report


def run_one(method, ex) -> dict:
    answer = answer_or_failure(method, ex.question)  # a failed LLM call is one failed question
    # byokg: round 1's query (KG-Linker's, or on a property graph text2cypher's: the attempt it answered from)
    # and its guarded run; the cypher baseline: its one query and run
    runs = [s for s in answer.trace if s.name in ("cypher", "execute")]
    step = next((s for s in runs if s.outputs.get("answered")), runs[0] if runs else None)
    writes = (s.outputs.get("opencypher") or s.outputs.get("cypher") for s in answer.trace if s.name in WRITERS)
    written = next((query for query in writes if query), None)
    result_rows = step.outputs["result_rows"] if step else []
    ordered = "order by" in ex.meta["cypher"].lower()
    ok = bool(step and step.outputs["ok"])
    gold = {normalize_answer(a) for a in ex.answers}
    return {
        "question": ex.question,
        "type": ex.group,
        "gold_cypher": ex.meta["cypher"],
        "generated": written,
        "executed": step.outputs.get("executed") if step else None,
        "ok": ok,
        "error": (step.outputs.get("error") if step else "no query written") if not ok else None,
        "rows": len(result_rows),
        "gold_rows": len(ex.meta["gold_rows"]),
        "execution_match": bool(ok and rows_match(result_rows, ex.meta["gold_rows"], ordered)),
        "answers": answer.answers[:10],
        "gold_answers": ex.answers[:10],
        "answer_hit@1": bool(answer.answers and normalize_answer(answer.answers[0]) in gold),
        "llm_calls": answer.usage.llm_calls,
        "answer_error": answer.error,
        "seconds": round(answer.usage.seconds, 2),
    }


def write(args, llm, rows: list[dict]) -> None:
    n = len(rows)
    summary = {
        "method": f"{args.method}: its Cypher query (byokg: round 1's, by its cypher_writer) and final answers",
        "kg": args.kg_dir,
        "llm": getattr(llm, "model_id", str(llm)),
        "pairs": str(args.pairs),
        "selection": f"2 per question type, seed {args.seed}, first {args.n} with gold rows",
        "n": n,
        "query_written": sum(1 for r in rows if r["generated"]),
        "executes": sum(1 for r in rows if r["ok"]),
        "execution_accuracy": round(sum(r["execution_match"] for r in rows) / n, 4) if n else None,
        "answer_hit@1": round(sum(r["answer_hit@1"] for r in rows) / n, 4) if n else None,
        "llm_calls_mean": round(sum(r["llm_calls"] for r in rows) / n, 2) if n else None,
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
