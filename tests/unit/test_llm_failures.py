"""An OpenAI-compatible endpoint that fails: the backend retries what a retry can fix, within one deadline,
honours Retry-After, turns garbage into one clear LLMError, and the CLI exits non-zero with one line.

Every case runs against a real HTTP server on 127.0.0.1 (tests/llm_server.py); the cases are listed in
tests/fixtures/attacks/llm/README.md.
"""

from __future__ import annotations

import email.utils
import json
import subprocess
import time

import pytest

from kgrag.errors import LLMError, LLMResponseError, LLMUnavailableError
from kgrag.models.llm.openai_compat import OpenAICompatLLM, retry_after_seconds
from tests.conftest import run_cli
from tests.llm_server import completion, drip, drip_headers, fake_llm_server, hang, huge, ok, refused_url, send

FAST = {"backoff": 0.01, "max_retries": 2}


def llm(url: str, **kwargs) -> OpenAICompatLLM:
    return OpenAICompatLLM("m", url, **{**FAST, **kwargs})


def failure(url: str, **kwargs) -> tuple[LLMError, float]:
    """The error one generate() call raises, and how long it took."""
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        llm(url, **kwargs).generate("Who directed Heat?")
    return info.value, time.monotonic() - start


def one_line(exc: BaseException, limit: int = 400) -> str:
    text = str(exc)
    assert "\n" not in text and len(text) <= limit, text
    return text


# ---------------------------------------------------------------------- what a retry can fix
def test_refused_connection_is_unavailable_and_names_the_url():
    url = refused_url()
    exc, seconds = failure(url)
    assert isinstance(exc, LLMUnavailableError)
    assert url in one_line(exc) and "refused" in str(exc).lower() and "3 attempts" in str(exc)
    assert seconds < 30  # not waited out to the 120 s deadline (loose: a 2 s bound flaked under load)


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_retried_exactly_max_retries_times(status):
    with fake_llm_server(send(status, {"error": {"message": "model crashed"}})) as server:
        exc, _ = failure(server.url)
    assert isinstance(exc, LLMUnavailableError) and f"HTTP {status}" in one_line(exc) and "model crashed" in str(exc)
    assert server.requests == 3  # 1 + max_retries: the SDK's own retries are off, nothing multiplies


def test_html_error_page_becomes_one_short_line():
    page = "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>" + "x" * 5000 + "</body></html>"
    with fake_llm_server(send(502, page, content_type="text/html")) as server:
        exc, _ = failure(server.url)
    assert "HTTP 502" in one_line(exc) and "Bad Gateway" in str(exc)


def test_5xx_then_an_answer_succeeds():
    with fake_llm_server(send(500, "boom"), ok()) as server:
        gen = llm(server.url).generate("Who directed Heat?")
    assert gen.text.strip().endswith("</answers>") and server.requests == 2


