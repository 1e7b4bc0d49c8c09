"""BYOKG-RAG (papers/byokg-rag.txt): an LLM writes graph artifacts, graph tools link and execute them.

One *KG-Linker* call reads the question, the KG schema and the graph context found so far and writes
entities, relation paths, an openCypher query and draft answers (any part may be missing).  Then every
strategy that is switched on gathers evidence from those artifacts:

- entity linking of the entities and draft answers (top ``link_top_m``, exact + fuzzy + embedding);
- path retrieval: the written relation paths followed from the linked entities (every orientation tried,
  since small models reverse hops), plus shortest paths from the question entities to linked draft answers;
- graph-query retrieval: the query, guarded and read-only, on the KG's Cypher backend (skipped without one);
- triplet retrieval: agentic (Algorithm 1: relation then entity selection, ``agentic_rounds`` rounds or
  FINISH), the graph reranker (appendix A.2) and text-based scoring of the whole KG (appendix A.1).

The context is fed back to KG-Linker for up to ``iterations`` rounds (T_R); a round ends the loop early when
its draft answers are already in the evidence (self-termination; a later round checks its KG-Linker drafts
against the context before retrieving again), when KG-Linker says FINISH, or when it writes nothing new.
One final call answers from the gathered context.  ``byokg`` runs every strategy; ``byokg-agentic`` and
``byokg-scoring`` are the paper's two reported configurations.  Every strategy is a config switch
(``--set paths=false``), so the paper's ablations can be rerun.

Without an LLM, :meth:`BYOKG.retrieve` runs the LLM-free strategies only (linking of the question's mentions,
graph reranker, text-based scoring): the scoring variant's retrieval.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from kgrag.errors import LLMError
from kgrag.graph.algorithms.results import Paths
from kgrag.graph.algorithms.shortest_paths import shortest_paths
from kgrag.linking.hybrid import HybridLinker
from kgrag.methods.answer_call import ask_for_answers, evidence_entities
from kgrag.methods.base import Method, Trace, registry, use_grammar
from kgrag.methods.byokg.agentic import agentic_traversal
from kgrag.methods.byokg.artifacts import Artifacts, linker_grammar
from kgrag.methods.byokg.config import BYOKGAgenticConfig, BYOKGConfig, BYOKGScoringConfig
from kgrag.methods.byokg.context import Context, drafts_that_stand, numbered
from kgrag.methods.byokg.entity_links import link_names
from kgrag.methods.byokg.graph_query import GraphQuery
from kgrag.methods.byokg.relation_paths import follow_written_paths, relations_named
from kgrag.methods.byokg.schema import example_names, relation_schema, select_relations
from kgrag.methods.byokg.triple_scoring import best_triples, graph_rerank, text_retrieval
from kgrag.models.embeddings import Embedder, dot_scores, load_embedder
from kgrag.prompts.gbnf import choice_grammar
from kgrag.prompts.tags import split_items
from kgrag.retrieval.evidence_tree import TREE_LAYOUT
from kgrag.retrieval.paths import paths_as_evidence, rank_paths
from kgrag.retrieval.topics import resolve_topics
from kgrag.retrieval.triples import kg_vectors, triples_as_evidence
from kgrag.types import Evidence


def _schema_note(examples: int, relations: int) -> str:
    """How the relation list's header describes its examples. When every listed relation has one the words are
    those from before ``schema_examples``, so a small KG's prompts, and the replies cached for them, stay."""
    if examples == relations:
        return "with one example each"
    return "the likeliest with examples" if examples else "without examples"


