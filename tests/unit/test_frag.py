"""FRAG: hop router (training, persistence, bad input), path patterns and ranking, the method's plumbing.

The scripted LLM checks plumbing only; retrieval quality on MetaQA is measured by benchmarks/frag_bench.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from kgrag.graph.algorithms import reversed_relation, simple_paths
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods import get as get_method
from kgrag.methods.frag.patterns import (
    best_pattern,
    extends_better,
    paths_to,
    pattern_key,
    pattern_label,
    reachable_patterns,
)
from kgrag.methods.frag.router import HopRouter, PatternClassifier, RouterError, features, mask_entities, read_labelled
from kgrag.methods.frag.subgraph import ppr_pruned_subgraph
from kgrag.models.embeddings import load_embedder
from kgrag.models.llm.scripted import ScriptedLLM
from kgrag.retrieval.paths import (
    directed_relations,
    paths_as_evidence,
    pattern_text,
    rank_paths,
    relation_patterns,
    select_paths,
)
from tests.conftest import MOVIES, RecordingLLM, run_cli

ONE_HOP = ["who directed [{}]", "what year was [{}] released", "who acted in [{}]", "[{}] was written by whom"]
TWO_HOP = [
    "who directed the films starring [{}]",
    "what languages are the movies written by [{}] in",
    "which actors appear in films directed by [{}]",
]
NAMES = ["Heat", "Alien", "Kismet", "Michael Mann", "Ridley Scott", "Al Pacino", "Brazil", "Up"]


def _toy_training() -> tuple[list[str], list[int]]:
    qs, ys = [], []
    for name in NAMES:
        qs += [t.format(name) for t in ONE_HOP]
        ys += [1] * len(ONE_HOP)
        qs += [t.format(name) for t in TWO_HOP]
        ys += [2] * len(TWO_HOP)
    return qs, ys


def test_mask_and_features():
    assert mask_entities("who directed [Heat]") == "who directed  ENT "
    assert mask_entities("who directed Heat", [(13, 17)]) == "who directed  ENT "
    feats = features("who directed [Heat]")
    assert "ENT" in feats and "directed ENT" in feats and "<s> who" in feats


def test_router_learns_hop_shapes_and_round_trips(tmp_path):
    qs, ys = _toy_training()
    router = HopRouter.fit(qs, ys, min_count=1)
    assert router.accuracy(qs, ys) == 1.0
    # unseen entity names: the question's shape decides
    assert router.hops("who directed [The Insider]") == 1
    assert router.hops("who directed the films starring [Russell Crowe]") == 2
    path = router.save(tmp_path / "router.npz")
    again = HopRouter.load(path)
    np.testing.assert_allclose(again.predict_proba(qs), router.predict_proba(qs), atol=1e-5)
    with np.load(path, allow_pickle=False) as z:  # loads without pickle
        assert set(z.files) >= {"terms", "idf", "coef", "intercept", "labels"}


def test_router_errors_are_clear(tmp_path):
    with pytest.raises(RouterError, match="two different labels"):
        HopRouter.fit(["who directed [Heat]"] * 3, [1, 1, 1])
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(RouterError, match="cannot read question classifier"):
        HopRouter.load(bad)
    data = tmp_path / "labels.jsonl"
    data.write_text('{"question": "who directed [Heat]", "hops": 1}\n{"question": "x"}\n')
    with pytest.raises(RouterError, match=r"labels.jsonl:2:"):
        read_labelled(data)


def test_shipped_router_loads_and_routes():
    router = HopRouter.load()
    assert set(router.labels.tolist()) == {1, 2, 3}
    assert router.hops("who is the director of [Heat]") == 1
    assert router.hops("the films that share actors with the film [Heat] were in which languages") == 3


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> KnowledgeGraph:
    return KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("kg") / "kg"))


def test_relation_patterns_follow_edge_direction(kg):
    heat = kg.entity_id("Heat")
    paths = simple_paths(kg, [heat], max_length=2)
    rels = directed_relations(kg, paths)
    patterns, which = relation_patterns(kg, paths)
    assert len(which) == len(paths) and len(patterns) <= len(paths)
    r = kg.num_relations
    starred = kg.relation_id("starred_actors")
    for i, (nodes, edges) in enumerate(paths):
        for j, tid in enumerate(edges):
            forward = int(kg.heads[tid]) == nodes[j]
            assert rels[i, j] == int(kg.rels[tid]) + (0 if forward else r)
    # Heat -starred-> Al Pacino <-starred- The Insider is (starred_actors, starred_actors_inv)
    assert pattern_text(kg, [starred, starred + r, -1]) == "starred actors, then starred actors (reverse)"


def test_select_paths_keeps_one_path_per_endpoint(kg):
    heat = kg.entity_id("Heat")
    paths = simple_paths(kg, [heat], max_length=2)
    scores = np.arange(len(paths), dtype=float)
    best, best_scores = select_paths(paths, scores, 100, exclude_endpoints=[heat])
    ends = best.endpoints().tolist()
    assert len(ends) == len(set(ends)) and heat not in ends
    assert list(best_scores) == sorted(best_scores, reverse=True)
    assert len(select_paths(paths, scores, 2)[0]) == 2


def test_rank_paths_prefers_the_asked_relation(kg):
    emb = load_embedder("static")
    heat = kg.entity_id("Heat")
    paths = simple_paths(kg, [heat], max_length=1)
    best, _ = rank_paths(kg, "what year was Heat released", paths, embedder=emb, top_k=1)
    assert kg.entities[int(best.endpoints()[0])] == "1995"
    ev = paths_as_evidence(kg, best, source="test")[0]
    assert ev.entities == ["Heat", "1995"] and ev.relations == ["release_year"] and ev.source == "test"
    assert ev.text == "Heat -[release year]-> 1995"


def test_ppr_pruned_subgraph_keeps_topics_and_top_n(kg):
    heat = kg.entity_id("Heat")
    sub = ppr_pruned_subgraph(kg, [heat], hops=2, top_n=3)
    assert len(sub.nodes) == 3 and heat in sub.nodes.tolist()
    assert set(sub.nodes.tolist()) <= set(sub.ball_nodes.tolist())
    assert sub.score_of(np.array([heat]))[0] == sub.scores.max()
    whole = ppr_pruned_subgraph(kg, [heat], hops=1, top_n=1000)
    assert len(whole.nodes) == len(whole.ball_nodes)


def test_frag_retrieves_paths_and_answers_in_one_call(kg):
    llm = ScriptedLLM({"rules": [{"prompt": "frag_answer", "match": "Heat", "response": "<answers>Ridley Scott"}]})
    # grounding off: this toy KG's best-ranked pattern is not the one the scripted answer follows
    method = get_method("frag")(kg, llm=llm, embedder=load_embedder("static"), hops=2, grounding="none")
    evidence = method.retrieve("which directors made films with actors of Heat", ["Heat"])
    assert evidence and all(ev.source == "frag" for ev in evidence)
    ends = [ev.entities[-1] for ev in evidence]
    assert len(ends) == len(set(ends)) and "Heat" not in ends
    for ev in evidence:
        assert ev.entities[0] == "Heat" and len(ev.triples) == len(ev.relations) <= 2
    answer = method.answer("which directors made films with actors of Heat", ["Heat"])
    assert answer.answers == ["Ridley Scott"] and answer.usage.llm_calls == 1
    assert not answer.grounded and answer.support == {}  # no path of two hops from Heat reaches Ridley Scott
    names = [s.name for s in answer.trace]
    assert names == ["link", "route", "rank_relations", "paths", "rank_paths", "answer"]
    route = {"hops": 2, "kind": "simple", "router": "fixed", "pattern_scorer": "none (zero-shot)"}
    assert answer.trace[1].outputs == route


def test_frag_answer_call_reads_the_paths_as_a_tree_when_zero_shot(kg):
    """``evidence_format="auto"``: zero-shot frag writes its paths as a tree (and says so in the prompt and the
    trace); ``lines`` keeps one numbered path per line."""
    question = "which directors made films with actors of Heat"
    tree_rule = {"prompt": "frag_answer", "match": r"first\):\nHeat\n  [<-]", "response": "<answers>Tree"}
    lines_rule = {"prompt": "frag_answer", "match": r"1\. Heat -\[", "response": "<answers>Lines"}
    llm = ScriptedLLM({"rules": [tree_rule, lines_rule]})
    frag = get_method("frag")
    common = {"llm": llm, "embedder": load_embedder("static"), "hops": 2, "grounding": "none"}
    answer = frag(kg, **common).answer(question, ["Heat"])
    assert answer.answers == ["Tree"] and answer.trace[-1].outputs["evidence_format"] == "tree"
    answer = frag(kg, evidence_format="lines", **common).answer(question, ["Heat"])
    assert answer.answers == ["Lines"] and answer.trace[-1].outputs["evidence_format"] == "lines"


def test_frag_answer_call_chooses_among_the_entities_of_the_tree(kg):
    """``choose_answers``: the reply is held by a grammar to the tree's entity names (the question's own among
    them: a small model often names it first); a name outside them (a backend that ignores grammars) is dropped.
    ``auto`` sends the grammar only to local llama.cpp models."""
    rule = {"prompt": "frag_answer", "response": "<answers>Heat; Michael Mann; Warp Drive</answers>"}
    llm = RecordingLLM(rule)
    common = {"llm": llm, "embedder": load_embedder("static"), "hops": 1, "grounding": "none"}
    answer = get_method("frag")(kg, choose_answers="on", **common).answer("who directed Heat", ["Heat"])
    grammar = llm.grammars[-1]
    assert grammar.startswith('root ::= "<answers>"') and '"Michael Mann"' in grammar and '"Heat"' in grammar
    assert '"Warp Drive"' not in grammar
    assert answer.answers == ["Michael Mann"]
    assert answer.trace[-1].outputs["choices"] == grammar.splitlines()[-1].count(" | ") + 1
    get_method("frag")(kg, **common).answer("who directed Heat", ["Heat"])
    assert llm.grammars[-1] is None  # auto: the scripted model enforces no grammar


def test_grounding_score_orders_the_models_answers_by_the_path_ending_at_each(kg):
    """``grounding="score"``: every answer the model chose is kept, the end of a better-scored path first (a
    small model often names a middle node, or a weaker pattern's end, first); "none" keeps the reply's order."""
    question = "which films did the director of Heat direct"
    common = {"embedder": load_embedder("static"), "grounding": "none", "answer_spread": None}  # keep both
    ends = {}
    for ev in get_method("frag")(kg, **common).retrieve(question, ["Heat"]):
        ends.setdefault(ev.entities[-1], ev.score)
    low, high = min(ends, key=ends.get), max(ends, key=ends.get)
    assert ends[low] < ends[high]
    llm = ScriptedLLM({"rules": [{"prompt": "frag_answer", "response": f"<answers>{low}; {high}</answers>"}]})
    as_written = get_method("frag")(kg, llm=llm, **common).answer(question, ["Heat"])
    assert as_written.answers == [low, high]
    common["grounding"] = "score"
    assert get_method("frag")(kg, llm=llm, **common).answer(question, ["Heat"]).answers == [high, low]


def test_the_answer_call_may_read_fewer_paths_than_retrieval_returns(kg):
    """``answer_paths`` / ``answer_triples``: zero-shot, the answer call reads the paths chosen the same way within
    smaller budgets, and its evidence is what it read; retrieval alone is unchanged."""
    llm = ScriptedLLM({"rules": [{"prompt": "frag_answer", "response": "<answers>Michael Mann"}]})
    common = {"llm": llm, "embedder": load_embedder("static"), "grounding": "none"}
    question = "which directors made films with actors of Heat"
    full = get_method("frag")(kg, **common)
    small = get_method("frag")(kg, answer_paths=2, answer_triples=3, **common)
    assert [e.text for e in small.retrieve(question, ["Heat"])] == [e.text for e in full.retrieve(question, ["Heat"])]
    read = small.answer(question, ["Heat"]).evidence
    assert 0 < len(read) <= 2 and len({t for ev in read for t in ev.triples}) <= 3
    assert len(read) < len(full.answer(question, ["Heat"]).evidence)


def test_shipped_models_are_used_only_on_the_kg_they_were_trained_on(kg, tmp_path):
    """The shipped router/pattern scorer carry the MetaQA demo KG's checksum: on another KG frag runs
    zero-shot (and says so in the trace); naming them explicitly still works; an adapted model in the KG's
    store, trained for it, is picked up."""
    frag = get_method("frag")
    assert frag(kg).router is None and frag(kg).pattern_classifier is None
    assert frag(kg, router="builtin").router is not None
    store = kg.save(tmp_path / "kg")
    from kgrag.graph.store import load_kg

    loaded = load_kg(store)
    router = HopRouter.load()
    router.provenance = {"kg_checksum": loaded.checksum, "questions": "test"}
    (store / "adapted").mkdir()
    router.save(store / "adapted" / HopRouter.builtin)
    assert frag(loaded).router is None  # a file `kgrag adapt` did not record (no adapt.json): not used
    from kgrag.graph.store import digest_files

    def record() -> None:  # what `kgrag adapt` writes last: the KG it adapted to and its files' digests
        files = digest_files(store / "adapted", exclude=frozenset({"adapt.json"}))
        (store / "adapted" / "adapt.json").write_text(json.dumps({"kg_checksum": loaded.checksum, "files": files}))

    record()
    method = frag(loaded, embedder=load_embedder("static"))
    assert method.router is not None and method.router.provenance["questions"] == "test"
    assert method.pattern_classifier is None
    other = HopRouter.load()
    other.provenance = {"kg_checksum": "0" * 64}
    other.save(store / "adapted" / HopRouter.builtin)
    record()
    assert frag(loaded).router is None  # trained for another KG: not used


def test_frag_complex_routes_find_three_hop_answers(kg):
    question = "which films share a director with the films starring Russell Crowe"
    for strategy in ("patterns", "shortest"):
        method = get_method("frag")(kg, embedder=load_embedder("static"), hops=3, complex_paths=strategy)
        evidence = method.retrieve(question, ["Russell Crowe"])
        ends = {ev.entities[-1] for ev in evidence}
        assert "Alien" in ends, strategy  # Russell Crowe <- Gladiator -> Ridley Scott <- Alien
        assert all(ev.entities[0] == "Russell Crowe" for ev in evidence)


def _brute_force_patterns(kg, source, max_length, backtrack=True):
    """pattern tuple -> endpoints, by enumerating walks that never return to the source (and, without
    ``backtrack``, never follow the triple they just came along back)."""
    out = {}
    walks = [((), source, -1)]
    for _ in range(max_length):
        nxt = []
        for pattern, node, last in walks:
            for tid in range(kg.num_triples):
                h, r, t = (int(kg.heads[tid]), int(kg.rels[tid]), int(kg.tails[tid]))
                for a, b, d in ((h, t, r), (t, h, r + kg.num_relations)):
                    if a == node and b != source and (backtrack or tid != last):
                        key = (*pattern, d)
                        out.setdefault(key, set()).add(b)
                        nxt.append((key, b, tid))
        walks = nxt
    return out


def test_reachable_patterns_match_brute_force(kg):
    heat = kg.entity_id("Heat")
    reach = reachable_patterns(kg, [heat], 3, hub_degree=10**9)
    got = {
        tuple(int(r) for r in reach.patterns[k] if r >= 0): set(reach.endpoints(k).tolist()) for k in range(len(reach))
    }
    assert got == _brute_force_patterns(kg, heat, 3)
    assert all(reach.lengths[k] == len([r for r in reach.patterns[k] if r >= 0]) for k in range(len(reach)))


def test_paths_to_gives_a_path_to_every_end_a_walk_reaches_without_turning_back(kg):
    heat = kg.entity_id("Heat")
    reach = reachable_patterns(kg, [heat], 3, hub_degree=10**9)
    forward_only = _brute_force_patterns(kg, heat, 3, backtrack=False)
    turned_back = 0
    for k in range(len(reach)):  # one concrete path per endpoint, following the pattern
        pattern = tuple(int(r) for r in reach.patterns[k][: reach.lengths[k]])
        ends = reach.endpoints(k)
        paths = paths_to(kg, [heat], reach.patterns[k], ends, hub_degree=10**9)
        assert sorted(paths.endpoints().tolist()) == sorted(forward_only.get(pattern, set()))
        turned_back += len(ends) - len(paths)
        if not len(paths):
            continue
        np.testing.assert_array_equal(directed_relations(kg, paths), np.tile(pattern, (len(paths), 1)))
        assert all(nodes[0] == heat for nodes, _ in paths)
        assert all(len(set(edges)) == len(edges) for _, edges in paths)  # no triple twice
    assert turned_back > 0  # Heat -> Michael Mann <- Thief -> Michael Mann is a walk, not a path to him


def test_relation_pruning_starts_at_the_hop_asked_for(kg):
    """``prune_from=2``: the first hop may use any relation, later hops only the allowed ones."""
    heat = kg.entity_id("Heat")
    full = reachable_patterns(kg, [heat], 2, hub_degree=10**9)
    directed = kg.relation_id("directed_by")
    allowed = np.array([directed, directed + kg.num_relations])

    def patterns(reach):
        return {tuple(int(r) for r in reach.patterns[k] if r >= 0) for k in range(len(reach))}

    everywhere = patterns(reachable_patterns(kg, [heat], 2, hub_degree=10**9, allowed_relations=allowed))
    later = patterns(reachable_patterns(kg, [heat], 2, hub_degree=10**9, allowed_relations=allowed, prune_from=2))
    assert everywhere and all(set(p) <= set(allowed.tolist()) for p in everywhere)
    assert {p for p in patterns(full) if len(p) == 1} <= later  # every first hop kept
    assert all(p[1] in allowed for p in later if len(p) == 2)
    assert everywhere < later < patterns(full)


def test_hubs_are_reached_but_not_walked_through(kg):
    heat = kg.entity_id("Heat")
    mann = kg.entity_id("Michael Mann")  # degree 3 in MOVIES
    reach = reachable_patterns(kg, [heat], 2, hub_degree=2)
    assert mann in reach.entity.tolist()
    two_hop = {int(e) for k in range(len(reach)) if reach.lengths[k] == 2 for e in reach.endpoints(k)}
    assert kg.entity_id("The Insider") in two_hop  # via Al Pacino (degree 2)
    label, f1 = best_pattern(kg, [heat], ["The Insider"], 2, exact_length=True)
    assert label in {"starred_actors>starred_actors_inv", "directed_by>directed_by_inv"} and f1 == 1.0
    assert pattern_label(kg, [kg.relation_id("directed_by"), kg.relation_id("written_by") + kg.num_relations]) == (
        "directed_by>written_by_inv"
    )


def test_fanout_stops_walks_through_a_relation_many_share_but_not_through_a_big_entity():
    """``fanout``: not walked through along a relation the entity has more than N edges of (either direction),
    whatever its degree; reached all the same."""
    rows = [("Willow", "parents", "Jada"), ("Willow", "profession", "Actor"), ("Willow", "born_in", "Jamaica")]
    rows += [(f"Star {i}", "profession", "Actor") for i in range(4)]
    rows += [(f"Star {i}", "parents", f"Parent {i}") for i in range(4)]
    rows += [("Jamaica", "language", "English"), ("Jamaica", "language", "Patois")]
    rows += [(f"Town {i}", "located_in", "Jamaica") for i in range(20)]  # a big entity, few languages
    kg = KnowledgeGraph.from_triples(rows)
    willow = kg.entity_id("Willow")
    profession, parents = kg.relation_id("profession"), kg.relation_id("parents")
    through_actor = (profession, reversed_relation(profession, kg.num_relations), parents)

    def patterns(**limits):
        reach = reachable_patterns(kg, [willow], 3, **limits)
        return {pattern_key(reach.patterns[k]): reach.endpoints(k) for k in range(len(reach))}

    free, limited = patterns(hub_degree=10**9), patterns(hub_degree=10**9, fanout=3)
    assert len(free[through_actor]) == 4 and through_actor not in limited
    assert kg.entity_id("Actor") in limited[(profession,)].tolist()  # reached, not walked through
    languages = (kg.relation_id("born_in"), kg.relation_id("language"))
    assert sorted(kg.entities[e] for e in limited[languages]) == ["English", "Patois"]  # Jamaica: 23 edges
    ends = free[through_actor]
    assert len(paths_to(kg, [willow], list(through_actor), ends, hub_degree=10**9)) == 4
    assert len(paths_to(kg, [willow], list(through_actor), ends, hub_degree=10**9, fanout=3)) == 0


def test_frag_train_cli(tmp_path, kg):
    qs, ys = _toy_training()
    data = tmp_path / "labels.jsonl"
    data.write_text("".join(json.dumps({"question": q, "hops": y}) + "\n" for q, y in zip(qs, ys)))
    out = tmp_path / "router.npz"
    proc = run_cli("frag-train", "--data", str(data), "--out", str(out), "--validation", "0.25", "--json")
    summary = json.loads(proc.stdout)
    assert summary["questions"] == len(qs) and out.exists() and summary["router"]["validation_accuracy"] >= 0.9
    bad = run_cli("frag-train", "--data", str(tmp_path / "missing.jsonl"), "--out", str(out), ok=False)
    assert bad.returncode == 2 and "missing.jsonl" in bad.stderr
    data.write_text('{"question": "who directed [Heat]", "hops": 1}\n{"question": "x", "hops": 0}\n')
    bad = run_cli("frag-train", "--data", str(data), "--out", str(out), ok=False)
    assert bad.returncode == 2 and "labels.jsonl:2:" in bad.stderr


def test_frag_train_labels_patterns_from_answers(tmp_path, kg):
    rows = []
    for movie, director in (("Heat", "Michael Mann"), ("Alien", "Ridley Scott"), ("Gladiator", "Ridley Scott")):
        rows += [{"question": f"who directed [{movie}]", "answers": [director]}] * 4
    rows += [{"question": "who acted in [Heat]", "answers": ["Al Pacino", "Robert De Niro"]}] * 4
    rows += [{"question": "who starred in [The Insider]", "answers": ["Al Pacino", "Russell Crowe"]}] * 4
    rows += [{"question": "what films did [Russell Crowe] act in", "answers": ["Gladiator", "The Insider"]}] * 4
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = tmp_path / "kg"
    KnowledgeGraph.from_triples(MOVIES).save(store)
    router, patterns = tmp_path / "router.npz", tmp_path / "patterns.npz"
    out = run_cli(
        "frag-train",
        "-d",
        str(data),
        "--out",
        str(router),
        "--kg",
        str(store),
        "--patterns-out",
        str(patterns),
        "--validation",
        "0",
        "--json",
    )
    summary = json.loads(out.stdout)
    # 4 labels: Michael Mann both directed and wrote Heat, so that row's label is the tie (directed_by, written_by)
    assert summary["patterns"]["labels"] == 4 and summary["patterns"]["weak_label_f1"] == 1.0
    clf = PatternClassifier.load(patterns)
    assert clf.predict(["who directed [Brazil]"])[0] == "directed_by"
    assert clf.predict(["what films did [Al Pacino] act in"])[0] == "starred_actors_inv"


def test_a_trained_pattern_scorer_lets_the_answer_call_read_only_its_best_pattern(tmp_path):
    """Under grounding "pattern" the answers are the best pattern's ends whatever the model names, so with
    pattern_reads="best" the answer call reads only that pattern's paths, and the answers stay the same."""
    rows = [
        {"question": f"who acted in [{m}]", "answers": a}
        for m, a in (("Heat", ["Al Pacino"]), ("Gladiator", ["Russell Crowe"]))
    ]
    rows += [{"question": f"who directed [{m}]", "answers": [d]} for m, d in (("Alien", "Ridley Scott"),)]
    data, store, patterns = tmp_path / "qa.jsonl", tmp_path / "kg", tmp_path / "patterns.npz"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows * 4))
    KnowledgeGraph.from_triples(MOVIES).save(store)
    args = ["-d", str(data), "--out", str(tmp_path / "router.npz"), "--kg", str(store), "--patterns-out", str(patterns)]
    run_cli("frag-train", *args, "--validation", "0")
    kg = KnowledgeGraph.load(store)

    def ask(reads: str) -> tuple[list[str], str]:
        llm = RecordingLLM({"prompt": "frag_answer", "response": "<answers>Russell Crowe</answers>"})
        frag = get_method("frag")(
            kg,
            llm=llm,
            embedder=load_embedder("static"),
            router="none",
            patterns=str(patterns),
            pattern_reads=reads,
            hops=1,
        )
        answer = frag.answer("who acted in The Insider", ["The Insider"])
        return answer.answers, llm.messages("frag_answer")[0][-1]["content"]

    best, read_best = ask("best")
    every, read_all = ask("all")
    assert sorted(best) == sorted(every) == ["Al Pacino", "Russell Crowe"]
    assert best[0] == "Russell Crowe"  # the model's choice among the best pattern's ends still comes first
    assert "directed by" in read_all and "directed by" not in read_best and "starred actors" in read_best