def test_retry_after_seconds_is_honoured():
    with fake_llm_server(send(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"}), ok()) as server:
        gen = llm(server.url).generate("Who directed Heat?")
    assert "Michael Mann" in gen.text
    gap = server.arrivals[1] - server.arrivals[0]
    assert 0.9 <= gap < 1.8, gap  # the server's wait, not the 0.01 s backoff


def test_retry_after_http_date_is_honoured():
    when = email.utils.formatdate(time.time() + 2, usegmt=True)  # whole seconds: waits 1-2 s
    with fake_llm_server(send(503, "busy", {"Retry-After": when}), ok()) as server:
        llm(server.url).generate("Who directed Heat?")
    gap = server.arrivals[1] - server.arrivals[0]
    assert 0.9 <= gap < 2.8, gap


def test_retry_after_beyond_the_cap_gives_up_at_once():
    with fake_llm_server(send(429, "quota", {"Retry-After": "86400"})) as server:
        exc, seconds = failure(server.url)
    assert isinstance(exc, LLMUnavailableError) and "HTTP 429" in one_line(exc) and "86400" in str(exc)
    assert server.requests == 1 and seconds < 1


def test_retry_after_beyond_the_deadline_gives_up_at_once():
    with fake_llm_server(send(429, "later", {"Retry-After": "5"})) as server:
        exc, seconds = failure(server.url, timeout=2)
    assert isinstance(exc, LLMUnavailableError) and "Retry-After" in one_line(exc)
    assert server.requests == 1 and seconds < 1


def test_retry_after_parsing():
    now = 1_000_000.0
    assert retry_after_seconds({"retry-after": "7"}, now) == 7
    assert retry_after_seconds({"retry-after": "1.5"}, now) == 1.5
    assert retry_after_seconds({"retry-after-ms": "250"}, now) == 0.25
    assert retry_after_seconds({"retry-after": email.utils.formatdate(now + 30, usegmt=True)}, now) == 30
    assert retry_after_seconds({"retry-after": email.utils.formatdate(now - 30, usegmt=True)}, now) == 0
    for junk in ("soon", "-5", "nan", "inf", "1e999", ""):
        assert retry_after_seconds({"retry-after": junk}, now) is None, junk
    assert retry_after_seconds({}, now) is None


# ---------------------------------------------------------------------- what the deadline bounds
def test_hung_endpoint_gives_up_at_the_deadline():
    with fake_llm_server(hang) as server:
        exc, seconds = failure(server.url, timeout=1)
    assert isinstance(exc, LLMUnavailableError) and "1 s" in one_line(exc)
    assert 0.9 <= seconds < 2.5 and server.requests == 1


def test_dripping_body_gives_up_at_the_deadline():
    with fake_llm_server(drip(0.1)) as server:
        exc, seconds = failure(server.url, timeout=1)
    assert isinstance(exc, LLMUnavailableError)
    assert 0.9 <= seconds < 2.5, seconds


def test_dripping_headers_give_up_at_the_deadline():
    with fake_llm_server(drip_headers(0.1)) as server:
        exc, seconds = failure(server.url, timeout=1)
    assert isinstance(exc, LLMUnavailableError) and "1 s" in one_line(exc)
    assert 0.9 <= seconds < 2.5, seconds


def test_retries_stop_at_the_deadline():
    with fake_llm_server(send(500, "boom")) as server:
        exc, seconds = failure(server.url, timeout=1, max_retries=1000, backoff=0.2)
    assert isinstance(exc, LLMUnavailableError) and seconds < 1.5 and 2 <= server.requests < 10


# ---------------------------------------------------------------------- what a retry cannot fix
@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (send(200, "Internal error, sorry", content_type="text/plain"), "not JSON"),
        (send(200, "<html><body>Welcome to the hotel wifi</body></html>", content_type="text/html"), "not JSON"),
        (send(200, json.dumps(completion())[:60]), "not JSON"),
        (send(200, completion(42)), "content"),
        (send(200, completion([1, 2])), "content"),
        (send(200, completion({"text": "x"})), "content"),
        (send(200, completion(choices=[])), "no choices"),
        (send(200, completion(choices=[{"index": 0, "finish_reason": "stop"}])), "message"),
        (send(200, completion(choices="none")), "choices"),
        (send(200, [1, 2, 3]), "not a chat completion"),
        (send(200, {"error": {"message": "model 'm' not found"}}), "model 'm' not found"),
    ],
    ids=[
        "text",
        "html",
        "truncated-json",
        "content-number",
        "content-list",
        "content-object",
        "no-choices",
        "no-message",
        "choices-string",
        "json-array",
        "error-in-200",
    ],
)
def test_garbage_200_is_a_response_error_not_retried(reply, says):
    with fake_llm_server(reply) as server:
        exc, _ = failure(server.url)
    assert isinstance(exc, LLMResponseError) and says in one_line(exc) and server.url in str(exc)
    assert server.requests == 1


def test_huge_declared_body_is_refused_without_reading_it():
    with fake_llm_server(huge(50, declare_length=True)) as server:
        exc, seconds = failure(server.url)
    assert isinstance(exc, LLMResponseError) and "bytes" in one_line(exc) and seconds < 2


def test_huge_chunked_body_stops_at_the_cap():
    with fake_llm_server(huge(8, declare_length=False)) as server:
        exc, seconds = failure(server.url, max_response_bytes=1 << 20)
    assert isinstance(exc, LLMResponseError) and "bytes" in one_line(exc) and seconds < 2


def test_text_parts_and_odd_usage_are_read_leniently():
    parts = [{"type": "text", "text": "Michael "}, {"type": "text", "text": "Mann"}]
    body = completion(parts, usage={"prompt_tokens": "many", "completion_tokens": None})
    with fake_llm_server(send(200, body)) as server:
        gen = llm(server.url).generate("Who directed Heat?")
    assert (gen.text, gen.prompt_tokens, gen.completion_tokens) == ("Michael Mann", 0, 0)
    with fake_llm_server(send(200, completion(None))) as server:
        assert llm(server.url).generate("Who directed Heat?").text == ""  # no content: an empty completion


def test_reused_prefix_tokens_are_not_counted_as_read():
    usage = {"prompt_tokens": 900, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 640}}
    with fake_llm_server(send(200, completion("Michael Mann", usage=usage))) as server:
        gen = llm(server.url).generate("Who directed Heat?")
    assert (gen.prompt_tokens, gen.evaluated) == (900, 260)
    with fake_llm_server(send(200, completion("x", usage={"prompt_tokens": 50, "completion_tokens": 1}))) as server:
        assert llm(server.url).generate("Who directed Heat?").evaluated == 50  # no details: every token read


