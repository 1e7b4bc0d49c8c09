"""kaping baseline plumbing (scripted LLM: no accuracy claims): linking, retrieval, evidence, one call."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.retrieval.triples import candidate_triples, whole_facts, within_hubs
from kgrag.types import Evidence
from tests.conftest import MOVIES, RecordingLLM


def test_kaping_retrieves_topic_triples_and_answers_once(tmp_path):
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    llm = ScriptedLLM(
        {
            "rules": [
                {
                    "prompt": "kaping_answer",
                    "match": "Heat directed by Michael Mann",
                    "response": "<answers>Michael Mann</answers>",
                }
            ]
        }
    )
    method = get_method("kaping")(kg, llm=llm, top_k=3)
    evidence = method.retrieve("who directed Heat")  # topic found in the question
    assert len(evidence) == 3 and evidence[0].source == "kaping"
    assert evidence[0].text == "Heat directed by Michael Mann"
    assert all(
        kg.has_triple(*[int(x) for x in (kg.heads[t], kg.rels[t], kg.tails[t])]) for ev in evidence for t in ev.triples
    )
    answer = method.answer("who directed Heat", ["Heat"])
    assert answer.answers == ["Michael Mann"] and answer.grounded
    assert answer.usage.llm_calls == 1
    assert [s.name for s in answer.trace] == ["link", "candidates", "rank", "answer"]


def test_candidate_prefilter_caps_hubs(tmp_path):
    triples = [(f"Film {i}", "has_genre", "Drama") for i in range(300)]
    triples += [(f"Film {i}", "directed_by", f"Director {i % 7}") for i in range(300)]
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(triples).save(tmp_path / "kg"))
    drama = kg.entity_id("Drama")
    all_tids = candidate_triples(kg, [drama], "who directed drama films", hops=2, max_candidates=10_000)
    assert len(all_tids) == 600
    capped = candidate_triples(kg, [drama], "who directed drama films", hops=2, max_candidates=50)
    assert len(capped) == 50 and np.isin(capped, all_tids).all()
    assert len(np.unique(capped)) == 50


def test_whole_facts_keeps_siblings_and_both_halves_behind_unnamed_nodes(tmp_path):
    triples = [("Jamaica", "languages_spoken", lang) for lang in ("English", "Creole", "Spanish")]
    triples += [("Jamaica", "contains", f"Town {i}") for i in range(10)]
    triples += [("Bob", "spouse_s", "m.02h98gq"), ("m.02h98gq", "spouse", "Rita"), ("m.02h98gq", "from", "1966")]
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(triples).save(tmp_path / "kg"))
    tid = {kg.triple(t): t for t in range(kg.num_triples)}
    # a ranking that put one language first, the towns next and the other languages last
    ranked = [tid[("Jamaica", "languages_spoken", "English")]]
    ranked += [tid[("Jamaica", "contains", f"Town {i}")] for i in range(10)]
    ranked += [tid[("Jamaica", "languages_spoken", x)] for x in ("Creole", "Spanish")]
    ranked += [tid[("Bob", "spouse_s", "m.02h98gq")], tid[("m.02h98gq", "from", "1966")]]
    ranked += [tid[("m.02h98gq", "spouse", "Rita")]]
    ranked = np.array(ranked)
    jamaica, bob = kg.entity_id("Jamaica"), kg.entity_id("Bob")
    kept = [kg.triple(t) for t in ranked[whole_facts(kg, ranked, [jamaica, bob], 6, siblings=3)]]
    assert kept[:3] == [("Jamaica", "languages_spoken", x) for x in ("English", "Creole", "Spanish")]
    assert kept[3:] == [("Jamaica", "contains", f"Town {i}") for i in range(3)]  # a group takes <= siblings
    tail = ranked[13:]  # Bob's fact: the near half first, its unnamed node's other triples after
    assert [kg.triple(t) for t in tail[whole_facts(kg, tail, [bob], 2)]] == [
        ("Bob", "spouse_s", "m.02h98gq"),
        ("m.02h98gq", "from", "1966"),
    ]
    mixed = np.array([tid[("Bob", "spouse_s", "m.02h98gq")], ranked[12], tid[("m.02h98gq", "spouse", "Rita")]])
    kept = [kg.triple(t) for t in mixed[whole_facts(kg, mixed, [jamaica, bob], 2)]]
    assert kept == [("Bob", "spouse_s", "m.02h98gq"), ("m.02h98gq", "spouse", "Rita")]  # ahead of Spanish
    assert list(whole_facts(kg, ranked[:4], [jamaica], 10)) == [0, 1, 2, 3]  # under budget: all, in order


def test_facts_past_a_hub_that_is_not_a_topic_are_left_out(tmp_path):
    """Al acts in 40 films (a hub: more than ten times the median degree); the topic film's own fact with him
    stays, of the other films' facts past him only the best-ranked, the director's other film (not a hub) stays.
    Taken as the topic, Al is walked through."""
    triples = [(f"Film {i}", "starred", "Al") for i in range(40)]
    triples += [(f"Film {i}", "directed_by", f"Director {i}") for i in range(40)]
    triples += [("Heat", "starred", "Al"), ("Heat", "directed_by", "Mann"), ("Thief", "directed_by", "Mann")]
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(triples).save(tmp_path / "kg"))
    heat, al = kg.entity_id("Heat"), kg.entity_id("Al")
    tids = candidate_triples(kg, [heat], "who directed Heat", hops=2)
    within = within_hubs(kg, tids, [heat], per_hub=0)  # nothing past a hub
    kept = {kg.triple(t) for t in tids[within]}
    assert kept == {("Heat", "starred", "Al"), ("Heat", "directed_by", "Mann"), ("Thief", "directed_by", "Mann")}
    assert len(tids) - len(within) == 40  # every "Film i starred Al"
    wider = candidate_triples(kg, [heat], "who directed Heat", hops=3)  # three hops: the films' directors too
    assert {kg.triple(t) for t in wider[within_hubs(kg, wider, [heat], 3, per_hub=0)]} == kept
    of_al = candidate_triples(kg, [al], "films with Al", hops=2)
    assert len(within_hubs(kg, of_al, [al], per_hub=0)) == len(of_al)
    ranked = tids[np.argsort([kg.triple(t)[0] != "Film 7" for t in tids], kind="stable")]  # Film 7's fact first
    kept_ranked = [kg.triple(t) for t in ranked[within_hubs(kg, ranked, [heat])]]
    assert len(kept_ranked) == 4 and kept_ranked[0] == ("Film 7", "starred", "Al")  # the best one past Al stays
    assert len(within_hubs(kg, ranked, [heat], per_hub=3)) == 6 and len(within_hubs(kg, of_al, [al])) == len(of_al)
    assert len(within_hubs(kg, wider, [heat], 3)) == 4  # no fact further past Al ("Film i directed_by Director i")
    facts = get_method("kaping")(kg, llm=None).retrieve("who directed Heat", ["Heat"])
    assert len(facts) == 4 and {tuple(ev.entities) for ev in facts} >= {(h, t) for h, _, t in kept}
    walking = get_method("kaping")(kg, llm=None, past_hub_facts=None).retrieve("who directed Heat", ["Heat"])
    assert len(walking) == len(tids)


def test_cypher_baseline_runs_guarded_query(tmp_path):
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    query = "MATCH (m:Entity {name: 'Heat'})-[:directed_by]->(d) RETURN d.name"
    llm = ScriptedLLM(
        {
            "rules": [
                {"prompt": "text2cypher", "match": "directed_by", "response": f"```\n<cypher>{query}</cypher>\n```"}
            ]
        }
    )
    answer = get_method("cypher")(kg, llm=llm).answer("who directed Heat")
    assert answer.answers == ["Michael Mann"] and answer.usage.llm_calls == 1
    assert answer.trace[1].outputs["ok"] and answer.evidence[0].source == "cypher"
    assert answer.evidence[0].entities == ["Michael Mann"] and "Michael Mann" in answer.evidence[0].text
    evil = ScriptedLLM({"default": "<cypher>MATCH (n) DETACH DELETE n</cypher>"})
    blocked = get_method("cypher")(kg, llm=evil).answer("delete everything")
    assert blocked.answers == [] and blocked.trace[1].outputs["rejected"]


def test_relation_weight_adds_the_relation_names_similarity(tmp_path):
    from kgrag.models.embeddings import dot_scores, load_embedder
    from kgrag.retrieval.triples import kg_vectors, rank_triples

    triples = [("Ada Brook", "place of birth", "Lyon"), ("Ada Brook", "profession", "Actor")]
    triples += [("Lyon", "film genre", "Backstage Musical"), ("Lyon", "twin town", "Backstage Musical")]
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(triples).save(tmp_path / "kg"))
    embedder = load_embedder("minilm")
    question = "What genre of film is associated with the place where Ada Brook was born?"
    tids = np.arange(kg.num_triples)
    plain_ids, plain = rank_triples(kg, question, tids, embedder=embedder, top_k=4)
    ids, weighted = rank_triples(kg, question, tids, embedder=embedder, top_k=4, relation_weight=0.3)
    named = dot_scores(kg_vectors(kg, embedder).relations(), embedder.encode([question])[0])
    by_id = dict(zip(plain_ids.tolist(), plain.tolist(), strict=True))
    expected = np.array([by_id[t] + 0.3 * named[kg.rels[t]] for t in ids.tolist()])
    assert np.allclose(weighted, expected, atol=1e-5) and (np.diff(weighted) <= 0).all()
    # best first, the fact whose relation the question names above its twin
    order = [kg.triple(int(t))[1] for t in ids if kg.heads[t] == kg.entity_id("Lyon")]
    assert order == ["film genre", "twin town"]


def test_facts_show_dotted_relation_ids_by_the_segments_that_tell_them_apart():
    from kgrag.retrieval.triples import facts_text, triples_as_evidence

    kg = KnowledgeGraph.from_triples(
        [
            ("Bob Marley", "people.person.place_of_birth", "Nine Mile"),
            ("Heat", "film.film.genre", "Crime Fiction"),
            ("Bob Marley", "music.artist.genre", "Reggae"),
            ("Heat", "directed_by", "Michael Mann"),
        ]
    )
    evidence = triples_as_evidence(kg, np.arange(4))
    assert facts_text(evidence).splitlines() == [
        "1. Bob Marley place of birth Nine Mile",
        "2. Bob Marley artist.genre Reggae",  # two "genre" relations shown: one more segment each
        "3. Heat film.genre Crime Fiction",
        "4. Heat directed by Michael Mann",  # an undotted name as it was
    ]
    assert evidence[0].relations == ["people.person.place_of_birth"]  # the evidence keeps the full id
    assert "people.person" in evidence[0].text


def test_grouped_facts_share_a_line_per_subject_and_relation():
    from kgrag.retrieval.triples import facts_text, triples_as_evidence

    kg = KnowledgeGraph.from_triples(
        [
            ("Jamaica", "location.country.languages_spoken", "Jamaican English"),
            ("Jamaica", "location.location.containedby", "Caribbean"),
            ("Jamaica", "location.country.languages_spoken", "Jamaican Creole"),
            ("Heat", "directed_by", "Michael Mann"),
            ("Heat", "starred_actors", "Al Pacino"),
            ("Heat", "starred_actors", "Robert De Niro"),
        ]
    )
    evidence = triples_as_evidence(kg, np.arange(6))
    evidence.append(Evidence(text="count: 3", source="cypher"))
    # each group at the place of its first fact, objects in the order they came; other evidence as it was
    assert facts_text(evidence, grouped=True).splitlines() == [
        "1. Jamaica languages spoken Jamaican English; Jamaican Creole",
        "2. Jamaica containedby Caribbean",
        "3. Heat directed by Michael Mann",
        "4. Heat starred actors Al Pacino; Robert De Niro",
        "5. count: 3",
    ]
    assert len(facts_text(evidence).splitlines()) == 7  # one line a fact unless asked
    assert facts_text([], grouped=True) == "(no facts found)"


def test_grouped_facts_fold_unnamed_nodes_into_one_fact_through_them():
    """A Freebase CVT's facts read as one fact through ``·``: twenty nodes saying the same thing say it once, a
    node with two facts beyond it is one line, one reached from nothing named keeps ``·`` as its subject, one that
    leads nowhere is left out, one two named entities lead to keeps its identifier; without ``fold_unnamed`` the
    identifiers are shown as before."""
    from kgrag.retrieval.triples import facts_text, triples_as_evidence

    triples = [("Germany", "finance.currency.countries_used", "Euro")]
    for k in range(3):  # yearly GDP records, each behind its own unnamed node
        triples += [("Germany", "location.statistical_region.gdp_nominal", f"m.0j6rx{k}r")]
        triples += [(f"m.0j6rx{k}r", "measurement_unit.dated_money_value.currency", "United States Dollar")]
    triples += [
        ("Jamaica", "government.governmental_jurisdiction.governing_officials", "m.0cr320w"),
        ("m.0cr320w", "government.government_position_held.office_holder", "Portia Simpson-Miller"),
        ("m.0cr320w", "government.government_position_held.basic_title", "Prime Minister"),
        ("m.0b0t1z", "government.government_position_held.office_holder", "Andrew Holness"),
        ("Germany", "location.statistical_region.gdp_real", "m.0hnxrh6"),
        ("The Sixth Sense", "film.film.starring", "m.0k6gz9"),
        ("Donnie Wahlberg", "film.actor.film", "m.0k6gz9"),
        ("m.0k6gz9", "film.performance.character", "Vincent Grey"),
    ]
    kg = KnowledgeGraph.from_triples(triples)
    evidence = triples_as_evidence(kg, np.arange(len(triples)))
    lines = [line.split(". ", 1)[1] for line in facts_text(evidence, grouped=True, fold_unnamed=True).splitlines()]
    assert lines[:4] == [
        "Germany countries used Euro",
        "Germany gdp nominal · currency United States Dollar",
        "Jamaica governing officials · (office holder Portia Simpson-Miller, basic title Prime Minister)",
        "· office holder Andrew Holness",
    ]
    assert sorted(lines[4:]) == [  # two named entities meet there: the identifier says so
        "Donnie Wahlberg film m.0k6gz9",
        "The Sixth Sense starring m.0k6gz9",
        "m.0k6gz9 character Vincent Grey",
    ]
    unfolded = facts_text(evidence, grouped=True)
    assert "m.0j6rx0r currency United States Dollar" in unfolded and "gdp real m.0hnxrh6" in unfolded


def test_grouped_facts_share_a_line_per_relation_and_object_when_alone_on_theirs():
    """Siblings at a subject's end (people of one nationality) are written once with their subjects; a fact that
    already shares its line with other objects stays there. Asked for only (kaping's "grouped_by_object")."""
    from kgrag.retrieval.triples import facts_text, triples_as_evidence

    kg = KnowledgeGraph.from_triples(
        [
            ("Willow Smith", "nationality", "USA"),
            ("Willow Smith", "parents", "Jada Pinkett Smith"),
            ("Tina Turner", "nationality", "USA"),
            ("Joan Crawford", "nationality", "USA"),
            ("Tina Turner", "profession", "Singer"),
            ("Tina Turner", "profession", "Actor"),
            ("Joan Crawford", "profession", "Actor"),
            ("Harper Lee", "nationality", "Canada"),
        ]
    )
    evidence = triples_as_evidence(kg, np.arange(8))
    assert facts_text(evidence, grouped=True, by_object=True).splitlines() == [
        "1. Willow Smith; Tina Turner; Joan Crawford nationality USA",
        "2. Willow Smith parents Jada Pinkett Smith",
        "3. Tina Turner profession Singer; Actor",
        "4. Joan Crawford profession Actor",
        "5. Harper Lee nationality Canada",
    ]
    assert len(facts_text(evidence, grouped=True).splitlines()) == 7  # by subject and relation only, unless asked


def test_the_tree_layout_shows_a_two_hop_chain_from_the_topic_as_one_line(tmp_path):
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    chain = "-[directed by]-> Michael Mann <-[directed by]- "  # Heat's director's other films, read on from Heat
    rule = {"prompt": "kaping_answer", "match": re.escape(chain), "response": "<answers>The Insider</answers>"}
    llm = ScriptedLLM({"rules": [rule], "default": "<answers>Heat</answers>"})
    question = "which films share the director of Heat"
    method = get_method("kaping")(kg, llm=llm, top_k=6, evidence_format="tree")
    answer = method.answer(question, ["Heat"])
    assert answer.answers == ["The Insider"]
    # the grouped layout (the default) writes the same facts one by one: the scripted rule does not match it
    grouped = get_method("kaping")(kg, llm=llm, top_k=6).answer(question, ["Heat"])
    assert grouped.answers != ["The Insider"]


def test_kaping_answer_call_chooses_among_the_entities_the_facts_name(tmp_path):
    """``choose_answers``: the reply is held by a grammar to the names the facts show, so every answer stands on
    the evidence; a name outside them (a backend that ignores grammars) is dropped. Off by default."""
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    rule = {"prompt": "kaping_answer", "response": "<answers>Warp Drive; Michael Mann</answers>"}
    llm = RecordingLLM(rule)
    answer = get_method("kaping")(kg, llm=llm, top_k=3, choose_answers="on").answer("who directed Heat", ["Heat"])
    grammar = llm.grammars[-1]
    assert grammar is not None and grammar.startswith('root ::= "<answers>"') and '"Michael Mann"' in grammar
    assert '"Warp Drive"' not in grammar
    assert answer.answers == ["Michael Mann"] and answer.grounded
    unheld = get_method("kaping")(kg, llm=llm, top_k=3).answer("who directed Heat", ["Heat"])
    assert llm.grammars[-1] is None and "Warp Drive" in unheld.set_aside  # read, then set aside: no support


def test_a_chosen_reply_naming_only_the_topic_still_gets_the_evidence_answer(tmp_path):
    """The 1.5B model often names the question's own entity alone ("who will play mr gray" → "Christian Grey");
    as with a written reply, the evidence's best other name stands in, here a Freebase CVT (never a choice: it
    has no name) read as the named entity behind it."""
    triples = [("Christian Grey", "character", "m.0ydn3r2"), ("m.0ydn3r2", "actor", "Jamie Dornan")]
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(triples).save(tmp_path / "kg"))
    rule = {"prompt": "kaping_answer", "response": "<answers>Christian Grey</answers>"}
    method = get_method("kaping")(kg, llm=RecordingLLM(rule), choose_answers="on")
    answer = method.answer("who will play mr gray in the film", ["Christian Grey"])
    assert '"m.0ydn3r2"' not in method.llm.grammars[-1]
    assert answer.answers == ["Jamie Dornan"] and answer.grounded


