"""BYOKG-RAG plumbing with the scripted LLM: KG-Linker parsing, every strategy on and off, iteration and
self-termination, fallbacks, LLM-free retrieval.  Never accuracy (the LLM's answers are canned)."""

from __future__ import annotations

import re

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods.base import MethodConfigError
from kgrag.methods.byokg.artifacts import Artifacts
from kgrag.methods.byokg.context import Context
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.prompts import load_prompt
from kgrag.types import Evidence
from tests.conftest import MOVIES, RecordingLLM

QUESTION = "Who directed the films Al Pacino starred in?"
LINKER = (
    "<entities>\nAl Pacino\n</entities>\n<paths>\nstarred_actors -> directed_by\n</paths>\n"
    "<opencypher>\nMATCH (a:Entity {name: 'Al Pacino'})<-[:starred_actors]-(m)-[:directed_by]->(d) "
    "RETURN DISTINCT d.name\n</opencypher>\n<answers>\n{answer}\n</answers>"
)
STRATEGY_STEPS = {
    "paths": "paths",
    "shortest_paths": "shortest_paths",
    "cypher": "cypher",
    "agentic": "agentic",
    "graph_reranker": "graph_reranker",
    "text_retrieval": "text_retrieval",
}


# The best-connected film: the schema's example triples come from it, away from the questions' answers.
CASINO = [
    ("Casino", "directed_by", "Martin Scorsese"),
    ("Casino", "written_by", "Nicholas Pileggi"),
    ("Casino", "starred_actors", "Sharon Stone"),
    ("Casino", "starred_actors", "Joe Pesci"),
    ("Casino", "starred_actors", "Robert De Niro"),
    ("Casino", "release_year", "1995"),
]


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    triples = MOVIES + CASINO
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(triples).save(tmp_path_factory.mktemp("kg") / "kg"))


def rules(answer: str = "Michael Mann", second: str | None = None, final: str = "<answers>\nMichael Mann\n</answers>"):
    linker = [LINKER.replace("{answer}", answer)]
    if second is not None:
        linker.append(second)
    return [
        {"prompt": "byokg_linker", "responses": linker},
        {"prompt": "byokg_select_relations", "response": "<selected>\nstarred_actors\n</selected>"},
        {"prompt": "byokg_select_entities", "response": "<next-entities>\nFINISH\n</next-entities>"},
        {"prompt": "byokg_answer", "response": final},
    ]


def script(answer: str = "Michael Mann", second: str | None = None, final: str = "<answers>\nMichael Mann\n</answers>"):
    return ScriptedLLM({"rules": rules(answer, second, final)})


def steps(answer) -> list[str]:
    return [s.name for s in answer.trace]


def calls(answer, prompt: str) -> int:
    return sum(1 for c in answer.usage.calls if c.prompt == prompt)


# ---------------------------------------------------------------------- KG-Linker output parsing
def test_linker_output_well_formed():
    art = Artifacts(LINKER.replace("{answer}", "Michael Mann"))
    assert art.entities == ["Al Pacino"] and art.paths == ["starred_actors -> directed_by"]
    assert art.query.startswith("MATCH (a:Entity") and art.query.endswith("RETURN DISTINCT d.name")
    assert art.answers == ["Michael Mann"] and not art.finish


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {"entities": [], "paths": [], "opencypher": "", "answers": []}),
        ("I do not know.", {"entities": [], "paths": [], "opencypher": "", "answers": []}),
        ("<answers>\nHeat\n</answers>", {"entities": [], "paths": [], "opencypher": "", "answers": ["Heat"]}),
        (  # unclosed and mismatched tags, singular names, bullets
            "<Entity>\n- Heat\n<path>directed_by</paths>\n<answer>Michael Mann",
            {"entities": ["Heat"], "paths": ["directed_by"], "opencypher": "", "answers": ["Michael Mann"]},
        ),
        (  # everything inside a code fence, query under another tag name with its own fence
            "```xml\n<entities>Heat</entities>\n<cypher>\n```cypher\nMATCH (m) RETURN m.name\n```\n</cypher>\n```",
            {"entities": ["Heat"], "paths": [], "opencypher": "MATCH (m) RETURN m.name", "answers": []},
        ),
        (  # no opencypher tag: the fenced query in the text is used
            "<entities>Heat</entities>\n```cypher\nMATCH (m)-[:directed_by]->(d) RETURN d.name\n```",
            {"entities": ["Heat"], "paths": [], "opencypher": "MATCH (m)-[:directed_by]->(d) RETURN d.name"},
        ),
        ("<<<answers>>> ``` </opencypher", {"entities": [], "paths": [], "opencypher": ""}),
    ],
)
def test_linker_output_tolerates_format_slips(text, expected):
    got = Artifacts(text).as_json()
    for key, value in expected.items():
        assert got[key] == value, key


