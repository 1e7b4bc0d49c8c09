"""frag's question fit: the best zero-shot patterns written as queries and re-ordered by how likely an LLM finds
the question after each (methods/frag/question_fit.py), and the LLM protocol's scoring call it uses."""

from __future__ import annotations

import json

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods.frag.patterns import PatternReach, pattern_label, reachable_patterns
from kgrag.methods.frag.question_fit import query_lines, question_fit
from kgrag.models.accounting import track_usage
from kgrag.models.cache import ResponseCache
from kgrag.models.embeddings import load_embedder
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages
from kgrag.models.llm.scripted import ScriptedLLM
from tests.conftest import MOVIES, run_cli

FILMS = [
    ("Heat", "director", "Michael Mann"),
    ("The Insider", "director", "Michael Mann"),
    ("Heat", "genre", "Crime"),
    ("The Insider", "genre", "Drama"),
    ("Heat", "cast member", "Al Pacino"),
]


class Reader(LLM):
    """Scores a reply by how many of ``liked``'s lines the prompt's query holds, and counts what it scored."""

    model_id = "reader"

    def __init__(self, liked: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.liked = liked
        self.scored = 0

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        return Generation("")

    def _score_reply(self, chats, reply):
        self.scored += len(chats)
        return [(float(-5 + 4 * (self.liked in chat[-1]["content"])), 20, 10) for chat in chats]


class Mute(Reader):
    def _score_reply(self, chats, reply):
        return None


def _reach(kg: KnowledgeGraph, topic: int) -> PatternReach:
    return reachable_patterns(kg, [topic], 2)


def test_query_lines_write_hops_in_the_kgs_direction_with_variables_between():
    kg = KnowledgeGraph.from_triples(FILMS)
    r = kg.num_relations
    director, genre = kg.relation_id("director"), kg.relation_id("genre")
    mann, heat, crime = kg.entity_id("Michael Mann"), kg.entity_id("Heat"), kg.entity_id("Crime")
    text = query_lines(kg, np.array([director + r, genre]), np.array([mann, heat, crime]))
    assert text == "x1 | director | Michael Mann\nx1 | genre | ?"
    assert query_lines(kg, np.array([genre, -1]), np.array([heat, crime])) == "Heat | genre | ?"


def test_two_hops_the_same_way_through_an_unnamed_node_are_one_line():
    kg = KnowledgeGraph.from_triples(
        [("Heat", "film.film.starring", "m.0abc12"), ("m.0abc12", "film.performance.actor", "Al Pacino")]
    )
    heat, cvt, pacino = (kg.entity_id(n) for n in ("Heat", "m.0abc12", "Al Pacino"))
    starring, actor = kg.relation_id("film.film.starring"), kg.relation_id("film.performance.actor")
    r = kg.num_relations
    assert query_lines(kg, np.array([starring, actor]), np.array([heat, cvt, pacino])) == "Heat | starring / actor | ?"
    back = query_lines(kg, np.array([actor + r, starring + r]), np.array([pacino, cvt, heat]))
    assert back == "? | starring / actor | Al Pacino"


def test_the_pattern_the_llm_reads_the_question_after_moves_first():
    kg = KnowledgeGraph.from_triples(FILMS)
    mann = kg.entity_id("Michael Mann")
    reach = _reach(kg, mann)
    labels = [pattern_label(kg, p) for p in reach.patterns]
    first, wanted = labels.index("director_inv"), labels.index("director_inv>genre")
    scores = np.zeros(len(reach))
    scores[first] = 0.2  # the alignment's choice
    scores[wanted] = 0.19
    llm = Reader("x1 | genre | ?")
    out, record = question_fit(
        kg, llm, "what genres are Michael Mann's films", [mann], reach, scores, k=3, weight=0.01, walk_limits={}
    )
    assert int(np.argmax(out)) == wanted
    assert len(record) == 3 and {"query", "logprob", "score"} <= record[0].keys()
    # patterns outside the k scored stay below the best of them
    rest = np.setdiff1d(np.arange(len(out)), np.argsort(-scores, kind="stable")[:3])
    assert (out[rest] < out.max()).all()
    # a weight of 0 changes no order
    same, _ = question_fit(kg, llm, "q", [mann], reach, scores, k=3, weight=0.0, walk_limits={})
    assert list(np.argsort(-same, kind="stable")) == list(np.argsort(-scores, kind="stable"))


def test_a_backend_that_cannot_score_leaves_the_scores_as_they_were():
    kg = KnowledgeGraph.from_triples(FILMS)
    mann = kg.entity_id("Michael Mann")
    reach = _reach(kg, mann)
    scores = np.linspace(1, 0, len(reach))
    out, record = question_fit(kg, Mute("x"), "q", [mann], reach, scores, k=3, weight=0.01, walk_limits={})
    assert out is scores and record == []


def test_score_reply_is_accounted_as_one_call_and_cached_per_prompt(tmp_path):
    llm = Reader("b", cache=ResponseCache(tmp_path / "c.sqlite"))
    prompts = ["query a", "query b"]
    with track_usage() as calls:
        first = llm.score_reply(prompts, "the question", name="fit")
    assert first == [-5.0, -1.0] and llm.scored == 2
    assert [c.prompt for c in calls] == ["fit"] and calls[0].evaluated_prompt_tokens == 20
    with track_usage() as calls:
        again = llm.score_reply([*prompts, "query bb"], "the question", name="fit")
    assert calls[0].prompt_tokens == 60 and calls[0].evaluated_prompt_tokens == 10
    assert again == [-5.0, -1.0, -1.0] and llm.scored == 3  # only the new prompt reached the backend
    assert llm.score_reply(prompts, "another question") is not None and llm.scored == 5
    assert Mute("x").score_reply(prompts, "q") is None


class ScoringScript(ScriptedLLM):
    """A scripted model that can also score: a question reads likelier after a query naming ``liked``."""

    def __init__(self, liked: str, **script) -> None:
        super().__init__(script)
        self.liked = liked

    def _score_reply(self, chats, reply):
        return [(-2.0 if self.liked in chat[-1]["content"] else -30.0, 20, 10) for chat in chats]


def test_frag_answers_from_the_pattern_the_question_fits_and_says_so_in_the_trace(movies_kg):
    kg = movies_kg
    """Zero-shot frag with ``question_fit``: the scored pattern leads the paths the answer call reads, the trace
    lists the queries with their log-probabilities, and the scoring pass is accounted; off, nothing is scored."""
    question = "when were the films of Michael Mann released"
    llm = ScoringScript(
        "directed by | Michael Mann\nx1 | release year | ?",
        rules=[{"prompt": "frag_answer", "response": "<answers>1995"}],
    )
    common = {"llm": llm, "embedder": load_embedder("static"), "grounding": "none"}
    with track_usage() as calls:
        answer = get_method("frag")(kg, question_fit=4, **common).answer(question, ["Michael Mann"])
    ranked = next(s for s in answer.trace if s.name == "rank_paths").outputs
    assert "x1 | written by | Michael Mann\nx1 | release year | ?" in [fit["query"] for fit in ranked["question_fit"]]
    assert ranked["patterns"][0]["pattern"] == "directed_by_inv>release_year"
    assert [c.prompt for c in calls] == ["frag_pattern_question", "frag_answer"]
    off = get_method("frag")(kg, question_fit=0, **common).answer(question, ["Michael Mann"])
    unfitted = next(s for s in off.trace if s.name == "rank_paths").outputs
    assert "question_fit" not in unfitted and unfitted["patterns"][0]["pattern"] == "written_by_inv>release_year"


def test_auto_grounding_orders_by_the_ranking_the_llm_re_read():
    from kgrag.methods.frag.grounding import resolve

    assert resolve("auto", trained=True, refit=False, kind="entities") == "pattern"
    assert resolve("auto", trained=False, refit=True, kind="entities") == "score"
    assert resolve("auto", trained=False, refit=False, kind="entities") == "none"
    assert resolve("auto", trained=False, refit=False, kind="count") == "pattern"
    assert resolve("score", trained=False, refit=True, kind="yes_no") == "none"


def test_question_fit_set_by_the_user_re_reads_a_trained_ranking_too(tmp_path):
    """With trained models the LLM's second opinion is added on its own scale (question_fit_trained_weight), not
    silently dropped: the pattern the question reads likelier after moves first."""
    rows = [
        {"question": f"who directed [{m}]", "answers": [d]}
        for m, d in (("Heat", "Michael Mann"), ("Alien", "Ridley Scott"))
    ]
    rows += [
        {"question": f"who acted in [{m}]", "answers": a}
        for m, a in (("Heat", ["Al Pacino"]), ("Gladiator", ["Russell Crowe"]))
    ]
    data, store = tmp_path / "qa.jsonl", tmp_path / "kg"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows * 4))
    KnowledgeGraph.from_triples(MOVIES).save(store)
    patterns = tmp_path / "patterns.npz"
    args = ["-d", str(data), "--out", str(tmp_path / "router.npz"), "--kg", str(store), "--patterns-out", str(patterns)]
    run_cli("frag-train", *args, "--validation", "0")
    kg = KnowledgeGraph.load(store)
    llm = ScoringScript("x2 | written by | ?", rules=[{"prompt": "frag_answer", "response": "<answers>x"}])
    common = {"llm": llm, "embedder": load_embedder("static"), "router": "none", "patterns": str(patterns)}

    def first(**settings) -> str:
        answer = get_method("frag")(kg, **common, **settings).answer("who acted in The Insider", ["The Insider"])
        return next(s for s in answer.trace if s.name == "rank_paths").outputs["patterns"][0]["pattern"]

    assert first(question_fit=0) == "starred_actors"
    assert first(question_fit=4, question_fit_trained_weight=1.0).endswith(">written_by")
