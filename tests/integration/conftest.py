"""Fixtures of the integration tests that run the real local runtime."""

from __future__ import annotations

import pytest

from kgrag.models import manager
from kgrag.models.llm import LLM, load_llm


@pytest.fixture(scope="module")
def smollm() -> LLM:
    """The SmolLM2 test model on llama.cpp: a plumbing model, for what a grammar lets be written, never answers."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (kgrag[local]) is not installed")
    if not manager.get_model(manager.TEST_MODEL).installed():
        pytest.skip("the SmolLM2 test model is not installed: run `kgrag models setup smollm2-135m`")
    return load_llm(f"llamacpp:{manager.TEST_MODEL}")
