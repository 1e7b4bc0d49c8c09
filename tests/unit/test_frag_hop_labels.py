"""FRAG-F's hop labels: what `kgrag eval` writes into a results row and `kgrag frag-train --from-results` reads."""

from __future__ import annotations

import json

import pytest

from kgrag.eval.datasets import Example
from kgrag.eval.runner import score_row
from kgrag.methods.frag.hop_labels import FIELD, answer_path_hops, rows_from_results
from kgrag.methods.frag.router import RouterError
from kgrag.types import Evidence

TWO_HOPS = Evidence(
    text="Heat starred_actors Al Pacino; Al Pacino starred_actors_inv Scarface",
    entities=["Heat", "Al Pacino", "Scarface"],
    relations=["starred_actors", "starred_actors_inv"],
)
ONE_HOP = Evidence(text="Heat directed_by Michael Mann", entities=["Heat", "Michael Mann"], relations=["directed_by"])
TRIPLE_TEXT = Evidence(text="Scarface is a film", entities=["Scarface"])


def test_the_label_is_the_length_of_the_first_path_ending_at_the_first_answer():
    assert answer_path_hops(["scarface"], [TRIPLE_TEXT, ONE_HOP, TWO_HOPS]) == 2
    assert answer_path_hops(["Michael Mann", "Scarface"], [TWO_HOPS, ONE_HOP]) == 1
    assert answer_path_hops(["Ridley Scott"], [ONE_HOP, TWO_HOPS]) is None
    assert answer_path_hops([], [ONE_HOP]) is None


def test_eval_rows_carry_the_label_and_training_reads_it_back(tmp_path):
    examples = [
        Example("q1", "who starred with Pacino in Heat's cast?", ["Scarface"]),
        Example("q2", "who directed Heat?", ["Michael Mann"]),
        Example("q3", "who wrote Heat?", ["Michael Mann"]),
    ]
    rows = [
        score_row(examples[0], ["Scarface"], [TWO_HOPS]),
        score_row(examples[1], ["Ridley Scott", "Michael Mann"], [ONE_HOP]),  # wrong first answer: no label
        score_row(examples[2], ["Ridley Scott"], [ONE_HOP]),
    ]
    assert [r[FIELD] for r in rows] == [2, None, None]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    assert rows_from_results(results) == [
        {"question": examples[0].question, "hops": 2, "answers": [], "topic_entities": []}
    ]


def test_only_correct_drops_labels_of_wrong_answers(tmp_path):
    wrong = score_row(Example("q", "who directed Heat?", ["Ridley Scott"]), ["Michael Mann"], [ONE_HOP])
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps(wrong) + "\n")
    assert len(rows_from_results(results)) == 1 and rows_from_results(results, only_correct=True) == []


def test_a_broken_results_file_names_its_line(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text('{"question": "q"}\n{oops\n')
    with pytest.raises(RouterError, match=r"results\.jsonl:2: not JSON"):
        rows_from_results(results)
    with pytest.raises(RouterError, match=r"missing\.jsonl"):
        rows_from_results(tmp_path / "missing.jsonl")