def test_linker_finish():
    art = Artifacts("<entities>\nFINISH\n</entities>\n<answers>Michael Mann</answers>")
    assert art.finish and art.entities == [] and art.answers == ["Michael Mann"]


# ---------------------------------------------------------------------- the whole method
def test_full_run_uses_every_strategy_and_is_accounted(kg):
    answer = get_method("byokg")(kg, llm=script()).answer(QUESTION)
    names = steps(answer)
    for step in ("kg_linker", "link", *STRATEGY_STEPS.values(), "answer"):
        assert step in names, step
    assert answer.answers == ["Michael Mann"] and answer.error is None and answer.grounded
    assert answer.usage.llm_calls == sum(s.llm_calls for s in answer.trace) == len(answer.usage.calls)
    sources = {ev.source for ev in answer.evidence}
    assert {"path", "cypher", "agentic", "reranker"} <= sources
    path = next(ev for ev in answer.evidence if ev.source == "path")
    assert path.entities == ["Al Pacino", "Heat", "Michael Mann"] or path.entities[-1] == "Michael Mann"
    cypher = next(s for s in answer.trace if s.name == "cypher")
    assert cypher.outputs["ok"] and cypher.outputs["result_rows"] == [["Michael Mann"]]


@pytest.mark.parametrize("flag", sorted(STRATEGY_STEPS))
def test_each_strategy_switches_off(kg, flag):
    on = get_method("byokg")(kg, llm=script(answer="Ridley Scott")).answer(QUESTION)
    off = get_method("byokg")(kg, llm=script(answer="Ridley Scott"), **{flag: False}).answer(QUESTION)
    assert STRATEGY_STEPS[flag] in steps(on) and STRATEGY_STEPS[flag] not in steps(off)
    assert off.error is None and off.answers


def test_without_cypher_the_linker_is_not_asked_for_a_query(kg):
    def linker_prompt(method) -> str:  # the instructions are the system message, so match the whole prompt
        task, fmt = method.query_prompt_parts
        messages = load_prompt("byokg_linker").render(
            schema="", schema_note="", context="", question="Who directed Heat?", query_task=task, query_format=fmt
        )
        return "\n".join(m["content"] for m in messages)

    llm = ScriptedLLM({"rules": [], "default": "<answers>Michael Mann</answers>"})
    off = get_method("byokg")(kg, llm=llm, cypher=False, iterations=1)
    assert "opencypher" not in linker_prompt(off)
    assert off.answer("Who directed Heat?").error is None
    on = get_method("byokg")(kg, llm=llm, iterations=1)
    assert "<opencypher>" in linker_prompt(on)


def test_unusable_cypher_backend_skips_the_step(kg):
    method = get_method("byokg")(kg, llm=script(), cypher_backend="nosuch://backend", iterations=1)
    answer = method.answer(QUESTION)
    assert "cypher" not in steps(answer) and answer.error is None
    linker = next(s for s in answer.trace if s.name == "kg_linker")
    assert "nosuch" in linker.outputs["cypher_skipped"]


def test_supported_drafts_stop_after_one_round(kg):
    answer = get_method("byokg-scoring")(kg, llm=script(answer="Michael Mann")).answer(QUESTION)
    assert calls(answer, "byokg_linker") == 1 and "self_terminate" in steps(answer)
    assert answer.usage.llm_calls == 2  # the scoring variant: KG-Linker + the final answer


