"""Evaluation harness: hand-computed metrics, dataset readers, resumable runner, report."""

from __future__ import annotations

import gzip
import json

import pytest

from kgrag.errors import KGFormatError
from kgrag.eval.datasets import Example, load_dataset, select
from kgrag.eval.metrics import (
    answer_recall,
    exact_match,
    hit,
    hit_at_1,
    hit_at_k,
    normalize_answer,
    precision_recall_f1,
    reciprocal_rank,
    rows_match,
)
from kgrag.eval.runner import bootstrap_ci, compact_trace, evaluate_method, summarise
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.base import Method, registry
from kgrag.types import Step
from tests.conftest import MOVIES, SHARED_DATA, run_cli


def test_normalize_answer():
    assert normalize_answer("  The_Matrix. ") == "the matrix"
    assert normalize_answer('"Heat"') == "heat"
    assert normalize_answer("Mr. Smith Goes  to Washington") == "mr. smith goes to washington"


def test_metrics_by_hand():
    gold = ["Heat", "The Insider", "Collateral"]
    pred = ["thief", "heat", "the insider", "Ali"]
    assert hit(pred, gold) == 1.0 and hit_at_1(pred, gold) == 0.0
    p, r, f1 = precision_recall_f1(pred, gold)
    assert (p, r) == (0.5, 2 / 3) and f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert exact_match(["collateral", "Heat", "the_insider"], gold) == 1.0
    assert exact_match(pred, gold) == 0.0
    assert reciprocal_rank(pred, gold) == 0.5 and reciprocal_rank(["x"], gold) == 0.0
    assert hit_at_k(pred, gold, 1) == 0.0 and hit_at_k(pred, gold, 2) == 1.0
    assert precision_recall_f1([], gold) == (0.0, 0.0, 0.0)
    assert answer_recall(["Heat", "Michael Mann", "collateral"], gold) == pytest.approx(2 / 3)
    assert answer_recall([], []) == 0.0


def test_rows_match_multiset_and_order():
    assert rows_match([[1, "a"], [2, "b"]], [[2.0, "B"], [1, "a"]])
    assert not rows_match([[1, "a"]], [[1, "a"], [1, "a"]])  # multiplicity counts
    assert not rows_match([[1], [2]], [[2], [1]], ordered=True)


def test_metaqa_reader(tmp_path):
    qa = tmp_path / "qa_2hop_dev.txt"
    qa.write_text("who directed the films starring [Al Pacino]\tMichael Mann|Sidney Lumet\nbroken line\n")
    with pytest.raises(KGFormatError, match=r"qa_2hop_dev.txt:2: expected 'question<TAB>"):
        load_dataset(f"metaqa:{qa}")
    qa.write_text("who directed the films starring [Al Pacino]\tMichael Mann|Sidney Lumet\n")
    (tmp_path / "qa_2hop_dev_qtype.txt").write_text("actor_to_movie_to_director\n")
    (ex,) = load_dataset(f"metaqa:{qa}")
    assert ex.question == "who directed the films starring Al Pacino"
    assert ex.topic_entities == ["Al Pacino"] and ex.answers == ["Michael Mann", "Sidney Lumet"]
    assert ex.group == "2hop" and ex.meta["qtype"] == "actor_to_movie_to_director"
    (dropped,) = load_dataset(f"metaqa:{qa}?topic=drop")
    assert dropped.topic_entities == [] and dropped.question == ex.question


