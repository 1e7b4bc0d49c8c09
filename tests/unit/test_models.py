"""Models layer plumbing: accounting, response cache, scripted LLM, model assembly, endpoint failures."""

from __future__ import annotations

import hashlib
import socket
import threading
import time

import pytest

from kgrag.errors import LLMError, LLMUnavailableError, ModelSetupError
from kgrag.methods import get as get_method
from kgrag.models import manager
from kgrag.models.accounting import track_usage
from kgrag.models.cache import ResponseCache
from kgrag.models.llm import load_llm
from kgrag.models.llm.base import GenerationParams
from kgrag.models.llm.scripted import ScriptedLLM

SCRIPT = {
    "rules": [
        {"prompt": "llm_answer", "match": "Heat", "responses": ["<answers>\nMichael Mann\n</answers>"]},
        {"prompt": "llm_answer", "responses": ["first", "second"]},
    ],
}


def test_accounting_collects_calls_per_block():
    llm = ScriptedLLM(SCRIPT)
    with track_usage() as outer:
        llm.generate("who directed Heat?", name="llm_answer")
        with track_usage() as inner:
            llm.generate("anything", name="llm_answer")
        assert [c.prompt for c in inner] == ["llm_answer"]
    assert len(outer) == 2
    assert outer[0].prompt_tokens == 3 and outer[0].completion_tokens == 4
    assert outer[1].model.startswith("scripted:")


def test_scripted_rules_replay_in_order_and_fail_loudly():
    llm = ScriptedLLM(SCRIPT)
    assert llm.generate("x", name="llm_answer").text == "first"
    assert llm.generate("y", name="llm_answer").text == "second"
    assert llm.generate("z", name="llm_answer").text == "second"
    with pytest.raises(LLMError, match="no response for prompt 'other'"):
        llm.generate("z", name="other")


def test_prompt_token_counts_err_high_and_pass_through_the_service_wrapper():
    """A method fitting a prompt to ``context_window`` counts with the backend's tokenizer where there is one;
    the service's concurrency wrapper must not hide it behind the base class's estimate."""
    from kgrag.service.limits import ConcurrencyLimitedLLM

    class Tokenized(ScriptedLLM):
        context_window = 1000

        def count_tokens(self, text):
            return len(text.split())

    plain = ScriptedLLM({"rules": [], "default": "x"})
    assert plain.context_window is None
    assert plain.count_tokens("m.0abc12 m.0def34") >= 7  # ~2.5 characters a token: identifiers split finely
    messages = [{"role": "system", "content": "a b"}, {"role": "user", "content": "c"}]
    inner = Tokenized({"rules": [], "default": "x"})
    wrapped = ConcurrencyLimitedLLM(inner)
    assert wrapped.context_window == 1000
    assert wrapped.count_tokens("one two three") == 3
    assert wrapped.count_prompt_tokens(messages) == inner.count_prompt_tokens(messages) > 3  # + chat markup


