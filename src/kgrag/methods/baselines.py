"""Baselines: ``llm`` (question only, no KG), ``kaping`` (top-K retrieved triples, one call), ``noop``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Annotated, Literal

from kgrag.methods.answer_call import answer_from_facts, ask_for_answers
from kgrag.methods.base import GrammarSetting, Method, MethodConfig, Trace, registry, use_grammar
from kgrag.methods.settings import ClientRange, HostSetting, ModelSetting
from kgrag.retrieval.graph_query import first_column_answers, rows_as_evidence, run_recorded
from kgrag.retrieval.triples import (
    connected_top,
    rank_triples,
    triples_as_evidence,
    whole_facts,
    within_hubs,
)
from kgrag.types import Evidence


class LLMOnlyConfig(MethodConfig):
    pass


@registry.register("llm")
class LLMOnly(Method):
    """The no-KG baseline: what the model knows by itself."""

    name = "llm"
    Config = LLMOnlyConfig
    reads_kg = False

    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        with trace.step("answer", question=question) as step:
            answers = ask_for_answers(self, "llm_answer", question=question)
            step.outputs["answers"] = answers
        return answers, []


@registry.register("noop")
class NoOp(Method):
    """Retrieves and answers nothing: measures the evaluation harness's own overhead."""

    name = "noop"
    needs_llm = False

    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        return [], []


