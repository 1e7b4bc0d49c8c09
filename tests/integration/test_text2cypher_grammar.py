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


def _grammar_allows(llm, grammar: str, text: str) -> bool:
    """Whether llama.cpp's grammar sampler lets ``text`` be written token by token (each token offered alone)."""
    import ctypes
    import math

    from llama_cpp import LlamaGrammar
    from llama_cpp import _internals as internals
    from llama_cpp import llama_cpp as lc

    llama = llm._llama
    sampler = internals.LlamaSampler()
    sampler.add_grammar(llama._model, LlamaGrammar.from_string(grammar, verbose=False))
    for token in llama.tokenize(text.encode(), add_bos=False, special=False):
        data = (lc.llama_token_data * 1)()
        data[0].id, data[0].logit, data[0].p = token, 0.0, 0.0
        offered = lc.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
        lc.llama_sampler_apply(sampler.sampler, ctypes.byref(offered))
        if not math.isfinite(data[0].logit):
            return False
        lc.llama_sampler_accept(sampler.sampler, token)
    return True


@pytest.mark.parametrize(
    ("query", "allowed"),
    [
        ("MATCH (o:Order) RETURN sum(toFloat(o.freight) * 2)", True),  # text that always holds a number
        ("MATCH (o:Order) WHERE coalesce(o.shipVia) - 1 > 0 RETURN o", True),
        ("MATCH (p:Product) RETURN max(p.unitPrice) - min(p.unitPrice), count(p) / 2", True),
        ("MATCH (s:Supplier) RETURN s.city + ', ' + s.country", True),  # + joins text
        ("MATCH (o:Order) RETURN toFloat(o.orderDate)", False),  # a date's text is no number
        ("MATCH (c:Customer) WHERE coalesce(c.customerID) - 1 > 0 RETURN c", False),  # 'ALFKI'
        ("MATCH (c:Category) RETURN min((c.picture) - 1)", False),
        ("MATCH (p:Product) RETURN p.unitPrice * 'x'", False),
    ],
)
def test_arithmetic_reads_only_what_holds_numbers(smollm, tmp_path, query, allowed):
    """The grammar text2cypher writes under on the bundled Northwind graph: ``-``, ``*``, ``/`` and the calls
    that take numbers read properties typed as numbers or stored as text that is always a number's (which the
    check then reads through toFloat), and no other text (the engine refuses ``coalesce(c.customerID) - 1``)."""
    graph = PropertyGraph.load(demo_path("northwind"))
    store = graph.to_knowledge_graph().save(tmp_path / "northwind")
    graph.save_tables(store)
    method = get_method("text2cypher")(KnowledgeGraph.load(store), llm=smollm, repairs=0)
    assert _grammar_allows(smollm, method.grammar, f"<cypher>{query}</cypher>") is allowed
