"""Prompts are files, not strings in code: ``kgrag/prompts/<name>.toml``, loaded by name.

A prompt file has ``description``, optional decoding defaults (``max_tokens``, ``temperature``, ``stop``,
``top_k``, ``min_p``) and ``system`` / ``user`` templates whose ``{{variable}}`` placeholders are filled by
:meth:`Prompt.render`.
Double braces keep single braces free for JSON and Cypher examples inside prompts.  The output tags a prompt
asks for are listed in ``tags`` so that the parser and the prompt cannot drift apart.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class Prompt:
    name: str
    user: str
    system: str = ""
    description: str = ""
    max_tokens: int = 256
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    top_k: int | None = None
    min_p: float | None = None
    tags: tuple[str, ...] = ()
    variables: frozenset[str] = field(default_factory=frozenset)

    def render(self, **values: Any) -> list[dict[str, str]]:
        """Chat messages with every ``{{name}}`` replaced; a missing value is an error, not a blank."""
        missing = self.variables - values.keys()
        if missing:
            raise KeyError(f"prompt {self.name!r} needs values for: {', '.join(sorted(missing))}")

        def fill(template: str) -> str:
            return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)

        messages = []
        if self.system:
            messages.append({"role": "system", "content": fill(self.system).strip()})
        messages.append({"role": "user", "content": fill(self.user).strip()})
        return messages


def _parse(name: str, text: str, origin: str) -> Prompt:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{origin}: invalid prompt file ({exc})") from None
    if "user" not in data:
        raise ValueError(f"{origin}: a prompt needs a 'user' template")
    variables = frozenset(_PLACEHOLDER.findall(data.get("system", "") + data["user"]))
    return Prompt(
        name=name,
        user=data["user"],
        system=data.get("system", ""),
        description=data.get("description", ""),
        max_tokens=int(data.get("max_tokens", 256)),
        temperature=float(data.get("temperature", 0.0)),
        stop=tuple(data.get("stop", ())),
        top_k=int(data["top_k"]) if "top_k" in data else None,
        min_p=float(data["min_p"]) if "min_p" in data else None,
        tags=tuple(data.get("tags", ())),
        variables=variables,
    )


@cache
def load_prompt(name: str, directory: str | None = None) -> Prompt:
    """Load prompt ``name`` from the package (or from ``directory``, to try a variant without editing kgrag)."""
    if directory is not None:
        path = Path(directory) / f"{name}.toml"
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such prompt file")
        return _parse(name, path.read_text("utf-8"), str(path))
    res = resources.files("kgrag.prompts").joinpath(f"{name}.toml")
    if not res.is_file():
        raise FileNotFoundError(f"no prompt named {name!r} in kgrag/prompts; available: {', '.join(available())}")
    return _parse(name, res.read_text("utf-8"), f"kgrag/prompts/{name}.toml")


def available() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files("kgrag.prompts").iterdir() if p.name.endswith(".toml"))
