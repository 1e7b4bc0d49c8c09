"""The Method base class: tracing, accounting, timing and the typed Answer live here, once.

A method implements :meth:`Method._answer` (and :meth:`Method.retrieve` when it can gather evidence without
an LLM); :meth:`Method.answer` wraps it so every method reports the same things the same way (template method).
An LLM that fails (:class:`~kgrag.errors.LLMError`: unreachable, rate-limited past its retries, garbage replies)
makes ``answer`` raise: an empty answer would be indistinguishable from "the KG has no answer", so the CLI exits
non-zero, the service answers 503 and the evaluation records the question as failed. A method may still catch
an LLM error to fall back to LLM-free retrieval, as long as it then answers.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from kgrag.cancel import check_cancelled
from kgrag.errors import KGRagError, LLMError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.answer_kind import as_count, kind_on, verdict, yes_no_claim
from kgrag.methods.confidence import answer_signals, confidences, less_sure
from kgrag.methods.settings import ClientRange
from kgrag.methods.support import (
    answer_links,
    answer_support,
    echoes,
    kg_spellings,
    question_entities,
    set_aside_unsupported,
    supported_first,
)
from kgrag.models.accounting import track_usage
from kgrag.models.embeddings import DEFAULT_EMBEDDER, Embedder, load_embedder
from kgrag.models.llm.base import LLM
from kgrag.registry import Registry
from kgrag.types import Answer, Evidence, Step, Usage

if TYPE_CHECKING:
    from kgrag.methods.frag import Frag


class PromptReply(NamedTuple):
    """A prompt call's reply: its text, the tags the prompt declares, and whether it was cut off (it used all of
    the prompt's ``max_tokens``, so its last line may be part of a name)."""

    text: str
    tags: dict[str, str | None]
    cut: bool


class MethodConfigError(KGRagError, ValueError):
    """A method was given a setting it does not have, or a value of the wrong type."""

    exit_code = 2


class MethodConfig(BaseModel):
    """Hyper-parameters of a method; subclasses add fields with the paper's defaults."""

    model_config = ConfigDict(extra="forbid")

    # answers whose confidence (kgrag.methods.confidence) is below this are dropped; with none left the method
    # abstains and says why. None: keep every answer (the echo and unknown-entity rules hold either way)
    abstain: Annotated[float | None, ClientRange(0, 1)] = None
    # order the answers by how well the relation path to each reads as the question (kgrag.methods.pattern_fit:
    # the question's best reading by FRAG's zero-shot scorer first), after support; False: the model's order
    fit_first: bool = False
    # "where_silent": answers without support are set aside (Answer.set_aside) when the evidence supports others,
    # as every answer prompt allows the model's own knowledge only where the evidence is silent
    # (methods.support.set_aside_unsupported); "always": they stay among the answers, after the supported ones
    own_knowledge: Literal["where_silent", "always"] = "where_silent"
    # answers after the first whose confidence is below answer_spread x the surest answer's are moved out of the
    # answers into Answer.doubtful (shown after them): a small model asked to list every answer often lists every
    # name it was shown. None: keep them (frag sets 0.5). kaping at 0.5, paired on the same replies over 461 dev
    # questions: F1 +19 / -13 questions, lower on both WebQSP proxy hundreds, so not its default
    # (benchmarks/results/answer_spread.json)
    answer_spread: Annotated[float | None, ClientRange(0, 1)] = None


_step_listener: ContextVar[Callable[[Step], None] | None] = ContextVar("kgrag_step_listener", default=None)


@contextmanager
def observe_steps(callback: Callable[[Step], None]) -> Iterator[None]:
    """Call ``callback(step)`` as each traced step finishes in this context (the service streams them)."""
    token = _step_listener.set(callback)
    try:
        yield
    finally:
        _step_listener.reset(token)


class Trace:
    """Collects :class:`Step` records while a method runs; reports each finished step to :func:`observe_steps`."""

    def __init__(self) -> None:
        self.steps: list[Step] = []

    @contextmanager
    def step(self, name: str, **inputs: Any) -> Iterator[Step]:
        check_cancelled()
        record = Step(name=name, inputs=inputs)
        start = time.perf_counter()
        with track_usage() as calls:
            try:
                yield record
            finally:
                record.seconds = round(time.perf_counter() - start, 4)
                record.llm_calls = len(calls)
                self.steps.append(record)
                listener = _step_listener.get()
                if listener is not None:
                    listener(record)


