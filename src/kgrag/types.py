"""Typed, JSON-serialisable results that every method returns (see docs/DESIGN.md, "Core types")."""

from __future__ import annotations

from typing import Any, NamedTuple

from pydantic import BaseModel, Field


class TokenLogprob(NamedTuple):
    """One generated token as the model saw it: its log-probability, the likeliest token's, and the entropy (in
    nats) of that step's distribution — all among the tokens a grammar allowed, when one was given."""

    token: str
    logprob: float
    best: float
    entropy: float


class LLMCall(BaseModel):
    """One LLM call as the accounting layer saw it."""

    prompt: str = Field(description="prompt name (file under kgrag/prompts) or 'raw'")
    model: str
    prompt_tokens: int = 0
    evaluated_prompt_tokens: int = Field(
        default=0, description="prompt tokens the model read, i.e. not restored from a kept prefix; 0 when cached"
    )
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    token_logprobs: list[TokenLogprob] | None = Field(
        default=None, exclude=True, description="the reply's tokens with their log-probabilities, where known"
    )


class Usage(BaseModel):
    """Aggregated cost of answering one question."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    evaluated_prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    seconds: float = 0.0
    cached_calls: int = 0
    calls: list[LLMCall] = Field(default_factory=list)

    @classmethod
    def from_calls(cls, calls: list[LLMCall], seconds: float = 0.0) -> Usage:
        return cls(
            llm_calls=len(calls),
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            evaluated_prompt_tokens=sum(c.evaluated_prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            llm_seconds=round(sum(c.seconds for c in calls), 4),
            seconds=round(seconds, 4),
            cached_calls=sum(c.cached for c in calls),
            calls=list(calls),
        )


class Evidence(BaseModel):
    """A triple or a path from the KG, with where it came from.

    ``entities``/``relations`` alternate along the path (``len(entities) == len(relations) + 1``);
    ``triples`` are KG triple ids when the evidence comes from the KG itself (empty for e.g. Cypher rows).
    """

    text: str
    entities: list[str] = Field(default_factory=list)
    relations: list[str] = Field(default_factory=list)
    triples: list[int] = Field(default_factory=list)
    score: float | None = None
    source: str = Field(default="", description="the step that found it, e.g. 'path', 'cypher', 'scoring'")


class Step(BaseModel):
    """One step of a method's trace: what went in, what came out, how long it took."""

    name: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] = Field(default_factory=dict)
    seconds: float = 0.0
    llm_calls: int = 0


class Answer(BaseModel):
    """What ``Method.answer`` returns."""

    question: str
    method: str
    answers: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    support: dict[str, list[int]] = Field(
        default_factory=dict,
        description="per supported answer, the KG triple ids of the shortest chain of evidence triples from an "
        "entity of the question to it ([]: found in a result row, not a KG path); answers missing here have no "
        "support and are listed after the supported ones",
    )
    set_aside: list[str] = Field(
        default_factory=list,
        description="names the model gave without support while the evidence supported other answers: its own "
        "knowledge, which the prompts allow only where the evidence is silent (setting own_knowledge); not answers, "
        "kept to be shown after them",
    )
    doubtful: list[str] = Field(
        default_factory=list,
        description="names the model listed after its first answer with a confidence below answer_spread times the "
        "surest answer's (setting answer_spread); not answers, kept to be shown after them",
    )
    grounded: bool = Field(default=False, description="there are answers and every one has support")
    confidence: dict[str, float] = Field(
        default_factory=dict,
        description="per answer, the probability that it is right (0-1), from the signals below under weights "
        "fitted on dev questions of several KGs (kgrag.methods.confidence)",
    )
    signals: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="per answer, what its confidence was read from (kgrag.methods.confidence)"
    )
    abstained: str | None = Field(
        default=None,
        description="why there is no answer when the method gave none on purpose: the model only repeated the "
        "question's words, no entity of the question is in the KG and nothing supports an answer, or no answer's "
        "confidence reached the ``abstain`` setting",
    )
    trace: list[Step] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    error: str | None = Field(
        default=None,
        description="None from Method.answer, which raises LLMError when the LLM fails; set only by "
        "methods.base.answer_or_failure for scripts that record a failed question and go on",
    )
