"""Decompose's settings (every field is a ``--set`` key; ``kgrag methods --markdown`` documents them)."""

from __future__ import annotations

from typing import Annotated, Literal

from kgrag.methods.base import GrammarSetting, MethodConfig
from kgrag.methods.settings import ClientRange, ModelSetting


class DecomposeConfig(MethodConfig):
    hops: Annotated[int, ClientRange(1, 3)] = 3  # the paper's best N on MetaQA
    top_k: Annotated[int, ClientRange(1, 100)] = 30  # triples per sub-question (the paper's K)
    max_candidates: Annotated[int, ClientRange(1, 5000)] = 2000  # static-vector prefilter cap for hub neighbourhoods
    max_subquestions: Annotated[int, ClientRange(1, 6)] = 4
    synthesize: bool = True  # False: the last sub-answer is the final answer (one call fewer)
    # A step ranks only the candidates touching its anchor entities (the topics for step 1, the entities the
    # referenced earlier answers name after that) when there are any; False = the paper's ranking.
    anchored: bool = True
    # A plan of one step (the question restated) reads the ``top_k`` facts that join up with the question's
    # entities: each next fact is the best-ranked one touching an entity the facts so far reach, never walking on
    # through a hub (kgrag.graph.hubs), so a two-hop question reads a writer's films and their years rather than
    # the years of every film among the candidates (retrieval.triples.connected_top). "similarity" = the paper's
    # top-K of all candidates. Retrieval: a chain to a gold answer in the facts, MetaQA 2-hop 0.33 -> 0.85
    # (first 40), WebQSP proxy 0.79 -> 0.85 (first 100), lower nowhere on eight KGs; end to end, paired, default
    # local model: dev (219 questions of eight KGs) +6 / -3; questions drawn afresh (MetaQA and renamed MetaQA
    # 20 per hop, proxy 30) +6 / -3, right answers grounded MetaQA 0.73 -> 0.83, renamed 0.86 -> 0.95; F1 higher
    # on both MetaQAs and the proxy, 0.03 lower on software and pharmacy (benchmarks/results/decompose_lone_step.json)
    lone_step: Literal["connected", "similarity"] = "connected"
    # The decomposition call also answers sub-question 1 from the facts about the question's entities (the
    # facts step 1 reads anyway), so a one-step plan takes one call and a longer one a call fewer. False = the
    # paper's separate decomposition call, the default: on it lowers MetaQA 2-hop and `university` by two
    # questions each at half the seconds (dev, paired; benchmarks/RESULTS.md).
    plan_answers: bool = False
    # What that call reads: "first_hop" = only the facts about the question's entities (what step 1 of a longer
    # plan reads); "first_hop_first" = those, then the best of the other candidates up to ``top_k``, so a plan
    # of one step for a two-hop question still sees the second hop (what a one-step plan read before), at
    # about twice the prompt (MetaQA dev: 2-hop Hit@1 0.40 -> 0.59 but 1-hop F1 0.94 -> 0.46; benchmarks/RESULTS.md).
    plan_facts: Literal["first_hop", "first_hop_first"] = "first_hop"
    # A later step starts from the entities an earlier step's answers name and, with this on, from every entity
    # the facts that step read link to its anchor the same way (relation and direction) as an answer: the model
    # names one of three films a writer wrote, the next step reads all three (:func:`widen`). Dev, paired: Hit@1
    # the same on 171 questions of seven KGs, F1 up on three, MetaQA right answers grounded 0.81 -> 0.84
    # (benchmarks/results/decompose_widen_steps.json)
    widen_steps: bool = True
    # A plan keeps only as many sub-questions as the question's best relation pattern (FRAG's zero-shot reading,
    # no LLM) has hops: the 1.5B planner adds steps ("Which publisher published X?", then "Where is #1 based?").
    # Off: dev, paired, 234 questions of eight KGs +15 / -10 at 2.8 calls instead of 3.4, but MetaQA 30 per hop
    # +6 / -6 with F1 0.52 -> 0.49 and the proxy -1 (benchmarks/results/decompose_cap_plan.json)
    cap_plan: bool = False
    # A sub-question's answer call may only name entities its facts show, under a grammar ("auto": local llama.cpp
    # models): a step's answers anchor the next step, and a small model writes a year range, a fact echoed whole
    # or the anchor itself. ``choose_last_step`` False leaves the last step free where its facts are silent. Off:
    # dev, 171 questions of seven KGs, paired: +5 / -8 (last step free: +3 / -5), MetaQA right answers grounded
    # 0.84 -> 0.90 but F1 0.55 -> 0.47 (benchmarks/results/decompose_choose_steps.json)
    choose_answers: GrammarSetting = "off"
    choose_last_step: bool = True
    # The last step's answers are every named entity its facts reach the way one of the model's answers was
    # reached (:func:`widen`, as ``widen_steps`` does for anchors): a small model names one film of an actor's
    # four. Off: the same 171, +0 / -2 (a synthesis call reads the widened chain, writes its own short list)
    widen_answers: bool = False
    # The final answers in the order of how well the relation path to each reads as the question (pattern_fit),
    # after support: the 1.5B planner writes a 1-hop question as two steps ("Who directed X?", then "Who was the
    # director of #1?"), the second walks back from the answer to another film, and the synthesis lists that
    # first. Dev, default local model, the same replies re-read, paired: MetaQA seed 21 (100 / 100 / 67 per hop)
    # 0.80 / 0.66 / 0.46 -> 0.90 / 0.68 / 0.49 (+15 / -1, p = 0.0005), ECE 0.136 -> 0.109; on 2026-12-06 +10 / -2
    # over MetaQA first 15 per hop, the proxy's first 30 and five user-style KGs (results/fit_first.json)
    fit_first: bool = True
    # An answer the facts read do not support, but that one KG fact joins to an entity they do join to the
    # question's, is supported by that fact (it joins the evidence, source "decompose/link"): a plan one hop short
    # ("films written by X", then the synthesis names their language) or a step answered from the model's own
    # knowledge gets its last hop checked against the KG instead of standing on the model's word
    # (support.answer_links; since 2026-12-07 only where the facts support none of the answers, never to or
    # through a hub: beside supported ones the others are set aside, and every film has a genre). No LLM call;
    # dev, default local model, the same replies: right answers grounded MetaQA (20 per hop, seed 11) 0.88 -> 1.00,
    # renamed MetaQA (seed 12) 0.94 -> 0.97, Hit@1 +1 / -0 over 291 questions of nine KGs, the other seven
    # unchanged; MetaQA seed 21, drawn after the rule was fixed: 0.90 -> 0.98, the same Hit@1 (measured before the
    # two conditions, which drop two of its 26 links, neither behind a first answer or a right one: RESULTS.md;
    # benchmarks/results/decompose_link_answers.json)
    link_answers: bool = True
    embedder: ModelSetting = "minilm"