def test_triple_budget_counts_shared_edges_once():
    from kgrag.graph.algorithms import Paths
    from kgrag.methods.frag import within_triple_budget

    nodes = np.array([[0, 1, 2], [0, 1, 3], [0, 4, 5]], np.int32)
    edges = np.array([[10, 11], [10, 12], [13, 14]], np.int64)
    paths = Paths(nodes, edges, np.array([2, 2, 2]))
    assert within_triple_budget(paths, 3).tolist() == [0, 1]  # 10, 11, 12: the shared first edge once
    assert within_triple_budget(paths, 4).tolist() == [0, 1]
    assert within_triple_budget(paths, 5).tolist() == [0, 1, 2]
    assert within_triple_budget(paths, 1).tolist() == []


def test_zero_shot_scoring_prefers_the_relation_the_question_names_over_longer_patterns():
    """Without trained models, a 1-hop question's pattern outranks out-and-back and longer patterns: each
    relation a pattern mentions must be asked for by words of its own, and each hop costs ``align_hop_cost``."""
    kg = KnowledgeGraph.from_triples(
        [
            ("Lisbon", "time zone", "Western European Time"),
            ("Porto", "time zone", "Western European Time"),
            ("Lisbon", "country", "Portugal"),
            ("Portugal", "currency", "Euro"),
            ("Porto", "country", "Portugal"),
        ]
    )
    frag = get_method("frag")(kg, embedder=load_embedder("static"))
    assert frag.router is None and frag.pattern_classifier is None
    evidence = frag.retrieve("what time zone is Lisbon in", ["Lisbon"])
    assert evidence[0].relations == ["time zone"] and evidence[0].entities[-1] == "Western European Time"
    assert all(len(ev.triples) <= frag.config.zero_shot_triples for ev in evidence)


