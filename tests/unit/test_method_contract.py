"""The contract every registered method must keep (run for each name in the registry).

Uses the scripted LLM, so it checks plumbing — types, accounting, tracing, fault tolerance — never accuracy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgrag.errors import LLMError
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
def test_llm_junk_never_raises_and_llm_failures_propagate(kg, name):
    junk = get_method(name)(kg, llm=ScriptedLLM({"default": "<<<answers>>> ``` </opencypher"}))
    assert isinstance(junk.answer("Who directed Heat?").answers, list)
    broken = get_method(name)(kg, llm=ScriptedLLM({"rules": []}))  # every call raises LLMError
    if get_method(name).needs_llm:  # an empty answer would read as "the KG has none": the caller must know
        with pytest.raises(LLMError, match="no response"):
            broken.answer("Who directed Heat?")
    else:
        assert isinstance(broken.answer("Who directed Heat?"), Answer)


@pytest.mark.parametrize("name", METHODS)
def test_retrieve_needs_no_llm(kg, name):
    evidence = get_method(name)(kg, llm=None).retrieve("who directed Heat", ["Heat"])
    assert isinstance(evidence, list)


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
