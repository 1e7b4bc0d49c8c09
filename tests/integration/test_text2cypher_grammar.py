"""text2cypher's schema grammar on the real local runtime (SmolLM2: a plumbing model, so this checks what the
grammar allows to be written, not whether the query answers the question)."""

from __future__ import annotations

import pytest

from kgrag.demo import demo_path
from kgrag.graph.backends.guard import guard_cypher
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.property_graph import PropertyGraph
from kgrag.methods import get as get_method
from kgrag.methods.text2cypher.bound_names import BoundNames
from kgrag.methods.text2cypher.check import check_query

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "question",
    ["Which suppliers supply products in the Seafood category?", "How many orders did each customer place?"],
)
def test_under_the_grammar_only_the_schema_can_be_written(smollm, tmp_path, question):
    graph = PropertyGraph.load(demo_path("northwind"))
    store = graph.to_knowledge_graph().save(tmp_path / "northwind")
    graph.save_tables(store)
    method = get_method("text2cypher")(KnowledgeGraph.load(store), llm=smollm, repairs=0)
    assert method.grammar is not None  # auto: a llama.cpp model gets the grammar
    answer = method.answer(question)
    written = next(s for s in answer.trace if s.name == "write_cypher").outputs["cypher"]
    assert written.startswith("MATCH") or written.startswith("OPTIONAL MATCH"), written
    checked = check_query(written, method.schema)
    # x.prop in expressions is not in a CFG: the check mends (or names) those reads, and nothing else
    wrong = [p for p in checked.problems if "has no property" not in p]
    turned = [f for f in checked.fixed if "turned round" in f]
    assert wrong == [] and turned == [], (written, checked.problems, checked.fixed)
    assert guard_cypher(written).ok or "RETURN" not in written  # cut at max_tokens: no RETURN yet
    # and the token check beside the grammar let it read only names it had bound
    names = BoundNames()
    for k, ch in enumerate(written):
        assert names.allows(ch), written[: k + 1]
        names.accept(ch)
