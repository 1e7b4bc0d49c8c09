"""Request bodies of the HTTP API (responses are the library's own types: ``Answer``, ``Evidence``, ``Step``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class QuestionRequest(BaseModel):
    """Body of ``POST /ask``, ``POST /ask/stream`` and ``POST /retrieve``."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="the question, in natural language")
    method: str | None = Field(default=None, description="registered method name (GET /methods); default auto")
    topic_entities: list[str] = Field(default_factory=list, description="entity names; empty = found in the question")
    settings: dict[str, Any] = Field(default_factory=dict, description="method settings, as `kgrag ask --set`")
