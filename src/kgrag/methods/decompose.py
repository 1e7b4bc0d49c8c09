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
   all three.
4. Synthesis: one call turns the chain of sub-answers into the final answer (skipped for one sub-question).

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

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Literal, NamedTuple

import numpy as np

from kgrag.graph.identifiers import unnamed_entities
from kgrag.linking.names import NameIndex
from kgrag.linking.normalize import normalize
from kgrag.methods.answer_call import answer_from_facts, ask_for_answers
from kgrag.methods.base import GrammarSetting, Method, MethodConfig, Trace, registry, use_grammar
from kgrag.methods.pattern_fit import best_pattern_hops
from kgrag.methods.settings import ClientRange, ModelSetting
from kgrag.prompts.tags import parse_tags
from kgrag.retrieval.triples import kg_vectors, rank_triples, triples_as_evidence
from kgrag.types import Evidence

if TYPE_CHECKING:
    from kgrag.graph.kg import KnowledgeGraph

_END = re.compile(r"<\s*/?\s*END\s*/?\s*>", re.I)
_REF = re.compile(r"#(\d+)")
_NUMBERED = re.compile(r"^\s*(?:[-*•]\s*)?(?:\(?\d+[.):]|(?:sub[-\s]?question|step|q)\s*\d+\s*[:.)-])", re.I)
_LABEL = re.compile(r"^\s*(?:sub[-\s]?questions?|question|step|q)\s*\d*\s*[:.)-]\s*", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•]|\(?\d+[.):])\s*")
_QUESTION_START = re.compile(
    r"^(?:who|whom|whose|what|which|when|where|why|how|in\s+which|on\s+which|at\s+which|for\s+which|"
    r"is|are|was|were|does|do|did|can|list|name)\b",
    re.I,
)
_MAX_REASONING_CHARS = 1000
_MAX_SUBQUESTION_CHARS = 300


@dataclass
class Decomposition:
    """Parsed decomposition: the reasoning (CoT) and the ordered sub-questions.

    ``fallback`` is True when the LLM output held no usable sub-question and the question itself is used.
    """

    reasoning: str
    subquestions: list[str]
    fallback: bool = False

    def outputs(self, raw: str) -> dict[str, object]:
        """What a trace step records of the plan, with the reply it was read from."""
        return {"reasoning": self.reasoning, "subquestions": self.subquestions, "fallback": self.fallback, "raw": raw}


@dataclass
class ChainStep:
    """One answered sub-question: as decomposed, as reformulated (the retrieval query), facts and answers."""

    subquestion: str
    query: str
    facts: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    reached: list[int] = field(default_factory=list)  # the entities the answers stand for: later steps' anchors

    def as_dict(self) -> dict[str, object]:
        return {"subquestion": self.subquestion, "query": self.query, "facts": self.facts, "answers": self.answers}


def _clean_item(line: str) -> str:
    line = _BULLET.sub("", line)
    line = _LABEL.sub("", line)
    line = _BULLET.sub("", line)  # "Sub-question 1: 1. Who ..."
    return " ".join(line.strip().strip("\"'`").split())


def _looks_like_question(item: str) -> bool:
    return (
        bool(re.search(r"[A-Za-z]", item))
        and len(item) <= _MAX_SUBQUESTION_CHARS
        and ("?" in item or bool(_QUESTION_START.match(item)))
    )


def parse_decomposition(text: str | None, question: str, *, max_subquestions: int = 4) -> Decomposition:
    """Read the decomposition LLM output defensively; never raises.

    Accepts the requested ``<reasoning>``/``<subquestions>`` tags (unclosed, misspelled or fenced), a plain
    numbered list without tags, and output that runs past a missing ``<END>`` (cut at the first one).
    Anything without a question-like item yields the question itself as the only sub-question.
    """
    text = text or ""
    end = _END.search(text)
    if end:
        text = text[: end.start()]
    parsed = parse_tags(text, ("reasoning", "subquestions"))
    body = parsed.get("subquestions")
    # without the tag, the numbered lines of the whole output are the sub-questions
    lines = body.splitlines() if body is not None else [ln for ln in text.splitlines() if _NUMBERED.match(ln)]
    items: list[str] = []
    seen: set[str] = set()
    for line in lines:
        item = _clean_item(line)
        if _looks_like_question(item) and item.lower() not in seen:
            seen.add(item.lower())
            items.append(item)
    reasoning = parsed.get("reasoning") or ""
    if not reasoning and body is None and lines:  # untagged: the text before the list is the reasoning
        head = text.split(lines[0], 1)[0]
        reasoning = re.sub(r"^\s*reasoning\s*:\s*", "", head.strip(), flags=re.I)
    reasoning = " ".join(reasoning.split())[:_MAX_REASONING_CHARS]
    if not items:
        return Decomposition(reasoning=reasoning, subquestions=[question], fallback=True)
    return Decomposition(reasoning=reasoning, subquestions=items[:max_subquestions])


