"""`kgrag adapt`: synthetic questions from a KG, FRAG's classifiers trained on them and stored with the KG.

Plumbing and contracts only (what is written where, with which checksum, atomically); how well adapted models
route real questions is measured on MetaQA and the WebQSP proxy (see the #24 report), not here.
"""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest

from kgrag.errors import KGStoreError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.store import check_replaceable, load_kg, save_kg
from kgrag.methods import get as get_method
from kgrag.methods.frag import adapt as adapt_module
from kgrag.methods.frag.adapt import adapt
from kgrag.methods.frag.adapted import adapted_models, record_of
from kgrag.methods.frag.phrasing import read_paraphrases, read_relation_description
from kgrag.methods.frag.question_log import label_asked
from kgrag.methods.frag.router import HopRouter, PatternClassifier, mask_topics
from kgrag.methods.frag.sampling import AdaptError, AdaptSettings, Silent, SyntheticQuestion, sample_questions
from kgrag.methods.frag.synthetic import QuestionWriter, RelationLexicon, humanise, plural, verb_forms
from kgrag.models.llm.base import LLM, Generation
from tests.conftest import run_cli

GENRES = ["Drama", "Comedy", "Western", "Horror", "Musical", "Thriller"]


def _film_triples(seed: int = 0) -> list[tuple[str, str, str]]:
    """A small film KG with a user's own relation names (spaces, no namespaces)."""
    rng = random.Random(seed)
    directors = [f"Director {chr(65 + i)}{chr(97 + j)}" for i in range(6) for j in range(4)]
    actors = [f"Actor {chr(65 + i)}{chr(97 + j)}" for i in range(8) for j in range(6)]
    triples = []
    for i in range(90):
        film = f"Film Number {i}"
        triples.append((film, "director", rng.choice(directors)))
        for actor in rng.sample(actors, 3):
            triples.append((film, "cast member", actor))
        triples.append((film, "genre", rng.choice(GENRES)))
        triples.append((film, "release year", str(1950 + rng.randrange(40))))
    return triples


@pytest.fixture
def store(tmp_path):
    return save_kg(KnowledgeGraph.from_triples(_film_triples()), tmp_path / "films")


SMALL = AdaptSettings(questions=360, max_answers=25, calibration=0)  # both models kept as trained


def test_relation_names_read_as_english():
    assert humanise("film.film.genre").words == "genre" and humanise("film.film.genre").subject_type == "film"
    assert humanise("directed_by").agentive and humanise("directed_by").words == "directed by"
    assert humanise("castMember").words == "cast member"
    assert humanise("has_genre").words == "genre"
    assert humanise("people.person.spouse_s").words == "spouses"
    assert plural("country") == "countries" and plural("genre") == "genres" and plural("box") == "boxes"
    words = {"direct", "directed", "create", "created", "member"}
    assert verb_forms(humanise("director"), words) == ("directed", "directed", "direct")
    assert verb_forms(humanise("creator"), words) == ("created", "created", "create")
    assert verb_forms(humanise("cast member"), words) is None  # "membed" is not a word
    assert verb_forms(humanise("screenwriter"), words)[1] == "written"


def test_question_writer_keeps_the_topic_bracketed_and_names_each_relation():
    lexicons = [RelationLexicon(humanise(r)) for r in ("director", "genre")]
    writer = QuestionWriter(lexicons, np.random.default_rng(0))
    for pattern in ([0], [2], [0, 2], [0, 2, 1], [2, 0, 3]):
        for _ in range(20):
            question = writer.write("Heat", pattern)
            assert question.count("[Heat]") == 1 and "{" not in question
            assert mask_topics(question, ["Heat"]).count("ENT") == 1


def test_sampled_questions_are_answered_by_their_pattern(store):
    kg = load_kg(store)
    questions = sample_questions(kg, SMALL)
    assert {q.hops for q in questions} == {1, 2, 3}
    assert len(questions) == SMALL.questions
    assert {q.pattern.split(">")[0] for q in questions if q.hops == 1} >= {"director", "cast member_inv", "genre"}
    rng = random.Random(1)
    from kgrag.methods.frag.patterns import reachable_patterns

    for q in rng.sample(questions, 20):
        start = kg.entity_id(q.topic)
        reach = reachable_patterns(kg, [start], q.hops, hub_degree=SMALL.hub_degree)
        labels = [
            ">".join(
                kg.relations[p % kg.num_relations] + ("_inv" if p >= kg.num_relations else "") for p in row if p >= 0
            )
            for row in reach.patterns
        ]
        ends = {kg.entities[e] for e in reach.endpoints(labels.index(q.pattern))}
        assert set(q.answers) == ends and 1 <= len(q.answers) <= SMALL.max_answers
        assert f"[{q.topic}]" in q.question
    # r > r_inv > r walks back to where the first hop went: not a 3-hop question
    for q in questions:
        hops = q.pattern.split(">")
        assert not any(
            hops[i + 2] == hops[i] and hops[i + 1] in (hops[i] + "_inv", hops[i].removesuffix("_inv"))
            for i in range(len(hops) - 2)
        )