def test_joined_facts_grow_from_the_topic_entities():
    kg = KnowledgeGraph.from_triples(MOVIES)
    question = "When were the films starring Russell Crowe released?"
    plain = get_method("kaping")(kg, llm=None, hops=3, top_k=5).retrieve(question, ["Russell Crowe"])
    joined = get_method("kaping")(kg, llm=None, hops=3, top_k=5, joined=True).retrieve(question, ["Russell Crowe"])
    reached = {"Russell Crowe"}
    for ev in joined:  # each fact touches what the ones before it reached
        assert reached & set(ev.entities), ev.text
        reached |= set(ev.entities)
    assert "Gladiator starred actors Russell Crowe" in {ev.text for ev in joined} - {ev.text for ev in plain}


@pytest.mark.parametrize("link_answers", [False, True])
def test_an_answer_one_fact_past_the_facts_is_supported_by_that_fact(tmp_path, link_answers):
    """Heat's 1-hop facts reach Michael Mann and its actors; The Insider is one KG fact past them, Alien none."""
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    llm = RecordingLLM({"prompt": "kaping_answer", "response": "<answers>\nThe Insider\nAlien\n</answers>"})
    method = get_method("kaping")(kg, llm=llm, hops=1, link_answers=link_answers)
    answer = method.answer("which other film did the director of Heat make", ["Heat"])
    linked = [ev.text for ev in answer.evidence if ev.source == "kaping/link"]
    if link_answers:
        assert linked == ["The Insider directed by Michael Mann"] and answer.trace[-1].name == "link_answers"
        assert answer.answers == ["The Insider"] and answer.set_aside == ["Alien"] and answer.grounded
    else:
        assert linked == [] and answer.answers == ["The Insider", "Alien"] and not answer.grounded


