"""ULTRAG's settings: the executor, the query writer's relation list and retries, SEPPR's parameters and the
fallback when no query can be used.

Kept apart from the method so the settings a client may change (``ClientRange``, ``ClientText``) read as one table.
"""

from __future__ import annotations

from typing import Annotated, Literal

from kgrag.methods.base import GrammarSetting, MethodConfig
from kgrag.methods.settings import ClientRange, ClientText, MethodSetting


class UltragConfig(MethodConfig):
    executor: Literal["symbolic", "neural"] = "symbolic"
    # run this DSL query instead of asking the LLM (what `retrieve` needs)
    query: Annotated[str | None, ClientText(2000)] = None
    grammar: GrammarSetting = "auto"  # GBNF-constrained query writing (auto: llama.cpp models)
    # the arbitrator may only name entities the query returned, under a grammar, so every answer stands on the
    # evidence ("auto": llama.cpp models). Off by default: it then cannot answer from the model's own knowledge
    # where the query missed, which the arbitrator's prompt allows. WebQSP proxy first 100, dev, default local
    # model, paired: Hit@1 0.64 -> 0.63 (+3 / -4), F1 0.52 -> 0.45, right answers with support 0.86 -> 0.97
    choose_answers: GrammarSetting = "off"
    retries: Annotated[int, ClientRange(0, 3)] = 1  # re-prompts with the error message when a query fails
    sigma: Annotated[float, ClientRange(0.001, 10)] = 0.1  # Gaussian soft-linking kernel width
    link_k: Annotated[int, ClientRange(1, 50)] = 10  # nearest names considered per leaf
    alpha: Annotated[float, ClientRange(0, 0.99)] = 0.85  # SEPPR damping (< 1)
    ppr_iterations: Annotated[int, ClientRange(1, 20)] = 5  # SEPPR T
    # SEPPR k; None: the paper's 30,000 for the symbolic executor and 5,000 for the neural one, which ranks
    # worse on bigger subgraphs of a hub-heavy KG and is 20x slower (MetaQA gold queries, MRR 0.92 at 5,000
    # vs 0.70 at 30,000: benchmarks/results/ultrag.json)
    top_nodes: Annotated[int | None, ClientRange(1, 30_000)] = None
    repair_directions: bool = True  # flip projections that reach nothing when the other direction does
    top_answers: Annotated[int, ClientRange(1, 100)] = 50  # entities shown to the arbitrator
    # "always": the arbitrator reads the query's answers (the paper); "when_several": a query that found one
    # entity (not one of the question's) answers with it, and the arbitrator is asked only when there is a
    # choice. With one candidate the 1.5B arbitrator can only keep it or answer from memory, and memory lost
    # more than it won: dev, paired replays (only the skipped calls differ), WebQSP proxy 101-400 and MetaQA
    # seeded 30/hop seeds 1-2, software, pharmacy: Hit@1 +5 / -0 over 516 questions, calls 2.0 -> 1.6-1.75
    # (benchmarks/results/ultrag_arbitrate.json)
    arbitrate: Literal["always", "when_several"] = "when_several"
    explain_answers: Annotated[int, ClientRange(1, 50)] = 10  # best entities whose supporting triples are evidence
    # relations listed to the query writer at most; None: as many as fit the context window (all when they fit)
    max_relations: Annotated[int | None, ClientRange(1, 5000)] = None
    # when the list is chosen per question (the whole one does not fit): the best this many at most, not as many
    # as fit (None). A country's neighbourhood lists hundreds of relations, 2,000-7,000 prompt tokens, and the
    # queries of 196 dev questions used a relation ranked past 30 once (wrong then). WebQSP proxy 301-400, dev,
    # paired: the 16 questions with more change, Hit@1 +1 / -0, their evaluated prompt tokens 1,920 -> 1,200
    # (median; benchmarks/results/ultrag_focused_relations.json)
    focused_relations: Annotated[int | None, ClientRange(1, 5000)] = 30
    # tokens the query writer's prompt and reply may take together; None: the LLM's context window (or
    # UNKNOWN_CONTEXT_WINDOW when it does not report one). Never more than the LLM's own window.
    context_tokens: Annotated[int | None, ClientRange(512, 32_768)] = None
    # when the list is chosen per question: relations that are not within 2 hops of the question's entities,
    # listed at most. 0: a query starting there cannot use them, and a close name that leads nowhere is what
    # the local model picks (WebQSP, "who was Richard Nixon married to": people.marriage.spouse)
    other_relations: Annotated[int, ClientRange(0, 500)] = 0
    # when the list is chosen per question: each relation's example fact is one near the question's entities
    # where there is one, so the model sees the direction (and spelling) its query needs
    question_examples: bool = True
    # how each listed relation's example fact reads: "both" ways (``"h" -> r gives "t"; "t" -> r_inv gives
    # "h"``), or "forward" only (the prompt's rules say what _inv does, and the executor already turns a step
    # that reaches nothing the other way); "auto": forward in a list chosen per question, which the model reads
    # anew for every question, both ways in the whole list, which sits in the fixed system part and is read
    # once per KG (there "auto" changes nothing). Forward against both, WebQSP proxy first 100 dev q, fresh runs
    # back to back per half: Hit@1 0.65 -> 0.64 (+0 / -1), evaluated prompt tokens (median, both calls) 631 ->
    # 512 and 566 -> 454, seconds 13.2 -> 9.9 and 11.2 -> 9.8 (benchmarks/results/ultrag_relation_examples.json);
    # one question lower, so not the default (#26: no KG lower)
    relation_examples: Literal["auto", "both", "forward"] = "both"
    # how the query writer's list, examples and grammar name a relation: "short", by the last segments of a
    # dotted id that keep it apart from the KG's other relations (education.educational_institution.
    # students_graduates -> students_graduates; read back to the KG's id before the query runs), or "full", by
    # the KG's id. Relations without dots (MetaQA, CSVs) read the same either way (ultrag/dsl/aliases.py).
    # WebQSP proxy, dev, fresh, paired: evaluated prompt tokens (median, both calls) 579 -> 418 on questions
    # 301-400 (699.5 -> 536.5 on 201-300), but Hit@1 0.67 -> 0.66 (+2 / -3) there and 0.70 -> 0.70 (+4 / -4)
    # on 201-300, a third of the answers reshuffled: not the default (#26: no KG lower;
    # benchmarks/results/ultrag_relation_names.json). With relation_examples="auto" too, questions 1-100: 566.5
    # -> 302 tokens, Hit@1 0.68 -> 0.67 (+5 / -6; benchmarks/results/ultrag_short_forward.json)
    relation_names: Literal["short", "full"] = "full"
    # when no usable query: the method that answers instead (its retrieval and its own answer call, with its
    # defaults), or "none": the model answers alone. Its own answer call rather than this method's prompt over
    # its facts: dev, the same replies otherwise, user-style KGs +2 / -0, MetaQA +0 / -0, WebQSP proxy +1 / -3
    # (benchmarks/results/ultrag_fallback.json)
    fallback: MethodSetting = "frag"
    # set aside a chain query frag's zero-shot scorer puts > answer_margin below its best pattern (ultrag/verify.py;
    # paired +3 / -0 over 190 dev q); verify_shorter: also one whose relations are some of frag's best pattern's,
    # which goes further (university +2 / -0, WebQSP proxy +1 / -1, elsewhere none: ultrag_verify_shorter.json)
    verify_query: bool = True
    verify_shorter: bool = True
