"""byokg's KG-Linker and relation-choice grammars on the real local runtime (SmolLM2: a plumbing model, so this
checks what the grammars let it write, not whether it answers)."""

from __future__ import annotations

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from tests.conftest import MOVIES

pytestmark = pytest.mark.integration


def test_kg_linker_writes_at_most_three_paths_of_listed_relations(smollm, tmp_path):
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "movies"))
    method = get_method("byokg")(kg, llm=smollm, iterations=1, grammar="auto")
    answer = method.answer("Who directed the films Al Pacino starred in?")
    linker = [s.outputs for s in answer.trace if s.name == "kg_linker"]
    assert linker, [s.name for s in answer.trace]
    for out in linker:
        assert len(out["paths"]) <= 3 and len(out["entities"]) <= 6 and len(out["answers"]) <= 5, out
        hops = [h.strip() for p in out["paths"] for h in p.split("->")]
        assert set(hops) <= set(kg.relations), out["paths"]
    rounds = [rnd for s in answer.trace if s.name == "agentic" for rnd in s.outputs["rounds"]]
    assert rounds and all(rnd["selected"] and "fallback_relations" not in rnd for rnd in rounds), rounds