def test_jsonl_reader_and_sampling(tmp_path):
    path = tmp_path / "q.jsonl"
    rows = [{"question": f"q{i}", "answers": [f"a{i}"], "group": "g" + str(i % 2)} for i in range(10)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    examples = load_dataset(f"jsonl:{path}")
    assert len(examples) == 10 and examples[3].answers == ["a3"]
    sampled = select(examples, sample=2, seed=1)
    assert len(sampled) == 4 and {e.group for e in sampled} == {"g0", "g1"}
    assert select(examples, sample=2, seed=1) == sampled  # reproducible
    assert len(select(examples, limit=3)) == 6


def test_text_reader_reads_one_question_a_line_without_answers(tmp_path):
    path = tmp_path / "asked.txt"
    path.write_text("who directed Heat\n\n  what genre is Alien  \n", "utf-8")
    first, second = load_dataset(f"text:{path}")
    assert (first.question, first.answers, first.topic_entities) == ("who directed Heat", [], [])
    assert second.question == "what genre is Alien" and second.id == "q3"  # ids are line numbers
    with pytest.raises(KGFormatError, match="no such question file"):
        load_dataset(f"text:{tmp_path / 'missing.txt'}")


class _Flaky(Method):
    """Answers with the topic entity; fails on questions containing 'boom'."""

    name = "flaky-test"
    needs_llm = False
    calls = 0

    def _answer(self, question, topic_entities, trace):
        type(self).calls += 1
        if "boom" in question:
            raise RuntimeError("exploded")
        return list(topic_entities), []


if "flaky-test" not in registry:
    registry.register("flaky-test")(_Flaky)


def test_runner_captures_errors_and_resumes(tmp_path):
    kg = KnowledgeGraph.from_triples(MOVIES)
    qa = tmp_path / "qa_1hop_dev.txt"
    qa.write_text("who is [Heat]\tHeat\nboom [Alien]\tAlien\nwhat is [Gladiator]\tRussell Crowe\n")
    examples = load_dataset(f"metaqa:{qa}")
    _Flaky.calls = 0
    rows = evaluate_method(kg, "flaky-test", examples[:2], tmp_path / "out")
    assert [r["hit@1"] for r in rows] == [1.0, 0.0]
    assert rows[1]["error"] == "RuntimeError: exploded"
    with open(tmp_path / "out" / "flaky-test" / "results.jsonl", "a") as fh:
        fh.write('{"id": "torn')  # a crash mid-write
    rows = evaluate_method(kg, "flaky-test", examples, tmp_path / "out")
    assert _Flaky.calls == 3  # only the new question ran
    assert len(rows) == 3
    summary = summarise(rows)
    assert summary["n"] == 3 and summary["errors"] == 1 and summary["hit@1"] == pytest.approx(1 / 3, abs=1e-4)


def test_summary_and_report_give_the_median_of_prompt_tokens_read(tmp_path):
    from kgrag.eval.report import write_report
    from kgrag.eval.runner import score_row

    ex = Example("q", "who directed Heat?", ["Michael Mann"])
    rows = [
        score_row(ex, ["Michael Mann"], [], llm_calls=1, prompt_tokens=p, evaluated_prompt_tokens=e, seconds=s)
        for p, e, s in [(600, 100, 2.0), (620, 120, 3.0), (2000, 1500, 30.0)]
    ]
    summary = summarise(rows)
    assert summary["evaluated_prompt_tokens_median"] == 120 and summary["prompt_tokens_median"] == 620
    assert summary["evaluated_prompt_tokens"] == pytest.approx(1720 / 3, abs=1e-3)
    assert summary["seconds_median"] == 3.0
    report = write_report(tmp_path, {"frag": rows}, {"kg": "k"}).read_text()
    assert "| method | LLM calls | prompt tokens | evaluated prompt tokens |" in report
    assert "| frag | 1.0 | 620 | 120 | 0 | 3.00 |" in report


def test_bootstrap_ci_brackets_the_mean():
    low, high = bootstrap_ci([0, 1] * 50)
    assert low < 0.5 < high and high - low < 0.3
    assert bootstrap_ci([1.0]) == (1.0, 1.0)


def test_cli_eval_writes_contract_files(tmp_path):
    store = KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg")
    qa = tmp_path / "q.jsonl"
    qa.write_text(json.dumps({"question": "who directed Heat", "answers": ["Michael Mann"]}) + "\n")
    proc = run_cli(
        "eval",
        str(store),
        "-d",
        f"jsonl:{qa}",
        "--method",
        "noop",
        "--out",
        str(tmp_path / "ev"),
        ok=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "noop: 1/1 hit@1 0.000" in proc.stderr  # not a terminal: a line per question instead of a bar
    summary = json.loads((tmp_path / "ev" / "summary.json").read_text())
    assert set(summary["noop"]) >= {
        "n",
        "hit",
        "hit@1",
        "em",
        "f1",
        "answer_recall",
        "evidence_triples",
        "llm_calls",
        "seconds_per_question",
    }
    assert (tmp_path / "ev" / "report.md").read_text().startswith("# kgrag evaluation report")
    assert json.loads((tmp_path / "ev" / "noop" / "results.jsonl").read_text())["gold"] == ["Michael Mann"]


def _text2cypher_question(tmp_path, gold: str):
    """The movies KG and one Text2Cypher question whose gold query is ``gold``, its gold rows filled in."""
    from kgrag.eval.runner import fill_gold_from_cypher
    from kgrag.graph.backends.ladybug import LadybugBackend

    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    path = tmp_path / "t2c.jsonl"
    path.write_text(json.dumps({"question": "films by Michael Mann", "cypher": gold, "type": "simple"}) + "\n")
    examples = load_dataset(f"text2cypher:{path}")
    assert fill_gold_from_cypher(examples, LadybugBackend(kg)) == 1
    return kg, examples


def test_text2cypher_gold_and_execution_accuracy(tmp_path):
    from kgrag.eval.runner import run_question
    from kgrag.methods import get as get_method
    from kgrag.models.llm.scripted import ScriptedLLM

    gold = "MATCH (m:Entity)-[:directed_by]->(d:Entity {name: 'Michael Mann'}) RETURN m.name"
    kg, examples = _text2cypher_question(tmp_path, gold)
    assert sorted(examples[0].answers) == ["Heat", "The Insider"]
    same_rows = "MATCH (d:Entity {name: 'Michael Mann'})<-[:directed_by]-(m) RETURN m.name"
    for query, expected in ((same_rows, 1.0), ("MATCH (m:Entity {name: 'Heat'}) RETURN m.name", 0.0)):
        llm = ScriptedLLM({"default": f"<cypher>{query}</cypher>"})
        row = run_question(get_method("cypher")(kg, llm=llm), examples[0], False)
        assert row["execution_accuracy"] == expected
        # the compact trace keeps scalar outputs (the query text) and drops the result rows
        cypher_step = next(s for s in row["steps"] if "result_rows" not in s and s.get("llm_calls") == 1)
        assert json.dumps(row["steps"]) and cypher_step["name"]
    assert summarise([row])["execution_accuracy"] == 0.0


def test_text2cypher_gold_returning_whole_nodes_answers_with_their_names(tmp_path):
    from kgrag.eval.runner import run_question
    from kgrag.methods import get as get_method
    from kgrag.models.llm.scripted import ScriptedLLM

    gold = "MATCH (m:Entity)-[:directed_by]->(d:Entity {name: 'Michael Mann'}) RETURN m"
    kg, examples = _text2cypher_question(tmp_path, gold)
    assert sorted(examples[0].answers) == ["Heat", "The Insider"]  # not the nodes' dict text
    # a method whose query returns the same nodes answers with their names too
    llm = ScriptedLLM({"default": f"<cypher>{gold}</cypher>"})
    row = run_question(get_method("cypher")(kg, llm=llm), examples[0], False)
    assert row["hit@1"] == 1.0 and row["execution_accuracy"] == 1.0


def test_compact_trace_keeps_short_values_and_lists_drops_bulk():
    step = Step(
        name="kg_linker",
        outputs={
            "answers": ["Michael Mann", "Ridley Scott"],
            "finish": False,
            "query": "x" * 201,
            "links": {"Heat": ["Heat"]},
            "evidence": [f"fact {i}" for i in range(11)],
        },
        llm_calls=1,
    )
    assert compact_trace([step]) == [
        {"name": "kg_linker", "answers": ["Michael Mann", "Ridley Scott"], "finish": False, "llm_calls": 1}
    ]


def test_webqsp_reader_takes_topic_names(tmp_path):
    path = tmp_path / "webqsp.json"
    items = [
        {
            "QuestionId": "WebQTest-1",
            "RawQuestion": "what does jamaican people speak?",
            "answer": ["Jamaican English", "Jamaican Creole English Language"],
            "topic_entity": {"m.03_r3": "Jamaica"},
        },
        {"QuestionId": "WebQTest-2", "RawQuestion": "who?", "answer": [], "topic_entity": {}},
    ]
    path.write_text(json.dumps(items))
    first, second = load_dataset(f"webqsp:{path}")
    assert (first.id, first.topic_entities) == ("WebQTest-1", ["Jamaica"])
    assert first.answers == ["Jamaican English", "Jamaican Creole English Language"]
    assert second.answers == [] and second.topic_entities == []
    assert load_dataset(f"webqsp:{path}?topic=drop")[0].topic_entities == []
    path.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(Exception, match="expected a JSON list"):
        load_dataset(f"webqsp:{path}")


def test_cwq_reader_groups_by_composition(tmp_path):
    path = tmp_path / "cwq.json.gz"
    item = {
        "ID": "WebQTest-1384_744a",
        "question": "What is the predominant religion where the leader is Ovadia Yosef?",
        "answer": "Judaism",
        "topic_entity": {"m.02qmnw": "Ovadia Yosef"},
        "compositionality_type": "composition",
    }
    with gzip.open(path, "wt") as fh:
        json.dump([item, {"ID": "x"}], fh)
    with pytest.raises(Exception, match=r"question 2: needs a 'question' string"):
        load_dataset(f"cwq:{path}")
    with gzip.open(path, "wt") as fh:
        json.dump([item], fh)
    (ex,) = load_dataset(f"cwq:{path}")
    assert (ex.answers, ex.topic_entities, ex.group) == (["Judaism"], ["Ovadia Yosef"], "composition")


@pytest.mark.parametrize(
    ("spec", "count"), [("webqsp:webqsp/webqsp_test_shared.json", 820), ("cwq:cwq/cwq_test_shared.json.gz", 1766)]
)
def test_readers_on_the_shared_files(spec, count):
    kind, _, rel = spec.partition(":")
    if not (SHARED_DATA / rel).exists():
        pytest.skip(f"shared data not available here: {SHARED_DATA / rel}")
    examples = load_dataset(f"{kind}:{SHARED_DATA / rel}")
    assert len(examples) == count
    assert sum(bool(ex.topic_entities) for ex in examples) >= count - 1
    assert all(ex.question and not ex.question.startswith("m.") for ex in examples)