def test_client_errors_fail_at_once():
    with fake_llm_server(send(400, {"error": {"message": "context length exceeded"}})) as server:
        exc, _ = failure(server.url)
    assert type(exc) is LLMError and "HTTP 400" in one_line(exc) and "context length exceeded" in str(exc)
    assert server.requests == 1
    with fake_llm_server(send(401, {"error": {"message": "bad key"}})) as server:
        exc, _ = failure(server.url)
    assert "authentication failed" in one_line(exc) and server.requests == 1


# ---------------------------------------------------------------------- what the user sees
@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from kgrag.graph.kg import KnowledgeGraph
    from tests.conftest import MOVIES

    return str(KnowledgeGraph.from_triples(MOVIES).save(tmp_path_factory.mktemp("kg") / "kg"))


def ask(store: str, url: str, *extra: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    proc = run_cli("ask", store, "Who directed Heat?", "--llm", f"openai:m@{url}", *extra, ok=False, timeout=60)
    return proc, time.monotonic() - start


def assert_one_error_line(proc: subprocess.CompletedProcess, says: str, code: int = 3) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "(no answer)" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], proc.stderr


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (send(500, {"error": {"message": "CUDA out of memory"}}), "HTTP 500: CUDA out of memory"),
        (send(429, "slow down", {"Retry-After": "3600"}), "Retry-After"),
        (send(200, "<html><title>Sign in</title></html>", content_type="text/html"), "not JSON"),
        (send(200, completion(42)), "content is a int"),
    ],
    ids=["500", "429", "html-200", "content-number"],
)
def test_ask_exits_3_with_one_line(store, reply, says):
    with fake_llm_server(reply) as server:
        proc, _ = ask(store, server.url, "--llm-timeout", "1")
    assert_one_error_line(proc, says)
    with fake_llm_server(reply) as server:
        proc, _ = ask(store, server.url, "--llm-timeout", "1", "--json")
    assert_one_error_line(proc, says)
    assert proc.stdout == ""  # --json prints one object or nothing


def test_ask_refused_and_hung(store):
    proc, _ = ask(store, refused_url(), "--llm-timeout", "2")
    assert_one_error_line(proc, "refused")
    with fake_llm_server(hang) as server:
        proc, seconds = ask(store, server.url, "--llm-timeout", "1")
    assert_one_error_line(proc, "the 1 s LLM timeout")
    assert seconds < 15 and server.requests == 1  # interpreter start-up included


def test_ask_answers_through_a_working_endpoint(store):
    with fake_llm_server(ok()) as server:
        proc, _ = ask(store, server.url, "--llm-timeout", "5")
    assert proc.returncode == 0, proc.stderr
    assert "A: Michael Mann" in proc.stdout