def join_names(names: Sequence[str], limit: int = 10) -> str:
    """``["A", "B", "C"]`` → ``"A, B and C"``; more than ``limit`` names end with ``"and N more"``."""
    shown = list(names[:limit])
    rest = len(names) - len(shown)
    if rest > 0:
        return ", ".join(shown) + f" and {rest} more"
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def reformulate(subquestion: str, earlier: Sequence[ChainStep], *, limit: int = 10) -> tuple[str, list[int]]:
    """The sub-question with each ``#k`` replaced by the answers of step ``k`` (1-based).

    Returns (text, referenced step indices, 0-based). No reference means the caller has to pass the earlier
    answers some other way. A step without answers is referred to by its own query ("the answer to ...").
    """
    used: list[int] = []

    def substitute(match: re.Match[str]) -> str:
        k = int(match.group(1)) - 1
        if not 0 <= k < len(earlier):
            return match.group(0)
        used.append(k)
        step = earlier[k]
        if step.answers:
            return join_names(step.answers, limit)
        return f"the answer to '{step.query.rstrip('?')}'"

    text = _REF.sub(substitute, subquestion)
    return " ".join(text.split()), sorted(set(used))


class DecomposeConfig(MethodConfig):
    hops: Annotated[int, ClientRange(1, 3)] = 3  # the paper's best N on MetaQA
    top_k: Annotated[int, ClientRange(1, 100)] = 30  # triples per sub-question (the paper's K)
    max_candidates: Annotated[int, ClientRange(1, 5000)] = 2000  # static-vector prefilter cap for hub neighbourhoods
    max_subquestions: Annotated[int, ClientRange(1, 6)] = 4
    synthesize: bool = True  # False: the last sub-answer is the final answer (one call fewer)
    # A step ranks only the candidates touching its anchor entities (the topics for step 1, the entities the
    # referenced earlier answers name after that) when there are any; False = the paper's ranking.
    anchored: bool = True
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
    embedder: ModelSetting = "minilm"


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

    def _rank(self, query: str, pool: Pool, source: str, anchors: Sequence[int] = ()) -> list[Evidence]:
        """Top-K of the pool by similarity to ``query``, among the triples touching ``anchors`` if any do."""
        tids, vectors = pool
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
        _, pool = self._candidates(question, list(topic_entities or []), trace)
        with trace.step("rank", top_k=self.config.top_k):
            return self._rank(question, pool, "decompose")

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
        it ranks everything); an answer that only repeats them gives way to the best candidate either way."""
        anchors = topics if anchor_topics else []
        with trace.step("subquestion", index=index, subquestion=subquestion) as step:
            query, refs = reformulate(subquestion, chain)
            earlier = ""
            if chain and not refs:  # no #k: the earlier answers join the query, the model sees the steps
                previous = chain[-1].answers
                if previous and not any(a.lower() in query.lower() for a in previous):
                    query = f"{query} ({join_names(previous)})"
                earlier = "\nEarlier steps:\n" + _chain_text(chain) + "\n"
                refs = [len(chain) - 1]
            if chain:  # later steps: the entities the referenced answers name, and topics the query names
                named = [t for t in topics if self.kg.entities[t].lower() in query.lower()]
                anchors = list(dict.fromkeys([e for k in refs for e in chain[k].reached] + named))
            step.outputs["anchors"] = [self.kg.entities[e] for e in anchors[:20]]
            evidence = self._rank(query, pool, f"decompose/sub{index}", anchors)
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
                    chain=_chain_text(chain),
                    evidence_names=chain[-1].answers,
                    exclude=[self.kg.entities[t] for t in topics],
                )
                answers = final or answers  # nothing usable: the last sub-answer stands
                step.outputs.update({"chain": [s.as_dict() for s in chain], "answers": answers})
        return answers, list(evidence.values())


def widen(
    kg: KnowledgeGraph, answers: Sequence[int], evidence: Sequence[Evidence], anchors: Sequence[int]
) -> list[int]:
    """``answers`` and the entities the same facts reach the same way: each fact of ``evidence`` that links an
    anchor to an answer names a (anchor, relation, direction); every other fact of ``evidence`` with the same
    one adds its far end. Only facts the step read count, so nothing the model was not shown is added."""
    found, anchor_set = set(answers), set(anchors)
    facts = [(int(kg.heads[t]), int(kg.rels[t]), int(kg.tails[t])) for ev in evidence for t in ev.triples[:1]]
    ways = {(h, r, True) for h, r, t in facts if h in anchor_set and t in found}
    ways |= {(t, r, False) for h, r, t in facts if t in anchor_set and h in found}
    more = [t for h, r, t in facts if (h, r, True) in ways] + [h for h, r, t in facts if (t, r, False) in ways]
    return list(dict.fromkeys([*answers, *(e for e in more if e not in anchor_set)]))


def _chain_text(chain: Sequence[ChainStep]) -> str:
    return "\n".join(
        f"{i}. {s.query}\n   answers: {'; '.join(s.answers) if s.answers else '(none found)'}"
        for i, s in enumerate(chain, start=1)
    )