class Method(ABC):
    """A KGQA method over a KnowledgeGraph. Subclasses set ``name`` and ``Config`` and implement ``_answer``."""

    name: ClassVar[str] = "method"
    needs_llm: ClassVar[bool] = True
    reads_kg: ClassVar[bool] = True  # False for the no-KG baseline, whose answers have no support by design
    Config: ClassVar[type[MethodConfig]] = MethodConfig

    def __init__(self, kg: KnowledgeGraph, llm: LLM | None = None, embedder: Any = None, **config: Any) -> None:
        if isinstance(embedder, str):  # a spec (`--set embedder=static`, a service setting): the Config's field
            config["embedder"], embedder = embedder, None
        self.kg = kg
        self.llm = llm
        self.embedder = embedder
        self.config = self.validated(config)

    @classmethod
    def validated(cls, config: Mapping[str, Any]) -> MethodConfig:
        """``config`` as this method's Config, or a :class:`MethodConfigError` naming the method and its settings."""
        try:
            return cls.Config(**config)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            known = ", ".join(cls.Config.model_fields) or "none"
            raise MethodConfigError(f"method {cls.name!r}: {problems} (settings: {known})") from None

    @classmethod
    def setting_names(cls) -> frozenset[str]:
        """The settings the constructor takes: the Config's fields (``auto`` adds those of the methods it asks)."""
        return frozenset(cls.Config.model_fields)

    @classmethod
    def own_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The part of ``settings`` given for several methods at once (``--set``, a suite, the operator's) that
        this method takes."""
        names = cls.setting_names()
        return {k: v for k, v in settings.items() if k in names}

    def retrieve(self, question: str, topic_entities: Sequence[str] | None = None) -> list[Evidence]:
        """Evidence for ``question`` without the final LLM call (empty for methods that retrieve nothing)."""
        return []

    def answer(self, question: str, topic_entities: Sequence[str] | None = None) -> Answer:
        if self.needs_llm and self.llm is None:
            raise ValueError(f"method {self.name!r} needs an LLM")
        trace = Trace()
        start = time.perf_counter()
        kind = kind_on(self.kg, question)
        claim = yes_no_claim(self.kg, question, topic_entities or ()) if kind == "yes_no" else None
        with track_usage() as calls:
            if claim is None:
                answers, evidence = self._answer(question, list(topic_entities or []), trace)
            else:  # "Is Voltaic headquartered in Taipei?": where is Voltaic headquartered, and is Taipei among it?
                found, evidence = self._answer(claim.asked, claim.topics, trace)
                with trace.step("yes_no", asked=claim.asked, claimed=claim.claimed) as step:
                    answers = verdict(self.kg, claim, found)
                    step.outputs.update(found=found, answers=answers)
        topics = [*(topic_entities or [] if claim is None else claim.topics), *_linked(trace.steps)]
        read = answers if claim is None else [*found, claim.claimed]
        support = answer_support(self.kg, question if claim is None else claim.asked, read, evidence, topics)
        if claim is not None and answers:  # a yes stands on the claimed entity's chain, a no on what was found
            chain = support.get(claim.claimed) if answers == ["yes"] else support.get(found[0])
            support = {answers[0]: chain} if chain else {}
        abstained = None
        made_up = echoes(self.kg, question, answers, support)
        answers = [a for a in answers if a not in made_up]
        if self._no_entity_found(topic_entities, trace) and not support:
            answers, abstained = [], _no_entity_reason(self.kg, question)
        elif made_up and not answers:
            abstained = f"the model only repeated the question's words ({'; '.join(made_up)})"
        reply = next((c.token_logprobs for c in reversed(calls) if c.token_logprobs is not None), None)
        # in the model's order ("first" is its first), read against the last reply (the answer call's)
        fit = self._pattern_fit(question if claim is None else claim.asked, evidence, topics, read)
        signals = answer_signals(answers, evidence, support, reply, fit, sole=_sole(trace.steps))
        answers = supported_first(answers, support, fit if self.config.fit_first else None)
        set_aside: list[str] = []
        if self.config.own_knowledge == "where_silent" and kind != "count" and claim is None:
            answers, set_aside = set_aside_unsupported(answers, support)
        sure = confidences(self.confidence_weights(), signals)
        if kind == "count":  # the members the model listed become their number
            answers, support, sure, member = as_count(answers, support, sure)
            signals = {answers[0]: signals[member]} if member is not None else signals
        answers, doubtful = less_sure(answers, sure, None if kind == "count" else self.config.answer_spread)
        answers, abstained = _above_threshold(answers, sure, self.config.abstain, abstained)
        support = {a: chain for a, chain in support.items() if a in answers}
        named, written = kg_named(answers, kg_spellings(self.kg, answers, support))
        return Answer(
            question=question,
            method=self.name,
            answers=named,
            evidence=evidence,
            support={n: support[a] for n, a in written.items() if a in support},
            set_aside=set_aside,
            doubtful=doubtful,
            grounded=bool(answers) and len(support) == len(answers),
            confidence={n: sure[a] for n, a in written.items()},
            signals={n: signals[a] for n, a in written.items()},
            abstained=abstained,
            trace=trace.steps,
            usage=Usage.from_calls(calls, time.perf_counter() - start),
        )

    def call_prompt(
        self, prompt_name: str, *, grammar: str | None = None, token_check: str | None = None, **values: Any
    ) -> tuple[str, dict[str, str | None]]:
        """Render prompt file ``prompt_name``, call the LLM with the prompt's decoding settings (and an optional
        GBNF ``grammar`` and ``token_check``), and parse the tags the prompt declares. Returns (raw text, {tag:
        content or None})."""
        reply = self.prompt_reply(prompt_name, grammar=grammar, token_check=token_check, **values)
        return reply.text, reply.tags

    def prompt_reply(
        self, prompt_name: str, *, grammar: str | None = None, token_check: str | None = None, **values: Any
    ) -> PromptReply:
        """:meth:`call_prompt`'s call, with whether the reply ran into the prompt's ``max_tokens``."""
        from kgrag.prompts import load_prompt
        from kgrag.prompts.tags import parse_tags

        if self.llm is None:
            raise ValueError(f"method {self.name!r} needs an LLM for prompt {prompt_name!r}")
        prompt = load_prompt(prompt_name)
        extra = {"token_check": token_check} if token_check is not None else {}
        gen = self.llm.run_prompt(prompt, grammar=grammar, **values, **extra)
        return PromptReply(gen.text, parse_tags(gen.text, prompt.tags), gen.completion_tokens >= prompt.max_tokens)

    @cached_property
    def _fit_scorer(self) -> Frag:
        """FRAG's zero-shot pattern scorer on this KG, built on first use (:mod:`kgrag.methods.pattern_fit`)."""
        from kgrag.methods.pattern_fit import zero_shot_scorer

        return zero_shot_scorer(self.kg, self.embedder)  # an embedder object given to the method (tests: static)

    def _pattern_fit(
        self, question: str, evidence: Sequence[Evidence], topics: Sequence[str], answers: Sequence[str]
    ) -> dict[str, float]:
        """Each answer's ``fit`` (:mod:`kgrag.methods.pattern_fit`), from the entities its support may start
        from; empty for a method that does not read the KG."""
        from kgrag.methods.pattern_fit import pattern_fit

        if not self.reads_kg or not answers:
            return {}
        starts = question_entities(self.kg, question, evidence, topics)
        return pattern_fit(self._fit_scorer, question, starts, answers)

    @cached_property
    def text_embedder(self) -> Embedder:
        """The embedder given to the constructor, else the one the config names (``embedder``), loaded on first
        use so that methods and tests that never embed never load a model."""
        return self.embedder or load_embedder(getattr(self.config, "embedder", DEFAULT_EMBEDDER))

    def _link_topics(
        self, question: str, topic_entities: Sequence[str], trace: Trace, *, linker: Any = None, step: str = "link"
    ) -> list[int]:
        """Topic entity ids — the given names resolved, else the question's mentions linked — as a trace step."""
        from kgrag.retrieval.topics import resolve_topics

        with trace.step(step, topics=list(topic_entities)) as record:
            ids = resolve_topics(self.kg, question, topic_entities, linker=linker)
            record.outputs["entities"] = [self.kg.entities[t] for t in ids]
        return ids

    def _candidate_triples(self, question: str, topics: Sequence[int], trace: Trace, *, hops: int, cap: int) -> Any:
        """Triple ids within ``hops`` of ``topics``, at most ``cap`` (the most question-like), as a trace step."""
        from kgrag.retrieval.triples import candidate_triples

        with trace.step("candidates", hops=hops) as record:
            tids = candidate_triples(self.kg, topics, question, hops=hops, max_candidates=cap)
            record.outputs["triples"] = len(tids)
        return tids

    def confidence_weights(self) -> str:
        """Which fitted confidence weights this method's answers use (:mod:`kgrag.methods.confidence`): its own
        name; a method running a trained artefact may name weights fitted with that artefact."""
        return self.name

    def _no_entity_found(self, topic_entities: Sequence[str] | None, trace: Trace) -> bool:
        """No topic was given and the method's linking found no entity of the question in the KG. Whatever the
        model answered then would be withheld (:meth:`answer`), so methods that link first skip their answer
        call (:meth:`_skip_answer_call`)."""
        return self.reads_kg and not topic_entities and found_no_entity(trace.steps)

    def _skip_answer_call(self, topic_entities: Sequence[str] | None, trace: Trace) -> bool:
        """True (and an ``answer`` step saying so) when :meth:`_no_entity_found`: no LLM call for an answer that
        could only be withheld."""
        if not self._no_entity_found(topic_entities, trace):
            return False
        with trace.step("answer") as step:
            step.outputs.update({"answers": [], "skipped": "no entity of the question is in the KG: nothing to ask"})
        return True

    def _link_answers(
        self, question: str, answers: Sequence[str], evidence: Sequence[Evidence], topics: Sequence[int], trace: Trace
    ) -> list[Evidence]:
        """The facts that support answers ``evidence`` does not, one KG hop past an entity it reaches
        (:func:`~kgrag.methods.support.answer_links`), as evidence of source ``<method>/link`` and a trace step
        ``link_answers`` (none when there is nothing to link)."""
        from kgrag.retrieval.triples import triples_as_evidence

        names = [self.kg.entities[t] for t in topics]
        loose, tids = answer_links(self.kg, question, answers, evidence, names)
        if not tids:
            return []
        with trace.step("link_answers", answers=[self.kg.entities[e] for e in loose]) as step:
            found = triples_as_evidence(self.kg, np.asarray(tids, dtype=np.int64), source=f"{self.name}/link")
            step.outputs["facts"] = [ev.text for ev in found]
        return found

    @abstractmethod
    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        """Return (answers, evidence); record steps on ``trace``."""