def test_llm_timeout_is_only_for_endpoints(store, tmp_path):
    script = tmp_path / "s.json"
    script.write_text('{"default": "x"}')
    proc = run_cli("ask", store, "Who?", "--llm", f"scripted:{script}", "--llm-timeout", "5", ok=False)
    assert proc.returncode == 2 and "--llm-timeout" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("ask", store, "Who?", "--llm", "openai:m@http://127.0.0.1:9/v1", "--llm-timeout", "0", ok=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def _questions(tmp_path) -> str:
    path = tmp_path / "q.jsonl"
    rows = [{"id": "a", "question": "Who directed Heat?", "answers": ["Michael Mann"]}]
    rows.append({"id": "b", "question": "Who directed Alien?", "answers": ["Ridley Scott"]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f"jsonl:{path}"


def _eval(store: str, url: str, dataset: str, out, *extra: str) -> subprocess.CompletedProcess:
    args = ("eval", store, "-d", dataset, "-m", "llm", "--llm", f"openai:m@{url}", "--out", str(out))
    return run_cli(*args, "--llm-timeout", "1", *extra, ok=False, timeout=120)


def test_eval_where_every_question_fails_exits_3(store, tmp_path):
    with fake_llm_server(send(503, "down")) as server:
        proc = _eval(store, server.url, _questions(tmp_path), tmp_path / "ev", "--json")
    assert proc.returncode == 3, proc.stderr
    assert "all 2 questions failed" in proc.stderr and "HTTP 503" in proc.stderr and "Traceback" not in proc.stderr
    rows = [json.loads(line) for line in (tmp_path / "ev" / "llm" / "results.jsonl").read_text().splitlines()]
    assert all("HTTP 503" in r["error"] and r["llm_failed"] for r in rows)
    summary = json.loads((tmp_path / "ev" / "summary.json").read_text())["llm"]
    assert summary["errors"] == summary["llm_failures"] == 2


def test_eval_with_some_failures_warns_and_a_rerun_retries_them(store, tmp_path):
    dataset, out = _questions(tmp_path), tmp_path / "ev"
    with fake_llm_server(ok(), send(500, "boom")) as server:  # the first question answered, then errors
        proc = _eval(store, server.url, dataset, out)
    assert proc.returncode == 0, proc.stderr
    assert "1 of 2 questions failed" in proc.stderr and "re-run" in proc.stderr
    with fake_llm_server(ok("<answers>\nRidley Scott\n</answers>")) as server:
        proc = _eval(store, server.url, dataset, out, "--json")
    assert proc.returncode == 0 and server.requests == 1  # only the failed question is asked again
    summary = json.loads(proc.stdout)["llm"]
    assert summary["hit@1"] == 1.0 and summary["errors"] == summary["llm_failures"] == 0


def test_service_answers_503_when_the_endpoint_hangs(store):
    pytest.importorskip("fastapi")
    from kgrag.service import ServiceConfig, create_app
    from tests.conftest import local_client

    with fake_llm_server(hang) as server:
        config = ServiceConfig(llm=f"openai:m@{server.url}", llm_timeout=1)
        with local_client(create_app(store, config)) as client:
            start = time.monotonic()
            resp = client.post("/ask", json={"question": "Who directed Heat?", "method": "llm"})
    assert resp.status_code == 503 and "the 1 s LLM timeout" in resp.json()["error"]
    assert time.monotonic() - start < 5


def test_serve_takes_llm_timeout_for_endpoints_only(store, tmp_path):
    proc = run_cli("serve", store, "--llm", "scripted:x.json", "--llm-timeout", "5", ok=False, timeout=60)
    assert proc.returncode == 2 and "--llm-timeout" in proc.stderr


def test_eval_stops_when_the_endpoint_stays_down(store, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Who is {i}?"}) + "\n" for i in range(20)))
    start = time.monotonic()
    proc = _eval(store, refused_url(), f"jsonl:{path}", tmp_path / "ev", "--json")  # --json: no progress bar
    assert proc.returncode == 3 and "5 questions in a row" in proc.stderr and "re-run" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert len((tmp_path / "ev" / "llm" / "results.jsonl").read_text().splitlines()) == 5  # not 20 x the timeout
    assert time.monotonic() - start < 30


def test_retries_stop_when_the_caller_stops_waiting():
    import threading

    from kgrag.cancel import Cancelled, cancel_scope

    flag = threading.Event()
    fail = send(500, "boom")

    def fail_and_give_up(handler, stop):  # the service's request timeout passes during this attempt
        flag.set()
        fail(handler, stop)

    with fake_llm_server(fail_and_give_up) as server, cancel_scope(flag), pytest.raises(Cancelled):
        llm(server.url, max_retries=5).generate("Who directed Heat?")
    assert server.requests == 1


def test_kgrag_llm_names_the_default_llm(store, tmp_path, monkeypatch):
    """$KGRAG_LLM is the LLM when --llm is not given (docs run their examples on the test model this way)."""
    from kgrag.models.llm import load_llm

    script = tmp_path / "s.json"
    script.write_text('{"default": "<answers>Michael Mann</answers>"}')
    monkeypatch.setenv("KGRAG_LLM", f"scripted:{script}")
    assert load_llm().model_id.startswith("scripted:")
    proc = run_cli("ask", store, "Who directed Heat?", "--method", "kaping")  # the subprocess inherits it
    assert "A: Michael Mann" in proc.stdout
    proc = run_cli("ask", store, "Who directed Heat?")  # the default method, auto, says whom it let answer
    assert "A: Michael Mann" in proc.stdout and "auto → " in proc.stdout


def test_ask_shows_each_step_as_it_finishes_on_a_terminal(monkeypatch):
    import io

    from kgrag.cli import common, qa
    from kgrag.methods.base import Trace
    from kgrag.models.llm.scripted import ScriptedLLM

    monkeypatch.setattr(common.err_console, "file", io.StringIO())
    with qa._step_lines():
        trace = Trace()
        with trace.step("link"):
            pass
        with trace.step("answer"):
            ScriptedLLM({"default": "x"}).generate("hi")
    shown = common.err_console.file.getvalue()
    assert "  link: 0.00 s (at " in shown and "  answer: " in shown and "1 LLM call(s)" in shown
