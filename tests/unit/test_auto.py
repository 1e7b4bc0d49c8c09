"""The ``auto`` method: which method answers, why, and a second opinion when the first is unsure."""

from __future__ import annotations

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import confidence
from kgrag.methods import get as get_method
from kgrag.models.embeddings import load_embedder
from kgrag.models.llm.scripted import ScriptedLLM
from tests.conftest import MOVIES


def _auto(monkeypatch, **settings):
    # every answer gets the same confidence: 1 / (1 + e^1) ~ 0.27, below the default second_opinion
    monkeypatch.setattr(confidence, "_weights", lambda: {"*": {"bias": -1.0}})
    kg = KnowledgeGraph.from_triples(MOVIES)
    llm = ScriptedLLM({"default": "<answers>Michael Mann</answers>"})
    return get_method("auto")(kg, llm=llm, embedder=load_embedder("static"), **settings)


def test_paths_first_and_a_second_opinion_when_unsure(monkeypatch):
    answer = _auto(monkeypatch).answer("Who directed Heat?")
    step = answer.trace[-1]
    assert answer.method == "auto" and step.name == "auto"
    assert "kaping was asked too" in step.outputs["why"] and step.outputs["chosen"] in ("frag", "kaping")
    assert answer.usage.llm_calls == 2 and answer.answers == ["Michael Mann"]
    assert answer.support["Michael Mann"]  # the chosen method's support and confidence come with it
    sure = _auto(monkeypatch, second_opinion=0.0).answer("Who directed Heat?")
    assert sure.usage.llm_calls == 1 and sure.trace[-1].outputs["chosen"] == "frag"


def test_a_property_graph_is_asked_in_cypher_and_paths_when_the_query_finds_nothing(northwind):
    """On a KG from a property graph text2cypher answers; when its query gives no rows, frag is asked."""
    query = "MATCH (c:Category {categoryName: 'Seafood'})<-[:PART_OF]-(p:Product) RETURN count(p)"
    llm = ScriptedLLM({"rules": [{"prompt": "text2cypher_write", "response": f"<cypher>{query}</cypher>"}]})
    answer = get_method("auto")(northwind, llm=llm, embedder=load_embedder("static")).answer("Seafood products?")
    step = answer.trace[-1]
    assert step.outputs["chosen"] == "text2cypher" and "property graph" in step.outputs["why"]
    assert answer.answers == ["12"] and answer.usage.llm_calls == 1
    nothing = "MATCH (c:Category {categoryName: 'Nothing'})<-[:PART_OF]-(p:Product) RETURN p.productName"
    llm = ScriptedLLM(
        {
            "rules": [{"prompt": "text2cypher_write", "response": f"<cypher>{nothing}</cypher>"}],
            "default": "<answers>Chai</answers>",
        }
    )
    answer = get_method("auto")(northwind, llm=llm, embedder=load_embedder("static"), repairs=0).answer(
        "Which products are in the 'Nothing' category?"  # named by the question, so the map keeps it
    )
    assert "gave no rows, so frag was asked" in answer.trace[-1].outputs["why"]


def test_settings_reach_the_methods_auto_asks(monkeypatch):
    """`--set top_k=2` reaches kaping and `--set hops=1` frag (each method that has the setting), a spec for
    the embedder reaches both; a setting none of them has, or a bad value, fails when auto is built."""
    from kgrag.methods.base import MethodConfigError

    auto = _auto(monkeypatch, top_k=2, hops=1, second_opinion=0.5, own_knowledge="always")
    assert auto.config.second_opinion == 0.5
    assert auto._make("kaping").config.top_k == 2 and auto._make("frag").config.hops == 1
    assert auto._make("kaping").config.own_knowledge == auto._make("frag").config.own_knowledge == "always"
    assert "top_k" in auto.setting_names() and "second_opinion" in auto.setting_names()
    assert auto.own_settings({"top_k": 2, "kaping_typo": 1}) == {"top_k": 2}
    answer = auto.answer("Who directed Heat?")
    assert next(s for s in answer.trace if s.name == "route").outputs["hops"] == 1
    kg = KnowledgeGraph.from_triples(MOVIES)
    spec = get_method("auto")(kg, llm=None, embedder="static")
    assert spec._make("frag").config.embedder == spec._make("kaping").config.embedder == "static"
    with pytest.raises(MethodConfigError, match="no method it asks has top_kk"):
        get_method("auto")(kg, top_kk=3)
    with pytest.raises(MethodConfigError, match="method 'kaping'"):
        get_method("auto")(kg, top_k="many")


def test_no_second_opinion_for_an_entity_the_kg_does_not_have(monkeypatch):
    """kaping links the question as frag does: when frag found no entity, kaping is not asked, and nobody
    calls the model."""
    answer = _auto(monkeypatch).answer("Which team owns the warp-drive-service?")
    assert answer.answers == [] and "no entity of the question" in (answer.abstained or "")
    assert answer.usage.llm_calls == 0 and answer.trace[-1].outputs["chosen"] == "frag"
    assert "kaping" not in answer.trace[-1].outputs["why"]
