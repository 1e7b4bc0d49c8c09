"""ultrag plumbing with the scripted LLM (no accuracy claims): query writing, retry, fallback, execution,
arbitration, evidence, trace; ``retrieve`` with a given query; the prompt prefix shared across questions."""

from __future__ import annotations

import json

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.hybrid import HybridLinker
from kgrag.methods import get
from kgrag.methods.base import MethodConfigError
from kgrag.methods.ultrag import Ultrag
from kgrag.methods.ultrag.dsl import format_query
from kgrag.methods.ultrag.dsl.anchors import gaussian_weights, link_leaf, link_leaves, seed_distribution
from kgrag.methods.ultrag.dsl.prompting import query_examples, relation_line, relation_lines
from kgrag.models.llm.scripted import ScriptedLLM
from tests.conftest import RecordingLLM, run_cli


def _llm(*rules, default=None):
    return ScriptedLLM({"rules": list(rules), "default": default})


class NoEmbedder:
    """Fails the test if anything is embedded."""

    id = "none"
    dim = 8

    def encode(self, texts, **kwargs):
        raise AssertionError(f"nothing should be embedded here: {list(texts)[:3]}")


def _steps(answer):
    return [s.name for s in answer.trace]


def test_registered():
    assert get("ultrag") is Ultrag


