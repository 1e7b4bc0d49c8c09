"""``auto``: the method to use when you do not know which one suits your KG and question.

It picks per question, from what the KG is, and says in the trace why:

- on a KG that came from a property graph (typed node properties, a stored mapping) ``text2cypher`` answers:
  its questions filter on properties, count, rank and compare ("which products have a reorder level above
  15", "top 3 customers by orders"), which paths cannot do; when its query gives no rows, ``frag`` is asked
  instead. A cue-word rule (aggregates to Cypher, the rest to frag) lost filtering questions: on 27 Northwind
  dev questions it gave 0.52 Hit@1 against text2cypher's 0.67 and frag's 0.30 (frag answered no question
  text2cypher missed);
- on any other KG ``frag`` answers (relation paths; trained models where ``kgrag adapt`` or the shipped ones
  exist for this KG, zero-shot elsewhere). When its answer is unsure (confidence below ``second_opinion``),
  the one-call ``kaping`` is asked too and the surer of the two answers is kept: the methods fail on
  different questions (a long path the model misreads, a fact the triple ranking cut), and the calibrated
  confidence (:mod:`kgrag.methods.confidence`) says which to trust.

Settings given to auto that are not its own go to each method it asks that has them (``--set top_k=5``: kaping's
``top_k``), as ``--set`` does for several methods in one eval; auto is the default of ``kgrag ask`` and of the
service, so an operator's ``kgrag serve --set`` must reach the methods it delegates to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from kgrag.graph.property_graph import stored_mapping
from kgrag.methods.base import Method, MethodConfig, MethodConfigError, Trace, found_no_entity, registry
from kgrag.methods.settings import ClientRange
from kgrag.types import Answer, Evidence, Usage

INNER = ("frag", "kaping", "text2cypher")  # the methods auto asks


class AutoConfig(MethodConfig):
    # ask kaping too when frag's top answer is less sure than this (0: never, 1: always). 0.7 on the three
    # user-style KGs' 45 dev questions (frag's confidence weights were fitted on them too): 0.5 never asks (auto =
    # frag: 0.87 / 0.80 / 0.80), 0.7 asks for 11% of the questions and gives 0.87 / 0.93 / 0.93 (best single
    # method 0.87 / 0.93 / 0.80), 0.8 and more lose university's (0.73). Since frag's answer_margin and refitted
    # confidence: 0.93 / 0.93 / 0.93 (frag 0.93 / 0.80 / 0.93), WebQSP proxy first 30 0.80 (results/auto.json)
    second_opinion: Annotated[float, ClientRange(0, 1)] = 0.7


@registry.register("auto")
class Auto(Method):
    """Picks per KG and question: text2cypher on a property graph (frag when its query gives no rows), else frag,
    with kaping's answer kept instead when frag is unsure and kaping is surer."""

    name = "auto"
    Config = AutoConfig
    config: AutoConfig

    def __init__(self, kg: Any, llm: Any = None, embedder: Any = None, **config: Any) -> None:
        """``config`` holds auto's own settings and those of the methods it asks: each goes to every one of them
        that has it (``--set top_k=5`` reaches kaping, ``--set hops=2`` frag), as ``--set`` does for several
        methods in one eval; a setting none of them has is an error, and so is a bad value, here and not at
        the first question that would build the method."""
        if isinstance(embedder, str):  # a spec is a setting of the inner methods, not auto's
            config["embedder"], embedder = embedder, None
        own = {k: v for k, v in config.items() if k in self.Config.model_fields}
        super().__init__(kg, llm=llm, embedder=embedder, **own)
        passed = {k: v for k, v in config.items() if k not in own}
        unknown = sorted(set(passed) - self.setting_names())
        if unknown:
            known = ", ".join(sorted(self.setting_names()))
            raise MethodConfigError(f"method 'auto': no method it asks has {', '.join(unknown)} (settings: {known})")
        self._settings: dict[str, dict[str, Any]] = {}
        for name in INNER:
            cls = _method(name)
            self._settings[name] = {k: v for k, v in passed.items() if k in cls.Config.model_fields}
            self._settings[name]["abstain"] = self.config.abstain  # auto's own settings that every method has
            self._settings[name]["own_knowledge"] = self.config.own_knowledge
            cls.validated(self._settings[name])
        self._inner: dict[str, Method] = {}

    @classmethod
    def setting_names(cls) -> frozenset[str]:
        return frozenset(cls.Config.model_fields).union(*(_method(name).setting_names() for name in INNER))

    def _make(self, name: str) -> Method:
        """The method ``name``, built once per auto instance: building frag loads its router and pattern scorer
        and checks an adapted KG's files, work a question should not repeat."""
        if name not in self._inner:
            settings = {"embedder": self.embedder, **self._settings[name]}  # a spec among the settings wins
            made = _method(name)(self.kg, llm=self.llm, **settings)
            self._inner.setdefault(name, made)  # two threads may build it; both use the first one kept
        return self._inner[name]

    def _route(self, question: str) -> tuple[str, str]:
        if stored_mapping(self.kg) is not None:
            return "text2cypher", "the KG is a property graph: a query can filter, count and rank over its properties"
        return "frag", "a question about entities and their relations: relation paths"

    def retrieve(self, question: str, topic_entities: Sequence[str] | None = None) -> list[Evidence]:
        return self._make(self._route(question)[0]).retrieve(question, topic_entities)

    def answer(self, question: str, topic_entities: Sequence[str] | None = None) -> Answer:
        if self.llm is None:
            raise ValueError(f"method {self.name!r} needs an LLM")
        chosen, why = self._route(question)
        first = self._make(chosen).answer(question, topic_entities)
        candidates = [(chosen, first)]
        sure = _top_confidence(first)
        # kaping links the question as frag does: where frag found no entity of it, kaping would find none either
        if chosen == "frag" and sure < self.config.second_opinion and not found_no_entity(first.trace):
            candidates.append(("kaping", self._make("kaping").answer(question, topic_entities)))
            why += (
                f"; frag's answer had confidence {sure:.2f} < {self.config.second_opinion:g}, so kaping was asked too"
            )
        elif chosen == "text2cypher" and not first.answers:
            candidates.append(("frag", self._make("frag").answer(question, topic_entities)))
            why += "; its query gave no rows, so frag was asked"
        name, best = max(candidates, key=lambda c: _top_confidence(c[1]))
        if len(candidates) > 1:
            why += f" ({_top_confidence(candidates[1][1]):.2f}); kept {name}'s"
        trace = Trace()  # a traced step, so the service streams it like the chosen method's own
        with trace.step("auto", question=question) as step:
            step.outputs.update({"chosen": name, "why": why})
        calls = [call for _, answer in candidates for call in answer.usage.calls]
        seconds = sum(answer.usage.seconds for _, answer in candidates)
        return best.model_copy(
            update={
                "method": self.name,
                # every step that ran, in order (both methods' when kaping was asked), then auto's choice
                "trace": [*(s for _, answer in candidates for s in answer.trace), *trace.steps],
                "usage": Usage.from_calls(calls, seconds),
            }
        )

    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        answer = self.answer(question, topic_entities)  # answer() is the entry point; this keeps the interface
        trace.steps.extend(answer.trace)
        return answer.answers, answer.evidence


def _method(name: str) -> type[Method]:
    from kgrag.methods import get as get_method  # the registry imports this module

    return get_method(name)


def _top_confidence(answer: Answer) -> float:
    """The confidence of the answer listed first (what eval scores as Hit@1 and reports as ``confidence``)."""
    return answer.confidence.get(answer.answers[0], 0.0) if answer.answers else 0.0
