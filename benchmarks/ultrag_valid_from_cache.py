"""Share of valid ULTRAG queries in a finished `kgrag eval` run, read from its LLM response cache.

For runs made before results.jsonl carried the compact trace (newer runs: `e2e_summary.py --step-share
write_query.valid`). ULTRAG makes exactly two calls when the first query it writes is valid (writer, then
arbitrator or fallback answer) and a third after a retry, so questions with two calls had a valid query at the
first attempt. Cached responses that parse and validate as queries are counted too: at most one valid query
per question (no retry follows a valid one), so #valid / #questions is the share that got a valid query after
at most one retry (arbitrator replies that ignore the <answers> format never validate as queries).

    python benchmarks/ultrag_valid_from_cache.py RUN_DIR [RUN_DIR ...]   (the --out directories of kgrag eval)
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

from kgrag.graph.store import load_kg
from kgrag.methods.ultrag.dsl import parse_and_validate


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--kg", type=Path, default=Path(".kgrag/metaqa"), help="the KG the runs used")
    args = parser.parse_args()
    kg = load_kg(args.kg)
    for run in args.runs:
        with sqlite3.connect(run / "llm-cache.sqlite") as db:
            texts = [text for (text,) in db.execute("select text from responses")]
        rows = [json.loads(line) for line in (run / "ultrag" / "results.jsonl").read_text().splitlines() if line]
        writer = [t for t in texts if "answers>" not in t.lower()]
        valid = sum(parse_and_validate(first_line(t), kg).ok for t in writer)
        n = len(rows)
        result = {
            "run": str(run),
            "questions": n,
            "untagged_responses": len(writer),
            "valid_after_retry": round(valid / n, 4),
            "valid_first_attempt": round(sum(r["llm_calls"] == 2 for r in rows) / n, 4),
            "llm_calls_mean": round(sum(r["llm_calls"] for r in rows) / n, 3),
        }
        print(json.dumps(result))


if __name__ == "__main__":
    main()