def test_unsupported_drafts_get_a_second_round_with_the_context(kg):
    second = "<entities>\nHeat\n</entities>\n<answers>\nAl Pacino\n</answers>"  # the topic: never support
    llm = script(answer="Ridley Scott", second=second)
    answer = get_method("byokg-scoring")(kg, llm=llm).answer(QUESTION)
    assert calls(answer, "byokg_linker") == 2 and "self_terminate" not in steps(answer)
    rounds = [s.inputs["round"] for s in answer.trace if s.name == "kg_linker"]
    assert rounds == [1, 2]
    # round 2 links and retrieves from its own (new) entities
    assert any(s.name == "link" and s.outputs["question_entities"] == ["Heat"] for s in answer.trace)


def test_second_round_drafts_found_in_the_context_end_retrieval(kg):
    # Round 1 drafts a wrong answer, so it retrieves; round 2's linker has read that context and drafts an
    # answer it supports: the final answer follows without a second retrieval.
    second = "<entities>\nHeat\n</entities>\n<answers>\nMichael Mann\n</answers>"
    answer = get_method("byokg")(kg, llm=script(answer="Ridley Scott", second=second)).answer(QUESTION)
    stop = next(s for s in answer.trace if s.name == "self_terminate")
    assert stop.inputs["round"] == 2 and stop.outputs["supported"] == ["Michael Mann"]
    assert calls(answer, "byokg_linker") == 2 and steps(answer)[-2:] == ["self_terminate", "answer"]
    assert sum(1 for s in answer.trace if s.name == "link") == 1


def test_second_round_sees_the_context(kg):
    llm = ScriptedLLM(
        {
            "rules": [
                {"prompt": "byokg_linker", "match": r"so far:\s*\n1\. ", "response": "<entities>FINISH</entities>"},
                {"prompt": "byokg_linker", "response": LINKER.replace("{answer}", "Ridley Scott")},
            ],
            "default": "<answers>Michael Mann</answers>",
        }
    )
    answer = get_method("byokg-scoring")(kg, llm=llm).answer(QUESTION)
    stop = next(s for s in answer.trace if s.name == "self_terminate")
    assert stop.outputs["reason"] == "KG-Linker said FINISH" and calls(answer, "byokg_linker") == 2


def test_self_termination_and_iterations_are_settings(kg):
    keep_going = get_method("byokg-scoring")(kg, llm=script(), self_terminate=False).answer(QUESTION)
    assert calls(keep_going, "byokg_linker") == 2
    # round 2 repeats round 1 exactly: nothing new to link, so the loop ends
    assert "self_terminate" in steps(keep_going)
    one = get_method("byokg-scoring")(kg, llm=script(answer="Ridley Scott"), iterations=1).answer(QUESTION)
    assert calls(one, "byokg_linker") == 1


def test_draft_answers_that_stand_on_the_evidence_can_be_the_answer(kg):
    """With answer_supported_drafts, KG-Linker's first-round draft that its path reaches ends the rounds and is
    the answer, without the answer call; a draft nothing supports still goes to the answer call."""
    stood = get_method("byokg-scoring")(
        kg, llm=script(final="<answers>Ridley Scott</answers>"), answer_supported_drafts=True
    )
    answer = stood.answer(QUESTION)
    assert answer.answers == ["Michael Mann"] and calls(answer, "byokg_answer") == 0
    assert answer.trace[-1].name == "answer" and "stand on the evidence" in answer.trace[-1].inputs["skipped"]
    guess = get_method("byokg-scoring")(kg, llm=script(answer="Ridley Scott"), answer_supported_drafts=True)
    assert calls(guess.answer(QUESTION), "byokg_answer") == 1
    default = get_method("byokg-scoring")(kg, llm=script(final="<answers>Ridley Scott</answers>")).answer(QUESTION)
    assert default.answers == ["Ridley Scott"] and calls(default, "byokg_answer") == 1  # the paper's answer call


def test_linker_without_entities_falls_back_to_question_mentions(kg):
    llm = ScriptedLLM({"rules": [{"prompt": "byokg_linker", "response": "nothing useful"}], "default": "<answers>x"})
    answer = get_method("byokg-scoring")(kg, llm=llm, iterations=1).answer("Who directed Heat?")
    link = next(s for s in answer.trace if s.name == "link")
    assert link.outputs["fallback"] == "question mentions" and link.outputs["question_entities"] == ["Heat"]
    assert any(ev.source == "reranker" for ev in answer.evidence)


