"""ULTRAG (Georgiev et al.): the LLM writes a logical query, an executor runs it, the LLM arbitrates.

1. Query writer (LLM call 1): question + the KG's relations → one query in the DSL of
   :mod:`kgrag.methods.ultrag.dsl` (``AND("e1" -> r1_inv, "e2" -> r2) -> r3``).  The relation list and examples
   sit in the system message and depend only on the KG, so every question reuses the same prompt prefix.
   With a llama.cpp model the output is constrained by a GBNF grammar over the KG's relations.  A query that
   does not parse or validate is sent back once with the error; if it is still unusable (or runs empty)
   the method falls back to a generic retriever (``frag`` when registered, else ``kaping``).
2. Leaves are linked to fuzzy sets (exact names crisp, others by the Gaussian kernel, σ = 0.1).  Not in the
   paper: a projection that reaches nothing in the KG while its inverse does is flipped (small models often
   get a relation's direction wrong; :mod:`kgrag.methods.ultrag.dsl.repair`).
3. SEPPR (α = 0.85, T = 5) seeded by the linked leaves keeps the top k entities (the paper's 30,000 for the
   symbolic executor; 5,000 for the neural one, measured better and faster on MetaQA).
4. An executor scores every entity of that subgraph: ``symbolic`` (fuzzy sets, max-product projection,
   product AND) or ``neural`` (ULTRAQUERY in plain torch, extra ``[neural]``).
5. Arbitrator (LLM call 2): the top-50 entities with their probabilities → final answers.
   The decider always stops after one round, as in the paper's ULTRAG-OTS.

``retrieve`` cannot write a query without an LLM: it runs the query given with ``--set query=...`` and
returns the supporting triples of the best answers, and returns nothing when no query is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Annotated, Any, Literal

import numpy as np

from kgrag.linking.hybrid import HybridLinker
from kgrag.methods.base import (
    Method,
    MethodConfig,
    Trace,
    answer_from_facts,
    ask_for_answers,
    registry,
)
from kgrag.methods.settings import ClientRange, ClientText, MethodSetting
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
from kgrag.methods.ultrag.dsl.prompting import query_examples, relation_lines
from kgrag.methods.ultrag.dsl.repair import repair_directions
from kgrag.retrieval.topics import resolve_topics
from kgrag.retrieval.triples import triples_as_evidence
from kgrag.types import Evidence

DEFAULT_TOP_NODES = {"symbolic": 30_000, "neural": 5_000}


class UltragConfig(MethodConfig):
    executor: Literal["symbolic", "neural"] = "symbolic"
    # run this DSL query instead of asking the LLM (what `retrieve` needs)
    query: Annotated[str | None, ClientText(2000)] = None
    grammar: Literal["auto", "on", "off"] = "auto"  # GBNF-constrained query writing (auto: llama.cpp models)
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
    explain_answers: Annotated[int, ClientRange(1, 50)] = 10  # best entities whose supporting triples are evidence
    max_relations: Annotated[int, ClientRange(1, 500)] = 200  # relations listed to the query writer
    fallback: MethodSetting = "frag"  # retriever used when no usable query: a method name, or "none"
    fallback_top: Annotated[int, ClientRange(1, 100)] = 30  # evidence items given to the fallback answer prompt


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

    @cached_property
    def query_grammar(self) -> str | None:
        return query_grammar(self.kg)

    def _use_grammar(self) -> bool:
        if self.config.grammar == "off":
            return False
        if self.config.grammar == "on":
            return True
        return bool(self.llm is not None and str(getattr(self.llm, "model_id", "")).startswith("llamacpp:"))

    @cached_property
    def _relation_prompt(self) -> tuple[str, str]:
        """(relation list, examples) for the query writer: fixed per KG, so the prompt prefix is too."""
        rels = np.arange(self.kg.num_relations)
        if len(rels) > self.config.max_relations:
            # too many to list: the most frequent ones (still question-independent)
            counts = np.bincount(self.kg.rels, minlength=self.kg.num_relations)
            rels = np.sort(np.argsort(-counts, kind="stable")[: self.config.max_relations])
        return relation_lines(self.kg, rels.tolist()), query_examples(self.kg)

    def make_executor(self, nodes: np.ndarray | None) -> FuzzyExecutor:
        if self.config.executor == "neural":
            import kgrag.methods.ultrag.neural  # noqa: F401 - registers the neural executor (needs torch)
        return executors.get(self.config.executor)(self.kg, nodes=nodes)

    # ------------------------------------------------------------------ steps
    def _write_query(self, question: str, topics: list[int], trace: Trace) -> Query | None:
        relations, examples = self._relation_prompt
        topic_line = ""
        if topics:
            topic_line = "Entities named in the question: " + ", ".join(
                format_entity(self.kg.entities[t]) for t in topics
            )
            topic_line += "\n"
        grammar = self.query_grammar if self._use_grammar() else None
        note = ""
        with trace.step("write_query", grammar=grammar is not None) as step:
            attempts: list[dict[str, Any]] = []
            for attempt in range(self.config.retries + 1):
                text, _ = self.call_prompt(
                    "ultrag_query",
                    grammar=grammar,
                    relations=relations,
                    examples=examples,
                    topics=topic_line,
                    question=question,
                    feedback=note,
                )
                candidate = extract_query(text)
                check = parse_and_validate(candidate, self.kg)
                attempts.append({"output": text, "query": candidate, "errors": check.errors, "notes": check.notes})
                if check.ok:
                    assert check.query is not None
                    step.outputs.update({"query": format_query(check.query), "valid": True, "attempts": attempts})
                    return check.query
                note = feedback(candidate or text, check) + "\n"
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

    def evidence_for(self, query: Query, execution: Execution) -> list[Evidence]:
        """Supporting triples of the ``explain_answers`` best entities (each triple once, best answer first)."""
        ids, scores = execution.top(self.config.explain_answers)
        tids: list[int] = []
        tscore: list[float] = []
        unsupported: list[Evidence] = []
        for eid, score in zip(ids.tolist(), scores.tolist()):
            found = supporting_triples(self.kg, query, execution, eid, mask=execution.mask)
            if not found:
                name = self.kg.entities[eid]
                unsupported.append(
                    Evidence(
                        text=f"{name} (score {score:.3f}; no KG edge supports it: inferred by the executor)",
                        entities=[name],
                        score=round(score, 4),
                        source="execute",
                    )
                )
            for t in found:
                if t not in tids:
                    tids.append(t)
                    tscore.append(score)
        evidence = triples_as_evidence(self.kg, np.asarray(tids, np.int64), np.asarray(tscore), source="execute")
        return evidence + unsupported

    def _fallback(self, question: str, topic_entities: list[str], trace: Trace) -> list[Evidence]:
        name = self.config.fallback
        if name == "none":
            return []
        if name not in registry:
            name = "kaping"
        with trace.step("fallback", method=name) as step:
            other = registry.get(name)(self.kg, llm=None, embedder=self.embedder)
            evidence = other.retrieve(question, topic_entities)[: self.config.fallback_top]
            step.outputs["evidence"] = len(evidence)
        return evidence

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
        else:
            query = self._write_query(question, topics, trace)
        execution = None
        if query is not None:
            query, execution = self.run_query(query, trace)
        if query is None or execution is None or not (execution.scores > 0).any():
            evidence = self._fallback(question, topic_entities, trace)
            with trace.step("answer", fallback=True) as step:
                answers = answer_from_facts(self, "ultrag_fallback", question, evidence, topic_names)
                step.outputs["answers"] = answers
            return answers, evidence
        ids, scores = execution.top(self.config.top_answers)
        candidates = "\n".join(f"{self.kg.entities[i]} ({s:.2f})" for i, s in zip(ids.tolist(), scores.tolist()))
        with trace.step("arbitrate", candidates=len(ids)) as step:
            answers = ask_for_answers(
                self,
                "ultrag_answer",
                question=question,
                query=format_query(query),
                candidates=candidates,
                evidence_names=[self.kg.entities[i] for i in ids.tolist()],
                exclude=topic_names,
            )
            step.outputs["answers"] = answers
        return answers, self.evidence_for(query, execution)


def _best(members: dict[int, float], k: int) -> list[tuple[int, float]]:
    return sorted(members.items(), key=lambda kv: -kv[1])[:k]


__all__ = ["Ultrag", "UltragConfig"]
