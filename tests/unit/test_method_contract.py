"""The contract every registered method must keep (run for each name in the registry).

Uses the scripted LLM, so it checks plumbing — types, accounting, tracing, fault tolerance — never accuracy.
"""

from __future__ import annotations

import json

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods import registry
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.types import Answer
from tests.conftest import MOVIES

METHODS = [name for name in registry if not name.endswith("-test")]


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("kg") / "kg"))


@pytest.mark.parametrize("name", METHODS)
def test_answer_is_typed_traced_and_accounted(kg, name):
    llm = ScriptedLLM({"default": "<answers>\nMichael Mann\n</answers>"})
    method = get_method(name)(kg, llm=llm)
    answer = method.answer("Who directed Heat?", ["Heat"])
    assert isinstance(answer, Answer) and answer.method == name and answer.error is None
    assert answer.usage.llm_calls == len(answer.usage.calls) == sum(s.llm_calls for s in answer.trace)
    assert answer.usage.seconds >= 0
    json.loads(answer.model_dump_json())  # serialisable
    if answer.evidence:
        assert all(0 <= t < kg.num_triples for ev in answer.evidence for t in ev.triples)
    if get_method(name).needs_llm:
        assert answer.usage.llm_calls >= 1


@pytest.mark.parametrize("name", METHODS)
def test_llm_junk_and_failures_never_raise(kg, name):
    junk = get_method(name)(kg, llm=ScriptedLLM({"default": "<<<answers>>> ``` </opencypher"}))
    assert isinstance(junk.answer("Who directed Heat?").answers, list)
    broken = get_method(name)(kg, llm=ScriptedLLM({"rules": []}))  # every call raises LLMError
    answer = broken.answer("Who directed Heat?")
    assert isinstance(answer, Answer)
    if get_method(name).needs_llm:
        assert answer.error


@pytest.mark.parametrize("name", METHODS)
def test_retrieve_needs_no_llm(kg, name):
    evidence = get_method(name)(kg, llm=None).retrieve("who directed Heat", ["Heat"])
    assert isinstance(evidence, list)