def test_cache_hits_are_free_and_reproducible(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    llm = ScriptedLLM(SCRIPT, cache=cache)
    first = llm.generate("x", name="llm_answer")
    again = llm.generate("x", name="llm_answer")  # the script would now say "second"
    assert (first.text, again.text, again.cached) == ("first", "first", True)
    other = llm.generate("x", name="llm_answer", max_tokens=7)  # other params: a miss
    assert other.text == "second" and not other.cached
    assert len(cache) == 2
    sampled = llm.generate("x", name="llm_answer", top_k=40, min_p=0.05)  # sampling settings are part of the key
    assert not sampled.cached
    # unset sampling settings leave the key as it was before they existed (old caches stay valid)
    assert "top_k" not in GenerationParams().as_dict() and GenerationParams(top_k=40).as_dict()["top_k"] == 40
    reopened = ScriptedLLM(SCRIPT, cache=ResponseCache(tmp_path / "c.sqlite"))
    assert reopened.generate("x", name="llm_answer").cached


def test_generate_decodes_with_the_settings_defaults():
    """A call's settings are built by GenerationParams.of_call, so whoever rebuilds them from a call's keywords
    (benchmarks/text2cypher_replay.py) gets the same cache key: generate's defaults must be the dataclass's."""
    import dataclasses
    import inspect

    from kgrag.models.llm.base import LLM

    signature = inspect.signature(LLM.generate).parameters
    for f in dataclasses.fields(GenerationParams):
        default = [] if f.default is dataclasses.MISSING else f.default
        assert signature[f.name].default in (default, None if f.name == "stop" else default), f.name
    assert GenerationParams.of_call(None) == GenerationParams()
    assert GenerationParams.of_call(("x",), max_tokens=7).as_dict() == {
        **GenerationParams().as_dict(),
        "stop": ["x"],
        "max_tokens": 7,
    }


def test_llm_baseline_answer_usage(movies_kg, tmp_path):
    llm = ScriptedLLM(SCRIPT)
    answer = get_method("llm")(movies_kg, llm=llm).answer("Who directed Heat?")
    assert answer.answers == ["Michael Mann"]
    assert answer.usage.llm_calls == 1 and answer.usage.prompt_tokens > 0
    assert answer.trace[0].name == "answer" and answer.trace[0].llm_calls == 1
    assert not answer.grounded  # no KG evidence
    broken = ScriptedLLM({"rules": []})
    with pytest.raises(LLMError, match="no response"):  # not an empty answer that reads as "none"
        get_method("llm")(movies_kg, llm=broken).answer("?")


def test_unknown_backend_spec():
    with pytest.raises(KeyError, match="unknown LLM backend 'nope'"):
        load_llm("nope:x")


# ---------------------------------------------------------------------- model assembly
def _fake_model(parts, sha):
    return manager.LocalModel(
        name="fake",
        description="",
        filename="fake.gguf",
        size=sum(p.stat().st_size for p in parts),
        sha256=sha,
        requirements=(),
    )


def test_assembly_verifies_and_is_atomic(tmp_path):
    parts = []
    for i, chunk in enumerate([b"GGUF" + b"a" * 1000, b"b" * 5000, b"c" * 7]):
        path = tmp_path / f"part{i}.bin"
        path.write_bytes(chunk)
        parts.append(path)
    good_sha = hashlib.sha256(b"".join(p.read_bytes() for p in parts)).hexdigest()
    dest = tmp_path / "out" / "fake.gguf"
    seen = []
    result = manager.assemble(
        _fake_model(parts, good_sha), parts=parts, dest=dest, progress=lambda d, t: seen.append(d)
    )
    assert result == dest and dest.read_bytes() == b"".join(p.read_bytes() for p in parts)
    assert seen[-1] == dest.stat().st_size
    assert (tmp_path / "out" / "fake.gguf.sha256").read_text().strip() == good_sha


def test_assembly_rejects_wrong_checksum_and_leaves_nothing(tmp_path):
    part = tmp_path / "part.bin"
    part.write_bytes(b"x" * 4096)
    dest = tmp_path / "out" / "fake.gguf"
    with pytest.raises(ModelSetupError, match="sha256"):
        manager.assemble(_fake_model([part], "0" * 64), parts=[part], dest=dest)
    assert list((tmp_path / "out").iterdir()) == []
    with pytest.raises(ModelSetupError, match="missing part"):
        manager.assemble(_fake_model([part], "0" * 64), parts=[part, tmp_path / "gone.bin"], dest=dest)


def test_resolve_errors():
    with pytest.raises(ModelSetupError, match="unknown local model 'gpt-17'"):
        manager.resolve("gpt-17")
    with pytest.raises(ModelSetupError, match="no such GGUF file"):
        manager.resolve("/nowhere/model.gguf")


# ---------------------------------------------------------------------- endpoint failures
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_endpoint_down_retries_then_names_the_url():
    port = _free_port()  # nothing listens: connection refused
    url = f"http://127.0.0.1:{port}/v1"
    llm = load_llm(f"openai:some-model@{url}", max_retries=2, backoff=0.05, timeout=2)
    start = time.perf_counter()
    with pytest.raises(LLMUnavailableError, match=f"{url}: connection failed .*refused.*3 attempts"):
        llm.generate("hi")
    assert time.perf_counter() - start >= 0.05 + 0.1  # backoff happened


def test_stalled_endpoint_times_out():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    conns = []
    stop = threading.Event()

    def accept_and_stall():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conns.append(server.accept()[0])  # read nothing, answer nothing
            except OSError:
                continue

    thread = threading.Thread(target=accept_and_stall, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    try:
        llm = load_llm(f"openai:m@{url}", max_retries=1, backoff=0.01, timeout=0.5)
        start = time.perf_counter()
        with pytest.raises(LLMUnavailableError, match=r"no reply within 0.5 s \(1 attempt"):
            llm.generate("hi")
        assert 0.5 <= time.perf_counter() - start < 2  # the timeout bounds the whole call: no second attempt
    finally:
        stop.set()
        thread.join()
        for c in conns:
            c.close()
        server.close()