def test_adapt_writes_both_models_for_this_kg(store):
    kg = load_kg(store)
    record = adapt(kg, SMALL)
    target = store / "adapted"
    router, patterns = HopRouter.load(target / "frag_router.npz"), PatternClassifier.load(target / "frag_patterns.npz")
    assert router.trained_for(kg.checksum) and patterns.trained_for(kg.checksum)
    assert (
        router.provenance["questions"].startswith("kgrag adapt: ")
        and "synthetic questions" in router.provenance["questions"]
    )
    saved = json.loads((target / "adapt.json").read_text())
    assert saved == record and saved["kg_checksum"] == kg.checksum
    assert set(saved["files"]) == {"frag_router.npz", "frag_patterns.npz", "questions.jsonl"}
    assert saved["calibration"] is None
    assert saved["counts"]["by_hops"] == {"1": 240, "2": 240, "3": 240}  # each template also with unseen words
    assert saved["router"]["out"] == str(target / "frag_router.npz")
    # the router separates the hop counts of synthetic questions it was not trained on
    fresh = sample_questions(kg, AdaptSettings(questions=300, max_answers=25, seed=7))
    accuracy = router.accuracy([q.question for q in fresh], [q.hops for q in fresh])
    assert accuracy >= 0.6, accuracy  # chance: 1/3


def test_calibration_keeps_only_the_models_that_help(store):
    kg = load_kg(store)
    record = adapt(kg, AdaptSettings(questions=360, max_answers=25, calibration=60, keep_margin=-1.0))
    calibration = record["calibration"]
    assert calibration["questions"] == 60
    assert set(calibration["answer_recall"]) == {"zero-shot", "pattern scorer", "router and pattern scorer"}
    assert calibration["kept"] != "zero-shot"  # a negative margin favours the models
    router, patterns = adapted_models(kg, record_of(kg))
    assert patterns is not None and (router is not None) == (calibration["kept"] == "router and pattern scorer")
    assert (record["router"]["out"] is not None) == (router is not None)
    record = adapt(kg, AdaptSettings(questions=360, max_answers=25, calibration=60, keep_margin=1.0))
    assert record["calibration"]["kept"] == "zero-shot" and adapted_models(kg, record_of(kg)) == (None, None)
    assert record["router"]["out"] is None and record["patterns"]["out"] is None
    assert sorted(p.name for p in (store / "adapted").iterdir()) == ["adapt.json", "questions.jsonl"]


def test_adapted_models_are_found_only_for_this_kg_and_intact(store, caplog):
    kg = load_kg(store)
    assert adapted_models(kg, record_of(kg)) == (None, None)
    adapt(kg, SMALL)
    router, patterns = adapted_models(kg, record_of(kg))
    assert router == store / "adapted" / "frag_router.npz" and patterns == store / "adapted" / "frag_patterns.npz"
    other = KnowledgeGraph.from_triples(_film_triples())  # not from a store
    assert record_of(other) is None and adapted_models(other, record_of(other)) == (None, None)
    frag = get_method("frag")(kg)
    assert frag.router is not None and frag.router.trained_for(kg.checksum)  # frag's `auto` takes them
    with open(router, "ab") as fh:
        fh.write(b"edited")
    assert adapted_models(kg, record_of(kg)) == (None, None) and "differ" in caplog.text
    frag = get_method("frag")(kg)
    assert frag.router is None and frag.pattern_classifier is None  # nor does frag: zero-shot instead


def test_rerunning_replaces_the_models_atomically(store, monkeypatch):
    kg = load_kg(store)
    first = adapt(kg, SMALL)
    second = adapt(kg, AdaptSettings(questions=360, max_answers=25, calibration=0, seed=3))
    assert second["settings"]["seed"] == 3 and json.loads((store / "adapted" / "adapt.json").read_text()) == second
    assert first["files"] != second["files"]

    def broken(*args, **kwargs):
        raise RuntimeError("training failed half-way")

    monkeypatch.setattr(adapt_module, "train", broken)
    with pytest.raises(RuntimeError):
        adapt(kg, SMALL)
    assert json.loads((store / "adapted" / "adapt.json").read_text()) == second  # the previous run stays
    assert sorted(p.name for p in store.iterdir() if "adapted" in p.name) == ["adapted"]  # no temp left behind