def test_context_lists_facts_near_the_question_entities_first():
    def fact(h: str, r: str, t: str, source: str) -> Evidence:
        return Evidence(text=f"{h} {r} {t}", entities=[h, t], relations=[r], source=source)

    context = Context()
    context.anchors = ["Heat"]
    context.add(
        [
            fact("Gladiator", "starred_actors", "Russell Crowe", "text"),  # unreached: whole-KG scoring
            fact("Alien", "directed_by", "Ridley Scott", "reranker"),  # two hops out, via Ridley Scott
            fact("Heat", "starred_actors", "Al Pacino", "agentic"),
            fact("The Insider", "starred_actors", "Al Pacino", "agentic"),
            fact("Heat", "directed_by", "Ridley Scott", "agentic"),
        ]
    )
    assert [ev.text.split()[0] for ev in context.ordered()] == ["Heat", "Heat", "Alien", "The", "Gladiator"]
    # the answer call sees only what is connected to the question entities
    assert [ev.text.split()[0] for ev in context.shown(10, reached_only=True)] == ["Heat", "Heat", "Alien", "The"]
    assert len(context.shown(3, reached_only=True)) == 3 and len(context.shown(10)) == 5
    context.anchors = []  # no question entity linked: the sources' round-robin, everything shown
    assert [ev.source for ev in context.ordered()] == ["agentic", "reranker", "text", "agentic", "agentic"]
    assert len(context.shown(10, reached_only=True)) == 5


def test_drafts_copied_from_the_schema_examples_are_dropped(kg):
    # "Martin Scorsese" is only in the schema's example (Casino -> Martin Scorsese): not linked, no paths to him
    answer = get_method("byokg")(kg, llm=script(answer="Martin Scorsese\nMichael Mann"), iterations=1).answer(QUESTION)
    linker = next(s for s in answer.trace if s.name == "kg_linker")
    assert linker.outputs["dropped_schema_examples"] == ["Martin Scorsese"]
    assert linker.outputs["answers"] == ["Michael Mann"]
    link = next(s for s in answer.trace if s.name == "link")
    assert link.outputs["answer_entities"] == ["Michael Mann"]
    assert not any("Martin Scorsese" in ev.entities for ev in answer.evidence if ev.source == "shortest_path")
    # an example the question names is kept; a true answer that is an example is still found from it
    linker_text = "<entities>\nCasino\n</entities>\n<paths>\ndirected_by\n</paths>\n<answers>\nMartin Scorsese"
    llm = ScriptedLLM({"rules": [{"prompt": "byokg_linker", "response": linker_text}], "default": "<answers>"})
    kept = get_method("byokg")(kg, llm=llm, iterations=1).answer("Who directed Casino?")
    linker = next(s for s in kept.trace if s.name == "kg_linker")
    assert linker.outputs["entities"] == ["Casino"] and linker.outputs["dropped_schema_examples"] == ["Martin Scorsese"]
    assert any(ev.source == "path" and "Martin Scorsese" in ev.entities for ev in kept.evidence)


def test_junk_final_answer_falls_back_to_supported_drafts(kg):
    llm = script(answer="Ridley Scott\nMichael Mann", final="<answers></answers>")
    answer = get_method("byokg-scoring")(kg, llm=llm, iterations=1).answer(QUESTION)
    final = next(s for s in answer.trace if s.name == "answer")
    assert final.outputs["fallback"] == "draft answers" and answer.answers[0] == "Michael Mann"


def test_names_that_restate_a_linked_entity_link_only_to_names_holding_their_words(kg):
    """ "Pacino" and "Al Pacino's films" beside "Al Pacino" are that entity again: searched by spelling and
    meaning they would bring in whatever shares their leftover words."""
    linker = "<entities>\nAl Pacino\nPacino\nAl Pacino's films\nRidley Scott\n</entities>\n<answers>\n</answers>"
    llm = ScriptedLLM({"rules": [{"prompt": "byokg_linker", "response": linker}]})
    llm.default = "<answers>Michael Mann</answers>"
    answer = get_method("byokg-scoring")(kg, llm=llm, iterations=1).answer(QUESTION)
    link = next(s for s in answer.trace if s.name == "link")
    assert link.outputs["links"]["Pacino"] == ["Al Pacino"] and link.outputs["links"]["Al Pacino's films"] == []
    assert link.outputs["question_entities"] == ["Al Pacino", "Ridley Scott"]


