"""ULTRAG (Georgiev et al.): the LLM writes a logical query, an executor runs it, the LLM arbitrates.

1. Query writer (LLM call 1): question + the KG's relations → one query in the DSL of
   :mod:`kgrag.methods.ultrag.dsl` (``AND("e1" -> r1_inv, "e2" -> r2) -> r3``).  When every relation fits the
   LLM's context window, the relation list, rules and examples sit in the system message and depend only on
   the KG, so every question reuses the same prompt prefix (``ultrag_query``, the paper's prompt).  Else
   (``ultrag_query_focused``) rules and examples stay in the system message and the relations most relevant
   to the question that fit follow in the user message (:mod:`kgrag.methods.ultrag.relation_list`; not in
   the paper, whose GPT-5 prompt lists them all).  With a llama.cpp model the output is constrained by a GBNF
   grammar over the relations shown.  A query that does not parse or validate is sent back once with the error; if
   it is still unusable (or runs empty) another method answers instead, whole (``frag`` when registered,
   else ``kaping``), built with its defaults only; so it does when frag's zero-shot scorer puts a chain query's
   relations well below its own reading of the question (``verify_query``, :mod:`.verify`; not in the paper).
2. Leaves are linked to fuzzy sets (exact names crisp, others by the Gaussian kernel, σ = 0.1).  Not in the
   paper: a projection that reaches nothing in the KG while its inverse does is flipped (small models often
   get a relation's direction wrong; :mod:`kgrag.methods.ultrag.dsl.repair`).
3. SEPPR (α = 0.85, T = 5) seeded by the linked leaves keeps the top k entities (the paper's 30,000 for the
   symbolic executor; 5,000 for the neural one, measured better and faster on MetaQA).
4. An executor scores every entity of that subgraph: ``symbolic`` (fuzzy sets, max-product projection,
   product AND) or ``neural`` (ULTRAQUERY in plain torch, extra ``[neural]``).
5. Arbitrator (LLM call 2): the top-50 entities with their probabilities → final answers.  An unnamed node
   among them (a Freebase CVT such as ``m.0abc12``) is replaced by the named entities next to it, shown with
   the relation that links them (:mod:`kgrag.methods.ultrag.dsl.unnamed`).
   The decider always stops after one round, as in the paper's ULTRAG-OTS.

``retrieve`` cannot write a query without an LLM: it runs the query given with ``--set query=...`` and
returns the supporting triples of the best answers, and returns nothing when no query is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, cached_property
from typing import Any

import numpy as np

from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.hybrid import HybridLinker
from kgrag.methods.answer_call import answer_from_facts, ask_for_answers
from kgrag.methods.base import Method, Trace, registry, use_grammar
from kgrag.methods.ultrag.config import UltragConfig
from kgrag.methods.ultrag.dsl import (
    Execution,
    ExecutionError,
    FuzzyExecutor,
    Query,
    executors,
    extract_query,
    feedback,
    format_query,
    leaves,
    parse_and_validate,
    query_grammar,
    supporting_triples,
)
from kgrag.methods.ultrag.dsl.anchors import link_leaves, seed_distribution, seppr_subgraph
from kgrag.methods.ultrag.dsl.printer import format_entity
from kgrag.methods.ultrag.dsl.prompting import query_examples, relation_line
from kgrag.methods.ultrag.dsl.repair import repair_directions
from kgrag.methods.ultrag.dsl.unnamed import Candidate, named_candidates
from kgrag.methods.ultrag.relation_list import (
    Neighbourhood,
    longest_fitting,
    neighbourhood,
    rank_relations,
    relation_relevance,
    shown_order,
)
from kgrag.methods.ultrag.verify import found_anything_new, misread
from kgrag.prompts import load_prompt
from kgrag.retrieval.topics import resolve_topics
from kgrag.retrieval.triples import kg_vectors, triples_as_evidence
from kgrag.types import Evidence

DEFAULT_TOP_NODES = {"symbolic": 30_000, "neural": 5_000}
UNKNOWN_CONTEXT_WINDOW = 8192
"""Context assumed for an LLM that does not report its own (OpenAI-compatible endpoints): what every current
hosted model holds; ``context_tokens`` raises it."""
MAX_CHARS_PER_TOKEN = 8
"""More characters than any tokenizer packs into one token of such text (Qwen, English names: ~4)."""
MAX_FEEDBACK_CHARS = 800
"""The retry's error message is cut here so that it cannot crowd the relation list out of the prompt."""