def test_a_store_with_adapted_models_can_be_replaced_and_stays_safe(store):
    adapt(load_kg(store), SMALL)
    check_replaceable(store)  # "adapted" is kgrag's own: re-ingest may replace the store
    save_kg(KnowledgeGraph.from_triples(_film_triples(seed=1)), store)
    assert not (store / "adapted").exists()  # models of the old KG go with it
    (store / "notes.txt").write_text("mine")
    with pytest.raises(KGStoreError):
        check_replaceable(store)


def test_adapt_needs_a_stored_kg_and_enough_questions(store):
    with pytest.raises(AdaptError):
        adapt(KnowledgeGraph.from_triples(_film_triples()), SMALL)
    with pytest.raises(AdaptError):
        adapt(load_kg(store), AdaptSettings(questions=3))
    with pytest.raises(AdaptError):
        adapt(load_kg(store), AdaptSettings(questions=300, paraphrases=5))  # no LLM


def test_llm_replies_are_read_defensively():
    q = SyntheticQuestion("what is the director of [Heat]", 1, "director", "Heat", ["Michael Mann"])
    reply = "<paraphrases>\n1. Who directed Heat?\n- Who made [Heat]? Michael Mann\nwho is it\n[Heat] [Alien]\n"
    assert read_paraphrases(reply, q) == ["Who directed [Heat]?"]
    assert read_paraphrases("", q) == [] and read_paraphrases("<paraphrases></paraphrases>", q) == []
    lexicon = RelationLexicon(humanise("director"))
    reply = (
        "<kind>films</kind>\n<ask_object>who directed Heat?\nwho directed Heat, Michael Mann?\n</ask_object>"
        "<ask_subject>which films did michael mann direct?\nHeat and Michael Mann</ask_subject>"
        "<object_phrase>the director of Heat\n{S}</object_phrase><subject_phrase>the films Michael Mann directed"
    )
    assert read_relation_description(reply, lexicon, "Heat", "Michael Mann")
    assert lexicon.forward_questions == ["who directed {x}"]  # the line that names the answer is dropped
    assert lexicon.inverse_questions == ["which films did {x} direct"]
    assert lexicon.forward_phrases == ["the director of {x}"] and lexicon.inverse_phrases == ["the films {x} directed"]
    assert lexicon.subject_types == ["films"]
    assert not read_relation_description(
        "I cannot help with that.", RelationLexicon(humanise("genre")), "Heat", "Crime"
    )


class _EchoLLM(LLM):
    """Answers ``adapt_relation`` with a question about the fact's subject, and every paraphrase request with a
    line that drops the entity (plumbing only)."""

    model_id = "echo"

    def _generate(self, messages, params) -> Generation:
        facts = re.findall(r'One of its facts: "([^"]+)"', messages[-1]["content"])  # the prompt's example first
        if facts:
            return Generation(f"<kind>films</kind><ask_object>what about {facts[-1]}</ask_object>", 1, 1)
        return Generation("<paraphrases>tell me about it</paraphrases>", 1, 1)


def test_adapt_with_an_llm_phrases_relations_and_checks_paraphrases(store):
    llm = _EchoLLM()
    record = adapt(
        load_kg(store), AdaptSettings(questions=360, max_answers=25, calibration=0, describe=2, paraphrases=4), llm=llm
    )
    assert record["counts"]["relations_phrased_by_llm"] == 2 and record["counts"]["relation_calls"] == 2
    assert record["counts"]["paraphrase_calls"] == 4 and record["counts"]["paraphrases"] == 0  # no [topic]: rejected
    assert "LLM-phrased relations" in record["questions_source"] and record["llm"] == "echo"
    phrasings = record["relation_phrasings"]
    assert len(phrasings) == 2 and all(p["ask_object"] == ["what about {x}"] for p in phrasings.values())
    questions = [json.loads(line)["question"] for line in (store / "adapted" / "questions.jsonl").open()]
    assert any(q.startswith("what about [") for q in questions)