def test_given_topic_entities_seed_the_retrieval(kg):
    llm = ScriptedLLM({"rules": [{"prompt": "byokg_linker", "response": "<paths>directed_by</paths>"}]})
    llm.default = "<answers>Michael Mann</answers>"
    answer = get_method("byokg-scoring")(kg, llm=llm, iterations=1).answer("Who directed it?", ["Heat"])
    link = next(s for s in answer.trace if s.name == "link")
    assert link.outputs["question_entities"] == ["Heat"]
    paths = next(s for s in answer.trace if s.name == "paths")
    assert paths.outputs["followed"][0]["reached"] == 1


def test_agentic_variant_walks_with_the_llm(kg):
    # two rounds: the last round selects relations only (no entities to walk on to)
    agent = get_method("byokg-agentic")(kg, llm=script(answer="Ridley Scott"), iterations=1, agentic_rounds=2)
    answer = agent.answer(QUESTION)
    assert "graph_reranker" not in steps(answer) and "agentic" in steps(answer)
    assert calls(answer, "byokg_select_relations") >= 1 and calls(answer, "byokg_select_entities") >= 1
    assert any(ev.source == "agentic" for ev in answer.evidence)


def test_variants_are_config_defaults():
    assert get_method("byokg").Config().agentic and get_method("byokg").Config().graph_reranker
    assert not get_method("byokg-agentic").Config().graph_reranker and get_method("byokg-agentic").Config().agentic
    assert not get_method("byokg-scoring").Config().agentic and get_method("byokg-scoring").Config().graph_reranker
    cfg = get_method("byokg").Config()
    assert (cfg.iterations, cfg.agentic_rounds, cfg.link_top_m) == (2, 1, 3)  # T_R, T_A (the paper: 3), m
    assert (cfg.rerank_hops, cfg.rerank_relations, cfg.rerank_triples) == (2, 20, 100)  # L, k_r, k_t


def test_unknown_setting_is_a_clear_error(kg):
    with pytest.raises(MethodConfigError, match="settings:"):
        get_method("byokg")(kg, no_such_setting=1)


@pytest.mark.parametrize("name", ["byokg", "byokg-agentic", "byokg-scoring"])
def test_retrieve_without_llm_is_the_scoring_retrieval(kg, name):
    method = get_method(name)(kg, llm=None)
    evidence = method.retrieve("who directed Heat")
    assert evidence and {ev.source for ev in evidence} <= {"reranker", "text"}
    assert any(ev.source == "reranker" for ev in evidence)
    assert all(0 <= t < kg.num_triples for ev in evidence for t in ev.triples)
    only_text = get_method(name)(kg, llm=None, graph_reranker=False, agentic=False).retrieve("who directed Heat")
    assert {ev.source for ev in only_text} == {"text"}


def test_retrieve_with_llm_gathers_without_the_final_call(kg):
    llm = script()
    evidence = get_method("byokg-scoring")(kg, llm=llm).retrieve(QUESTION)
    assert {"path", "cypher"} <= {ev.source for ev in evidence}
    assert all(rule["used"] == 0 for rule in llm.rules if rule["prompt"] == "byokg_answer")


def test_on_a_property_graph_text2cypher_writes_the_graph_query(northwind):
    """byokg's Cypher strategy uses text2cypher's writer (schema, value hints, check) where node properties can
    be filtered and aggregated; the rows, an aggregate included, reach the answer call."""
    query = "MATCH (c:Category {categoryName: 'Seafood'})<-[:PART_OF]-(p:Product) RETURN avg(p.unitPrice)"
    llm = ScriptedLLM(
        {
            "rules": [
                {"prompt": "text2cypher_write", "match": "Seafood", "response": f"<cypher>{query}</cypher>"},
                {"prompt": "byokg_linker", "response": "<entities>\nSeafood\n</entities>"},
                {"prompt": "byokg_answer", "match": r"20\.6825", "response": "<answers>20.6825</answers>"},
            ],
            "default": "<answers>none</answers>",
        }
    )
    question = "What is the average unit price of seafood products?"
    method = get_method("byokg-scoring")(northwind, llm=llm, iterations=1)
    assert method.query_prompt_parts == ("", "")  # KG-Linker is not asked for a query as well
    answer = method.answer(question)
    assert answer.answers == ["20.6825"]
    executed = next(s for s in answer.trace if s.name == "execute")
    assert executed.outputs["executed"].startswith(query) and executed.outputs.get("answered")
    # on a triples KG, or when told, KG-Linker writes it as in the paper
    linker = get_method("byokg-scoring")(northwind, llm=llm, iterations=1, cypher_writer="linker")
    assert linker.query_writer is None and "<opencypher>" in linker.query_prompt_parts[1]


