"""The hand-written gold queries (fixture of the ultrag benchmark) are valid and right on the real MetaQA KB."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kgrag.graph.io import load_file
from kgrag.methods.ultrag.dsl import SymbolicExecutor, depth, leaves, parse_and_validate
from kgrag.methods.ultrag.dsl.anchors import link_leaves
from tests.conftest import BUNDLED_METAQA

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "ultrag_gold_queries.jsonl"
pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def kg():
    return load_file(BUNDLED_METAQA)


def test_gold_queries_return_the_gold_answers(kg):
    rows = [json.loads(line) for line in GOLD.read_text("utf-8").splitlines()]
    assert len(rows) == 30 and sorted({r["hop"] for r in rows}) == [1, 2, 3]
    executor = SymbolicExecutor(kg)
    recalls = []
    for row in rows:
        check = parse_and_validate(row["query"], kg)
        assert check.ok and not check.notes, (row["id"], check.errors, check.notes)
        assert depth(check.query) == row["hop"], row["id"]
        linked = link_leaves(kg, leaves(check.query))
        assert all(leaf.crisp for leaf in linked.values()), row["id"]  # topic names are KG names
        scores = executor.execute(check.query, {m: leaf.members for m, leaf in linked.items()}).scores
        found = {kg.entities[i] for i in np.flatnonzero(scores)}
        gold = set(row["answers"])
        recalls.append(len(found & gold) / len(gold))
    # MetaQA's answers are the KB's own edges, so a right query finds (nearly) all of them
    assert min(recalls) > 0.5 and float(np.mean(recalls)) > 0.95, recalls