class KapingConfig(MethodConfig):
    hops: Annotated[int, ClientRange(1, 3)] = 2
    top_k: Annotated[int, ClientRange(1, 100)] = 60
    # a triple brings its siblings and the halves of a fact behind an unnamed node (retrieval.triples.whole_facts);
    # False is the paper's plain top-K
    whole_facts: bool = True
    max_candidates: Annotated[int, ClientRange(1, 5000)] = 2000
    # facts kept past each hub that is not a topic entity, the best-ranked first (retrieval.triples.within_hubs):
    # past the topic film's release year "1995" lie every film of that year's facts, twenty of which were a third
    # of a 1-hop question's facts; None walks on through hubs as the paper's k-hop neighbourhood does. Retrieval only
    # (share of gold answers in the facts, mean facts), None -> 1: MetaQA seeded 100 per hop 1.00 / 0.91 / 0.127
    # -> 1.00 / 0.917 / 0.117 at 46 / 26 / 54 -> 32 / 24 / 36 facts, renamed MetaQA 1.00 / 0.972 / 0.127 -> 1.00 /
    # 0.970 / 0.117, WebQSP proxy all 784 0.814 -> 0.816 at 42 -> 31 facts, the Freebase sample's demo question
    # kept (0 with no fact past a hub: its second hop lies past New Orleans), seven small user KGs unchanged.
    # End to end, default local model, paired: MetaQA seed 21 0.87 / 0.82 / 0.40 -> 0.88 / 0.83 / 0.46 (+11 / -3),
    # WebQSP proxy 1-400 0.708 -> 0.698 (+7 / -11, the same gold answers in every changed question's facts) at
    # 444 -> 317 evaluated prompt tokens (first 100; MetaQA 687 / 206 / 706 -> 397.5 / 202.5 / 467.5)
    past_hub_facts: Annotated[int | None, ClientRange(0, 2000)] = 1
    # a triple's rank adds this much of the question's similarity to its relation name (retrieval.triples.
    # rank_triples); 0 is the paper's ranking. Retrieval only, dev (MetaQA 300 per hop, WebQSP proxy all 784):
    # 0.999 / 0.879 / 0.121 and 0.814 with 0, 0.999 / 0.899 / 0.121 and 0.814 with 0.3, 0.904 and 0.805 (300 q)
    # with 0.5; the Freebase sample's demo question needs both hops and gets its second from 0.3 on (not at 0.25)
    relation_weight: Annotated[float, ClientRange(0, 2)] = 0.3
    # how the answer call reads the facts: "grouped" writes those that share subject and relation on one line
    # ("Jamaica languages spoken A; B; C"), "lines" one fact a line, "tree" the facts re-read as paths from the
    # topic entities, each shared prefix once (retrieval/evidence_tree.py). Grouped against lines, dev, default
    # local model: WebQSP proxy first 100 Hit@1 0.69 either way (+2 / -2), 664 -> 444 evaluated prompt tokens
    # (median); MetaQA first 30 per hop 0.97 / 0.63 / 0.63 -> 1.00 / 0.67 / 0.63 (+2 / -0) at 272 / 355 / 772 ->
    # 190 / 280 / 738; university / family / catalogue 0.73 / 0.93 / 0.73 -> 0.73 / 0.87 / 0.87. The tree against
    # grouped: WebQSP proxy first 100 0.69 -> 0.67 (+4 / -6), university / family / catalogue 0.73 / 0.87 / 0.87
    # -> 0.80 / 0.80 / 0.80 (+2 / -3), at more prompt tokens (benchmarks/results/byokg_evidence_tree.json).
    # "grouped_by_object" also writes lone facts sharing relation and object once ("A; B; C nationality USA"):
    # evaluated prompt tokens WebQSP proxy 444 -> 374, MetaQA 3-hop 754 -> 386, but Hit@1, paired, WebQSP first
    # 100 0.69 -> 0.68 (+2 / -3), MetaQA first 50 per hop 1.00 / 0.70 / 0.54 -> 0.98 / 0.68 / 0.54: the model
    # takes a line of subjects for the answer (benchmarks/results/kaping_grouped_by_object.json)
    evidence_format: Literal["grouped", "grouped_by_object", "lines", "tree"] = "grouped"
    # the answer call may only name entities the facts show, under a grammar (as FRAG's does), so every answer
    # stands on the evidence; "auto": where the model enforces grammars (local llama.cpp models). Off by default:
    # the model can then no longer answer from its own knowledge where the facts are silent, which KAPING allows.
    # Dev, default local model, paired: WebQSP proxy first 100 Hit@1 0.69 -> 0.68 (+3 / -4), right answers with
    # support 0.855 -> 0.985; university / family / catalogue 0.73 / 0.87 / 0.87 -> 0.73 / 0.87 / 0.73
    choose_answers: GrammarSetting = "off"
    # the model lists what the facts say in their order, so a film one hop from the topic can come before the
    # language three hops away that a 3-hop question asks for: its answers are put in the order of how well the
    # relation path to each reads as the question (methods/pattern_fit.py), after support. Dev, default local
    # model, the same replies re-read, paired: MetaQA seeded 30 per hop 0.90 / 0.60 / 0.33 -> 0.97 / 0.67 / 0.37
    # (+5 / -0), WebQSP proxy first 100 0.69 -> 0.70 (+1 / -0), university / family / catalogue 0.73 / 0.87 /
    # 0.87 -> 0.87 / 0.87 / 0.87 (+2 / -0), software / pharmacy unchanged (benchmarks/results/fit_first.json)
    fit_first: bool = True
    # the "grouped" facts of an unnamed intermediate node (a Freebase CVT such as a yearly GDP record) written as
    # one fact through it, "Germany gdp nominal · currency United States Dollar", the same line once however many
    # nodes say it (retrieval.triples.facts_text); KGs without unnamed nodes read the same prompt either way. Dev,
    # default local model, paired: WebQSP proxy questions 1-300 Hit@1 0.730 -> 0.717 (+5 / -9), right answers
    # grounded 0.927 -> 0.939, evaluated prompt tokens (first 100, fresh) 444 -> 385 (median); with the intro saying
    # what "·" is, +9 / -10 (two of the three hundreds lower); not the default (results/kaping_fold_unnamed.json)
    fold_unnamed: bool = False
    # the ``top_k`` facts that join up with the topic entities (retrieval.triples.connected_top: grown from them,
    # each next fact the best-ranked one touching what the facts so far reach, hubs not walked through) instead
    # of the ``top_k`` best of every candidate and their whole facts; with ``hops=3`` a 3-hop question's chain can
    # be read at all. Off: with hops=3, dev, paired, MetaQA seeded 30 per hop 0.90 / 0.87 / 0.40 -> 0.90 / 0.83 /
    # 0.53 (+6 / -3) but F1 0.57 -> 0.52, WebQSP proxy 201-230 0.77 -> 0.67 (+0 / -3; results/kaping_joined.json)
    joined: bool = False
    # where the facts support none of the answers, an answer that one KG fact joins to an entity they join to the
    # topics (not to or through a hub) gets that fact as its support (source "kaping/link"; methods/support.
    # answer_links), as decompose's link_answers: a 2- or 3-hop answer the model named from facts a hop short is
    # checked against the KG instead of standing on its word. No LLM call; dev, default local model, the same
    # replies: right answers grounded MetaQA (seeded 30 per hop) 0.917 -> 0.983, renamed MetaQA 0.953 -> 0.984,
    # catalogue 0.92 -> 1.00, F1 +6 / -0 questions, Hit@1 the same on all 461 questions of eight KGs
    # (benchmarks/results/kaping_link_answers.json)
    link_answers: bool = True
    embedder: ModelSetting = "minilm"


