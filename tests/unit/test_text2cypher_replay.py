"""benchmarks/text2cypher_replay.py: an old reply is reused under a new check's name only where the new check
would have written it (no LLM: a scripted model answers what is not replayed)."""

from __future__ import annotations

from collections import Counter

from kgrag.methods.text2cypher.bound_names import NAME
from kgrag.models.cache import ResponseCache
from kgrag.models.llm import base
from kgrag.models.llm.scripted import ScriptedLLM
from tests.conftest import load_benchmark

GOOD = "<cypher>MATCH (p:Product) RETURN p.productName</cypher>"
BAD = "<cypher>MATCH (p:Product) RETURN avg(type)</cypher>"  # the current check refuses "ty" after "avg("


def test_only_replies_the_new_check_passes_are_replayed(tmp_path, monkeypatch):
    script = load_benchmark("text2cypher_replay")
    assert script.replayable(GOOD, NAME) and not script.replayable(BAD, NAME)
    old = ResponseCache(tmp_path / "old.sqlite")
    for prompt, reply in (("q1", GOOD), ("q2", BAD)):
        params = {**base.GenerationParams().as_dict(), "token_check": "old-check"}
        old.put(base.cache_key("scripted", base.to_messages(prompt), params), reply, 10, 5)
    stats: Counter[str] = Counter()
    monkeypatch.setattr(base.LLM, "generate", script.replaying(old, "old-check", stats))
    llm = ScriptedLLM({"rules": [], "default": "fresh"}, cache=ResponseCache(tmp_path / "new.sqlite"))
    llm.model_id = "scripted"
    assert llm.generate("q1", token_check=NAME).text == GOOD  # replayed under the new name
    assert llm.generate("q2", token_check=NAME).text == "fresh"  # refused: a fresh call
    assert llm.generate("q3", token_check=NAME).text == "fresh"  # never asked before
    assert stats == Counter(replayed=1, refused=1, absent=1)
