"""Answer support: the shortest chain of checked evidence triples from an entity of the question to an answer."""

from __future__ import annotations

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.support import (
    answer_links,
    answer_support,
    checked_triples,
    set_aside_unsupported,
    supported_first,
)
from kgrag.retrieval.triples import triples_as_evidence
from kgrag.types import Evidence
from tests.conftest import MOVIES


def _kg() -> KnowledgeGraph:
    return KnowledgeGraph.from_triples(MOVIES)


def _tid(kg: KnowledgeGraph, head: str, tail: str) -> int:
    h, t = kg.entity_id(head), kg.entity_id(tail)
    return int(np.nonzero((kg.heads == h) & (kg.tails == t))[0][0])


def test_a_path_supports_each_entity_on_it_with_its_prefix():
    kg = _kg()
    t1, t2 = _tid(kg, "Heat", "Michael Mann"), _tid(kg, "The Insider", "Michael Mann")
    path = Evidence(text="…", entities=["Heat", "Michael Mann", "The Insider"], relations=["r", "r"], triples=[t1, t2])
    support = answer_support(kg, "films by the director of Heat", ["The Insider", "Michael Mann"], [path])
    assert support == {"The Insider": [t1, t2], "Michael Mann": [t1]}


def test_facts_join_into_a_chain_from_the_entity_the_question_names():
    kg = _kg()
    facts = triples_as_evidence(kg, np.array([_tid(kg, "The Insider", "Al Pacino"), _tid(kg, "Heat", "Al Pacino")]))
    support = answer_support(kg, "which films share actors with heat", ["The Insider"], facts)
    assert support == {"The Insider": [_tid(kg, "Heat", "Al Pacino"), _tid(kg, "The Insider", "Al Pacino")]}
    # the same facts with no entity of the question among them support nothing
    assert answer_support(kg, "which films share actors?", ["The Insider"], facts) == {}
    # ... unless the method linked one (a given or linked topic)
    assert "The Insider" in answer_support(kg, "which films share actors?", ["The Insider"], facts, ["Heat"])


def test_an_answer_a_retrieved_path_starts_at_is_supported_from_the_questions_entity():
    """byokg follows paths from its draft answers, so a path may start at the answer: that is no chain of its
    own, but the question's entity may still reach the answer through the facts."""
    kg = _kg()
    heat_mann, insider_mann = _tid(kg, "Heat", "Michael Mann"), _tid(kg, "The Insider", "Michael Mann")
    insider_crowe, gladiator_crowe = _tid(kg, "The Insider", "Russell Crowe"), _tid(kg, "Gladiator", "Russell Crowe")
    around = Evidence(
        text="…",
        entities=["The Insider", "Russell Crowe", "Gladiator"],
        relations=["r", "r"],
        triples=[insider_crowe, gladiator_crowe],
    )
    facts = triples_as_evidence(kg, np.array([heat_mann, insider_mann]))
    question = "which films share a director with Heat"
    assert answer_support(kg, question, ["The Insider"], [around, *facts]) == {"The Insider": [heat_mann, insider_mann]}
    assert answer_support(kg, question, ["The Insider"], [around]) == {}  # nothing from Heat reaches it
    assert answer_support(kg, question, ["Heat"], [around, *facts]) == {}  # the question's own entity: never


def test_a_written_name_is_read_as_the_entity_the_evidence_shows_under_it():
    kg = _kg()
    t1, t2 = _tid(kg, "Heat", "Michael Mann"), _tid(kg, "The Insider", "Michael Mann")
    path = Evidence(text="…", entities=["Heat", "Michael Mann", "The Insider"], relations=["r", "r"], triples=[t1, t2])
    # case, spacing and end punctuation differ; the last (or first) words of one name reached shorten it; a
    # part of a word does not
    written = ["the insider", "MICHAEL  MANN.", "Insider", "Mich"]
    support = answer_support(kg, "films by the director of Heat", written, [path])
    assert support == {"the insider": [t1, t2], "MICHAEL  MANN.": [t1], "Insider": [t1, t2]}
    # only entities the evidence reaches: Al Pacino is in the KG, not in this evidence
    assert answer_support(kg, "who starred in Heat", ["al pacino"], [path]) == {}