def test_an_answer_written_in_another_spelling_is_given_the_kgs_name(tmp_path):
    """Support reads "michael  MANN" as the Michael Mann its fact shows; the user is shown the KG's name."""
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    llm = ScriptedLLM({"default": "<answers>michael  MANN</answers>"})
    answer = get_method("kaping")(kg, llm=llm, top_k=3).answer("who directed Heat", ["Heat"])
    assert answer.answers == ["Michael Mann"] and answer.grounded
    assert set(answer.support) == set(answer.confidence) == set(answer.signals) == {"Michael Mann"}


@pytest.mark.parametrize(
    ("reply", "extra", "expected"),
    [
        ("Mann", [], ["Michael Mann"]),
        ("Pacino", [], ["Al Pacino"]),
        ("Robert", [], ["Robert De Niro"]),
        ("Crowe", [], ["Crowe"]),  # Russell Crowe is not among the facts about Heat
        ("Robert", [("Heat", "starred_actors", "Robert Duvall")], ["Robert"]),  # two such names: neither
    ],
)
def test_an_answer_that_shortens_the_name_of_an_entity_the_facts_reach_is_given_its_name(
    tmp_path, reply, extra, expected
):
    """A reply that is no KG name but the first or last words of the one entity the facts reach that it can
    shorten ("Colón" for the WebQSP proxy's "Costa Rican colón") is that entity, shown under its KG name."""
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples([*MOVIES, *extra]).save(tmp_path / "kg"))
    llm = ScriptedLLM({"default": f"<answers>{reply}</answers>"})
    answer = get_method("kaping")(kg, llm=llm, hops=1).answer("who is in Heat", ["Heat"])
    assert answer.answers == expected and answer.grounded == (expected != [reply])
