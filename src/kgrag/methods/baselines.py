"""Baselines: ``llm`` (question only, no KG)."""

from __future__ import annotations

from kgrag.methods.base import Method, MethodConfig, Trace, registry
from kgrag.prompts import load_prompt
from kgrag.prompts.tags import parse_tags, split_items
from kgrag.types import Evidence


def ask_for_answers(method: Method, prompt_name: str, **values: str) -> list[str]:
    """Render a prompt that returns ``<answers>``, call the method's LLM, parse the answers defensively."""
    prompt = load_prompt(prompt_name)
    assert method.llm is not None
    gen = method.llm.generate(
        prompt.render(**values),
        name=prompt.name,
        max_tokens=prompt.max_tokens,
        temperature=prompt.temperature,
        stop=list(prompt.stop),
    )
    parsed = parse_tags(gen.text, prompt.tags or ["answers"])
    items = split_items(parsed.get("answers"))
    if not items and "<" not in gen.text:  # the model ignored the format: take its lines as answers
        items = split_items(gen.text)
    return items


class LLMOnlyConfig(MethodConfig):
    pass


@registry.register("llm")
class LLMOnly(Method):
    """The no-KG baseline: what the model knows by itself."""

    name = "llm"
    Config = LLMOnlyConfig

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