def test_a_year_shortens_a_date_the_evidence_reaches_and_nothing_else():
    """A number is a value: "1995" is the year of the date 1995-12-15, not a short form of "1995 Film Festival"
    (the WebQSP proxy's gold for "when did Michael Vick start playing for the Eagles" is "2009", not "2009 NFL
    season")."""
    kg = KnowledgeGraph.from_triples(
        [("Heat", "released", "1995-12-15"), ("Heat", "premiered at", "1995 Film Festival"), ("Alien", "r", "x")]
    )
    facts = triples_as_evidence(kg, np.arange(2))
    assert answer_support(kg, "when was Heat released", ["1995"], facts) == {"1995": [_tid(kg, "Heat", "1995-12-15")]}
    festival = triples_as_evidence(kg, np.array([_tid(kg, "Heat", "1995 Film Festival")]))
    assert answer_support(kg, "where did Heat premiere", ["1995"], festival) == {}
    assert answer_support(kg, "where did Heat premiere", ["Film Festival"], festival) != {}


def test_unsupported_answers_come_last_and_forged_or_foreign_triples_support_nothing():
    kg = _kg()
    fact = triples_as_evidence(kg, np.array([_tid(kg, "Heat", "Michael Mann")]))
    # the model's own knowledge, the question's words echoed back, an entity not in the evidence
    answers = ["Ridley Scott", "Warp Drive Service", "Michael Mann"]
    support = answer_support(kg, "who directed Heat", answers, fact)
    assert set(support) == {"Michael Mann"}
    assert supported_first(answers, support) == ["Michael Mann", "Ridley Scott", "Warp Drive Service"]
    # a triple id that exists but does not join the entities the evidence names is not evidence of them
    forged = Evidence(text="Heat directed_by Ridley Scott", entities=["Heat", "Ridley Scott"], triples=[0])
    assert (
        checked_triples(kg, forged) == [] and answer_support(kg, "who directed Heat", ["Ridley Scott"], [forged]) == {}
    )
    assert checked_triples(kg, Evidence(text="x", entities=["Heat", "Michael Mann"], triples=[10**6])) == []


def test_result_rows_support_their_values_without_triples():
    kg = _kg()
    row = Evidence(text="count: 2", entities=["2"], source="cypher")
    assert answer_support(kg, "how many films did Michael Mann direct", ["2", "3"], [row]) == {"2": []}


def test_no_made_up_answer_for_an_entity_the_kg_does_not_have(tmp_path):
    """The question's own words echoed back are never an answer, and a question none of whose entities is in
    the KG gets no answer at all, with the reason, from every method that reads the KG."""
    from kgrag.methods import get as get_method
    from kgrag.models.embeddings import load_embedder
    from kgrag.models.llm.scripted import ScriptedLLM

    kg = _kg()
    question = "Which team owns the warp-drive-service?"
    for name in ("frag", "kaping", "decompose", "ultrag"):
        # no entity of the question in the KG: nothing to ask the model about, no LLM call, the reason said
        # (ultrag writes no query: it falls back to frag, which skips its answer call)
        llm = ScriptedLLM({"default": "<answers>Starfleet</answers>"})
        answer = get_method(name)(kg, llm=llm, embedder=load_embedder("static")).answer(question)
        assert answer.answers == [] and not answer.grounded, name
        assert "no entity of the question was found in the KG" in (answer.abstained or ""), name
        assert "nothing is called 'warp-drive-service'" in (answer.abstained or ""), name
        assert answer.usage.llm_calls == 0 and answer.trace[-1].outputs["skipped"], name
    for name in ("byokg", "byokg-scoring"):
        # KG-Linker copies the name the question wrote; the KG lacks it, so nothing stands in for it (an embedding
        # neighbour such as "Some Mother's Son" for "Warp-Drive-Service") and the unsupported answer is withheld
        reply = "<entities>Warp-Drive-Service</entities><answers>Starfleet</answers>"
        llm = ScriptedLLM({"rules": [{"prompt": "byokg_linker", "response": reply}], "default": "<answers>Heat"})
        answer = get_method(name)(kg, llm=llm, iterations=1).answer(question)
        link = next(s for s in answer.trace if s.name == "link")
        assert link.outputs["links"]["Warp-Drive-Service"] == [] and link.outputs["question_entities"] == [], name
        assert answer.answers == [] and "no entity of the question was found" in (answer.abstained or ""), name
    for name in ("frag", "kaping"):
        # the question names an entity the KG has, and the model echoes the question's other words
        llm = ScriptedLLM({"default": "<answers>Warp Drive Service</answers>"})
        method = get_method(name)(kg, llm=llm, embedder=load_embedder("static"))
        answer = method.answer("Which team owns the warp-drive-service of Heat?")
        assert answer.answers == [] and "question's words" in (answer.abstained or ""), name
        assert answer.usage.llm_calls == 1, name
    llm = ScriptedLLM({"default": "<answers>Starfleet</answers>"})
    answer = get_method("kaping")(kg, llm=llm, embedder=load_embedder("static")).answer("Who owns Heet Wav?")
    assert "closest names in the KG: 'Heat'" in (answer.abstained or "")  # what the KG has that is near
    # the no-KG baseline answers from what the model knows: kept, unsupported
    llm = ScriptedLLM({"default": "<answers>Starfleet</answers>"})
    answer = get_method("llm")(kg, llm=llm).answer(question)
    assert answer.answers == ["Starfleet"] and not answer.grounded and answer.abstained is None
    # a KG entity the question names stays an answer ("which of A and B ...")
    llm = ScriptedLLM({"default": "<answers>Heat</answers>"})
    kaping = get_method("kaping")(kg, llm=llm, embedder=load_embedder("static"))
    answer = kaping.answer("which is older, Heat or Alien?")
    assert answer.answers == ["Heat"]