def test_unnamed_nodes_are_walked_through_not_answered():
    """A CVT node (``m.0abc12``) ends no evidence path; the named entity behind it does."""
    from kgrag.graph.identifiers import looks_like_identifier

    assert [looks_like_identifier(n) for n in ("m.02h98gq", "_:b12", "a3f9c2e1", "1980s", "AM1200", "Se7en")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    kg = KnowledgeGraph.from_triples(
        [
            ("Richard Nixon", "spouse", "m.02h98gq"),
            ("m.02h98gq", "spouse", "Pat Nixon"),
            ("Richard Nixon", "born in", "Yorba Linda"),
        ]
    )
    evidence = get_method("frag")(kg, embedder=load_embedder("static")).retrieve(
        "who was Richard Nixon married to", ["Richard Nixon"]
    )
    ends = [ev.entities[-1] for ev in evidence]
    assert "Pat Nixon" in ends and "m.02h98gq" not in ends


def test_the_answer_call_may_read_only_the_patterns_near_the_best_score(kg):
    """``answer_margin``: zero-shot, the answer call reads the patterns scoring within the margin of the best one;
    retrieval alone is unchanged, and margin 0 leaves the best pattern (its ties included) alone."""
    llm = ScriptedLLM({"rules": [{"prompt": "frag_answer", "response": "<answers>Michael Mann"}]})
    common = {"llm": llm, "embedder": load_embedder("static"), "grounding": "none"}
    question = "which directors made films with actors of Heat"
    full = get_method("frag")(kg, **common)
    near = get_method("frag")(kg, answer_margin=0.0, **common)
    assert [e.text for e in near.retrieve(question, ["Heat"])] == [e.text for e in full.retrieve(question, ["Heat"])]
    answer = near.answer(question, ["Heat"])
    patterns = next(s for s in answer.trace if s.name == "rank_paths").outputs["patterns"]
    assert patterns and {p["score"] for p in patterns} == {patterns[0]["score"]}
    everything = next(s for s in full.answer(question, ["Heat"]).trace if s.name == "rank_paths").outputs["patterns"]
    assert len(patterns) < len(everything)
    assert {tuple(ev.relations) for ev in answer.evidence} < {
        tuple(ev.relations) for ev in full.retrieve(question, ["Heat"])
    }


def test_an_extension_scoring_below_the_pattern_it_extends_is_not_read():
    """``extension_margin``: a pattern that goes on from one already taken must score within the margin of it,
    unless it first turns back along that pattern's last relation ("films sharing a screenwriter with X")."""
    taken = {(0,): 0.5, (0, 3): 0.45}  # three relations: 3 is relation 0 reversed
    pad = -1
    assert extends_better(np.array([0, 1, pad]), 0.4, taken, 0.0, 3)  # a hop the question does not ask for
    assert not extends_better(np.array([0, 1, pad]), 0.6, taken, 0.0, 3)  # an extension that earns its hop
    assert not extends_better(np.array([0, 1, pad]), 0.4, taken, 0.2, 3)  # within the margin
    assert not extends_better(np.array([0, 3, pad]), 0.4, taken, 0.0, 3)  # out and back
    assert extends_better(np.array([0, 3, 1]), 0.44, taken, 0.0, 3)  # goes on from the out-and-back
    assert not extends_better(np.array([1, 2, pad]), 0.0, taken, 0.0, 3)  # extends nothing taken


def test_the_answer_call_drops_extensions_of_better_patterns(kg):
    """With ``extension_margin=0`` no pattern the answer call reads extends a better-scored one it reads (turning
    back excepted), and it reads no more patterns than without the rule."""
    llm = ScriptedLLM({"rules": [{"prompt": "frag_answer", "response": "<answers>Michael Mann"}]})
    common = {"llm": llm, "embedder": load_embedder("static"), "grounding": "none"}
    question = "what films did Al Pacino act in"
    cut = get_method("frag")(kg, extension_margin=0.0, **common)
    everything = get_method("frag")(kg, **common)
    steps = [
        next(s for s in m.answer(question, ["Al Pacino"]).trace if s.name == "rank_paths") for m in (cut, everything)
    ]
    kept, before = (s.outputs["patterns"] for s in steps)
    assert kept and len(kept) < len(before)
    lists = get_method("frag")(kg, extension_margin=0.0, extension_ends=1000, **common)  # short extensions stay
    assert (
        next(s for s in lists.answer(question, ["Al Pacino"]).trace if s.name == "rank_paths").outputs["patterns"]
        == before
    )
    names = {pattern_label(kg, [r]): r for r in range(2 * kg.num_relations)}
    for p in kept:
        for q in kept:
            longer, shorter = q["pattern"].split(">"), p["pattern"].split(">")
            if len(longer) > len(shorter) and longer[: len(shorter)] == shorter:
                back = names[longer[len(shorter)]] == (names[shorter[-1]] + kg.num_relations) % (2 * kg.num_relations)
                assert back or q["score"] >= p["score"], (p, q)