@registry.register("byokg")
class BYOKG(GraphQuery, Method):
    """BYOKG-RAG with every retrieval strategy on (see the module docstring)."""

    name = "byokg"
    Config = BYOKGConfig
    config: BYOKGConfig

    # ------------------------------------------------------------------ shared tools, built on first use
    @cached_property
    def linker(self) -> HybridLinker:
        return HybridLinker(self.kg, use_embedding=self.config.link_embedding, m=self.config.link_top_m)

    @cached_property
    def prefilter(self) -> Embedder:
        return load_embedder(self.config.prefilter_embedder)

    @cached_property
    def reranker(self) -> Any:
        from kgrag.models.rerankers import load_reranker  # the module is light; a model loads only when named

        return load_reranker(self.config.reranker) if self.config.reranker else None

    # ------------------------------------------------------------------ public API
    def retrieve(self, question: str, topic_entities: Sequence[str] | None = None) -> list[Evidence]:
        """With an LLM: the full iterative retrieval without the final answer call. Without: LLM-free scoring."""
        topics = list(topic_entities or [])
        if self.llm is not None:
            try:
                return self._gather(question, topics, Trace())[0].ordered()
            except LLMError:
                pass
        return self._scoring_only(question, topics, Trace())

    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        cfg = self.config
        context, drafts = self._gather(question, topic_entities, trace)
        if stood := drafts_that_stand(trace.steps) if cfg.answer_supported_drafts else []:
            with trace.step("answer", skipped="KG-Linker's draft answers stand on the evidence") as step:
                step.outputs["answers"] = stood
            return stood, context.ordered()
        shown = context.shown(cfg.context_items, reached_only=cfg.answer_reached_only)
        with trace.step("answer", context_items=len(shown)) as step:
            answers = ask_for_answers(
                self,
                "byokg_answer",
                question=question,
                context=numbered(shown)
                if cfg.evidence_format == "lines"
                else context.tree_text(self.kg, shown, question if cfg.tree_roots == "named" else None),
                layout=TREE_LAYOUT if cfg.evidence_format == "tree" else "",
                evidence_names=evidence_entities(shown),
                exclude=topic_entities,
            )
            if not answers:  # fall back to KG-Linker's drafts, those the evidence supports first
                supported = set(context.supported(drafts))
                answers = sorted(drafts, key=lambda a: a not in supported)
                step.outputs["fallback"] = "draft answers"
            step.outputs["answers"] = answers
        evidence = context.ordered()
        if cfg.link_answers:
            given = [e for e in map(self.kg.find_entity, context.given) if e is not None]
            evidence += self._link_answers(question, answers, evidence, given, trace)
        return answers, evidence

    # ------------------------------------------------------------------ the iterative process
    def _gather(self, question: str, topics: list[str], trace: Trace) -> tuple[Context, list[str]]:
        cfg = self.config
        context = Context()
        given = self._given_topics(question, topics, trace)
        context.given = [self.kg.entities[e] for e in given]
        seen_entities: set[int] = set()
        seen_artifacts: set[str] = set()
        drafts: list[str] = []
        primed = cfg.linker_primed or cfg.agent_first
        if primed:
            self._prime(question, given, context, trace)
        rounds = 1 if cfg.agent_first else max(cfg.iterations, 1)
        for round_no in range(1, rounds + 1):
            art = self._kg_linker(question, context, given, round_no, trace)
            if art.answers:
                drafts = art.answers
            new = {f"e:{x}" for x in art.entities} | {f"p:{x}" for x in art.paths} | {f"q:{art.query}"}
            if round_no > 1 or cfg.agent_first:  # KG-Linker has seen the context: stop when done or drafts stand
                supported = context.supported(art.answers) if cfg.self_terminate else []
                reason = ""
                if art.finish:
                    reason = "KG-Linker said FINISH"
                elif not (new - seen_artifacts):
                    reason = "KG-Linker wrote nothing new"
                elif supported:
                    reason = "draft answers are in the evidence"
                if reason:
                    with trace.step("self_terminate", round=round_no) as step:
                        step.outputs.update(reason=reason, supported=supported)
                    break
            seen_artifacts |= new
            entities, answers = self._link(question, art, given, context, round_no, trace)
            fresh = [e for e in entities if e not in seen_entities]
            context.anchors.extend(self.kg.entities[e] for e in fresh)
            seen_entities.update(entities)
            if cfg.paths and art.paths:
                self._follow_paths(question, art.paths, entities, context, trace)
            if cfg.shortest_paths and answers:
                self._shortest_paths(question, entities, answers, context, trace)
            if cfg.cypher and round_no == 1 and self.query_writer is not None:
                context.add(self.query_writer.query_rows(question, trace), first=True)
            elif cfg.cypher and art.query:
                self._graph_query(art.query, context, trace)
            seeds = list(dict.fromkeys(fresh + answers))
            if cfg.agentic and seeds and not cfg.agent_first:
                self._agentic(question, seeds, context, trace)
            if cfg.graph_reranker and seeds:
                self._graph_reranker(question, seeds, context, trace)
            if cfg.text_retrieval and round_no == 1 and not primed:  # depends on the question only
                self._text_retrieval(question, context, trace)
            if cfg.self_terminate and round_no < cfg.iterations:
                supported = context.supported(art.answers)
                if supported:
                    with trace.step("self_terminate", round=round_no) as step:
                        step.outputs.update(reason="draft answers are in the evidence", supported=supported)
                    break
        return context, drafts

    def _prime(self, question: str, given: list[int], context: Context, trace: Trace) -> None:
        """The first KG-Linker round's context (``linker_primed``, ``agent_first``): the LLM-free strategies and,
        with ``agent_first``, the agent's choice, from the given topics, else from the question's mentions, which
        become the context's anchors."""
        seeds = given or self._link_topics(question, [], trace, linker=self.linker, step="prime")
        context.anchors.extend(self.kg.entities[e] for e in seeds)
        if self.config.agent_first and self.config.agentic and seeds:
            self._agentic(question, seeds, context, trace)
        if self.config.graph_reranker and seeds:
            self._graph_reranker(question, seeds, context, trace)
        if self.config.text_retrieval:
            self._text_retrieval(question, context, trace)

    def _no_entity_found(self, topic_entities: Sequence[str] | None, trace: Trace) -> bool:
        """No entity given, and none linked (``question_entities``) in any round from KG-Linker's names or the
        question's mentions: an answer without support is then withheld (:meth:`Method.answer`)."""
        rounds = [s.outputs.get("question_entities") for s in trace.steps if s.name == "link"]
        return not topic_entities and bool(rounds) and not any(rounds)

    def _given_topics(self, question: str, topics: list[str], trace: Trace) -> list[int]:
        if not topics:
            return []
        return self._link_topics(question, topics, trace, linker=self.linker, step="topics")

    def _kg_linker(self, question: str, context: Context, seeds: list[int], round_no: int, trace: Trace) -> Artifacts:
        cfg = self.config
        with trace.step("kg_linker", round=round_no) as step:
            if not seeds:
                seeds = [c.entity for span in self.linker.find_mentions(question)[:2] for c in span.candidates[:1]]
            rels, exemplified = select_relations(
                self.kg,
                question,
                seeds,
                max_relations=cfg.schema_relations,
                max_examples=cfg.schema_examples,
                embedder=self.prefilter,
            )
            task, fmt = self.query_prompt_parts
            grammar = [self.kg.relations[r] for r in rels] if use_grammar(cfg.grammar, self.llm) else None
            text, _ = self.call_prompt(
                "byokg_linker",
                grammar=None if grammar is None else linker_grammar(grammar, query=bool(task)),
                schema=relation_schema(self.kg, rels, exemplified),
                schema_note=_schema_note(len(exemplified), len(rels)),
                context=self._linker_context(context),
                question=question,
                query_task=task,
                query_format=fmt,
            )
            art = Artifacts(text)
            dropped = art.drop_copied_examples(example_names(self.kg, exemplified), question, context)
            step.outputs.update(art.as_json())
            if dropped:
                step.outputs["dropped_schema_examples"] = dropped
            if cfg.cypher and self.backend is None:
                step.outputs["cypher_skipped"] = self.backend_problem
        return art

    def _linker_context(self, context: Context) -> str:
        """The context KG-Linker reads: numbered facts, or (``linker_context="tree"``) the answer call's paths from
        the question entities, each shared prefix once and relation names shortened."""
        if self.config.linker_context == "lines" or not context.items:
            return context.text(self.config.context_items)
        return context.tree_text(self.kg, context.shown(self.config.context_items))

    def _link(
        self, question: str, art: Artifacts, given: list[int], context: Context, round_no: int, trace: Trace
    ) -> tuple[list[int], list[int]]:
        """(question entities E, draft-answer entities A) as entity ids."""
        cfg = self.config
        with trace.step("link", entities=art.entities, answers=art.answers) as step:
            entities = list(given)
            links: dict[str, list[str]] = {}
            known = [self.kg.entities[e] for e in given]
            found = link_names(
                self.linker, question, art.entities, known, top_m=cfg.link_top_m, min_score=cfg.entity_link_min_score
            )
            for name, cands in found.items():
                links[name] = [c.name for c in cands]
                entities.extend(c.entity for c in cands)
            if not entities and round_no == 1:  # KG-Linker found none: the question's own mentions
                entities = resolve_topics(self.kg, question, (), linker=self.linker)
                step.outputs["fallback"] = "question mentions"
            answers: list[int] = []
            for name in art.answers:
                cands = [c for c in self.linker.link(name, cfg.link_top_m) if c.score >= cfg.answer_link_min_score]
                links[name] = [c.name for c in cands]
                answers.extend(c.entity for c in cands)
            entities = list(dict.fromkeys(entities))
            answers = [a for a in dict.fromkeys(answers) if a not in entities]
            step.outputs.update(
                links=links,
                question_entities=[self.kg.entities[e] for e in entities],
                answer_entities=[self.kg.entities[e] for e in answers],
            )
        return entities, answers

    # ------------------------------------------------------------------ strategies
    def _follow_paths(
        self, question: str, texts: list[str], sources: list[int], context: Context, trace: Trace
    ) -> None:
        cfg = self.config
        with trace.step("paths", paths=texts) as step:

            def named() -> set[int]:  # only when a path needs a return hop: it embeds the question's words
                names = [self.kg.entities[e] for e in sources]
                found = relations_named(
                    self.kg, question, self.text_embedder, exclude=names, min_similarity=cfg.path_bridge_min_similarity
                )
                step.outputs["named_relations"] = sorted(self.kg.relations[r] for r in found)
                return found

            followed = follow_written_paths(
                self.kg,
                sources,
                texts,
                max_paths=cfg.max_paths,
                try_orientations=cfg.path_orientations,
                embedder=self.prefilter if cfg.path_soft_match else None,
                min_similarity=cfg.path_min_similarity,
                bridge=named if cfg.path_bridge else None,
            )
            step.outputs["followed"] = [f.as_json(self.kg) for f in followed]
            found = Paths.concat([f.paths for f in followed])
            best, scores = rank_paths(self.kg, question, found, embedder=self.text_embedder, top_k=cfg.path_top_k)
            step.outputs["added"] = context.add(paths_as_evidence(self.kg, best, scores, source="path"))

    def _shortest_paths(
        self, question: str, sources: list[int], targets: list[int], context: Context, trace: Trace
    ) -> None:
        cfg = self.config
        with trace.step("shortest_paths", targets=[self.kg.entities[t] for t in targets]) as step:
            if not sources:
                step.outputs["added"] = 0
                return
            found = shortest_paths(
                self.kg, sources, targets, max_length=cfg.shortest_max_length, max_paths=200, max_paths_per_target=5
            )
            best, scores = rank_paths(
                self.kg, question, found, embedder=self.text_embedder, top_k=cfg.shortest_top_k, distinct=False
            )
            step.outputs["found"] = len(found)
            step.outputs["added"] = context.add(paths_as_evidence(self.kg, best, scores, source="shortest_path"))

    def _agentic(self, question: str, seeds: list[int], context: Context, trace: Trace) -> None:
        cfg = self.config
        grammars = use_grammar(cfg.grammar, self.llm)
        vecs = kg_vectors(self.kg, self.text_embedder)

        def select_relations_(q: str, entities: list[str], relations: list[str]) -> list[str]:
            grammar = choice_grammar(relations, tag="selected", max_items=5) if grammars else None
            text, parsed = self.call_prompt(
                "byokg_select_relations",
                grammar=grammar,
                question=q,
                entities=", ".join(entities),
                relations="\n".join(relations),
            )
            picked = split_items(parsed.get("selected"))
            return picked or ([] if "<" in text else split_items(text))

        def select_entities(q: str, lines: str) -> list[str]:
            text, parsed = self.call_prompt("byokg_select_entities", question=q, context=lines)
            names = split_items(parsed.get("next_entities"))
            if not names and "FINISH" in text.upper():
                return ["FINISH"]
            return names

        def rank(q: str, tids: np.ndarray, k: int) -> np.ndarray:
            return best_triples(
                self.kg,
                q,
                tids,
                top_k=k,
                embedder=self.text_embedder,
                prefilter=self.prefilter,
                max_candidates=cfg.max_candidates,
            )[0]

        def score_relations(q: str, rels: np.ndarray) -> np.ndarray:
            return dot_scores(vecs.relations()[rels], self.text_embedder.encode([q])[0])

        def link(name: str) -> int | None:
            cands = self.linker.link(name, 1)
            return cands[0].entity if cands else None

        with trace.step("agentic", seeds=[self.kg.entities[s] for s in seeds]) as step:
            result = agentic_traversal(
                self.kg,
                question,
                seeds,
                select_relations=select_relations_,
                select_entities=select_entities,
                rank_triples=rank,
                score_relations=score_relations,
                link=link,
                rounds=cfg.agentic_rounds,
                max_relations=cfg.agentic_max_relations,
                max_triples=cfg.agentic_max_triples,
            )
            step.outputs.update(rounds=result.rounds, finished=result.finished)
            step.outputs["added"] = context.add(triples_as_evidence(self.kg, result.tids, source="agentic"))

    def _graph_reranker(self, question: str, seeds: list[int], context: Context, trace: Trace) -> None:
        cfg = self.config
        with trace.step("graph_reranker", seeds=[self.kg.entities[s] for s in seeds]) as step:
            result = graph_rerank(
                self.kg,
                question,
                seeds,
                embedder=self.text_embedder,
                prefilter=self.prefilter,
                hops=cfg.rerank_hops,
                k_r=cfg.rerank_relations,
                k_t=cfg.rerank_triples,
                top_k=cfg.rerank_top_k,
                reranker=self.reranker,
                max_candidates=cfg.max_candidates,
                facts=cfg.rerank_whole_facts,
            )
            step.outputs.update(result.stats)
            step.outputs["added"] = context.add(
                triples_as_evidence(self.kg, result.tids, result.scores, source="reranker")
            )

    def _text_retrieval(self, question: str, context: Context, trace: Trace) -> None:
        with trace.step("text_retrieval", top_k=self.config.text_top_k) as step:
            tids, scores = text_retrieval(self.kg, question, embedder=self.text_embedder, top_k=self.config.text_top_k)
            step.outputs["added"] = context.add(triples_as_evidence(self.kg, tids, scores, source="text"))

    def _scoring_only(self, question: str, topics: list[str], trace: Trace) -> list[Evidence]:
        """LLM-free retrieval: question mentions (or given topics) → graph reranker + text-based scoring.

        The graph reranker also stands in for the agent here (the paper's scoring substitution)."""
        cfg = self.config
        context = Context()
        seeds = self._link_topics(question, topics, trace, linker=self.linker)
        if (cfg.graph_reranker or cfg.agentic or not cfg.text_retrieval) and seeds:
            self._graph_reranker(question, seeds, context, trace)
        if cfg.text_retrieval:
            self._text_retrieval(question, context, trace)
        return context.ordered()


@registry.register("byokg-agentic")
class BYOKGAgentic(BYOKG):
    """The paper's main configuration: agentic triplet retrieval plus top-10 text-based retrieval."""

    name = "byokg-agentic"
    Config = BYOKGAgenticConfig


@registry.register("byokg-scoring")
class BYOKGScoring(BYOKG):
    """The paper's cheaper configuration: graph reranker + text-based scoring instead of the agent."""

    name = "byokg-scoring"
    Config = BYOKGScoringConfig


__all__ = ["BYOKG", "BYOKGAgentic", "BYOKGConfig", "BYOKGScoring"]