def test_own_knowledge_beside_supported_answers_is_set_aside_and_kept_where_the_evidence_is_silent():
    """The prompts allow the model's own knowledge only where the evidence is silent: beside a supported answer an
    unsupported one is set aside (kept on the result, not an answer); with nothing supported the answers stay."""
    support = {"Michael Mann": [3]}
    assert set_aside_unsupported(["Michael Mann", "Ridley Scott"], support) == (["Michael Mann"], ["Ridley Scott"])
    assert set_aside_unsupported(["Ridley Scott"], support) == (["Ridley Scott"], [])
    assert set_aside_unsupported([], support) == ([], [])
    from kgrag.methods import get as get_method
    from kgrag.models.embeddings import load_embedder
    from kgrag.models.llm.scripted import ScriptedLLM

    kg = _kg()
    for own_knowledge, answers, aside in (
        ("where_silent", ["Michael Mann"], ["Ridley Scott"]),
        ("always", ["Michael Mann", "Ridley Scott"], []),
    ):
        llm = ScriptedLLM({"default": "<answers>\nRidley Scott\nMichael Mann\n</answers>"})
        kaping = get_method("kaping")(kg, llm=llm, embedder=load_embedder("static"), own_knowledge=own_knowledge)
        answer = kaping.answer("who directed Heat", ["Heat"])
        assert answer.answers == answers and answer.set_aside == aside, own_knowledge
        assert answer.grounded == (own_knowledge == "where_silent") and set(answer.confidence) == set(answers)
    # nothing in the evidence answers: the model's answer stays, unsupported
    llm = ScriptedLLM({"default": "<answers>Ridley Scott</answers>"})
    answer = get_method("kaping")(kg, llm=llm, embedder=load_embedder("static")).answer("who directed Heat", ["Heat"])
    assert answer.answers == ["Ridley Scott"] and answer.set_aside == [] and not answer.grounded


def test_answer_links_do_not_go_to_or_through_a_hub(tmp_path):
    """Every film has a genre: a link that joins an answer to Drama, or to a film reached only through Drama, says
    nothing about the question. A film reached through the question's own actor does."""
    triples = [(f"Film {i}", "genre", "Drama") for i in range(30)]
    triples += [("Lawn Dogs", "genre", "Drama"), ("Lawn Dogs", "cast", "Sam"), ("Film 7", "cast", "Sam")]
    triples += [("Film 3", "language", "Swedish"), ("Film 7", "language", "Dutch"), ("Dutch", "genre", "Drama")]
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(triples).save(tmp_path / "kg"))
    tid = {kg.triple(t): t for t in range(kg.num_triples)}
    read = [("Lawn Dogs", "genre", "Drama"), ("Film 3", "genre", "Drama"), ("Lawn Dogs", "cast", "Sam")]
    read.append(("Film 7", "cast", "Sam"))
    facts = triples_as_evidence(kg, np.array([tid[t] for t in read]))
    question = "what languages are the films of the actors of Lawn Dogs in"
    loose, links = answer_links(kg, question, ["Swedish", "Dutch"], facts, ["Lawn Dogs"])
    assert [kg.entities[e] for e in loose] == ["Swedish", "Dutch"]
    assert [kg.triple(t) for t in links] == [("Film 7", "language", "Dutch")]  # not Film 3's, not "Dutch genre Drama"
