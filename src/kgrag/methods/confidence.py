"""How sure an answer is: a probability from signals every method already has, calibrated on dev data.

A wrong answer used to look exactly as sure as a right one. Each answer now gets a confidence in [0, 1], read
from what the evidence says about it — the same signals for every method, so a user can compare them and set
one ``abstain`` threshold:

- ``supported``: a chain of checked evidence triples joins it to an entity of the question (:mod:`.support`);
- ``hops``: how long that chain is (a 1-hop fact is surer than the far end of a 3-hop walk);
- ``mentions``: how many evidence items name it (more independent paths, surer);
- ``rank``: how early the retrieval ranked the first evidence naming it (evidence is listed best first);
- ``first``: the model put it first among its answers;
- ``answers``: how many answers the model gave (a long list is a guess spread thin);
- ``options``: how many distinct entities the evidence showed (more to choose from, easier to choose wrong);
- ``llm``: the probability the model gave the answer's words as it wrote them (the product over their tokens,
  among the continuations a grammar allowed); ``llm_ratio``: the same relative to the likeliest token at each
  step (1 when the model wrote its own first choice, less where the sampler steered it); ``llm_entropy``: how spread
  the model's distribution was over those steps. All where the backend reports token log-probabilities (local
  llama.cpp models) and the answer is written in the reply; ``llm_known`` says whether it was (a cached reply
  from before they were kept, or an endpoint that does not give them, leaves them at 0);
- ``misfit``: how far the relation path to it is from what the question asks, ``1 - fit`` of :mod:`.pattern_fit`
  (0: the question's best reading by FRAG's zero-shot pattern scorer reaches it; 1: no reading near the best
  does). 0 where it cannot be read (no entity of the question with relations to follow, a Cypher row, the
  no-KG baseline): a signal that is absent says nothing against the answer;
- ``sole``: the answer was the only option and no model call chose it (ultrag's query found one entity, so its
  arbitrator is not asked): the ``llm`` signals are then unknown, and this says why.

The probability is a logistic function of these with one weight vector per method, fitted on dev questions of
several KGs (``benchmarks/confidence_fit.py`` writes ``confidence.json`` next to this module, with what it was
fitted on and the calibration error on questions it was not fitted on). The signals are the same on every KG;
nothing in them names a relation or a domain. A method without fitted weights gets the pooled ones.

A trained artefact changes what the signals mean: frag with MetaQA's trained pattern scorer answers 0.94–0.98
of the questions right with a long evidence list the zero-shot weights read as a reason for doubt. Weights
fitted on answers given with such an artefact are stored under ``"<method>:<artefact key>"`` (:func:`artefact_key`
of the artefact's provenance record, which names the KG it was trained on) and used only with that artefact,
so only on that KG, like the artefact itself.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from kgrag.linking.normalize import normalize
from kgrag.types import Evidence, TokenLogprob

SIGNALS = (
    "supported",
    "hops",
    "mentions",
    "rank",
    "first",
    "answers",
    "options",
    "llm",
    "llm_ratio",
    "llm_entropy",
    "llm_known",
    "misfit",
    "sole",
)
WEIGHTS_FILE = Path(__file__).with_name("confidence.json")


def answer_signals(
    answers: Sequence[str],
    evidence: Sequence[Evidence],
    support: dict[str, list[int]],
    token_logprobs: Sequence[TokenLogprob] | None = None,
    fit: dict[str, float] | None = None,
    sole: Sequence[str] = (),
) -> dict[str, dict[str, float]]:
    """Per answer, the signals of the module docstring (each scaled to about 0–1, so weights compare);
    ``token_logprobs`` are those of the reply the answers were read from, ``fit`` maps answers to their
    :func:`~kgrag.methods.pattern_fit.pattern_fit` (empty or None: not read). ``sole`` answers were the only
    option, so no model call chose them (ultrag's query found one entity): ``sole`` says so, and the model's
    probabilities are unknown for them."""
    fit = fit or {}
    written = written_probabilities(answers, token_logprobs or [])
    keys = [{normalize(name) for name in ev.entities} for ev in evidence]
    options = len(set().union(*keys)) if keys else 0
    out: dict[str, dict[str, float]] = {}
    for i, answer in enumerate(answers):
        key = normalize(answer)
        where = [j for j, names in enumerate(keys) if key in names]
        chain = support.get(answer)
        out[answer] = {
            "supported": float(chain is not None),
            "hops": min(len(chain), 4) / 4 if chain else 0.0,
            "mentions": math.log1p(len(where)) / math.log1p(50),
            "rank": 1.0 - where[0] / len(keys) if where else 0.0,
            "first": float(i == 0),
            "answers": math.log1p(len(answers)) / math.log1p(20),
            "options": math.log1p(options) / math.log1p(200),
            **written.get(answer, dict.fromkeys(("llm", "llm_ratio", "llm_entropy"), 0.0)),
            "llm_known": float(answer in written),
            "misfit": round(1.0 - fit[answer], 4) if answer in fit else 0.0,
            "sole": float(answer in sole),
        }
    return out


def written_probabilities(
    answers: Sequence[str], token_logprobs: Sequence[TokenLogprob]
) -> dict[str, dict[str, float]]:
    """For each answer written in the reply (its first occurrence, case-insensitive), what the model thought of
    the tokens that wrote it: ``llm``, ``llm_ratio`` and ``llm_entropy`` of the module docstring. Answers the
    reply does not contain verbatim are absent."""
    text = "".join(t.token for t in token_logprobs).lower()
    starts, position = [], 0
    for t in token_logprobs:
        starts.append(position)
        position += len(t.token)
    out: dict[str, dict[str, float]] = {}
    for answer in answers:
        at = text.find(answer.lower()) if answer else -1
        if at < 0:
            continue
        end = at + len(answer)
        steps = [t for t, s in zip(token_logprobs, starts) if s < end and s + len(t.token) > at]
        out[answer] = {
            "llm": round(math.exp(sum(t.logprob for t in steps)), 6),
            "llm_ratio": round(math.exp(sum(min(0.0, t.logprob - t.best) for t in steps)), 6),
            "llm_entropy": round(min(1.0, sum(t.entropy for t in steps) / len(steps) / 10), 6),
        }
    return out


@cache
def _weights() -> dict[str, dict[str, float]]:
    """The fitted weights per method (and ``"*"``, pooled over methods); empty when never fitted."""
    if not WEIGHTS_FILE.exists():
        return {}
    return json.loads(WEIGHTS_FILE.read_text("utf-8")).get("weights", {})


def probability(signals: dict[str, float], weights: dict[str, float]) -> float:
    """The logistic function of ``weights["bias"] + Σ weights[s] * signals[s]``."""
    z = weights.get("bias", 0.0) + sum(weights.get(name, 0.0) * value for name, value in signals.items())
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def artefact_key(provenance: dict) -> str:
    """A short stable name for a trained artefact: the hash of its provenance record (the KG checksum and the
    question source it was trained on)."""
    return hashlib.sha256(json.dumps(provenance, sort_keys=True).encode()).hexdigest()[:12]


def fitted(key: str) -> bool:
    """Whether weights were fitted under ``key`` (a method name, or ``"<method>:<artefact key>"``)."""
    return key in _weights()


def confidences(method: str, signals: dict[str, dict[str, float]]) -> dict[str, float]:
    """Each answer's confidence under ``method``'s fitted weights (the pooled ones when it has none; 0.5 for
    every answer when nothing was ever fitted)."""
    table = _weights()
    weights = table.get(method) or table.get("*")
    if not weights:
        return {answer: 0.5 for answer in signals}
    return {answer: round(probability(values, weights), 4) for answer, values in signals.items()}


def less_sure(answers: list[str], sure: dict[str, float], spread: float | None) -> tuple[list[str], list[str]]:
    """(answers kept, answers moved out): after the first answer, those whose confidence is below ``spread``
    times the surest one's. The first stays whatever its confidence (Hit@1 reads it; ``abstain`` is the
    setting that drops it). ``spread`` None keeps every answer."""
    if spread is None or len(answers) < 2:
        return list(answers), []
    bar = spread * max(sure.get(a, 0.0) for a in answers)
    kept = [a for k, a in enumerate(answers) if k == 0 or sure.get(a, 0.0) >= bar]
    return kept, [a for a in answers if a not in kept]
