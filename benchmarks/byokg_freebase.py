"""A method on the Freebase sample's demo questions: is the answer right, and is it *shown* — do the triples of
the known answer path appear in the evidence the method returns?

The sample (``../shared/data/freebase_tiny``) ships questions with a gold answer and, for some, the KG path that
supports it. A right answer whose path is not in the evidence is a guess as far as the user can tell, so both are
reported. One ``Method.answer`` call per question, the question text only (entities are linked by the method).

    python benchmarks/byokg_freebase.py KG_DIR [--method byokg] [--llm SPEC] [--cache FILE] [--out FILE.json]

``KG_DIR`` comes from ``kgrag ingest .../freebase_tiny_kg.csv.gz --head head --relation relation --tail tail``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from kgrag.eval.metrics import hit, hit_at_1
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods.base import answer_or_failure
from kgrag.models.llm import load_llm

QUESTIONS = Path(__file__).resolve().parents[2] / "shared" / "data" / "freebase_tiny" / "demo_questions.jsonl"


def triple_id(kg: KnowledgeGraph, head: str, relation: str, tail: str) -> int | None:
    """The id of the triple ``(head, relation, tail)``, or ``None`` when the KG does not hold it."""
    hid = kg.find_entity(head)
    if hid is None:
        return None
    for tid in kg.out_edge_ids(hid):
        if kg.triple(int(tid)) == (head, relation, tail):
            return int(tid)
    return None


def run_one(kg: KnowledgeGraph, method, item: dict) -> dict:
    started = time.perf_counter()
    answer = answer_or_failure(method, item["question"])  # a failed LLM call is one failed question
    shown = {tid for ev in answer.evidence for tid in ev.triples}
    path = item.get("answer_path") or []
    path_ids = [triple_id(kg, *t) for t in path]
    return {
        "question": item["question"],
        "gold": item["answer"],
        "answers": answer.answers,
        "hit@1": hit_at_1(answer.answers, item["answer"]),
        "hit": hit(answer.answers, item["answer"]),
        "grounded": answer.grounded,
        "gold_path": [" -> ".join(t) for t in path],
        "gold_path_in_kg": all(t is not None for t in path_ids),
        # every hop of the known path is among the triples the evidence cites
        "gold_path_shown": bool(path_ids) and all(t in shown for t in path_ids if t is not None),
        "evidence": [ev.text for ev in answer.evidence],
        "llm_calls": answer.usage.llm_calls,
        "seconds": round(time.perf_counter() - started, 1),
        "error": answer.error,
        "trace": [{"name": s.name, "outputs": s.outputs} for s in answer.trace],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kg_dir")
    ap.add_argument("--questions", default=str(QUESTIONS))
    ap.add_argument("--method", default="byokg")
    ap.add_argument("--llm", default=None, help="LLM spec (default: the default local model)")
    ap.add_argument("--cache", default=None, help="LLM response cache (sqlite); a rerun replays it")
    ap.add_argument("--out", default="benchmarks/results/byokg_freebase.json")
    args = ap.parse_args()

    kg = KnowledgeGraph.load(args.kg_dir, verify=False)
    llm = load_llm(args.llm, cache=args.cache)
    method = get_method(args.method)(kg, llm=llm)
    items = [json.loads(line) for line in Path(args.questions).read_text(encoding="utf-8").splitlines() if line]
    items = [it for it in items if it.get("answer")]  # questions without a known answer cannot be scored
    rows = [run_one(kg, method, it) for it in items]
    report = {
        "what": f"{args.method} on the Freebase sample's demo questions that have a known answer",
        "kg": {"dir": args.kg_dir, "entities": kg.num_entities, "triples": kg.num_triples},
        "llm": getattr(llm, "model_id", str(llm)),
        "method": args.method,
        "n": len(rows),
        "hit@1": sum(r["hit@1"] for r in rows) / max(len(rows), 1),
        "gold_path_shown": sum(r["gold_path_shown"] for r in rows),
        "command": f"python benchmarks/byokg_freebase.py KG_DIR --method {args.method}",
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    for r in rows:
        shown = f"shown={r['gold_path_shown']} calls={r['llm_calls']}"
        print(f"{r['hit@1']:.0f} {shown} {r['question']} -> {r['answers'][:3]}")


if __name__ == "__main__":
    main()
