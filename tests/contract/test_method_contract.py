"""The contract every registered method keeps (run for each name in the method registry).

Uses the scripted LLM, so it checks plumbing — types, accounting, tracing, fault tolerance, determinism — never
accuracy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgrag.errors import LLMError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods import registry
from kgrag.methods.base import Method, MethodConfig, MethodConfigError
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.types import Answer, Evidence
from tests.conftest import MOVIES

METHODS = [name for name in registry if not name.endswith("-test")]


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("kg") / "kg"))


@pytest.fixture(params=METHODS)
def name(request) -> str:
    return request.param


def _evidence_json(evidence: list[Evidence]) -> str:
    return json.dumps([ev.model_dump() for ev in evidence], sort_keys=True)


class TestMethodContract:
    def test_is_a_method_registered_under_its_name(self, name):
        cls = get_method(name)
        assert issubclass(cls, Method) and cls.name == name
        assert issubclass(cls.Config, MethodConfig) and isinstance(cls.needs_llm, bool)

    def test_an_unknown_setting_is_refused_with_the_known_ones(self, kg, name):
        with pytest.raises(MethodConfigError, match="no_such_setting") as info:
            get_method(name)(kg, llm=None, no_such_setting=1)
        assert all(field in str(info.value) for field in get_method(name).Config.model_fields)

    def test_answer_is_typed_traced_and_accounted(self, kg, name):
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

    def test_llm_junk_never_raises_and_llm_failures_propagate(self, kg, name):
        junk = get_method(name)(kg, llm=ScriptedLLM({"default": "<<<answers>>> ``` </opencypher"}))
        assert isinstance(junk.answer("Who directed Heat?").answers, list)
        broken = get_method(name)(kg, llm=ScriptedLLM({"rules": []}))  # every call raises LLMError
        if get_method(name).needs_llm:  # an empty answer would read as "the KG has none": the caller must know
            with pytest.raises(LLMError, match="no response"):
                broken.answer("Who directed Heat?")
        else:
            assert isinstance(broken.answer("Who directed Heat?"), Answer)

    def test_retrieve_needs_no_llm_and_gives_the_same_evidence_every_time(self, kg, name):
        evidence = get_method(name)(kg, llm=None).retrieve("who directed Heat", ["Heat"])
        assert isinstance(evidence, list) and all(isinstance(ev, Evidence) for ev in evidence)
        assert all(0 <= t < kg.num_triples for ev in evidence for t in ev.triples)
        again = get_method(name)(kg, llm=None).retrieve("who directed Heat", ["Heat"])  # a fresh instance
        assert _evidence_json(again) == _evidence_json(evidence)


_PROMPTS_SCRIPT = """
import json, sys
from kgrag.errors import LLMError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.models.llm.base import LLM, Generation
from tests.conftest import MOVIES

class Recorder(LLM):
    model_id = "llamacpp:recorder"  # methods behave as with the local model (e.g. ULTRAG adds its grammar)
    seen = []
    def _generate(self, messages, params):
        self.seen.append([messages, params.as_dict()])
        return Generation("<answers>\\nMichael Mann\\n</answers>", 1, 1)

kg = KnowledgeGraph.load(sys.argv[1])
out = {}
for name in sys.argv[2:]:
    llm = Recorder()
    llm.seen = []
    method = get_method(name)(kg, llm=llm)
    for question, topics in (("Who directed Heat?", ["Heat"]), ("Which films did Al Pacino star in?", [])):
        method.answer(question, topics)
    out[name] = llm.seen
print(json.dumps(out, sort_keys=True))
"""


def test_prompts_do_not_depend_on_the_process_hash_seed(kg, tmp_path):
    """Prompts (and grammars) are the LLM response cache's keys: one built from set order would differ in every
    process (string hashing is randomised per process), and a rerun of an evaluation would miss its cache."""
    import os
    import subprocess
    import sys

    # relation names of equal length: any set-ordered listing of them shows up as a difference
    ties = [("Heat", f"tag_{c}", f"Tag {c.upper()}") for c in "abcdef"]
    store = tmp_path / "kg"
    KnowledgeGraph.from_triples(MOVIES + ties).save(store)
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _PROMPTS_SCRIPT, str(store), *METHODS],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(Path(__file__).resolve().parents[2]),
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    for name in METHODS:
        assert runs[0][name] == runs[1][name], f"{name}: prompts differ between processes"


def test_answer_or_failure_records_the_llm_error(kg):
    from kgrag.methods.base import answer_or_failure

    answer = answer_or_failure(get_method("llm")(kg, llm=ScriptedLLM({"rules": []})), "Who directed Heat?")
    assert answer.answers == [] and answer.error.startswith("LLMError: ") and "no response" in answer.error