def kg_named(answers: list[str], kg_name: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The answers under the KG's names (:func:`~kgrag.methods.support.kg_spellings`), each once, and for each
    name the first answer written for it (whose support, confidence and signals it keeps)."""
    written: dict[str, str] = {}
    for answer in answers:
        written.setdefault(kg_name.get(answer, answer), answer)
    return list(written), written


def _above_threshold(
    answers: list[str], sure: dict[str, float], threshold: float | None, abstained: str | None
) -> tuple[list[str], str | None]:
    """The answers whose confidence reaches ``abstain`` (all when it is None), and why there are none if so."""
    if threshold is None or not answers:
        return answers, abstained
    kept = [a for a in answers if sure[a] >= threshold]
    if not kept:
        abstained = f"no answer's confidence reached abstain={threshold:g} (best {max(sure.values()):.2f})"
    return kept, abstained


def found_no_entity(steps: Sequence[Step]) -> bool:
    """The method looked for the question's entities in the KG (a ``link`` step of :meth:`Method._link_topics`,
    which records the ``entities`` it found) and found none."""
    looked = any(step.name == "link" and isinstance(step.outputs.get("entities"), list) for step in steps)
    return looked and not _linked(steps)


def _sole(steps: Sequence[Step]) -> list[str]:
    """Answers a step took as the only option there was, no model call choosing them (``sole`` of a step)."""
    return [name for step in steps for name in step.outputs.get("sole", [])]


def _no_entity_reason(kg: KnowledgeGraph, question: str) -> str:
    """The abstention message when no entity of the question is in the KG: the names the user wrote that match
    nothing, and the closest names the KG has."""
    from kgrag.linking.hybrid import HybridLinker

    linker = HybridLinker(kg, use_embedding=False)
    missing, names = linker.unmatched_names(question), linker.suggestions(question)
    reason = "no entity of the question was found in the KG"
    reason += f" (nothing is called {' or '.join(repr(n) for n in missing)})" if missing else ""
    return reason + (f"; closest names in the KG: {', '.join(repr(n) for n in names)}" if names else "")


def _linked(steps: Sequence[Step]) -> list[str]:
    """The entities a method's linking steps resolved (``_link_topics`` records them)."""
    names = (step.outputs.get("entities") for step in steps if step.name == "link")
    return [n for group in names if isinstance(group, list) for n in group if isinstance(n, str)]


GrammarSetting = Literal["auto", "on", "off"]
FactsLayout = Literal["lines", "grouped", "grouped_by_object", "tree"]


def use_grammar(setting: GrammarSetting, llm: LLM | None) -> bool:
    """Whether to send a GBNF grammar: ``auto`` only to local llama.cpp models, which enforce it; an
    OpenAI-compatible endpoint may be a llama.cpp server that does (``on``) or a service that rejects it."""
    if setting == "auto":
        return bool(llm is not None and str(getattr(llm, "model_id", "")).startswith("llamacpp:"))
    return setting == "on"


def answer_or_failure(method: Method, question: str, topic_entities: Sequence[str] | None = None) -> Answer:
    """``method.answer``, or for an :class:`LLMError` an empty Answer whose ``error`` names it: for scripts that
    record a failed question and go on (benchmarks). Whatever shows answers to people must let the error through.
    """
    try:
        return method.answer(question, topic_entities)
    except LLMError as exc:
        return Answer(question=question, method=method.name, error=f"{type(exc).__name__}: {exc}")


registry: Registry[type[Method]] = Registry("method")
