"""The contract every registered LLM backend keeps, each built from its spec string by ``load_llm``.

A call returns a :class:`Generation` (text, token counts, seconds), is reported to the accounting layer under
its prompt name, gives the same text again at temperature 0, and with a response cache the repeat is served
from the cache without reaching the backend. The ``openai`` backend runs against the local fake server of
``tests/llm_server.py``; ``llamacpp`` runs the SmolLM2 test model and is skipped when it is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from kgrag.models.accounting import track_usage
from kgrag.models.cache import ResponseCache
from kgrag.models.llm import LLM, Generation, backends, load_llm
from tests.llm_server import fake_llm_server, ok

ANSWER = "<answers>\nMichael Mann\n</answers>"
MESSAGES = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Who directed Heat?"}]


@contextmanager
def _scripted(tmp: Path) -> Iterator[tuple[str, Callable[[], int] | None]]:
    script = tmp / "script.json"
    script.write_text(json.dumps({"default": ANSWER}))
    yield f"scripted:{script}", None


@contextmanager
def _openai(tmp: Path) -> Iterator[tuple[str, Callable[[], int] | None]]:
    with fake_llm_server(ok(ANSWER)) as server:
        yield f"openai:m@{server.url}", lambda: server.requests


@contextmanager
def _llamacpp(tmp: Path) -> Iterator[tuple[str, Callable[[], int] | None]]:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (kgrag[local]) is not installed")
    from kgrag.models import manager

    if not manager.get_model(manager.TEST_MODEL).installed():
        pytest.skip("the SmolLM2 test model is not installed: run `kgrag models setup smollm2-135m`")
    yield f"llamacpp:{manager.TEST_MODEL}", None


# registry name -> the spec of a working instance, and (where it can be seen) how many requests reached it
SETUPS: dict[str, Callable[[Path], AbstractContextManager[tuple[str, Callable[[], int] | None]]]] = {
    "scripted": _scripted,
    "openai": _openai,
    "llamacpp": _llamacpp,
}
SLOW = {"llamacpp"}  # loads a model


@pytest.fixture(
    scope="module",
    params=[pytest.param(kind, marks=pytest.mark.slow) if kind in SLOW else kind for kind in backends],
)
def backend(request, tmp_path_factory) -> Iterator[tuple[str, str, Callable[[], int] | None]]:
    kind = request.param
    assert kind in SETUPS, f"no contract setup for the LLM backend {kind!r}: add one to SETUPS"
    with SETUPS[kind](tmp_path_factory.mktemp(kind)) as (spec, requests):
        yield kind, spec, requests


def _generate(llm: LLM) -> Generation:
    return llm.generate(MESSAGES, name="contract", max_tokens=8, temperature=0.0)


class TestLLMContract:
    def test_is_an_llm_named_by_its_backend(self, backend):
        kind, spec, _ = backend
        llm = load_llm(spec)
        assert isinstance(llm, LLM) and llm.model_id.startswith(f"{kind}:")

    def test_a_call_is_a_generation_and_is_accounted(self, backend):
        llm = load_llm(backend[1])
        with track_usage() as calls:
            gen = _generate(llm)
        assert isinstance(gen, Generation) and isinstance(gen.text, str) and gen.text.strip()
        assert isinstance(gen.prompt_tokens, int) and isinstance(gen.completion_tokens, int)
        assert gen.prompt_tokens >= 0 and gen.completion_tokens >= 0 and gen.seconds >= 0 and not gen.cached
        assert [(c.prompt, c.model, c.cached) for c in calls] == [("contract", llm.model_id, False)]
        assert (calls[0].prompt_tokens, calls[0].completion_tokens) == (gen.prompt_tokens, gen.completion_tokens)

    def test_temperature_zero_gives_the_same_text_again(self, backend):
        llm = load_llm(backend[1])
        assert _generate(llm).text == _generate(llm).text

    def test_a_cached_repeat_does_not_reach_the_backend(self, backend, tmp_path):
        _, spec, requests = backend
        llm = load_llm(spec, cache=ResponseCache(tmp_path / "cache.sqlite"))
        first = _generate(llm)
        before = requests() if requests else None
        with track_usage() as calls:
            again = _generate(llm)
        assert again.cached and again.text == first.text and calls[0].cached
        assert (again.prompt_tokens, again.completion_tokens) == (first.prompt_tokens, first.completion_tokens)
        if requests:
            assert requests() == before

    def test_malformed_messages_are_refused_before_any_call(self, backend):
        llm = load_llm(backend[1])
        with track_usage() as calls, pytest.raises(ValueError, match="role"):
            llm.generate([{"content": "no role"}])
        assert calls == []