def test_the_answer_call_can_read_the_facts_as_paths_from_the_question_entities(kg):
    chain = re.escape("Al Pacino\n  <-[starred actors]- Heat\n    -[directed by]-> Michael Mann")
    rules = [
        {"prompt": "byokg_linker", "response": LINKER.replace("{answer}", "Michael Mann")},
        {"prompt": "byokg_answer", "match": chain, "response": "<answers>\nHeat\n</answers>"},
        {"prompt": "byokg_answer", "response": "<answers>\nRidley Scott\n</answers>"},
    ]
    tree = get_method("byokg-scoring")(kg, llm=ScriptedLLM({"rules": rules}))  # the tree is the default
    assert tree.answer(QUESTION).answers == ["Heat"]  # the prompt held the chain from the question entity
    lines = get_method("byokg-scoring")(kg, llm=ScriptedLLM({"rules": rules}), evidence_format="lines")
    assert lines.answer(QUESTION).answers == ["Ridley Scott"]


def test_the_tree_can_grow_only_from_the_entities_the_question_names(kg):
    """``tree_roots="named"``: an entity a later round linked from the context ("Heat") is no root, so the
    chain from the question's entity reads as one path; with none named, every anchor stays a root."""
    facts = [
        Evidence(text=f"{h} {r} {t}", entities=[h, t], relations=[r], triples=[i], source="agentic")
        for i, (h, r, t) in enumerate(MOVIES)
        if h == "Heat" and r in ("starred_actors", "directed_by")
    ]
    context = Context()
    context.anchors = ["Heat", "Al Pacino"]
    assert context.roots(QUESTION) == ["Al Pacino"]
    assert context.roots("Who directed it?") == ["Heat", "Al Pacino"]
    context.given = ["Heat"]
    assert context.roots(QUESTION) == ["Heat", "Al Pacino"]  # a given topic is always a root
    context.given = []
    assert context.tree_text(kg, facts).startswith("Heat\n")
    named = context.tree_text(kg, facts, QUESTION)
    assert named.startswith("Al Pacino\n  <-[starred actors]- Heat\n") and "-[directed by]-> Michael Mann" in named


def test_kg_linker_and_relation_choice_are_held_to_the_listed_relations(kg):
    llm = RecordingLLM(*rules())
    method = get_method("byokg")(kg, llm=llm, grammar="on", iterations=1)
    method.answer(QUESTION)
    sent = dict((name, params.grammar) for name, _, params in llm.calls)
    linker, select = sent["byokg_linker"], sent["byokg_select_relations"]
    rel_rule = next(line for line in linker.splitlines() if line.startswith("rel ::="))
    assert set(re.findall(r'"([^"]+)"', rel_rule)) == set(kg.relations)  # this KG lists every relation
    assert "path{0,3}" in linker and "query" in linker and "line{0,5}" in linker  # <= 3 paths, a query, 5 drafts
    assert select.startswith('root ::= "<selected>"') and "starred_actors" in select
    off = RecordingLLM(*rules())
    get_method("byokg")(kg, llm=off, grammar="off", iterations=1).answer(QUESTION)
    assert off.grammars and not any(off.grammars)
    no_query = RecordingLLM(*rules())
    get_method("byokg")(kg, llm=no_query, grammar="on", cypher=False, iterations=1).answer(QUESTION)
    assert "opencypher" not in dict((n, p.grammar) for n, _, p in no_query.calls)["byokg_linker"]