@registry.register("ultrag")
class Ultrag(Method):
    """ULTRAG-OTS: LLM query writer → soft linking → SEPPR → fuzzy-set executor → LLM arbitrator."""

    name = "ultrag"
    Config = UltragConfig
    config: UltragConfig

    # ------------------------------------------------------------------ shared, per-KG pieces
    @cached_property
    def linker(self) -> HybridLinker:
        return HybridLinker(self.kg)

    def _use_grammar(self) -> bool:
        return use_grammar(self.config.grammar, self.llm)

    @cached_property
    def _examples(self) -> str:
        """The query writer's examples: built from this KG's facts once, the same for every question."""
        return query_examples(self.kg, short=self._short)

    def context_window(self) -> int:
        """Tokens the query writer's prompt and reply may take together (see ``context_tokens``)."""
        known = getattr(self.llm, "context_window", None)
        wanted = self.config.context_tokens
        if known is None:
            return wanted or UNKNOWN_CONTEXT_WINDOW
        return min(known, wanted) if wanted else known

    @property
    def _short(self) -> bool:
        """Whether the query writer reads and writes relations by their aliases (``relation_names``)."""
        return self.config.relation_names == "short"

    def _both_ways(self, focused: bool) -> bool:
        """Whether each listed relation's example fact is read both ways (``relation_examples``) in the list
        chosen per question (``focused``) or in the whole list of the fixed system part."""
        mode = self.config.relation_examples
        return mode == "both" or (mode == "auto" and not focused)

    def _kg_lines(self, both_ways: bool) -> list[str]:
        """Each relation's line with the KG's example fact, built once per KG and way of reading."""
        return self.kg.resources.get(
            ("dsl_relation_lines", both_ways, self._short),
            lambda: [
                relation_line(self.kg, r, both_ways=both_ways, short=self._short) for r in range(self.kg.num_relations)
            ],
        )

    def question_view(self, question: str, topics: Sequence[int]) -> tuple[np.ndarray, dict[int, str], Neighbourhood]:
        """For a relation list chosen per question: relation ids, most relevant first (the neighbourhood's and
        the ``other_relations`` best others; :mod:`kgrag.methods.ultrag.relation_list`), and the relation
        lines whose example fact is one near the question's entities (``question_examples``).

        Without topic entities the question's linked mentions stand in for them: the neighbourhood is a
        ranking hint, so a wrong link costs little."""
        if not topics:
            topics = resolve_topics(self.kg, question, (), linker=self.linker)
        hood = neighbourhood(self.kg, topics)
        vectors = kg_vectors(self.kg, self.text_embedder).relations()
        question_vector = self.text_embedder.encode([question])[0]
        scores = relation_relevance(question_vector, vectors, hood)
        ranked = rank_relations(scores, hood, others=self.config.other_relations)
        lines: dict[int, str] = {}
        if self.config.question_examples:
            for rid in np.flatnonzero(hood.examples >= 0).tolist():
                example = int(hood.examples[rid])
                lines[rid] = relation_line(self.kg, rid, example, both_ways=self._both_ways(True), short=self._short)
        return ranked, lines, hood

    def relations_for(
        self,
        values: dict[str, str],
        view: Callable[[], tuple[np.ndarray, dict[int, str], Neighbourhood]],
    ) -> tuple[str, str, list[int], dict[str, int]]:
        """The query writer's prompt name and relation list: the list's text, its relation ids and the sizes
        that chose it. ``values`` fill the prompt's other placeholders.

        A list fits when the prompt, counted with the LLM's tokenizer, plus the reply's ``max_tokens`` stays
        within :meth:`context_window`. All relations in the KG's order, each with the KG's example fact, in
        ``ultrag_query``'s fixed system part, when they fit (``view`` is then never called: nothing is embedded
        and the prompt is the paper's, the same for every question). Else ``ultrag_query_focused``: the
        longest best-first prefix of the question's ranking that fits (at least one relation), with the
        question's example facts and the relations at the question's entities first, next to the question.
        """
        assert self.llm is not None
        llm = self.llm
        window = self.context_window()
        kg_lines = self._kg_lines(self._both_ways(False))

        def text(relations: list[int], lines: dict[int, str]) -> str:
            return "\n".join(lines.get(r, kg_lines[r]) for r in relations)

        def tokens(prompt_name: str, listed: str) -> int:
            prompt = load_prompt(prompt_name)
            return llm.count_prompt_tokens(prompt.render(relations=listed, **values)) + prompt.max_tokens

        total = self.kg.num_relations
        limit = min(total, self.config.max_relations or total)
        name, shown, lines = "ultrag_query", list(range(total)), {}
        # more than MAX_CHARS_PER_TOKEN characters per token of the window cannot fit: no need to count them
        fits = limit == total and sum(map(len, kg_lines)) <= MAX_CHARS_PER_TOKEN * window
        if not (fits and tokens(name, text(shown, lines)) <= window):
            name = "ultrag_query_focused"
            kg_lines = self._kg_lines(self._both_ways(True))  # what text() reads from here on
            ranked, lines, hood = view()
            best = ranked[: min(limit, self.config.focused_relations or limit)].tolist()
            count = longest_fitting(
                len(best), lambda k: tokens(name, text(shown_order(best[:k], hood), lines)) <= window
            )
            shown = shown_order(best[: max(1, count)], hood)
        listed = text(shown, lines)
        sizes = {"relations_shown": len(shown), "relations": total, "tokens": tokens(name, listed), "window": window}
        return name, listed, shown, sizes

    def make_executor(self, nodes: np.ndarray | None) -> FuzzyExecutor:
        if self.config.executor == "neural":
            import kgrag.methods.ultrag.neural  # noqa: F401 - registers the neural executor (needs torch)
        return executors.get(self.config.executor)(self.kg, nodes=nodes)

    # ------------------------------------------------------------------ steps
    def _write_query(self, question: str, topics: list[int], trace: Trace) -> Query | None:
        topic_line = ""
        if topics:
            topic_line = "Entities named in the question: " + ", ".join(
                format_entity(self.kg.entities[t]) for t in topics
            )
            topic_line += "\n"
        view = cache(lambda: self.question_view(question, topics))  # once per question, and only if needed
        note = ""
        with trace.step("write_query", grammar=self._use_grammar()) as step:
            attempts: list[dict[str, Any]] = []
            for attempt in range(self.config.retries + 1):
                values = {"examples": self._examples, "topics": topic_line, "question": question, "feedback": note}
                prompt, listed, shown, sizes = self.relations_for(values, view)
                grammar = query_grammar(self.kg, shown, short=self._short) if self._use_grammar() else None
                text, _ = self.call_prompt(prompt, grammar=grammar, relations=listed, **values)
                candidate = extract_query(text)
                check = parse_and_validate(candidate, self.kg)
                attempts.append(
                    {"output": text, "query": candidate, "errors": check.errors, "notes": check.notes}
                    | {"prompt": prompt, **sizes}
                )
                if check.ok:
                    assert check.query is not None
                    step.outputs.update({"query": format_query(check.query), "valid": True, "attempts": attempts})
                    return check.query
                note = feedback(candidate or text, check)[:MAX_FEEDBACK_CHARS] + "\n"
                if attempt == self.config.retries:
                    break
            step.outputs.update({"query": None, "valid": False, "attempts": attempts})
        return None

    def run_query(self, query: Query, trace: Trace) -> tuple[Query, Execution | None]:
        """Link the leaves, repair directions, cut the SEPPR subgraph, execute.

        Returns the query as executed and its execution (``None`` when no leaf links to any entity)."""
        cfg = self.config
        with trace.step("link", leaves=leaves(query)) as step:
            linked = link_leaves(self.kg, leaves(query), linker=self.linker, sigma=cfg.sigma, k=cfg.link_k)
            step.outputs["leaves"] = {
                m: {
                    "crisp": leaf.crisp,
                    "entities": {self.kg.entities[e]: round(w, 4) for e, w in _best(leaf.members, 5)},
                }
                for m, leaf in linked.items()
            }
        seeds = seed_distribution(linked)
        if not seeds:
            return query, None
        anchors = {m: leaf.members for m, leaf in linked.items()}
        if cfg.repair_directions:
            with trace.step("repair") as step:
                query, notes = repair_directions(self.kg, query, anchors)
                step.outputs.update({"query": format_query(query), "notes": notes})
        top_k = cfg.top_nodes or DEFAULT_TOP_NODES[cfg.executor]
        with trace.step("subgraph", alpha=cfg.alpha, iterations=cfg.ppr_iterations, top_k=top_k) as step:
            sub = seppr_subgraph(self.kg, seeds, alpha=cfg.alpha, iterations=cfg.ppr_iterations, top_k=top_k)
            step.outputs["entities"] = len(sub.nodes)
        with trace.step("execute", executor=cfg.executor, query=format_query(query)) as step:
            executor = self.make_executor(None if len(sub.nodes) >= self.kg.num_entities else sub.nodes)
            try:
                execution = executor.execute(query, anchors)
            except ExecutionError as exc:
                step.outputs["error"] = str(exc)
                return query, None
            ids, scores = execution.top(cfg.top_answers)
            step.outputs["top"] = [[self.kg.entities[i], round(float(s), 4)] for i, s in zip(ids[:10], scores[:10])]
            step.outputs["nonzero"] = int((execution.scores > 0).sum())
        return query, execution

    def candidates(self, query: Query, execution: Execution, k: int) -> list[Candidate]:
        """The ``k`` best entities for the arbitrator and the evidence: the executor's ranking with unnamed
        nodes (a CVT the query stopped on) replaced by the named entities next to them, except those the
        query passed through on its way there."""
        ids, scores = execution.top(k)
        passed = np.zeros(self.kg.num_entities, dtype=bool)
        for node, x in execution.intermediate.items():
            if node != query:
                passed |= x > 0
        return named_candidates(self.kg, ids, scores, exclude=passed, limit=k)

    def evidence_for(
        self, query: Query, execution: Execution, chosen: Sequence[str] = (), offered: list[Candidate] | None = None
    ) -> list[Evidence]:
        """Supporting triples of the ``explain_answers`` best candidates and of the ``chosen`` answers among the
        rest (the arbitrator sees ``top_answers`` — ``offered``, when the caller has them — and may pick one
        further down: its path is shown too), each triple once, best first; a candidate reached past an unnamed
        node brings that node's support and the triple that reached it."""
        tids: list[int] = []
        tscore: list[float] = []
        unsupported: list[Evidence] = []
        cfg = self.config
        if not chosen or offered is None:
            offered = self.candidates(query, execution, max(cfg.explain_answers, cfg.top_answers if chosen else 0))
        picked = {self.kg.find_entity(name) for name in chosen}
        for cand in [c for i, c in enumerate(offered) if i < cfg.explain_answers or c.entity in picked]:
            reached = cand.entity if cand.via is None else _other_end(self.kg, cand.via, cand.entity)
            found = supporting_triples(self.kg, query, execution, reached, mask=execution.mask)
            if cand.via is not None:
                found.append(cand.via)
            if not found:
                name = self.kg.entities[cand.entity]
                unsupported.append(
                    Evidence(
                        text=f"{name} (score {cand.score:.3f}; no KG edge supports it: inferred by the executor)",
                        entities=[name],
                        score=round(cand.score, 4),
                        source="execute",
                    )
                )
            for t in found:
                if t not in tids:
                    tids.append(t)
                    tscore.append(cand.score)
        evidence = triples_as_evidence(self.kg, np.asarray(tids, np.int64), np.asarray(tscore), source="execute")
        return evidence + unsupported

    def _misread(self, question: str, query: Query, execution: Execution, trace: Trace) -> str:
        """Why a query that found something is set aside ("" when it is not): see ``verify_query``."""
        if not self.config.verify_query or "frag" not in registry:
            return ""
        return misread(self._fallback_method("frag"), question, query, execution, trace, self.config.verify_shorter)

    def _names_nothing(self, question: str, trace: Trace) -> bool:
        """No topics given and none of the question's mentions links to an entity of the KG: a query could
        anchor on nothing, so the query writer's call is not made (the fallback then finds no entity either and
        the answer is withheld without any call). Only then is it a step (``mentions``) of the trace."""
        if resolve_topics(self.kg, question, [], linker=self.linker):
            return False
        with trace.step("mentions") as step:
            step.outputs["entities"] = []
        return True

    def _fallback(
        self, question: str, topic_entities: list[str], topic_names: list[str], reason: str, trace: Trace
    ) -> tuple[list[str], list[Evidence]]:
        """Answers when the query gave nothing to arbitrate: another method's, whole, on the same trace (its
        steps follow a ``fallback`` step naming it and why); with ``fallback="none"`` the model's own."""
        name = self.config.fallback
        if name == "none":
            with trace.step("answer", fallback=True) as step:
                answers = answer_from_facts(self, "ultrag_fallback", question, [], topic_names)
                step.outputs.update({"answers": answers, "reason": reason})
            return answers, []
        if name not in registry:
            name = "kaping"
        with trace.step("fallback") as step:  # a marker: the fallback method's own steps follow on this trace
            step.outputs.update({"method": name, "reason": reason})
        return self._fallback_method(name)._answer(question, topic_entities, trace)

    @cached_property
    def _fallbacks(self) -> dict[str, Method]:
        return {}

    def _fallback_method(self, name: str) -> Method:
        """The fallback method, built once per method instance (its indexes and models load once) with this
        method's LLM, its own defaults and nothing of this method's settings: it must work on any KG, and
        whatever a setting tuned for one KG would be, it is not ULTRAG's to pass on."""
        if name not in self._fallbacks:
            self._fallbacks[name] = registry.get(name)(self.kg, llm=self.llm, embedder=self.embedder)
        return self._fallbacks[name]

    # ------------------------------------------------------------------ Method API
    def retrieve(self, question: str, topic_entities: Sequence[str] | None = None) -> list[Evidence]:
        if not self.config.query:
            return []  # writing the query needs the LLM; give one with --set query=...
        check = parse_and_validate(self.config.query, self.kg)
        if not check.ok:
            from kgrag.methods.ultrag.dsl import DSLSyntaxError

            raise DSLSyntaxError("invalid --set query: " + "; ".join(check.errors))
        assert check.query is not None
        query, execution = self.run_query(check.query, Trace())
        return self.evidence_for(query, execution) if execution is not None else []

    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        topics = resolve_topics(self.kg, question, topic_entities, linker=self.linker) if topic_entities else []
        topic_names = [self.kg.entities[t] for t in topics]
        if self.config.query:
            with trace.step("given_query", query=self.config.query) as step:
                check = parse_and_validate(self.config.query, self.kg)
                query = check.query if check.ok else None
                step.outputs.update({"valid": check.ok, "errors": check.errors, "notes": check.notes})
        elif not topic_entities and self._names_nothing(question, trace):
            reason = "no entity of the question is in the KG"
            return self._fallback(question, topic_entities, topic_names, reason, trace)
        else:
            query = self._write_query(question, topics, trace)
        execution = None
        if query is not None:
            query, execution = self.run_query(query, trace)
        reason = (
            "no valid query"
            if query is None
            else "no entity of the query is in the KG"
            if execution is None
            else "the query found nothing new"
            if not found_anything_new(execution)
            else self._misread(question, query, execution, trace)
        )
        if reason:
            return self._fallback(question, topic_entities, topic_names, reason, trace)
        assert query is not None and execution is not None
        offered = self.candidates(query, execution, self.config.top_answers)
        if len(offered) == 1 and self.config.arbitrate == "when_several":
            only = self.kg.entities[offered[0].entity]
            if only not in topic_names:
                with trace.step("arbitrate", candidates=1, skipped="the query found one entity") as step:
                    step.outputs.update(answers=[only], sole=[only])
                return [only], self.evidence_for(query, execution, [only], offered)
        with trace.step("arbitrate", candidates=len(offered)) as step:
            names = [self.kg.entities[c.entity] for c in offered]
            answers = ask_for_answers(
                self,
                "ultrag_answer",
                question=question,
                query=format_query(query),
                candidates="\n".join(c.label(self.kg) for c in offered),
                evidence_names=names,
                exclude=topic_names,
                choices={n: n for n in names} if use_grammar(self.config.choose_answers, self.llm) else None,
            )
            step.outputs["answers"] = answers
        return answers, self.evidence_for(query, execution, answers, offered)


def _other_end(kg: KnowledgeGraph, tid: int, entity: int) -> int:
    """The end of triple ``tid`` that is not ``entity``."""
    head = int(kg.heads[tid])
    return int(kg.tails[tid]) if head == entity else head


def _best(members: dict[int, float], k: int) -> list[tuple[int, float]]:
    return sorted(members.items(), key=lambda kv: -kv[1])[:k]


__all__ = ["Ultrag", "UltragConfig"]
