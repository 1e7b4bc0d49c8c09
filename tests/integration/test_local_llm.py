"""The real local runtime: llama-cpp-python with the SmolLM2 test model, directly and behind its
OpenAI-compatible server. SmolLM2 is only a plumbing model: these tests check mechanics, not answers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from kgrag.models import manager
from kgrag.models.accounting import track_usage
from kgrag.models.llm import load_llm
from kgrag.processes import stop_process

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def smollm_path():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (kgrag[local]) is not installed")
    model = manager.get_model(manager.TEST_MODEL)
    if not model.installed():
        pytest.skip("the SmolLM2 test model is not installed: run `kgrag models setup smollm2-135m`")
    return manager.setup(manager.TEST_MODEL, install=False)


def test_llamacpp_generate_counts_tokens(smollm_path):
    llm = load_llm(f"llamacpp:{manager.TEST_MODEL}")
    with track_usage() as calls:
        gen = llm.generate("What is the capital of France? Answer with one word.", max_tokens=12, name="probe")
    assert gen.text.strip()
    assert 0 < gen.completion_tokens <= 12 and gen.prompt_tokens > 5
    assert [c.prompt for c in calls] == ["probe"] and calls[0].seconds > 0
    sampled = llm.generate("Name a colour.", max_tokens=4, temperature=0.3, top_k=40, min_p=0.05)  # KG-RAG's settings
    assert 0 < sampled.completion_tokens <= 4


def test_llamacpp_counts_only_the_prompt_tokens_it_reads(smollm_path):
    """A second prompt sharing a long prefix with the first reads only its new suffix (KV prefix reuse), and
    the accounting says so; a response-cache hit reads nothing."""
    llm = load_llm(f"llamacpp:{manager.TEST_MODEL}")
    shared = "Facts: " + " ".join(f"entity{i} is related to entity{i + 1}." for i in range(40))
    first = llm.generate(shared + " Question: what is entity3 related to?", max_tokens=3)
    with track_usage() as calls:
        second = llm.generate(shared + " Question: what is entity7 related to?", max_tokens=3)
    assert first.evaluated > 200
    assert 0 < second.evaluated < 30 < second.prompt_tokens
    assert calls[0].evaluated_prompt_tokens == second.evaluated


def test_llamacpp_constrained_output(smollm_path):
    llm = load_llm(f"llamacpp:{manager.TEST_MODEL}")
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    gen = llm.generate("Name a city in France as JSON.", json_schema=schema, max_tokens=40)
    assert isinstance(json.loads(gen.text)["city"], str)
    gen = llm.generate("Is Paris in France? Answer yes or no.", grammar='root ::= "yes" | "no"', max_tokens=4)
    assert gen.text in ("yes", "no")


def test_llamacpp_reports_token_logprobs_and_the_cache_keeps_them(smollm_path, tmp_path):
    """What the model thought of each token it wrote (answer confidence reads it), before the grammar steered it;
    a cached reply brings the same numbers back."""
    import math

    from kgrag.models.cache import ResponseCache

    llm = load_llm(f"llamacpp:{manager.TEST_MODEL}", cache=ResponseCache(tmp_path / "c.sqlite"))
    grammar = 'root ::= "<answers>" ("Paris" | "London") "</answers>"'
    gen = llm.generate("Capital of France? Reply in <answers></answers>.", grammar=grammar, max_tokens=12)
    assert gen.token_logprobs and "".join(t.token for t in gen.token_logprobs) in gen.text
    for t in gen.token_logprobs:
        assert t.logprob <= t.best + 1e-6 <= 1e-6 and t.entropy >= 0 and math.isfinite(t.logprob)
    again = llm.generate("Capital of France? Reply in <answers></answers>.", grammar=grammar, max_tokens=12)
    assert again.cached and [t.token for t in again.token_logprobs] == [t.token for t in gen.token_logprobs]
    assert all(abs(a.logprob - b.logprob) < 1e-3 for a, b in zip(again.token_logprobs, gen.token_logprobs))


def test_llamacpp_context_overflow_is_a_clear_error(smollm_path):
    from kgrag.errors import LLMError

    llm = load_llm(f"llamacpp:{manager.TEST_MODEL}", n_ctx=256)
    with pytest.raises(LLMError, match="context window"):
        llm.generate("word " * 600, max_tokens=4)


def test_prefix_states_restore_earlier_prompts_without_changing_outputs(smollm_path):
    """Two templates alternating (as in multi-call methods): the second round restores each template's KV
    state from the prefix cache instead of re-reading it, and greedy outputs stay what a fresh model says."""
    from kgrag.models.llm.llamacpp import _load_llama

    system_a = "You answer questions about films. " * 20
    system_b = "You list facts about cities, one per line. " * 20
    prompts = [(system_a, "Who directed Heat?"), (system_b, "Paris"), (system_a, "Who directed Alien?")]
    fresh = _load_llama(str(smollm_path), 2048, 2, 0)  # this test's own instance (n_ctx 2048), prefix states on
    assert fresh.cache is not None
    outputs = []
    for system, user in prompts + prompts:
        out = fresh.create_chat_completion(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            max_tokens=8,
            temperature=0.0,
        )
        outputs.append(out["choices"][0]["message"]["content"])
    assert outputs[:3] == outputs[3:]  # same answers when states are restored
    assert len(fresh.cache.cache_state) >= 3 and all(len(s.scores) == 0 for s in fresh.cache.cache_state.values())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(smollm_path, tmp_path_factory):
    pytest.importorskip("uvicorn", reason="llama-cpp-python[server] is not installed")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed in the finally below
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(smollm_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_threads",
            "2",
            "--n_ctx",
            "2048",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,  # a file, not a pipe: an unread pipe fills up and blocks the server
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 90
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"llama_cpp.server did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        stop_process(proc, timeout=20)
        log.close()


def test_openai_backend_against_real_server(llama_server):
    llm = load_llm(f"openai:smollm2@{llama_server}", timeout=60, max_retries=1)
    with track_usage() as calls:
        gen = llm.generate(
            [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Say hello."}],
            max_tokens=10,
            name="hello",
        )
    assert gen.text.strip() and 0 < gen.completion_tokens <= 10 and gen.prompt_tokens > 0
    assert calls[0].model == f"openai:smollm2@{llama_server}"


def test_cli_ask_llm_baseline_json(smollm_path, tmp_path):
    from kgrag.graph.kg import KnowledgeGraph
    from tests.conftest import MOVIES, run_cli

    store = KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg")
    proc = run_cli(
        "ask",
        str(store),
        "Who directed Heat?",
        "--method",
        "llm",
        "--llm",
        f"llamacpp:{manager.TEST_MODEL}",
        "--json",
        ok=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["method"] == "llm" and isinstance(answer["answers"], list)
    assert answer["usage"]["llm_calls"] == 1 and answer["usage"]["prompt_tokens"] > 0
    assert answer["error"] is None


def test_llamacpp_loads_in_the_background_and_reports_a_damaged_file(smollm_path, tmp_path):
    """Building the LLM returns at once while the weights load in a thread (what `kgrag ask` overlaps with
    linking and retrieval); a file that is not a model is an LLMError at the first use, naming the file."""
    import threading

    from kgrag.errors import LLMError

    llm = load_llm(f"llamacpp:{smollm_path}")
    llm.wait_loaded()
    assert llm.count_tokens("hello world") > 0
    damaged = tmp_path / "damaged.gguf"
    damaged.write_bytes(b"GGUF" + b"\0" * 64)
    bad = load_llm(f"llamacpp:{damaged}")  # returns: the load runs in "kgrag-llm-load"
    assert any(t.name == "kgrag-llm-load" for t in threading.enumerate()) or bad._loading.done()
    with pytest.raises(LLMError, match=r"damaged\.gguf"):
        bad.wait_loaded()
    with pytest.raises(LLMError, match=r"damaged\.gguf"):
        bad.generate("hi", max_tokens=2)


def test_kgrag_ask_prints_while_the_model_loads(smollm_path, tmp_path):
    """The model loads in a thread while kgrag ask links and retrieves: whatever the command prints meanwhile
    must reach the terminal (llama-cpp-python's own quiet load would point stdout and stderr at /dev/null for
    the whole process). An answer that needs no LLM call and an error both print, with their exit codes."""
    from kgrag.graph.kg import KnowledgeGraph
    from tests.conftest import MOVIES

    store = KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg")
    ask = [sys.executable, "-m", "kgrag", "ask", str(store), "--llm", f"llamacpp:{smollm_path}", "-m", "frag"]
    unknown = subprocess.run([*ask, "Which team owns the warp-drive-service?"], capture_output=True, text=True)
    assert unknown.returncode == 0 and "no entity of the question was found in the KG" in unknown.stdout
    bad = subprocess.run([*ask, "Who directed Heat?", "--set", "hops=many"], capture_output=True, text=True)
    assert bad.returncode == 2 and "hops" in bad.stderr


def test_llamacpp_score_reply_matches_a_full_logits_pass_and_generation_goes_on(smollm_path):
    """score_reply decodes only what the KV cache lacks, with logits for the reply's positions, on the shared
    context: the log-probabilities equal a separate logits_all pass, and generating afterwards gives what it gave
    before the scoring."""
    import numpy as np
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llm = load_llm(f"llamacpp:{manager.TEST_MODEL}")
    chats = [
        [{"role": "system", "content": "Write the question."}, {"role": "user", "content": f"Query:\n{q}"}]
        for q in ("Heat | director | ?", "x1 | director | Heat\nx1 | genre | ?")
    ]
    llm.generate(chats[0], max_tokens=8)
    before = llm.generate(chats[0], max_tokens=8).text  # a repeat: llama.cpp decodes the prompt's last token again
    with track_usage() as calls:
        scores = llm.score_reply(chats, "who directed Heat", name="fit")
    assert [c.prompt for c in calls] == ["fit"] and 0 < calls[0].evaluated_prompt_tokens <= calls[0].prompt_tokens
    assert llm.score_reply(chats[::-1], "who directed Heat") == scores[::-1]
    assert llm.generate(chats[0], max_tokens=8).text == before
    ref = Llama(model_path=str(smollm_path), n_ctx=512, logits_all=True, verbose=False)
    fmt = Jinja2ChatFormatter(template=ref.metadata["tokenizer.chat_template"], eos_token="", bos_token="")
    answer = ref.tokenize(b"who directed Heat", add_bos=False, special=False)
    for chat, score in zip(chats, scores):
        head = ref.tokenize(fmt(messages=chat).prompt.encode(), add_bos=True, special=True)
        ref.reset()
        ref.eval(head + answer)
        logits = ref.scores[len(head) - 1 : len(head) + len(answer) - 1].astype(np.float64)
        top = logits.max(axis=1)
        lse = top + np.log(np.exp(logits - top[:, None]).sum(axis=1))
        assert abs(float((logits[np.arange(len(answer)), answer] - lse).sum()) - score) < 1e-3
