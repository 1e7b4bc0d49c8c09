"""What the strict misses of a Text2Cypher run are: presentation (the gold rows in another shape) or logic.

Strict execution accuracy (:mod:`kgrag.eval.execution`) wants the gold query's rows exactly, and the Northwind
gold queries choose their shape freely — a node here, its name and id there, for near-identical questions;
rows listed once or as often as they match; any 3 rows for "the first 3". This re-runs the gold and the
executed query of every strict miss of a ``text2cypher_bench.py`` run and sorts it into the first that holds:

- ``error``: the executed query does not run;
- ``repeats``: the same rows, listed a different number of times (DISTINCT or not);
- ``ties``: the gold ranks and cuts through tied rows and the query kept others of them (:mod:`kgrag.eval.ties`;
  ``text2cypher_bench.py`` reports strict with ties either way beside strict);
- ``columns``: as many rows, with other columns, every gold value among them (a node for its properties, one
  column more or less);
- ``limit``: with the final LIMIT removed from both queries, the rows are equal: another choice among rows;
- ``no rows``, ``other shape`` (every gold value is there, in another number of rows), ``other rows``.

The first four are presentation; ``strict if presentation were free`` counts them as right. A bound on what
reading the gold file's habits could add, not a score.

    python benchmarks/text2cypher_misses.py RUN.json --kg KG_DIR [--run NAME] [--out FILE.json]

``RUN.json`` is a ``text2cypher_bench.py`` output (or, with ``--run``, one of the named runs of
``benchmarks/results/text2cypher.json``); ``KG_DIR`` the Northwind store it ran on.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from kgrag.eval.execution import cell_key, relaxed_match, strict_match
from kgrag.eval.ties import match_with_ties, ties_of
from kgrag.graph.backends.ladybug import LadybugBackend
from kgrag.graph.kg import KnowledgeGraph

PRESENTATION = ("repeats", "ties", "columns", "limit")
_FINAL_LIMIT = re.compile(r"\s+LIMIT\s+\d+\s*;?\s*$", re.IGNORECASE)


def classify(backend: Any, question: dict[str, Any], row_cap: int, timeout: float) -> str:
    """The kind of one strict miss (module docstring)."""
    if not question["predicted"] or not question["ok"]:
        return "error"
    gold = backend.run(question["gold"], row_cap=row_cap, timeout=timeout, trusted=True)
    pred = backend.run(question["predicted"], row_cap=row_cap, timeout=timeout)
    if not pred.ok or not gold.ok:
        return "error"
    g = [tuple(cell_key(v) for v in row) for row in gold.rows]
    p = [tuple(cell_key(v) for v in row) for row in pred.rows]
    if set(g) == set(p):
        return "repeats"
    if match_with_ties(pred.rows, gold.rows, ties_of(backend, question["gold"], timeout)):
        return "ties"
    if len(g) == len(p) and g and p and len(g[0]) != len(p[0]) and relaxed_match(pred.rows, gold.rows):
        return "columns"
    if _same_without_limit(backend, question, row_cap, timeout):
        return "limit"
    if not p:
        return "no rows"
    return "other shape" if relaxed_match(pred.rows, gold.rows) else "other rows"


def _same_without_limit(backend: Any, question: dict[str, Any], row_cap: int, timeout: float) -> bool:
    gold, pred = (_FINAL_LIMIT.sub("", question[k].strip()) for k in ("gold", "predicted"))
    if gold == question["gold"].strip() and pred == question["predicted"].strip():
        return False  # neither has a final LIMIT
    g = backend.run(gold, row_cap=row_cap * 5, timeout=timeout, trusted=True)
    p = backend.run(pred, row_cap=row_cap * 5, timeout=timeout)
    return g.ok and p.ok and strict_match(p.rows, g.rows)


def breakdown(run: dict[str, Any], backend: Any) -> dict[str, Any]:
    """Counts of each kind over the run's strict misses, and strict accuracy with presentation free."""
    row_cap, timeout = int(run.get("row_cap", 1000)), float(run.get("timeout", 20))
    kinds: Counter[str] = Counter()
    by_question: dict[str, str] = {}
    for question in run["questions"]:
        if question["strict"]:
            continue
        kind = classify(backend, question, row_cap, timeout)
        kinds[kind] += 1
        by_question[question["id"]] = kind
    n = len(run["questions"])
    strict = sum(bool(q["strict"]) for q in run["questions"])
    return {
        "n": n,
        "strict": strict / n,
        "misses": dict(kinds.most_common()),
        "strict_ties": (strict + kinds["ties"]) / n,
        "strict_if_presentation_were_free": (strict + sum(kinds[k] for k in PRESENTATION)) / n,
        "by_question": by_question,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a text2cypher_bench.py output, or the results file with --run")
    ap.add_argument("--kg", type=Path, required=True, help="the Northwind KG store the run used")
    ap.add_argument("--run", dest="name", help="a named run of the results file")
    ap.add_argument("--out", type=Path, help="write the breakdown here as JSON")
    args = ap.parse_args(argv)
    run = json.loads(args.run.read_text())
    if args.name:
        run = run["runs"][args.name]
    backend = LadybugBackend(KnowledgeGraph.load(args.kg, verify=False))
    try:
        result = breakdown(run, backend)
    finally:
        backend.close()
    for kind, count in result["misses"].items():
        print(f"{count:5d}  {kind}{'  (presentation)' if kind in PRESENTATION else ''}")
    print(
        f"strict {result['strict']:.3f}; with ties either way {result['strict_ties']:.3f}; "
        f"with presentation free {result['strict_if_presentation_were_free']:.3f}"
    )
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main()
