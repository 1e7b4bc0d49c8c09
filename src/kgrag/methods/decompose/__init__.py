"""KG-RAG (question decomposition over KAPING-style retrieval): explainable multi-hop answers from a KG.

1. Decompose: one LLM call (chain of thought + in-context examples, ends with ``<END>``) splits the question
   into ordered sub-questions; a later one refers to an earlier answer as ``#1``, ``#2``. Simple questions
   yield one sub-question. Unusable output falls back to the question itself as the only sub-question.
2. Candidates: every triple within ``hops`` (both directions) of the topic entities, computed ONCE per
   question (hubs are capped to ``max_candidates`` by the shared static-vector prefilter).
3. Per sub-question, in order: reformulate it with the earlier answers, rank the same candidates against it
   by embedding dot product (triple vectors cached per KG, never embedded twice), answer it from the top-K.
   Beyond the paper, a step of a real decomposition ranks only the candidates that touch its *anchor*
   entities, when there are any: the topics for step 1, the KG entities named by the referenced earlier
   answers after that. A sub-question asks for one relation of those entities (that is how the prompt
   defines it), and with 3-hop candidates the rest are mostly hub facts ("X has genre Comedy" for hundreds
   of X) that a small model copies into its answer. ``anchored=False`` is the paper's ranking. The anchors
   of a later step also include every entity that the facts the earlier step read reach the way one of its
   answers was reached (``widen_steps``): the model names one of a writer's three films, the next step reads
   all three. A plan of one sub-question (the question restated) reads, with ``lone_step="connected"``, the
   best-ranked facts that join up with the topics (:func:`~kgrag.retrieval.triples.connected_top`:
   each next fact touches an entity the facts so far reach, never past a hub) instead of the paper's top-K of
   all candidates, which for a two-hop question fills with the second hop of everything.
4. Synthesis: one call turns the chain of sub-answers into the final answer (skipped for one sub-question).
5. Beyond the paper (``link_answers``), a final answer the facts read do not support gets the KG fact that joins
   it to an entity they reach, if there is one: the plan's missing last hop, checked instead of taken on trust.

Reformulation is a string substitution, not an LLM call. The paper rewrites each next sub-question with a
zero-shot LLM; here the decomposition prompt asks for ``#k`` references and we substitute the answers of
step ``k``. On a 2-core CPU a call costs ~10 s, and the rewrite must happen *before* ranking (the rewritten
sub-question is the retrieval query), so it cannot be folded into the answer call. When a sub-question does
not use ``#k`` (e.g. "who directed those films?"), the previous answers are appended to its retrieval query
and the answer call is shown the earlier steps, so the model resolves the reference itself.

Calls per question: 1 + n (+1 for synthesis when n > 1), n = number of sub-questions, with the paper's
separate decomposition call (the default). With ``plan_answers`` the decomposition call also answers the
first sub-question from the facts that step would read (the topics' facts, ranked against the whole question,
since sub-question 1 is not written yet): n (+1) calls, so a one-step plan is one call.
:meth:`Decompose.retrieve` has no LLM and so no sub-questions: it ranks the candidates against the whole
question (the same evidence a one-sub-question decomposition sees).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from kgrag.graph.identifiers import unnamed_entities
from kgrag.linking.names import NameIndex
from kgrag.linking.normalize import normalize
from kgrag.methods.answer_call import answer_from_facts, ask_for_answers
from kgrag.methods.base import Method, Trace, registry, use_grammar
from kgrag.methods.decompose.config import DecomposeConfig
from kgrag.methods.decompose.facts import widen
from kgrag.methods.decompose.plan import (
    ChainStep,
    Decomposition,
    chain_text,
    join_names,
    parse_decomposition,
    reformulate,
)
from kgrag.methods.pattern_fit import best_pattern_hops
from kgrag.retrieval.triples import connected_top, kg_vectors, rank_triples, triples_as_evidence
from kgrag.types import Evidence

__all__ = ["ChainStep", "Decompose", "DecomposeConfig", "join_names", "parse_decomposition", "reformulate", "widen"]


class Pool(NamedTuple):
    """A question's candidate triples and their embedding rows (aligned)."""

    tids: np.ndarray
    vectors: np.ndarray