def test_kg_linker_can_read_the_context_as_paths_from_the_question_entities(kg):
    second = "<entities>\nHeat\n</entities>\n<answers>\nAl Pacino\n</answers>"  # the topic: never support
    contexts = {}
    for layout in ("lines", "tree"):
        llm = RecordingLLM(*rules(answer="Ridley Scott", second=second))
        get_method("byokg-scoring")(kg, llm=llm, linker_context=layout).answer(QUESTION)
        user = llm.messages("byokg_linker")[1][-1]["content"]
        contexts[layout] = user.split("so far:\n", 1)[1].split("\n\nQuestion:", 1)[0]
    assert contexts["lines"].startswith("1. ")
    tree = contexts["tree"]
    assert "\nAl Pacino\n  <-[starred actors]- Heat\n    -[directed by]-> Michael Mann" in tree  # rooted, indented
    assert "1. " not in tree
    assert len(tree) < len(contexts["lines"])


def test_a_primed_first_round_reads_the_llm_free_retrieval(kg):
    """``linker_primed``: KG-Linker's first prompt already holds the graph reranker's facts about the question's
    entity (the paper's first round reads an empty context); one round is then three calls."""

    def first_linker_prompt(**settings) -> tuple[str, object]:
        llm = RecordingLLM(*rules(), default="<answers>\nMichael Mann\n</answers>")
        answer = get_method("byokg")(kg, llm=llm, iterations=1, **settings).answer(QUESTION)
        return llm.messages("byokg_linker")[0][-1]["content"], answer

    primed, answer = first_linker_prompt(linker_primed=True)
    assert re.search(r"so far:\s*\n1\. .*Al Pacino", primed) and answer.usage.llm_calls == 3
    assert steps(answer)[:3] == ["prime", "graph_reranker", "text_retrieval"]
    assert steps(answer).count("text_retrieval") == 1  # the question-only scoring is not run twice
    plain, _ = first_linker_prompt()
    assert not re.search(r"so far:\s*\n1\. ", plain)


def test_agent_first_chooses_relations_before_one_kg_linker_round_that_reads_them(kg):
    """``agent_first``: the agent's relation choice runs from the question's entity before KG-Linker, whose one
    round reads the facts the agent found; three calls in all, in that order."""
    llm = RecordingLLM(*rules(), default="<answers>\nMichael Mann\n</answers>")
    answer = get_method("byokg")(kg, llm=llm, agent_first=True).answer(QUESTION)
    assert [c.prompt for c in answer.usage.calls] == ["byokg_select_relations", "byokg_linker", "byokg_answer"]
    assert steps(answer)[:3] == ["prime", "agentic", "graph_reranker"]
    assert steps(answer).count("agentic") == 1 and steps(answer).count("text_retrieval") == 1
    linker_prompt = llm.messages("byokg_linker")[0][-1]["content"]
    assert re.search(r"so far:\s*\n1\. .*starred actors", linker_prompt)  # the agent's starred_actors facts
    assert answer.answers == ["Michael Mann"]


def test_agent_first_stops_before_linking_drafts_the_context_already_holds(kg):
    """KG-Linker's one round under ``agent_first`` has read the context, as the paper's second round has: drafts
    that stand on it end the gathering (their shortest paths would only add other entities' facts)."""
    held = get_method("byokg")(kg, llm=RecordingLLM(*rules(answer="Heat")), agent_first=True).answer(QUESTION)
    assert steps(held)[4:] == ["kg_linker", "self_terminate", "answer"]
    new = get_method("byokg")(kg, llm=RecordingLLM(*rules(answer="Ridley Scott")), agent_first=True).answer(QUESTION)
    assert "self_terminate" not in steps(new) and {"link", "shortest_paths"} <= set(steps(new))


@pytest.mark.parametrize("link_answers", [False, True])
def test_an_answer_one_fact_past_the_evidence_is_supported_by_that_fact(kg, link_answers):
    """The evidence reaches Alien but not its release year: with ``link_answers`` the KG fact joining them is the
    answer's support."""
    llm = script(final="<answers>\n1979\n</answers>")
    answer = get_method("byokg-scoring")(kg, llm=llm, link_answers=link_answers).answer(QUESTION)
    linked = [ev.text for ev in answer.evidence if ev.source == "byokg-scoring/link"]
    assert answer.answers == ["1979"]
    assert (linked, answer.grounded) == ((["Alien release year 1979"], True) if link_answers else ([], False))