def test_query_execute_arbitrate(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Michael Mann" -> directed_by_inv -> starred_actors'},
        {"prompt": "ultrag_answer", "match": "Al Pacino \\(1.00\\)", "response": "<answers>\nAl Pacino\n</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm).answer("which actors starred in films directed by Michael Mann")
    assert ans.error is None
    assert ans.answers == ["Al Pacino"]
    assert ans.usage.llm_calls == 2
    assert _steps(ans) == ["write_query", "link", "repair", "subgraph", "execute", "verify_query", "arbitrate"]
    assert ans.trace[2].outputs["notes"] == []
    execute = ans.trace[4].outputs
    assert {name for name, _ in execute["top"]} == {"Al Pacino", "Robert De Niro", "Russell Crowe"}
    triples = {tuple(ev.entities[:1] + ev.relations + ev.entities[1:]) for ev in ans.evidence}
    assert ("Heat", "starred_actors", "Al Pacino") in triples
    assert {("Heat", "directed_by", "Michael Mann"), ("The Insider", "directed_by", "Michael Mann")} & triples
    assert ans.grounded


def test_retry_once_with_the_error_message(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "match": "cannot be executed", "response": '"Heat" -> directed_by'},
        {"prompt": "ultrag_query", "response": '"Heat" -> director'},
        {"prompt": "ultrag_answer", "response": "<answers>Michael Mann</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm, arbitrate="always").answer("who directed Heat")
    assert ans.answers == ["Michael Mann"]
    assert ans.usage.llm_calls == 3
    attempts = ans.trace[0].outputs["attempts"]
    assert len(attempts) == 2
    assert "unknown relation 'director'" in attempts[0]["errors"][0]
    assert ans.trace[0].outputs["query"] == '"Heat" -> directed_by'


def test_a_query_that_finds_one_entity_answers_with_it(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "match": "who directed", "response": '"Heat" -> directed_by'},
        {"prompt": "ultrag_query", "match": "films did", "response": '"Michael Mann" -> directed_by_inv'},
        {"prompt": "ultrag_query", "match": "same director", "response": '"Heat" -> directed_by -> directed_by_inv'},
        {"prompt": "ultrag_answer", "response": "<answers>Tom Cruise</answers>"},  # from memory, never asked
    )
    ans = Ultrag(movies_kg, llm=llm).answer("who directed Heat")
    assert ans.answers == ["Michael Mann"] and ans.usage.llm_calls == 1 and ans.grounded
    assert ans.trace[-1].name == "arbitrate" and ans.trace[-1].inputs["skipped"]
    # its confidence knows no model chose it
    assert ans.signals["Michael Mann"]["sole"] == 1.0 and ans.signals["Michael Mann"]["llm_known"] == 0.0
    # several entities: the arbitrator chooses; the paper's way asks it always
    several = Ultrag(movies_kg, llm=llm).answer("which films did Michael Mann direct")
    assert several.usage.llm_calls == 2
    assert Ultrag(movies_kg, llm=llm, arbitrate="always").answer("who directed Heat").usage.llm_calls == 2
    # the one entity found is the question's own: the arbitrator is asked
    kg = KnowledgeGraph.from_triples([("Ann", "knows", "Bob"), ("Cid", "likes", "Bob")])
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Bob" -> knows_inv'},
        {"prompt": "ultrag_answer", "response": "<answers>Cid</answers>"},
    )
    itself = Ultrag(kg, llm=llm, fallback="none").answer("who else knows the one Ann knows", ["Ann"])
    assert itself.usage.llm_calls == 2 and "skipped" not in itself.trace[-1].inputs


@pytest.mark.parametrize("junk", ["", "I am not sure.", "<query>", "AND(((", "```\n```", "\x00\x01"])
def test_junk_queries_fall_back_without_raising(movies_kg, junk):
    llm = _llm(
        {"prompt": "ultrag_query", "response": junk or " "},
        {"prompt": "ultrag_fallback", "response": "<answers>Michael Mann</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm, fallback="none").answer("who directed Heat")
    assert ans.error is None
    assert ans.answers == ["Michael Mann"]
    assert "fallback" not in _steps(ans)  # fallback="none": no retriever, straight to the answer prompt
    assert ans.trace[0].outputs["valid"] is False and len(ans.trace[0].outputs["attempts"]) == 2


def test_the_fallback_method_answers_with_its_own_prompt_on_the_same_trace(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Heat" -> nonsense'},
        {"prompt": "kaping_answer", "match": "Michael Mann", "response": "<answers>Michael Mann</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm, fallback="kaping", retries=0).answer("who directed Heat", ["Heat"])
    steps = _steps(ans)
    assert steps.index("fallback") < steps.index("answer")  # kaping's own steps follow the marker
    assert ans.trace[steps.index("fallback")].outputs == {"method": "kaping", "reason": "no valid query"}
    assert ans.answers == ["Michael Mann"]
    assert ans.evidence and ans.grounded
    assert ans.usage.llm_calls == 2


def test_a_query_that_returns_nothing_falls_back(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Alien" -> starred_actors'},  # Alien has no actors here
        {"prompt": "ultrag_fallback", "response": "<answers>Sigourney Weaver</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm, fallback="none").answer("who starred in Alien")
    assert ans.answers == ["Sigourney Weaver"]
    assert "arbitrate" not in _steps(ans)
    assert ans.trace[-1].outputs["reason"] == "the query found nothing new"


def test_a_query_that_only_returns_where_it_started_falls_back(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Alien" -> release_year -> release_year_inv'},  # only Alien, 1979
        {"prompt": "ultrag_fallback", "response": "<answers>Ridley Scott</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm, fallback="none").answer("who made Alien", ["Alien"])
    assert "arbitrate" not in _steps(ans) and ans.answers == ["Ridley Scott"]
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Heat" -> directed_by -> directed_by_inv'},  # Heat, The Insider
        {"prompt": "ultrag_answer", "response": "<answers>The Insider</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm, fallback="none").answer("films with the director of Heat", ["Heat"])
    assert "arbitrate" in _steps(ans) and ans.answers == ["The Insider"]


def test_wrong_direction_is_repaired_before_execution(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "response": '"Russell Crowe" -> starred_actors -> directed_by'},
        {"prompt": "ultrag_answer", "match": "starred_actors_inv", "response": "<answers>Ridley Scott</answers>"},
    )
    ans = Ultrag(movies_kg, llm=llm).answer("who directed films starring Russell Crowe")
    assert ans.answers == ["Ridley Scott"]
    repair = ans.trace[[s.name for s in ans.trace].index("repair")].outputs
    assert repair["query"] == '"Russell Crowe" -> starred_actors_inv -> directed_by'
    assert len(repair["notes"]) == 1


def test_topics_are_named_to_the_query_writer(movies_kg):
    llm = _llm(
        {"prompt": "ultrag_query", "match": 'named in the question: "Heat"', "response": '"Heat" -> release_year'},
        {"prompt": "ultrag_answer", "response": "<answers>1995</answers>"},
    )
    assert Ultrag(movies_kg, llm=llm).answer("when was it released", ["Heat"]).answers == ["1995"]


def test_query_prompt_prefix_is_identical_across_questions(movies_kg):
    """When every relation fits, the relation list, rules and examples are the fixed system message (the paper's
    prompt, reused across questions) and no relation is ranked (a small KG never loads an embedder for it)."""
    llm = RecordingLLM(context_window=4096)
    method = Ultrag(movies_kg, llm=llm, embedder=NoEmbedder(), fallback="none", retries=0)
    first = method.answer("who directed Heat").trace[0].outputs["attempts"][0]
    method.answer("when was Alien released")
    (sys_a, user_a), (sys_b, _) = llm.messages("ultrag_query")
    assert sys_a == sys_b and "who directed Heat" not in sys_a["content"] and "- directed_by:" not in user_a["content"]
    listed = [line.split(":")[0][2:] for line in sys_a["content"].splitlines() if line.startswith("- ")]
    assert listed == list(movies_kg.relations)  # all of them, in the KG's order
    assert first["prompt"] == "ultrag_query" and first["relations_shown"] == movies_kg.num_relations


def test_query_examples_are_valid_queries_of_the_kg(movies_kg):
    from kgrag.methods.ultrag.dsl import parse_and_validate

    lines = query_examples(movies_kg).splitlines()
    assert len(lines) == 6
    for line in lines:
        assert parse_and_validate(line.split("Query: ")[1], movies_kg).ok, line


def test_query_examples_quote_relation_names_a_user_wrote_with_spaces():
    """A CSV KG's relations read "taught by", not taught_by: the examples must still be queries of the language
    (unquoted, ``-> taught by_inv`` is not one, and the model copies what the examples show)."""
    from kgrag.methods.ultrag.dsl import parse_and_validate

    kg = KnowledgeGraph.from_triples(
        [("Intro to Databases", "taught by", "Maria Lopez"), ("Intro to Databases", "offered by", "Computer Science"),
         ("Maria Lopez", "office in", "Turing Building"), ("Machine Learning", "taught by", "Maria Lopez")]
    )  # fmt: skip
    lines = query_examples(kg).splitlines()
    assert len(lines) == 6 and '"taught by_inv"' in query_examples(kg)
    for line in lines:
        assert parse_and_validate(line.split("Query: ")[1], kg).ok, line


def test_relation_lines_show_both_directions(movies_kg):
    lines = relation_lines(movies_kg, range(movies_kg.num_relations)).splitlines()
    assert len(lines) == movies_kg.num_relations
    assert lines[0] == (
        '- directed_by: "The Insider" -> directed_by gives "Michael Mann"; '
        '"Michael Mann" -> directed_by_inv gives "The Insider"'
    )


def test_relation_examples_forward_only(movies_kg, freebase_like_kg, static_embedder):
    """``relation_examples="forward"``: each example fact is read one way, in the whole list and in the list
    chosen per question alike, and more relations fit the same window; "auto": one way in the list chosen per
    question, both ways in the whole list (read once per KG)."""
    both = relation_line(movies_kg, 0)
    forward = relation_line(movies_kg, 0, both_ways=False)
    assert forward == '- directed_by: "The Insider" -> directed_by gives "Michael Mann"' and both.startswith(forward)
    for kg, window in ((movies_kg, 8192), (freebase_like_kg, 1024)):
        shown = {}
        for mode in ("both", "forward"):
            llm = RecordingLLM(context_window=window)
            settings = {"embedder": static_embedder, "other_relations": 500} if kg is freebase_like_kg else {}
            Ultrag(kg, llm=llm, fallback="none", retries=0, relation_examples=mode, **settings).answer(
                "what genre is the film Titanic", ["Titanic"]
            )
            prompt = "\n".join(m["content"] for m in llm.calls[0][1])
            assert ("_inv gives" in prompt) == (mode == "both"), (kg, mode)
            shown[mode] = len([line for line in prompt.splitlines() if line.startswith("- ") and " gives " in line])
        assert shown["forward"] >= shown["both"] > 0
        llm = RecordingLLM(context_window=window)
        Ultrag(kg, llm=llm, fallback="none", retries=0, relation_examples="auto", **settings).answer(
            "what genre is the film Titanic", ["Titanic"]
        )
        focused = llm.calls[0][0] == "ultrag_query_focused"
        assert focused == (kg is freebase_like_kg)
        assert ("_inv gives" in "\n".join(m["content"] for m in llm.calls[0][1])) == (not focused)
    assert shown["forward"] > shown["both"]  # the focused list within 1,024 tokens holds more relations


def test_grammar_only_for_llamacpp_models(movies_kg):
    assert Ultrag(movies_kg, llm=_llm(default="x"))._use_grammar() is False
    assert Ultrag(movies_kg, llm=_llm(default="x"), grammar="on")._use_grammar() is True
    llm = RecordingLLM()
    Ultrag(movies_kg, llm=llm, grammar="on", fallback="none", retries=0).answer("who directed Heat")
    assert llm.calls[0][2].grammar.startswith("root ::= query")


def test_the_arbitrator_chooses_among_the_returned_entities(movies_kg):
    """``choose_answers``: the arbitrator's reply is held by a grammar to the names the query returned; a name
    outside them (a backend that ignores grammars) is dropped. Off by default."""
    query = {"prompt": "ultrag_query", "response": '"Michael Mann" -> directed_by_inv -> starred_actors'}
    reply = {"prompt": "ultrag_answer", "response": "<answers>Warp Drive; Al Pacino</answers>"}
    question = "which actors starred in films directed by Michael Mann"
    llm = RecordingLLM(query, reply)
    ans = Ultrag(movies_kg, llm=llm, choose_answers="on").answer(question)
    grammar = llm.calls[-1][2].grammar
    assert grammar.startswith('root ::= "<answers>"') and '"Al Pacino"' in grammar and '"Warp Drive"' not in grammar
    assert ans.answers == ["Al Pacino"] and ans.grounded
    unheld = Ultrag(movies_kg, llm=llm).answer(question)
    assert llm.calls[-1][2].grammar is None and "Warp Drive" in unheld.set_aside  # no support: set aside


def test_retrieve_needs_a_query(movies_kg):
    method = Ultrag(movies_kg)
    assert method.retrieve("who directed Heat") == []
    evidence = Ultrag(movies_kg, query='AND("Heat" -> starred_actors, "The Insider" -> starred_actors)').retrieve("x")
    assert {ev.text for ev in evidence} == {"Heat starred actors Al Pacino", "The Insider starred actors Al Pacino"}


def test_given_query_must_be_valid(movies_kg):
    from kgrag.methods.ultrag.dsl import DSLSyntaxError

    with pytest.raises(DSLSyntaxError, match="unknown relation"):
        Ultrag(movies_kg, query='"Heat" -> director').retrieve("x")


def test_unknown_settings_are_refused(movies_kg):
    with pytest.raises(MethodConfigError):
        Ultrag(movies_kg, executor="magic")
    with pytest.raises(MethodConfigError):
        Ultrag(movies_kg, top_k=3)


def test_neural_executor_through_the_method(movies_kg):
    pytest.importorskip("torch", reason="torch is not installed (pip install 'kgrag[neural]')")
    evidence = Ultrag(movies_kg, executor="neural", query='"Ridley Scott" -> directed_by_inv').retrieve("x")
    assert {ev.text for ev in evidence[:2]} == {"Gladiator directed by Ridley Scott", "Alien directed by Ridley Scott"}


# ---------------------------------------------------------------------- leaf linking and SEPPR seeds
def test_exact_leaves_are_crisp_and_others_soft(movies_kg):
    linker = HybridLinker(movies_kg, use_embedding=False)
    leaf = link_leaf(linker, "heat")
    assert leaf.crisp and leaf.members == {movies_kg.entity_id("Heat"): 1.0}
    soft = link_leaf(linker, "Micheal Man")
    assert not soft.crisp
    assert max(soft.members, key=soft.members.get) == movies_kg.entity_id("Michael Mann")
    assert abs(sum(soft.members.values()) - 1.0) < 1e-9


def test_gaussian_kernel_is_sharp_at_sigma_point_one():
    w = gaussian_weights([1.0, 0.95, 0.5], sigma=0.1)
    assert w[0] > 0.99 and w[1] < 0.01 and abs(w.sum() - 1) < 1e-12


def test_seed_distribution_uniform_for_crisp_and_summed_for_fuzzy(movies_kg):
    linker = HybridLinker(movies_kg, use_embedding=False)
    crisp = link_leaves(movies_kg, ["Heat", "Alien"], linker=linker)
    assert seed_distribution(crisp) == {movies_kg.entity_id("Heat"): 0.5, movies_kg.entity_id("Alien"): 0.5}
    mixed = link_leaves(movies_kg, ["Heat", "Micheal Man"], linker=linker)
    seeds = seed_distribution(mixed)
    assert abs(sum(seeds.values()) - 1) < 1e-9 and seeds[movies_kg.entity_id("Heat")] >= 0.5


# ---------------------------------------------------------------------- CLI
def test_cli_retrieve_and_ask_with_a_scripted_llm(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("Heat|directed_by|Michael Mann\nThe Insider|directed_by|Michael Mann\nHeat|release_year|1995\n")
    run_cli("ingest", str(kb), "--out", str(tmp_path / "kg"))
    proc = run_cli(
        "retrieve", str(tmp_path / "kg"), "films by Michael Mann", "--method", "ultrag",
        "--set", 'query="Michael Mann" -> directed_by_inv', "--json",
    )  # fmt: skip
    assert {ev["text"] for ev in json.loads(proc.stdout)["evidence"]} == {
        "Heat directed by Michael Mann",
        "The Insider directed by Michael Mann",
    }
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps({"prompt": "ultrag_query", "response": '"Heat" -> release_year'})
        + "\n"
        + json.dumps({"prompt": "ultrag_answer", "response": "<answers>1995</answers>"})
        + "\n"
    )
    proc = run_cli(
        "ask", str(tmp_path / "kg"), "when was Heat released", "--method", "ultrag", "--llm", f"scripted:{script}",
        "--json",
    )  # fmt: skip
    out = json.loads(proc.stdout)
    assert out["answers"] == ["1995"] and out["usage"]["llm_calls"] == 1  # one entity found: no arbitrator call
    assert out["grounded"] and len(out["support"]["1995"]) == 1
    # without --json each answer is printed with the facts that support it
    proc = run_cli(
        "ask", str(tmp_path / "kg"), "when was Heat released", "--method", "ultrag", "--llm", f"scripted:{script}",
    )  # fmt: skip
    assert "1995 (confidence " in proc.stdout and "← Heat release year 1995" in proc.stdout


def test_movies_kg_fixture_unchanged(movies_kg):
    assert isinstance(movies_kg, KnowledgeGraph)


# ---------------------------------------------------------------------- a KG it has never seen
def _freebase_like_kg(relations: int = 800) -> KnowledgeGraph:
    """Many namespaced relations, each more frequent than the one the question needs (which comes last in the
    KG's order), and an unnamed node (``m.0abc123``) joining a film to its cast."""
    triples = []
    for i in range(relations - 4):
        rel = f"domain{i % 40}.type{i}.property_{i}"
        triples += [(f"Thing {i} {j}", rel, f"Other {i} {j}") for j in range(3)]
    triples += [
        ("Titanic", "film.film.starring", "m.0abc123"),
        ("m.0abc123", "film.performance.actor", "Kate Winslet"),
        ("m.0abc123", "film.performance.character", "Rose"),
        ("Titanic", "film.film.genre", "Romance Film"),
        ("The Big Lebowski", "film.film.genre", "Comedy Film"),  # the KG-wide example fact of film.film.genre
    ]
    kg = KnowledgeGraph.from_triples(triples)
    assert kg.num_relations == relations
    return kg


@pytest.fixture(scope="module")
def freebase_like_kg():
    return _freebase_like_kg()


@pytest.fixture(scope="module")
def static_embedder():
    from kgrag.models.embeddings import load_embedder

    return load_embedder("static")


def _shown_relations(user_message: str) -> list[str]:
    block = user_message.split("\n\n")[0].splitlines()[1:]
    return [line[2:].split(":")[0] for line in block]


@pytest.mark.parametrize("topics", [["Titanic"], []], ids=["topic given", "topic linked"])
def test_relation_list_holds_what_the_question_needs_within_the_budget(freebase_like_kg, static_embedder, topics):
    kg = freebase_like_kg
    llm = RecordingLLM(context_window=2048)
    method = Ultrag(
        kg, llm=llm, embedder=static_embedder, fallback="none", retries=0, grammar="on", other_relations=0,
        relation_names="short",
    )  # fmt: skip
    method.answer("what genre is the film Titanic", topics)
    _, messages, params = llm.calls[0]
    shown = _shown_relations(messages[1]["content"])  # by their aliases: the last segment of each id is unique
    assert "genre" in shown and 1 < len(shown) < kg.num_relations
    assert "actor" in shown  # two hops out, past the unnamed node
    assert llm.count_prompt_tokens(messages) + params.max_tokens <= 2048
    # the question's own fact shows the direction; only the relations around the question's entity are listed
    assert '- genre: "Titanic" -> genre gives "Romance Film"; ' in messages[1]["content"]
    assert len(shown) == 4  # linked from the question when not given
    attempt = method.answer("what genre is the film Titanic", topics).trace[0].outputs["attempts"][0]
    assert attempt["relations_shown"] == len(shown) and attempt["tokens"] <= attempt["window"] == 2048
    assert attempt["prompt"] == "ultrag_query_focused"
    # the grammar offers exactly the relations the prompt shows, both directions
    grammar_relations = params.grammar.split("rel ::= ")[1].splitlines()[0].split(" | ")
    assert sorted(r.strip('"') for r in grammar_relations) == sorted(shown + [r + "_inv" for r in shown])


def test_relation_list_grows_with_the_context_window(freebase_like_kg, static_embedder):
    def shown(**settings):
        llm = RecordingLLM(context_window=settings.pop("window", 8192))
        method = Ultrag(freebase_like_kg, llm=llm, embedder=static_embedder, fallback="none", retries=0, **settings)
        method.answer("what genre is the film Titanic", ["Titanic"])
        return _shown_relations(llm.calls[0][1][1]["content"])

    sizes = [len(shown(window=w, other_relations=500, focused_relations=None)) for w in (1024, 2048, 8192)]
    assert sizes[0] < sizes[1] < sizes[2] < freebase_like_kg.num_relations
    assert len(shown(window=8192, other_relations=500)) == 30  # focused_relations: the best 30 however many fit
    near = shown(relation_names="short")  # the neighbourhood's 4 relations only, the ones at the topic first
    assert near == ["starring", "genre", "actor", "character"]
    assert shown() == [
        "film.film.starring",
        "film.film.genre",
        "film.performance.actor",
        "film.performance.character",
    ]
    wider = shown(other_relations=10, relation_names="short")  # and the 10 closest others after them
    assert len(wider) == 14 and wider[:4] == near
    assert len(shown(max_relations=2, other_relations=10)) == 2


def test_the_query_writer_names_relations_by_aliases_that_read_back_to_the_kgs_ids(static_embedder):
    from kgrag.methods.ultrag.dsl.aliases import relation_aliases
    from kgrag.methods.ultrag.dsl.validator import parse_and_validate

    kg = _freebase_like_kg(relations=8)
    aliases = dict(zip(kg.relations, relation_aliases(kg)))
    assert aliases["film.film.genre"] == "genre" and aliases["domain1.type1.property_1"] == "property_1"
    # read back silently (not a repair), backwards too; the KG's own id still reads as itself
    check = parse_and_validate('"Kate Winslet" -> actor_inv -> genre', kg)
    assert check.ok and not check.notes
    assert format_query(check.query) == '"Kate Winslet" -> film.performance.actor_inv -> film.film.genre'
    assert parse_and_validate('"Titanic" -> film.film.genre', kg).ok
    # two relations with the same last segment keep the segments that tell them apart; no dots: as they are
    assert _aliases_of(["film.film.genre", "music.artist.genre", "directed_by"]) == [
        "film.genre", "artist.genre", "directed_by",
    ]  # fmt: skip
    # an alias that would read as another relation's inverse: the KG's names stay
    assert _aliases_of(["a.x", "b.x_inv"]) == ["a.x", "b.x_inv"]
    # end to end: the list, the examples and the grammar use the aliases, the query runs on the KG's ids
    llm = RecordingLLM(
        {"prompt": "ultrag_query", "response": '"Titanic" -> genre'},
        {"prompt": "ultrag_answer", "response": "<answers>Romance Film</answers>"},
    )
    answer = Ultrag(
        kg, llm=llm, embedder=static_embedder, fallback="none", grammar="on", relation_names="short"
    ).answer("what genre is Titanic", ["Titanic"])
    assert answer.answers == ["Romance Film"]
    assert answer.trace[0].outputs["query"] == '"Titanic" -> film.film.genre'
    _, messages, params = llm.calls[0]
    prompt = "\n".join(m["content"] for m in messages)
    assert "film.film.genre" not in prompt and '"The Big Lebowski" -> genre gives "Comedy Film"' in prompt
    assert 'Query: "Titanic" -> genre -> genre_inv' in prompt
    assert '"genre"' in params.grammar and "film.film.genre" not in params.grammar


def _aliases_of(names: list[str]) -> list[str]:
    from kgrag.methods.ultrag.dsl.aliases import relation_aliases

    kg = KnowledgeGraph.from_triples([(f"A{i}", name, f"B{i}") for i, name in enumerate(names)])
    return [dict(zip(kg.relations, relation_aliases(kg)))[name] for name in names]


def test_the_second_hop_goes_past_small_nodes_but_not_through_hubs():
    from kgrag.methods.ultrag.relation_list import neighbourhood

    triples = [("Ann", "spouse_link", "m.0abc123"), ("m.0abc123", "spouse", "Bob"), ("Ann", "citizen_of", "Utopia")]
    triples += [(f"Person {i}", f"rel_{i % 50}", "Utopia") for i in range(200)]  # Utopia: a hub
    triples += [(f"Person {i}", "lives_in", f"Town {i}") for i in range(200)]
    kg = KnowledgeGraph.from_triples(triples)
    hood = neighbourhood(kg, [kg.entity_id("Ann")])
    hops = {kg.relations[r]: int(h) for r, h in enumerate(hood.hops) if h}
    assert hops == {"spouse_link": 1, "citizen_of": 1, "spouse": 2}
    assert kg.triple(int(hood.examples[kg.relation_id("spouse")])) == ("m.0abc123", "spouse", "Bob")


def test_without_a_neighbourhood_relations_rank_by_similarity_alone(freebase_like_kg, static_embedder):
    from kgrag.methods.ultrag.relation_list import neighbourhood, rank_relations, relation_relevance
    from kgrag.retrieval.triples import kg_vectors

    kg = freebase_like_kg
    vectors = kg_vectors(kg, static_embedder).relations()
    question = static_embedder.encode(["which film genre"])[0]
    empty = neighbourhood(kg, [])
    ranked = rank_relations(relation_relevance(question, vectors, empty), empty, others=0)
    assert len(ranked) == kg.num_relations and kg.relations[ranked[0]] == "film.film.genre"
    near = neighbourhood(kg, [kg.entity_id("Titanic")])
    assert len(rank_relations(relation_relevance(question, vectors, near), near, others=0)) == 4


def test_a_smaller_context_setting_is_obeyed_and_a_larger_one_is_not(movies_kg):
    assert Ultrag(movies_kg, llm=RecordingLLM(context_window=4096), context_tokens=1024).context_window() == 1024
    assert Ultrag(movies_kg, llm=RecordingLLM(context_window=4096), context_tokens=8192).context_window() == 4096
    assert Ultrag(movies_kg, llm=RecordingLLM(context_window=None)).context_window() == 8192


def test_examples_come_from_the_kg_and_skip_unnamed_nodes(freebase_like_kg):
    from kgrag.graph.identifiers import looks_like_identifier
    from kgrag.methods.ultrag.dsl import leaves, parse_and_validate

    for line in query_examples(freebase_like_kg).splitlines():
        check = parse_and_validate(line.split("Query: ")[1], freebase_like_kg)
        assert check.ok, line
        for name in leaves(check.query):
            assert freebase_like_kg.find_entity(name) is not None and not looks_like_identifier(name)
    for rid in range(freebase_like_kg.num_relations):
        assert "m.0abc123" not in relation_lines(freebase_like_kg, [rid]) or rid in {
            freebase_like_kg.relation_id(r) for r in ("film.film.starring", "film.performance.actor",
                                                      "film.performance.character")
        }  # fmt: skip


def test_the_arbitrator_is_offered_named_entities_past_an_unnamed_node(freebase_like_kg, static_embedder):
    llm = RecordingLLM(
        {"prompt": "ultrag_query_focused", "response": '"Titanic" -> film.film.starring'},
        {"prompt": "ultrag_answer", "response": "<answers>Kate Winslet</answers>"},
        context_window=8192,
    )
    ans = Ultrag(freebase_like_kg, llm=llm, embedder=static_embedder, fallback="none").answer(
        "who starred in Titanic", ["Titanic"]
    )
    assert ans.answers == ["Kate Winslet"]
    offered = llm.messages("ultrag_answer")[0][1]["content"]
    assert "Kate Winslet (1.00, by film.performance.actor)" in offered
    assert "Rose (1.00, by film.performance.character)" in offered
    assert "m.0abc123" not in offered and '"Titanic"' in offered and "Titanic (" not in offered
    facts = {ev.text for ev in ans.evidence}
    assert facts == {
        "Titanic film.film.starring m.0abc123",
        "m.0abc123 film.performance.actor Kate Winslet",
        "m.0abc123 film.performance.character Rose",
    }
    assert ans.grounded


def test_a_query_through_an_unnamed_node_returns_named_entities(freebase_like_kg):
    evidence = Ultrag(freebase_like_kg, query='"Titanic" -> film.film.starring -> film.performance.actor').retrieve("x")
    assert [ev.text for ev in evidence] == [  # the answer's side first
        "m.0abc123 film.performance.actor Kate Winslet",
        "Titanic film.film.starring m.0abc123",
    ]


def test_unnamed_nodes_stay_when_nothing_named_is_next_to_them():
    import numpy as np

    from kgrag.methods.ultrag.dsl.unnamed import named_candidates

    kg = KnowledgeGraph.from_triples([("Heat", "has_node", "m.0abc123"), ("Heat", "year", "1995")])
    cvt = kg.entity_id("m.0abc123")
    passed = np.zeros(kg.num_entities, dtype=bool)
    passed[kg.entity_id("Heat")] = True
    only = named_candidates(kg, np.array([cvt]), np.array([1.0]), exclude=passed)
    assert [(c.entity, c.via) for c in only] == [(cvt, None)]
    year = kg.entity_id("1995")
    both = named_candidates(kg, np.array([cvt, year]), np.array([1.0, 0.5]), exclude=passed)
    assert [c.entity for c in both] == [year]


def test_the_fallback_is_built_once_with_its_own_defaults(movies_kg):
    method = Ultrag(movies_kg, llm=_llm(default="x"), fallback="kaping")
    other = method._fallback_method("kaping")
    assert other is method._fallback_method("kaping")
    assert other.config == type(other.config)()  # nothing of ULTRAG's settings (or any KG's tuning) passed on


def test_an_answer_chosen_past_the_explained_candidates_brings_its_path(movies_kg):
    """The arbitrator sees ``top_answers`` candidates and the evidence explains the ``explain_answers`` best;
    one it picks further down brings its own supporting path, so it is not left without support."""
    query = {"prompt": "ultrag_query", "response": '"Michael Mann" -> directed_by_inv -> starred_actors'}
    question = "which actors starred in films directed by Michael Mann"
    best = Ultrag(movies_kg, llm=_llm(query, default="<answers>\nnone\n</answers>"), explain_answers=1)
    explained = {n for ev in best.answer(question).evidence for n in ev.entities}  # the best candidate's path
    actor = next(a for a in ("Al Pacino", "Robert De Niro", "Russell Crowe") if a not in explained)
    llm = _llm(query, default=f"<answers>\n{actor}\n</answers>")
    ans = Ultrag(movies_kg, llm=llm, explain_answers=1).answer(question)
    assert ans.answers == [actor] and ans.grounded and ans.support[actor]
    assert explained < {name for ev in ans.evidence for name in ev.entities}