def test_adapt_cli(store, tmp_path):
    proc = run_cli("adapt", str(store), "--questions", "360", "--max-answers", "25", "--calibration", "30", "--json")
    record = json.loads(proc.stdout)
    assert record["kg_checksum"] == load_kg(store).checksum and (store / "adapted" / "adapt.json").exists()
    assert record["calibration"]["questions"] == 30
    bad = run_cli("adapt", str(tmp_path / "nowhere"), ok=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "nowhere" in bad.stderr
    folder = tmp_path / "folder"
    folder.mkdir()
    bad = run_cli("adapt", str(folder), ok=False)
    assert bad.returncode == 2 and "not a kgrag KG store" in bad.stderr


class _PhrasingLLM(LLM):
    """Writes "which films did {actor} act in" for the cast member relation and nothing usable otherwise."""

    model_id = "phrasing"

    def _generate(self, messages, params) -> Generation:
        facts = re.findall(r'One of its facts: "[^"]+" cast member "([^"]+)"', messages[-1]["content"])
        if facts:
            return Generation(f"<kind>films</kind><ask_subject>which films did {facts[-1]} act in</ask_subject>", 1, 1)
        return Generation("nothing", 1, 1)


def test_the_zero_shot_scorer_reads_what_the_llm_wrote_for_each_relation(store):
    """`kgrag adapt --describe` keeps the LLM's phrasings in adapt.json; with ``relation_phrasings`` frag's
    zero-shot scorer adds them to the relation's words, so "act in" comes nearer ``cast member``, only on this KG."""
    from kgrag.methods.frag.adapted import adapted_phrasings, record_of
    from kgrag.methods.frag.alignment import relation_phrase_vectors
    from kgrag.models.embeddings import load_embedder

    kg = load_kg(store)
    assert adapted_phrasings(kg, record_of(kg)) == {}
    adapt(kg, AdaptSettings(questions=360, max_answers=25, calibration=0, describe=4), llm=_PhrasingLLM())
    kg = load_kg(store)
    cast = kg.relations.index("cast member")
    phrasings = adapted_phrasings(kg, record_of(kg))
    assert list(phrasings) == [cast] and phrasings[cast][0] == "which films did {x} act in"
    other = KnowledgeGraph.from_triples(_film_triples())  # not this KG's store
    assert adapted_phrasings(other, record_of(other)) == {}
    embedder = load_embedder("static")
    with_llm = get_method("frag")(kg, embedder=embedder, patterns="none", router="none", relation_phrasings=True)
    without = get_method("frag")(kg, embedder=embedder, patterns="none", router="none")  # the default: off
    assert with_llm.relation_text.phrasings[cast] and not without.relation_text.phrasings
    span = embedder.encode(["act in"])[0]
    before, after = (relation_phrase_vectors(kg, embedder, m.relation_text)[cast] @ span for m in (without, with_llm))
    assert after > before


class _Reader(LLM):
    """Scores the question after a query by how many of the query's relation words it repeats (synthetic
    questions name their relations), or cannot score at all (``mute``, as an OpenAI-compatible endpoint)."""

    model_id = "reader"

    def __init__(self, mute: bool = False) -> None:
        super().__init__()
        self.mute = mute

    def _generate(self, messages, params):
        return Generation("")

    def _score_reply(self, chats, reply):
        if self.mute:
            return None
        words = set(re.findall(r"[a-z]+", reply.lower()))
        out = []
        for chat in chats:
            query = chat[-1]["content"].split("Query:")[-1]
            relations = re.findall(r"\| ([a-z ]+) \|", query)
            out.append((float(sum(w in words for r in relations for w in r.split()) - len(relations)), 20, 10))
        return out


FIT = {"questions": 360, "max_answers": 25, "calibration": 30, "keep_margin": 1.0, "fit_questions": 12}


def test_adapt_turns_question_fit_on_for_frag_on_this_kg_when_its_check_passes(store):
    kg = load_kg(store)
    record = adapt(kg, AdaptSettings(**FIT, fit_margin=-1.0), llm=_Reader())  # a negative margin always keeps it
    assert record["calibration"]["kept"] == "zero-shot"  # the check runs for zero-shot frag only
    check = record["question_fit_check"]
    assert check["questions"] == 12 and check["kept"] and record["frag_settings"] == {"question_fit": 5}
    assert set(check["best_pattern_reaches_an_answer"]) == {"alignment", "question_fit"}
    frag = get_method("frag")(kg)
    assert frag.config.question_fit == 5 and frag.adapted == {"question_fit": 5}
    assert get_method("frag")(kg, question_fit=0).config.question_fit == 0  # what the caller sets wins
    other = KnowledgeGraph.from_triples(_film_triples(seed=1))  # not this store's KG
    assert get_method("frag")(other).config.question_fit == 0


def test_a_backend_that_cannot_score_leaves_frag_as_it_was(store):
    kg = load_kg(store)
    record = adapt(kg, AdaptSettings(**FIT), llm=_Reader(mute=True))
    check = record["question_fit_check"]
    assert check["gains"] == check["losses"] == 0 and not check["kept"] and record["frag_settings"] == {}
    assert get_method("frag")(kg).config.question_fit == 0
    with pytest.raises(AdaptError, match="need an LLM"):
        adapt(kg, AdaptSettings(**FIT))


def _asked(kg: KnowledgeGraph) -> list[tuple[str, list[str]]]:
    """Questions a user of the film KG asks, in their words, with the topic named (no answers)."""
    directors = sorted({kg.entities[t] for t, r in zip(kg.tails, kg.rels) if kg.relations[r] == "director"})
    actors = sorted({kg.entities[t] for t, r in zip(kg.tails, kg.rels) if kg.relations[r] == "cast member"})
    asked = [(f"what did {d} make, which genre", [d]) for d in directors]
    return asked + [(f"which cast member films star {a}", [a]) for a in actors]


def test_adapt_trains_on_the_questions_users_ask_labelled_by_frag_and_the_llm(store):
    kg = load_kg(store)
    asked = _asked(kg)
    keep = AdaptSettings(questions=360, max_answers=25, keep_margin=-1.0)  # kept whatever the held-out check says
    record = adapt(kg, keep, llm=_Reader(), asked=asked)
    counts = record["counts"]
    assert counts["asked"] == len(asked)
    assert counts["labelled"] + counts["no_topic"] + counts["no_pattern"] == len(asked)
    assert counts["labelled"] >= 30 and record["calibration"] is None and record["llm"] == "reader"
    assert "asked questions" in record["questions_source"] and record["relation_phrasings"] == {}
    rows = [json.loads(line) for line in (store / "adapted" / "questions.jsonl").open()]
    assert len(rows) == counts["labelled"] and {r["question"] for r in rows} <= {q for q, _ in asked}
    by_question = {r["question"]: r["labelled_pattern"] for r in rows}
    # the reader scores a pattern by the question's words among its relations: "genre" and "director" are asked
    genre_questions = [by_question[q] for q, _ in asked[:5] if q in by_question]
    assert genre_questions and all("genre" in pattern for pattern in genre_questions)
    frag = get_method("frag")(kg)
    assert frag.pattern_classifier is not None and frag.pattern_classifier.trained_for(kg.checksum)
    assert "asked questions" in frag.pattern_classifier.provenance["questions"]
    check = record["asked_check"]
    assert check["kept"] and check["held_out"] == counts["labelled"] // 5 and len(check["agreement"]) == 2
    assert record["patterns"]["train"] == counts["labelled"]  # trained again on every asked question once kept


def test_kept_asked_models_are_checked_with_question_fit_beside_them(store):
    """With fit_questions, the held-out asked questions are read a third way — the kept models with the LLM
    re-reading their ranking — and question_fit is recorded for frag only when that agrees with the labels
    fit_margin more often than the models alone."""
    kg = load_kg(store)
    asked = _asked(kg)
    for margin, recorded in ((-1.0, {"question_fit": 5}), (1.0, {})):  # any change / a whole share
        settings = AdaptSettings(questions=360, max_answers=25, keep_margin=-1.0, fit_questions=1, fit_margin=margin)
        record = adapt(kg, settings, llm=_Reader(), asked=asked)
        check = record["asked_check"]
        assert len(check["agreement"]) == 3 and check["question_fit"] == bool(recorded)
        assert record["frag_settings"] == recorded and record["question_fit_check"] is None  # kept: no zero-shot check
        assert get_method("frag")(kg).config.question_fit == recorded.get("question_fit", 0)


def test_models_are_kept_when_question_fit_beside_them_beats_zero_shot(store, monkeypatch):
    """The reading weighed against zero-shot is the best one adapt would record: models that read the held-out
    labels only a little better alone are kept when the LLM re-reading their ranking reads them well enough
    (renamed MetaQA: 0.72 alone, 0.67 zero-shot, the models with question_fit had read 0.78)."""
    import kgrag.methods.frag.adapt as adapt_module

    kg = load_kg(store)
    for fitted, kept in ((0.78, True), (0.74, False)):  # 0.74: question_fit not fit_margin above the models alone

        def scores(kg, rows, progress, fitted=fitted, **config):
            if config.get("llm") is not None:
                return fitted
            return 0.67 if config["patterns"] == "none" else 0.71

        monkeypatch.setattr(adapt_module, "agreement", scores)
        settings = AdaptSettings(questions=360, max_answers=25, fit_questions=1)  # margins 0.05
        record = adapt(kg, settings, llm=_Reader(), asked=_asked(kg))
        check = record["asked_check"]
        assert (check["kept"], check["question_fit"]) == (kept, kept), check
        assert record["frag_settings"] == ({"question_fit": 5} if kept else {})
        assert (get_method("frag")(kg).pattern_classifier is not None) == kept


class _FilmAnswerer(_Reader):
    """Scores as :class:`_Reader` (which reads "what did X make, which genre" as X's films' genres) but answers
    with the first film in the evidence: a model whose answer disagrees with its re-reading."""

    model_id = "film-answerer"

    def __init__(self, films: set[str]) -> None:
        super().__init__()
        self.films = films

    def _generate(self, messages, params):
        content = messages[-1]["content"]
        found = sorted((content.find(f), f) for f in self.films if f in content)
        return Generation(f"<answers>\n{found[0][1]}\n</answers>" if found else "", 10, 5)


def test_an_answer_the_label_does_not_reach_moves_it_to_the_pattern_that_does(store):
    kg = load_kg(store)
    films = {kg.entities[h] for h, r in zip(kg.heads, kg.rels) if kg.relations[r] == "director"}
    asked = _asked(kg)
    directors = [q for q in asked if "genre" in q[0]]
    calls: list[str] = []
    answerer = _FilmAnswerer(films)
    answerer._record = lambda name, gen: calls.append(name)  # type: ignore[method-assign]
    rows, counts = label_asked(kg, answerer, directors, Silent())
    plain, _ = label_asked(kg, _Reader(), directors, Silent())
    assert all("genre" in r["labelled_pattern"] for r in plain)  # the re-reading alone: the films' genres
    moved = [r for r, q in zip(rows, plain) if r["labelled_pattern"] != q["labelled_pattern"]]
    assert counts["moved_to_answer"] == len(moved) > 0 and [r["question"] for r in rows] == [
        q["question"] for q in plain
    ]
    for row in moved:  # to a pattern that reaches the film answered: its ends (the row's answers) hold films
        assert set(row["answers"]) & films
    # one scoring pass and one answer call a question: the answer call's ranking reuses the label's scores
    assert calls.count("frag_answer") == counts["labelled"] and calls.count("frag_pattern_question") == len(directors)


def test_models_from_asked_questions_are_kept_only_when_they_read_held_out_ones_better(store):
    kg = load_kg(store)
    strict = AdaptSettings(questions=360, max_answers=25, keep_margin=1.0)  # no model can gain a whole share
    record = adapt(kg, strict, llm=_Reader(), asked=_asked(kg))
    assert not record["asked_check"]["kept"] and record["patterns"]["out"] is None and record["router"]["out"] is None
    assert get_method("frag")(kg).pattern_classifier is None  # frag stays zero-shot on this KG


def test_asked_questions_need_an_llm_and_enough_of_them(store):
    kg = load_kg(store)
    with pytest.raises(AdaptError, match="labelling asked questions need an LLM"):
        adapt(kg, SMALL, asked=_asked(kg))
    with pytest.raises(AdaptError, match="which --asked does not use"):
        adapt(kg, AdaptSettings(questions=360, describe=2), llm=_Reader(), asked=_asked(kg))
    with pytest.raises(AdaptError, match="training needs 30"):
        adapt(kg, SMALL, llm=_Reader(), asked=_asked(kg)[:10])
    assert not (store / "adapted").exists()  # nothing half-written


def test_adapt_cli_reads_asked_questions_from_a_file(store, tmp_path):
    questions = tmp_path / "asked.txt"
    questions.write_text("which films did Director Aa direct\n\n", "utf-8")
    bad = run_cli("adapt", str(store), "--asked", str(questions), ok=False)
    assert bad.returncode == 2 and "--asked needs --llm" in bad.stderr
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", "utf-8")
    bad = run_cli("adapt", str(store), "--asked", str(empty), "--llm", "scripted:tests/fixtures/echo.json", ok=False)
    assert bad.returncode == 2 and "no questions" in bad.stderr