@registry.register("decompose")
class Decompose(Method):
    """KG-RAG: decompose → candidates once → per sub-question rank, answer, reformulate → synthesis."""

    name = "decompose"
    Config = DecomposeConfig
    config: DecomposeConfig

    # ------------------------------------------------------------------ LLM-free steps
    def _candidates(self, question: str, topic_entities: Sequence[str], trace: Trace) -> tuple[list[int], Pool]:
        """Topics and the question's candidate triples with their vectors (read once, ranked per sub-question)."""
        topics = self._link_topics(question, topic_entities, trace)
        tids = self._candidate_triples(question, topics, trace, hops=self.config.hops, cap=self.config.max_candidates)
        return topics, self._pool(tids)

    def _pool(self, tids: np.ndarray) -> Pool:
        return Pool(tids, kg_vectors(self.kg, self.text_embedder).triples(tids))

    def _rank(
        self, query: str, pool: Pool, source: str, anchors: Sequence[int] = (), joined_to: Sequence[int] = ()
    ) -> list[Evidence]:
        """Top-K of the pool by similarity to ``query``, among the triples touching ``anchors`` if any do, or
        (``lone_step`` "connected") the best K that join up with the entities ``joined_to``."""
        tids, vectors = pool
        if len(joined_to) and self.config.lone_step == "connected" and len(tids):
            ranked, scores = rank_triples(
                self.kg, query, tids, embedder=self.text_embedder, top_k=len(tids), vectors=vectors
            )
            keep = connected_top(self.kg, ranked, scores, joined_to, self.config.top_k)
            return triples_as_evidence(self.kg, ranked[keep], scores[keep], source=source)
        if len(anchors) and self.config.anchored and len(tids):
            ids = np.asarray(anchors)
            touch = np.isin(self.kg.heads[tids], ids) | np.isin(self.kg.tails[tids], ids)
            if touch.any():
                tids, vectors = tids[touch], vectors[touch]
        best, scores = rank_triples(
            self.kg, query, tids, embedder=self.text_embedder, top_k=self.config.top_k, vectors=vectors
        )
        return triples_as_evidence(self.kg, best, scores, source=source)

    def _entities_named(self, names: Sequence[str]) -> list[int]:
        index = NameIndex.of(self.kg)
        return list(dict.fromkeys(e for n in names for e in index.by_key.get(normalize(n), [])[:1]))

    def _reached(
        self, answers: Sequence[str], evidence: Sequence[Evidence], anchors: Sequence[int], last: bool = False
    ) -> list[int]:
        """The entities a step's answers stand for: in later steps (``widen_steps``), as the final answers
        (``widen_answers``, the last step)."""
        named = self._entities_named(answers)
        wide = self.config.widen_steps or (last and self.config.widen_answers)
        return widen(self.kg, named, evidence, anchors) if wide else named

    def _widened_answers(self, step: ChainStep) -> list[str]:
        """The step's answers, then the other named entities it reached (``widen_answers``)."""
        unnamed = unnamed_entities(self.kg)
        more = [self.kg.entities[e] for e in step.reached if not unnamed[e]]
        return list(dict.fromkeys([*step.answers, *more]))

    def retrieve(self, question: str, topic_entities: Sequence[str] | None = None) -> list[Evidence]:
        """Top-K candidates ranked against the whole question (no LLM, hence no sub-questions)."""
        trace = Trace()
        topics, pool = self._candidates(question, list(topic_entities or []), trace)
        with trace.step("rank", top_k=self.config.top_k):
            return self._rank(question, pool, "decompose", joined_to=topics)

    # ------------------------------------------------------------------ LLM steps
    def _decompose(self, question: str, trace: Trace) -> Decomposition:
        with trace.step("decompose", question=question) as step:
            text, _ = self.call_prompt("decompose_questions", question=question)
            plan = parse_decomposition(text, question, max_subquestions=self.config.max_subquestions)
            step.outputs.update(plan.outputs(text))
        return plan

    def _first_hop_anchors(self, topics: Sequence[int], pool: Pool) -> list[int]:
        """The topics and the unnamed nodes next to them: a fact behind a CVT node (``Obama -spouse_s-> m.02h98gq
        -spouse-> Michelle``) is one step of a plan, and its far half touches only the unnamed node."""
        if not topics or not len(pool.tids):
            return list(topics)
        heads, tails = self.kg.heads[pool.tids], self.kg.tails[pool.tids]
        ids = np.asarray(topics)
        near = np.concatenate([tails[np.isin(heads, ids)], heads[np.isin(tails, ids)]])
        return list(dict.fromkeys([*topics, *near[unnamed_entities(self.kg)[near]].tolist()]))

    def _cap(self, plan: Decomposition, question: str, topics: list[int], trace: Trace) -> bool:
        """``cap_plan``: keep as many sub-questions as the question's best reading has hops; whether any went."""
        read = best_pattern_hops(self._fit_scorer, question, topics)
        if read is None or len(plan.subquestions) <= read[0]:
            return False
        with trace.step("cap_plan", steps=len(plan.subquestions), hops=read[0], pattern=read[1]):
            plan.subquestions = plan.subquestions[: read[0]]
        return True

    def _plan_facts(self, question: str, pool: Pool, topics: list[int]) -> list[Evidence]:
        """The facts the planning call answers sub-question 1 from (``plan_facts``), the topics' own first."""
        first = self._rank(question, pool, "decompose/sub1", self._first_hop_anchors(topics, pool))
        room = self.config.top_k - len(first)
        if self.config.plan_facts == "first_hop" or room <= 0 or not topics:
            return first
        shown = np.isin(pool.tids, [ev.triples[0] for ev in first])
        rest = self._rank(question, Pool(pool.tids[~shown], pool.vectors[~shown]), "decompose/sub1")
        return first + rest[:room]

    def _plan_and_answer(
        self, question: str, pool: Pool, topics: list[int], trace: Trace
    ) -> tuple[Decomposition, ChainStep | None, list[Evidence]]:
        """One call: the decomposition and the answers of its first sub-question, read from the facts about the
        question's entities ranked against the whole question. The step is None when the reply answered
        nothing (step 1 then gets a call of its own)."""
        with trace.step("decompose", question=question, answers_first=True) as step:
            evidence = self._plan_facts(question, pool, topics)
            exclude = [self.kg.entities[t] for t in topics]
            replies: list[str] = []
            answers = answer_from_facts(self, "decompose_plan_answer", question, evidence, exclude, replies=replies)
            text = replies[0] if replies else ""
            plan = parse_decomposition(text, question, max_subquestions=self.config.max_subquestions)
            first = plan.subquestions[0] if len(plan.subquestions) > 1 else question
            reached = self._reached(answers, evidence, self._first_hop_anchors(topics, pool))
            done = ChainStep(first, first, [ev.text for ev in evidence], answers, reached) if answers else None
            step.outputs.update(plan.outputs(text), answers=answers)
        return plan, done, evidence

    def _answer_step(
        self,
        index: int,
        subquestion: str,
        chain: list[ChainStep],
        pool: Pool,
        topics: list[int],
        trace: Trace,
        *,
        anchor_topics: bool = True,
        last: bool = False,
    ) -> tuple[ChainStep, list[Evidence]]:
        """Reformulate, rank, answer one sub-question. ``topics`` anchor step 1 when ``anchor_topics`` (else
        its facts join up with them, ``lone_step``); an answer that only repeats them gives way to the best
        candidate either way."""
        anchors = topics if anchor_topics else []
        joined = topics if not anchor_topics and not chain else []
        with trace.step("subquestion", index=index, subquestion=subquestion) as step:
            query, refs = reformulate(subquestion, chain)
            earlier = ""
            if chain and not refs:  # no #k: the earlier answers join the query, the model sees the steps
                previous = chain[-1].answers
                if previous and not any(a.lower() in query.lower() for a in previous):
                    query = f"{query} ({join_names(previous)})"
                earlier = "\nEarlier steps:\n" + chain_text(chain) + "\n"
                refs = [len(chain) - 1]
            if chain:  # later steps: the entities the referenced answers name, and topics the query names
                named = [t for t in topics if self.kg.entities[t].lower() in query.lower()]
                anchors = list(dict.fromkeys([e for k in refs for e in chain[k].reached] + named))
            step.outputs["anchors"] = [self.kg.entities[e] for e in anchors[:20]]
            evidence = self._rank(query, pool, f"decompose/sub{index}", anchors, joined)
            exclude = [self.kg.entities[e] for e in (anchors or topics)]
            choose = use_grammar(self.config.choose_answers, self.llm) and (self.config.choose_last_step or not last)
            answers = answer_from_facts(
                self, "decompose_answer", query, evidence, exclude, choose=choose, earlier=earlier
            )
            reached = self._reached(answers, evidence, anchors, last)
            done = ChainStep(subquestion, query, [ev.text for ev in evidence], answers, reached)
            step.outputs.update(done.as_dict())
            if last and self.config.widen_answers:  # the model's answers stay on the trace; these go on
                done.answers = step.outputs["widened"] = self._widened_answers(done)
            if self.config.widen_steps:
                step.outputs["reached"] = [self.kg.entities[e] for e in done.reached[:20]]
        return done, evidence

    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        topics, pool = self._candidates(question, topic_entities, trace)
        if self._skip_answer_call(topic_entities, trace):
            return [], []
        chain: list[ChainStep] = []
        shown: list[Evidence] = []  # every step's facts, in order
        if self.config.plan_answers:
            plan, first, found = self._plan_and_answer(question, pool, topics, trace)
            if first is not None:
                chain.append(first)
                shown += found
        else:
            plan = self._decompose(question, trace)
        capped = self.config.cap_plan and self._cap(plan, question, topics, trace)
        # One sub-question is the question restated: rank and answer the user's own wording.
        subquestions = [question] if len(plan.subquestions) == 1 else plan.subquestions
        # Step 1 of a real decomposition (or one cut to a step) is about the topics; a lone one ranks as the paper
        anchored = len(subquestions) > 1 or capped
        for i, sub in enumerate(subquestions[len(chain) :], start=len(chain) + 1):
            last = i == len(subquestions)
            done, found = self._answer_step(i, sub, chain, pool, topics, trace, anchor_topics=anchored, last=last)
            chain.append(done)
            shown += found
        evidence: dict[int, Evidence] = {}
        for ev in shown:
            evidence.setdefault(ev.triples[0], ev)
        answers = chain[-1].answers
        if len(chain) > 1 and self.config.synthesize:
            with trace.step("synthesis", question=question) as step:
                final = ask_for_answers(
                    self,
                    "decompose_synthesis",
                    question=question,
                    reasoning=plan.reasoning or "(none)",
                    chain=chain_text(chain),
                    evidence_names=chain[-1].answers,
                    exclude=[self.kg.entities[t] for t in topics],
                )
                answers = final or answers  # nothing usable: the last sub-answer stands
                step.outputs.update({"chain": [s.as_dict() for s in chain], "answers": answers})
        if self.config.link_answers:
            for ev in self._link_answers(question, answers, list(evidence.values()), topics, trace):
                evidence.setdefault(ev.triples[0], ev)
        return answers, list(evidence.values())
