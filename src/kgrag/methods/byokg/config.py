"""BYOKG-RAG's settings: the paper's hyper-parameters (T_R, T_A, k_r, k_t, k) and one switch per strategy.

Kept apart from the method so the settings a client may change (``ClientRange``) and those only an operator may
set (``HostSetting``, ``ModelSetting``) read as one table.
"""

from __future__ import annotations

from typing import Annotated, Literal

from kgrag.methods.base import GrammarSetting, MethodConfig
from kgrag.methods.settings import ClientRange, HostSetting, ModelSetting


class BYOKGConfig(MethodConfig):
    """Every BYOKG-RAG setting; each retrieval strategy is a switch, so the paper's ablations can be rerun."""

    # iterative process (Algorithm 2)
    iterations: Annotated[int, ClientRange(1, 4)] = 2  # T_R
    self_terminate: bool = True
    # when the rounds stop because KG-Linker's draft answers stand on the evidence, they are the answer and the
    # answer call is not made (one LLM call fewer); off, the paper's answer call reads the evidence. Dev, default
    # local model, paired: WebQSP proxy first 20 Hit@1 0.55 -> 0.45 (+0 / -2) at 4.25 -> 3.7 calls, family /
    # catalogue 0.93 / 0.93 -> 0.87 / 0.73 (+0 / -4) at 4.13 -> 3.3 (a draft in the evidence is not always the
    # asked one: Nixon's daughter for his wife; benchmarks/results/byokg_supported_drafts.json)
    answer_supported_drafts: bool = False
    # KG-Linker's reply held to its layout (<= 3 paths of listed relations, <= 6 entities, <= 5 drafts) and the
    # agent's relation choice to the offered relations, by a grammar ("auto": local llama.cpp models only). Off:
    # with linker_context="tree", WebQSP proxy dev first 30, paired, Hit@1 0.63 -> 0.67 (+2 / -1) and replies
    # at the 320-token cap 16 -> 2 of ~60, but 4.33 -> 4.43 calls and 49.7 -> 54.1 s median: the grammar cost
    # more sampling time than the repeats it stops (benchmarks/results/byokg_linker_cost.json; since llama.cpp
    # grammars check the likeliest tokens first that cost is gone, benchmarks/results/grammar_cost.json)
    grammar: GrammarSetting = "off"
    context_items: Annotated[int, ClientRange(1, 100)] = (
        30  # evidence lines shown to KG-Linker and to the final answer call
    )
    # how KG-Linker's later rounds read the context: numbered facts (the paper's), or the answer call's tree of
    # paths from the question entities (WebQSP proxy dev, first 30: 456 -> 193 tokens median). Lines: with the
    # tree, the second round's drafts stood on the evidence less often (WebQSP proxy 14 -> 6-9 of 30 stops, 4.33
    # -> 4.43-4.5 calls), and "who was richard nixon married to" was lost in both runs that read the tree
    linker_context: Literal["lines", "tree"] = "lines"
    # KG-Linker's first round reads the LLM-free retrieval (graph reranker from the given topics or the
    # question's mentions, text-based scoring) instead of an empty context. The paper's first round has no
    # context, and the 1.5B model then drafts nothing for most questions (WebQSP proxy 23 of 30, university 11
    # of 15), so every question needs a second round; primed, one round might do (``iterations=1``: 3 calls).
    # It does not: dev, default local model, with iterations=1, university / family / catalogue Hit@1 0.80 / 0.93
    # / 0.93 -> 0.60 / 0.80 / 0.87 (+1 / -7 paired) at 3 calls instead of 4.1-4.3 (results/byokg_linker_cost.json)
    linker_primed: bool = False
    # the agent's relation choice runs first, from the given topics or the question's mentions, beside the
    # LLM-free strategies (the priming above), and KG-Linker makes one round that reads what it found: 3 calls
    # (agent, KG-Linker, answer) instead of the paper's 4-5, KG-Linker's round seeing the agent's second hops as
    # the paper's second round does (and, like it, ending the gathering when its drafts stand on the context).
    # Dev, paired: software / pharmacy +2-1 / +1-2, MetaQA first 10 per hop 3-hop 0.80 -> 0.50, WebQSP proxy
    # 41-100 0.63 -> 0.57; +6 / -13 over 126 (benchmarks/results/byokg_agent_first.json)
    agent_first: bool = False
    answer_reached_only: bool = True  # the answer call sees only facts connected to the question entities
    # where the evidence supports none of the answers, an answer one KG fact past an entity it joins to the
    # question's (not to or through a hub) gets that fact as its support (source "<method>/link";
    # methods/support.answer_links), as kaping's and decompose's link_answers. Off: nothing to link on MetaQA's
    # and renamed MetaQA's first 10 per hop (dev, 2026-12-07: right answers grounded 1.00 either way, the same
    # answers; benchmarks/RESULTS.md "byokg's link_answers, measured")
    link_answers: bool = False
    # how the answer call reads the facts: "tree" re-reads them as paths from the question entities, each shared
    # prefix written once (retrieval/evidence_tree.py); "lines" one numbered fact or path per line. Dev, default
    # local model, the same replies but the answer call's: university / family / catalogue Hit@1 0.53 / 0.80 /
    # 0.93 -> 0.80 / 0.80 / 0.93 (+5 / -1), MetaQA first 15 per hop 0.93 / 0.73 / 0.60 -> 0.93 / 0.80 / 0.67
    # (+3 / -1) at ~100 fewer prompt tokens on 2- and 3-hop, WebQSP proxy first 20 0.55 either way
    # (benchmarks/results/byokg_evidence_tree.json)
    evidence_format: Literal["tree", "lines"] = "tree"
    # where that tree grows from: "linked" = every entity KG-Linker's rounds linked, "named" = the given topics and
    # the linked entities the question names (all linked when it names none); later rounds link entities read
    # in the context, and a fact joining one to the question's entity then hangs under it, off the asked chain.
    # "linked" by default: dev, paired, +3 / -7 over 126 questions (benchmarks/results/byokg_tree_roots.json)
    tree_roots: Literal["linked", "named"] = "linked"
    schema_relations: Annotated[int, ClientRange(1, 200)] = (
        40  # relations listed in the KG-Linker prompt (most relevant first when more)
    )
    # of the listed relations, how many carry an example fact (the most relevant to the question; all when they
    # are no more): an example shows which way a relation points and costs as many tokens again as its name. On a
    # KG whose relations all fit (MetaQA, the user-style KGs) nothing changes; on the WebQSP Freebase proxy the
    # first KG-Linker prompt's relation list reads 890 -> 502 tokens (median, first 100 dev q). Against examples
    # for all 40, proxy first 40 dev q, default local model, fresh runs back to back: Hit@1 0.625 -> 0.675
    # (+2 / -0), evaluated prompt tokens 1,708 -> 1,256 and 57 -> 47 s a question (medians), 4.33 -> 4.38 calls
    # (benchmarks/results/byokg_schema_examples.json)
    schema_examples: Annotated[int, ClientRange(0, 200)] = 10
    # entity linking
    link_top_m: Annotated[int, ClientRange(1, 10)] = 3
    link_embedding: bool = True
    # KG-Linker's entity names link to their link_top_m candidates scoring at least this (0: all of them). A
    # name the KG lacks still gets its nearest names, except one that repeats part of an entity already linked
    # or hangs words on it (entity_links.py: the Freebase sample's demo question had "Wynton" linked to
    # Downtown and Washington, and the answer was wrong). With 0.75 that question was right too, but over the
    # same replies elsewhere (transit, MetaQA and renamed MetaQA first 10 per hop) the link sets of 5 of 78
    # questions changed, each cleaner, and Hit@1 went +0 / -2 (the model read the other context differently,
    # e.g. "Who designed Orchard Hill station?" -> the designer of a station further down the tree)
    # (benchmarks/results/byokg_entity_links.json)
    entity_link_min_score: Annotated[float, ClientRange(0, 1)] = 0.0
    answer_link_min_score: Annotated[float, ClientRange(0, 1)] = (
        0.75  # draft answers are guesses: only confident links become targets
    )
    # path retrieval
    paths: bool = True
    path_orientations: bool = True  # also try reversed order / flipped directions of written paths
    path_soft_match: bool = True  # unknown relation names: the most similar relation at hand, hop by hop
    path_min_similarity: Annotated[float, ClientRange(0, 1)] = 0.6
    # a path of real relations reaching nothing is retried with a return hop ("films that share directors
    # with X": directed_by -> directed_by_inv -> ...) when the question names all its relations this closely
    path_bridge: bool = True
    path_bridge_min_similarity: Annotated[float, ClientRange(0, 1)] = 0.6
    path_top_k: Annotated[int, ClientRange(1, 100)] = 30
    max_paths: Annotated[int, ClientRange(1, 1000)] = 500
    shortest_paths: bool = True
    shortest_max_length: Annotated[int, ClientRange(1, 4)] = 3
    shortest_top_k: Annotated[int, ClientRange(1, 50)] = 10
    # graph-query retrieval
    cypher: bool = True
    cypher_backend: HostSetting = "ladybug"
    cypher_row_cap: Annotated[int, ClientRange(1, 200)] = 30
    cypher_timeout: Annotated[float, ClientRange(0.1, 30)] = 10.0
    # who writes the query: "linker" (KG-Linker's <opencypher>, the paper's), "text2cypher" (that method's writer
    # in a call of its own: schema, value hints, the check, one repair); "auto": text2cypher on a KG that came
    # from a property graph, where a query filters, counts and ranks over node properties, else linker
    cypher_writer: Literal["auto", "linker", "text2cypher"] = "auto"
    # triplet retrieval: agentic (Algorithm 1)
    agentic: bool = True
    # T_A; the paper's is 3. With the 1.5B model one round scored as well or better (user-style KGs, MetaQA and
    # WebQSP dev: +4 / -1 over 110 questions) at ~4.2 LLM calls a question instead of ~7.5
    agentic_rounds: Annotated[int, ClientRange(1, 5)] = 1
    agentic_max_relations: Annotated[int, ClientRange(1, 100)] = 30
    agentic_max_triples: Annotated[int, ClientRange(1, 100)] = 30
    # triplet retrieval: scoring (appendix A)
    graph_reranker: bool = True
    rerank_hops: Annotated[int, ClientRange(1, 3)] = 2  # L
    rerank_relations: Annotated[int, ClientRange(1, 100)] = 20  # k_r
    rerank_triples: Annotated[int, ClientRange(1, 500)] = 100  # k_t
    rerank_top_k: Annotated[int, ClientRange(1, 100)] = 30  # k: what reaches the prompt
    rerank_whole_facts: bool = True  # k triples as whole facts: siblings, both halves behind unnamed nodes
    reranker: ModelSetting = ""  # "" = cached embedding similarity; e.g. "onnx:<dir>" for a cross-encoder
    text_retrieval: bool = True
    text_top_k: Annotated[int, ClientRange(1, 50)] = 10
    embedder: ModelSetting = "minilm"
    prefilter_embedder: ModelSetting = "static"
    max_candidates: Annotated[int, ClientRange(1, 5000)] = 2000


class BYOKGAgenticConfig(BYOKGConfig):
    """The paper's main configuration: the agent, no graph reranker."""

    graph_reranker: bool = False


class BYOKGScoringConfig(BYOKGConfig):
    """The paper's cheaper configuration: the graph reranker, no agent."""

    agentic: bool = False
    # Without the agent the reranker's triples are the evidence, so they are taken as whole facts from a deeper
    # ranking and all of them reach the answer call: WebQSP proxy dev answer recall 0.737 -> 0.809 at 40
    # triples a question (k = 30 of k_t = 100 split multi-answer facts and facts behind unnamed nodes).
    rerank_triples: Annotated[int, ClientRange(1, 500)] = 300
    rerank_top_k: Annotated[int, ClientRange(1, 100)] = 50
    context_items: Annotated[int, ClientRange(1, 100)] = 50
