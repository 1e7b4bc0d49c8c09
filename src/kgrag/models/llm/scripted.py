"""A scripted LLM that replays canned responses — for testing plumbing only, never for accuracy.

Script file (JSON, or JSONL with one rule per line)::

    {"rules": [{"prompt": "kg_linker", "match": "Kismet", "responses": ["<entities>Kismet</entities>"]}],
     "default": "I don't know"}

A rule applies when its ``prompt`` equals the call's prompt name (if given) and its ``match`` regex is
found in the last message (if given).  A rule's responses are replayed in order; the last one repeats.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kgrag.errors import KGFormatError, LLMError
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages


class ScriptedLLM(LLM):
    def __init__(self, script: str | Path | dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(script, dict):
            data, source = script, "<script>"
        else:
            source = str(script)
            data = self._read(Path(script))
        self.rules: list[dict[str, Any]] = []
        for i, rule in enumerate(data.get("rules", []), start=1):
            responses = rule.get("responses", [rule["response"]] if "response" in rule else None)
            if not isinstance(responses, list) or not responses:
                raise KGFormatError(source, i, "a rule needs 'response' or a non-empty 'responses' list")
            self.rules.append(
                {
                    "prompt": rule.get("prompt"),
                    "match": re.compile(rule["match"], re.S) if rule.get("match") else None,
                    "responses": [str(r) for r in responses],
                    "used": 0,
                }
            )
        self.default: str | None = data.get("default")
        self.model_id = f"scripted:{Path(source).name}"
        self._current_name = "raw"

    @staticmethod
    def _read(path: Path) -> dict[str, Any]:
        if not path.exists():
            raise KGFormatError(str(path), None, "no such script file")
        text = path.read_text("utf-8")
        try:
            data = json.loads(text)
            return data if isinstance(data, dict) else {"rules": data}
        except json.JSONDecodeError:
            rules = []
            for i, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        rules.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise KGFormatError(str(path), i, f"invalid JSON ({exc.msg})") from None
            return {"rules": rules}

    def generate(self, prompt, *, name: str = "raw", **kwargs: Any) -> Generation:  # type: ignore[override]
        self._current_name = name
        return super().generate(prompt, name=name, **kwargs)

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        last = messages[-1]["content"] if messages else ""
        for rule in self.rules:
            if rule["prompt"] is not None and rule["prompt"] != self._current_name:
                continue
            if rule["match"] is not None and not rule["match"].search(last):
                continue
            text = rule["responses"][min(rule["used"], len(rule["responses"]) - 1)]
            rule["used"] += 1
            break
        else:
            if self.default is None:
                raise LLMError(f"scripted LLM has no response for prompt {self._current_name!r}: {last[:80]!r}")
            text = self.default
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        words = list(re.finditer(r"\S+", text))  # a word a token; a reply past max_tokens is cut, as a model's is
        if len(words) > params.max_tokens:
            text = text[: words[params.max_tokens - 1].end()]
        return Generation(text, prompt_tokens, min(len(words), params.max_tokens))
