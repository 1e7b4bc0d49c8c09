"""ultrag plumbing with the scripted LLM (no accuracy claims): query writing, retry, fallback, execution,
arbitration, evidence, trace; ``retrieve`` with a given query; the prompt prefix shared across questions."""

from __future__ import annotations

import json

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.hybrid import HybridLinker
from kgrag.methods import get
from kgrag.methods.base import MethodConfigError
from kgrag.methods.ultrag import Ultrag
from kgrag.methods.ultrag.dsl.anchors import gaussian_weights, link_leaf, link_leaves, seed_distribution
from kgrag.methods.ultrag.dsl.prompting import query_examples, relation_lines
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.prompts import load_prompt
from tests.conftest import run_cli


def _llm(*rules, default=None):
    return ScriptedLLM({"rules": list(rules), "default": default})


def _steps(answer):
    return [s.name for s in answer.trace]


def test_registered():
    assert get("ultrag") is Ultrag


def test_query_execute_arbitrate(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Michael Mann" -> directed_by_inv -> starred_actors'},
        {"prompt": "ultrag_answer", "match": "Al Pacino \\(1.00\\)", "response": "<answers>\nAl Pacino\n</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm).answer("which actors starred in films directed by Michael Mann")
    assert ans.error is None
    assert ans.answers == ["Al Pacino"]
    assert ans.usage.llm_calls == 2
    assert _steps(ans) == ["write_query", "link", "repair", "subgraph", "execute", "arbitrate"]
    assert ans.trace[2].outputs["notes"] == []
    execute = ans.trace[4].outputs
    assert {name for name, _ in execute["top"]} == {"Al Pacino", "Robert De Niro", "Russell Crowe"}
    triples = {tuple(ev.entities[:1] + ev.relations + ev.entities[1:]) for ev in ans.evidence}
    assert ("Heat", "starred_actors", "Al Pacino") in triples
    assert {("Heat", "directed_by", "Michael Mann"), ("The Insider", "directed_by", "Michael Mann")} & triples
    assert ans.grounded


def test_retry_once_with_the_error_message(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "match": "cannot be executed", "response": '"Heat" -> directed_by'},
        {"prompt": "ultrag_query", "response": '"Heat" -> director'},
        {"prompt": "ultrag_answer", "response": "<answers>Michael Mann</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm).answer("who directed Heat")
    assert ans.answers == ["Michael Mann"]
    assert ans.usage.llm_calls == 3
    attempts = ans.trace[0].outputs["attempts"]
    assert len(attempts) == 2
    assert "unknown relation 'director'" in attempts[0]["errors"][0]
    assert ans.trace[0].outputs["query"] == '"Heat" -> directed_by'


@pytest.mark.parametrize("junk", ["", "I am not sure.", "<query>", "AND(((", "```\n```", "\x00\x01"])
def test_junk_queries_fall_back_without_raising(movies_kg, junk):
    llm = _llm(
        {"prompt": "ultrag_query", "response": junk or " "},
        {"prompt": "ultrag_fallback", "response": "<answers>Michael Mann</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm, fallback="none").answer("who directed Heat")
    assert ans.error is None
    assert ans.answers == ["Michael Mann"]
    assert "fallback" not in _steps(ans)  # fallback="none": no retriever, straight to the answer prompt
    assert ans.trace[0].outputs["valid"] is False and len(ans.trace[0].outputs["attempts"]) == 2


def test_fallback_retrieval_through_the_registry(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Heat" -> nonsense'},
        {"prompt": "ultrag_fallback", "match": "Michael Mann", "response": "<answers>Michael Mann</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm, fallback="kaping", retries=0).answer("who directed Heat", ["Heat"])
    assert "fallback" in _steps(ans)
    assert ans.answers == ["Michael Mann"]
    assert ans.evidence and ans.grounded
    assert ans.usage.llm_calls == 2


def test_a_query_that_returns_nothing_falls_back(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Alien" -> starred_actors'},  # Alien has no actors here
        {"prompt": "ultrag_fallback", "response": "<answers>Sigourney Weaver</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm, fallback="none").answer("who starred in Alien")
    assert ans.answers == ["Sigourney Weaver"]
    assert "arbitrate" not in _steps(ans)


def test_wrong_direction_is_repaired_before_execution(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Russell Crowe" -> starred_actors -> directed_by'},
        {"prompt": "ultrag_answer", "match": "starred_actors_inv", "response": "<answers>Ridley Scott</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm).answer("who directed films starring Russell Crowe")
    assert ans.answers == ["Ridley Scott"]
    repair = ans.trace[[s.name for s in ans.trace].index("repair")].outputs
    assert repair["query"] == '"Russell Crowe" -> starred_actors_inv -> directed_by'
    assert len(repair["notes"]) == 1


def test_topics_are_named_to_the_query_writer(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "match": 'named in the question: "Heat"', "response": '"Heat" -> release_year'},
        {"prompt": "ultrag_answer", "response": "<answers>1995</answers>"},
    )
    assert Ultrag(movies_kg, llm=llm).answer("when was it released", ["Heat"]).answers == ["1995"]


def test_query_prompt_prefix_is_identical_across_questions(movies_kg):
    method = Ultrag(movies_kg, llm=_llm(default="x"))
    relations, examples = method._relation_prompt
    prompt = load_prompt("ultrag_query")
    fixed = {"relations": relations, "examples": examples, "topics": "", "feedback": ""}
    a = prompt.render(question="who directed Heat", **fixed)
    b = prompt.render(question="when was Alien released", **fixed)
    assert a[0] == b[0] and a[0]["role"] == "system"  # relation list and examples live in the fixed part
    for rel in movies_kg.relations:
        assert rel in a[0]["content"]
    assert "who directed Heat" not in a[0]["content"]


def test_query_examples_are_valid_queries_of_the_kg(movies_kg):
    from kgrag.methods.ultrag.dsl import parse_and_validate

    lines = query_examples(movies_kg).splitlines()
    assert len(lines) == 6
    for line in lines:
        assert parse_and_validate(line.split("Query: ")[1], movies_kg).ok, line


def test_relation_lines_show_both_directions(movies_kg):
    lines = relation_lines(movies_kg, range(movies_kg.num_relations)).splitlines()
    assert len(lines) == movies_kg.num_relations
    assert lines[0] == (
        '- directed_by: "The Insider" -> directed_by gives "Michael Mann"; '
        '"Michael Mann" -> directed_by_inv gives "The Insider"'
    )


def test_grammar_only_for_llamacpp_models(movies_kg):
    assert Ultrag(movies_kg, llm=_llm(default="x"))._use_grammar() is False
    assert Ultrag(movies_kg, llm=_llm(default="x"), grammar="on")._use_grammar() is True
    assert Ultrag(movies_kg, llm=_llm(default="x")).query_grammar.startswith("root ::= query")


def test_retrieve_needs_a_query(movies_kg):
    method = Ultrag(movies_kg)
    assert method.retrieve("who directed Heat") == []
    evidence = Ultrag(movies_kg, query='AND("Heat" -> starred_actors, "The Insider" -> starred_actors)').retrieve("x")
    assert {ev.text for ev in evidence} == {"Heat starred actors Al Pacino", "The Insider starred actors Al Pacino"}


def test_given_query_must_be_valid(movies_kg):
    from kgrag.methods.ultrag.dsl import DSLSyntaxError

    with pytest.raises(DSLSyntaxError, match="unknown relation"):
        Ultrag(movies_kg, query='"Heat" -> director').retrieve("x")


def test_unknown_settings_are_refused(movies_kg):
    with pytest.raises(MethodConfigError):
        Ultrag(movies_kg, executor="magic")
    with pytest.raises(MethodConfigError):
        Ultrag(movies_kg, top_k=3)


def test_neural_executor_through_the_method(movies_kg):
    pytest.importorskip("torch", reason="torch is not installed (pip install 'kgrag[neural]')")
    evidence = Ultrag(movies_kg, executor="neural", query='"Ridley Scott" -> directed_by_inv').retrieve("x")
    assert {ev.text for ev in evidence[:2]} == {"Gladiator directed by Ridley Scott", "Alien directed by Ridley Scott"}


# ---------------------------------------------------------------------- leaf linking and SEPPR seeds
def test_exact_leaves_are_crisp_and_others_soft(movies_kg):
    linker = HybridLinker(movies_kg, use_embedding=False)
    leaf = link_leaf(linker, "heat")
    assert leaf.crisp and leaf.members == {movies_kg.entity_id("Heat"): 1.0}
    soft = link_leaf(linker, "Micheal Man")
    assert not soft.crisp
    assert max(soft.members, key=soft.members.get) == movies_kg.entity_id("Michael Mann")
    assert abs(sum(soft.members.values()) - 1.0) < 1e-9


def test_gaussian_kernel_is_sharp_at_sigma_point_one():
    w = gaussian_weights([1.0, 0.95, 0.5], sigma=0.1)
    assert w[0] > 0.99 and w[1] < 0.01 and abs(w.sum() - 1) < 1e-12


def test_seed_distribution_uniform_for_crisp_and_summed_for_fuzzy(movies_kg):
    linker = HybridLinker(movies_kg, use_embedding=False)
    crisp = link_leaves(movies_kg, ["Heat", "Alien"], linker=linker)
    assert seed_distribution(crisp) == {movies_kg.entity_id("Heat"): 0.5, movies_kg.entity_id("Alien"): 0.5}
    mixed = link_leaves(movies_kg, ["Heat", "Micheal Man"], linker=linker)
    seeds = seed_distribution(mixed)
    assert abs(sum(seeds.values()) - 1) < 1e-9 and seeds[movies_kg.entity_id("Heat")] >= 0.5


# ---------------------------------------------------------------------- CLI
def test_cli_retrieve_and_ask_with_a_scripted_llm(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("Heat|directed_by|Michael Mann\nThe Insider|directed_by|Michael Mann\nHeat|release_year|1995\n")
    run_cli("ingest", str(kb), "--out", str(tmp_path / "kg"))
    proc = run_cli(
        "retrieve", str(tmp_path / "kg"), "films by Michael Mann", "--method", "ultrag",
        "--set", 'query="Michael Mann" -> directed_by_inv', "--json",
    )  # fmt: skip
    assert {ev["text"] for ev in json.loads(proc.stdout)["evidence"]} == {
        "Heat directed by Michael Mann",
        "The Insider directed by Michael Mann",
    }
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps({"prompt": "ultrag_query", "response": '"Heat" -> release_year'})
        + "\n"
        + json.dumps({"prompt": "ultrag_answer", "response": "<answers>1995</answers>"})
        + "\n"
    )
    proc = run_cli(
        "ask", str(tmp_path / "kg"), "when was Heat released", "--method", "ultrag", "--llm", f"scripted:{script}",
        "--json",
    )  # fmt: skip
    out = json.loads(proc.stdout)
    assert out["answers"] == ["1995"] and out["usage"]["llm_calls"] == 2


def test_movies_kg_fixture_unchanged(movies_kg):
    assert isinstance(movies_kg, KnowledgeGraph)