@registry.register("kaping")
class Kaping(Method):
    """LLM + KG baseline: the top-K verbalised triples within N hops of the topic entities, one answer call."""

    name = "kaping"
    Config = KapingConfig
    config: KapingConfig

    def _retrieve(
        self, question: str, topic_entities: Sequence[str], trace: Trace | None
    ) -> tuple[list[int], list[Evidence]]:
        """Topic ids and the top-K verbalised triples."""
        trace = trace or Trace()
        topics = self._link_topics(question, topic_entities, trace)
        cfg = self.config
        tids = self._candidate_triples(question, topics, trace, hops=cfg.hops, cap=cfg.max_candidates)
        with trace.step("rank", top_k=cfg.top_k) as step:
            limit = cfg.past_hub_facts is not None
            depth = len(tids) if cfg.whole_facts or cfg.joined or limit else cfg.top_k
            best, scores = rank_triples(
                self.kg, question, tids, embedder=self.text_embedder, top_k=depth, relation_weight=cfg.relation_weight
            )
            if limit:
                keep = within_hubs(self.kg, best, topics, cfg.hops, cfg.past_hub_facts)
                step.outputs["past_hubs"] = len(best) - len(keep)
                best, scores = best[keep], scores[keep]
                if not (cfg.whole_facts or cfg.joined):
                    best, scores = best[: cfg.top_k], scores[: cfg.top_k]
            if cfg.joined and topics:
                keep = connected_top(self.kg, best, scores, topics, cfg.top_k)
                best, scores = best[keep], scores[keep]
            elif cfg.whole_facts:
                keep = whole_facts(self.kg, best, topics, cfg.top_k)
                best, scores = best[keep], scores[keep]
            evidence = triples_as_evidence(self.kg, best, scores, source="kaping")
            step.outputs["kept"] = len(evidence)
        return topics, evidence

    def retrieve(self, question: str, topic_entities: Sequence[str] | None = None) -> list[Evidence]:
        return self._retrieve(question, list(topic_entities or []), None)[1]

    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        topics, evidence = self._retrieve(question, topic_entities, trace)
        if self._skip_answer_call(topic_entities, trace):
            return [], evidence
        with trace.step("answer") as step:
            exclude = [self.kg.entities[t] for t in topics]
            cfg = self.config
            answers = answer_from_facts(
                self,
                "kaping_answer",
                question,
                evidence,
                exclude,
                layout=cfg.evidence_format,
                fold_unnamed=cfg.fold_unnamed,
                anchors=topics,
                choose=use_grammar(cfg.choose_answers, self.llm),
            )
            step.outputs["answers"] = answers
        if cfg.link_answers:
            evidence = [*evidence, *self._link_answers(question, answers, evidence, topics, trace)]
        return answers, evidence


class CypherConfig(MethodConfig):
    backend: HostSetting = "ladybug"
    row_cap: Annotated[int, ClientRange(1, 200)] = 50
    timeout: Annotated[float, ClientRange(0.1, 30)] = 10.0


@registry.register("cypher")
class TextToCypher(Method):
    """Text2Cypher baseline: the LLM writes one Cypher query; guarded, read-only execution; rows are answers."""

    name = "cypher"
    Config = CypherConfig
    config: CypherConfig

    @cached_property
    def backend(self):
        from kgrag.graph.backends import open_cypher_backend

        return open_cypher_backend(self.kg, self.config.backend)

    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        with trace.step("write_cypher") as step:
            _, parsed = self.call_prompt("text2cypher", schema=self.backend.schema(), question=question)
            query = (parsed.get("cypher") or "").strip()
            step.outputs["cypher"] = query
        if not query:
            return [], []
        with trace.step("execute", cypher=query) as step:
            cfg = self.config
            result = run_recorded(self.backend, query, step.outputs, row_cap=cfg.row_cap, timeout=cfg.timeout)
        if not result.ok:
            return [], []
        answers = first_column_answers(result.rows)
        evidence = rows_as_evidence(result.columns, result.rows)
        return answers, evidence
