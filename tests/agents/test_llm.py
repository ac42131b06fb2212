"""The single-call LLM contestant over the real litellm HTTP path, against a loopback server.

Every test also checks (autouse fixture) that the sentinel API key appears in no log record and
nothing printed; the reply-level checks are explicit.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import sys

import pandas as pd
import pytest

from arena.agents.base import Contestant, Reply
from arena.agents.llm import NO_KEY, LLMContestant, RetryPolicy, complete, load_litellm
from arena.agents.roster import ContestantSpec, Params, Prices
from arena.core.types import Briefing, CallRecord, Message
from tests.agents.openai_stub import OpenAIStub, StubResponse

SENTINEL = "SENTINEL-KEY-7f3a9c2e51d0b4"  # not shaped like a real key: litellm's own redaction misses it
KEY_ENV = "ARENA_TEST_LLM_KEY"
ENV = {KEY_ENV: SENTINEL}
FAST = RetryPolicy(backoff_s=0.01, max_backoff_s=0.05)
ANSWER = '{"reasoning": "Flat.", "market_context": {"overall_sentiment": "neutral", "key_factors": []}, "decisions": []}'
BRIEFING = Briefing(
    at=pd.Timestamp("2026-01-05 16:00", tz="UTC"),
    contestant="stub-llm",
    data={},
    messages=(Message("system", "You are a medium-term investor."),
              Message("user", "Universe table and candles here. Answer in JSON.")),
)


def spec_for(url: str, *, timeout: float = 5.0, num_retries: int = 2, model: str = "openai/stub-model",
             api_key_env: str | None = KEY_ENV, prices: Prices | None = None) -> ContestantSpec:
    return ContestantSpec(
        name="stub-llm", kind="llm", model=model, api_base=url, api_key_env=api_key_env,
        params=Params(temperature=0.2, max_tokens=500, timeout=timeout, num_retries=num_retries),
        prices=prices)


def contestant(stub: OpenAIStub, **kw) -> LLMContestant:
    kw.setdefault("prices", Prices(input_per_mtok=1.0, output_per_mtok=2.0))
    return LLMContestant(spec_for(stub.url, **kw), env=ENV, retry=FAST)


def assert_clean(reply: Reply) -> None:
    """The sentinel is nowhere in the reply: text, error, transcript, call records, extra."""
    assert SENTINEL not in repr(reply)
    for call in reply.calls:
        assert SENTINEL not in repr(call.as_dict())
    for message in reply.transcript:
        assert SENTINEL not in message.content


@pytest.fixture(autouse=True)
def no_key_in_logs_or_output(caplog, capfd):
    """Capture every log record at DEBUG (litellm's too) and all output; none may hold the key."""
    caplog.set_level(logging.DEBUG)
    for name in ("LiteLLM", "openai", "httpx", "httpcore"):
        caplog.set_level(logging.DEBUG, logger=name)
    yield
    out, err = capfd.readouterr()
    assert SENTINEL not in caplog.text
    assert all(SENTINEL not in r.getMessage() for r in caplog.records)
    assert SENTINEL not in out + err


# -- answers ---------------------------------------------------------------------------------------


def test_valid_answer_with_tokens_cost_and_the_request_as_sent(openai_stub):
    openai_stub.script(StubResponse.answer(ANSWER, prompt_tokens=1200, completion_tokens=300))
    llm = contestant(openai_stub)
    assert isinstance(llm, Contestant)
    reply = llm.answer(BRIEFING)

    assert reply.text == ANSWER and reply.error is None
    (call,) = reply.calls
    assert isinstance(call, CallRecord)
    assert (call.contestant, call.role, call.model) == ("stub-llm", "decision", "openai/stub-model")
    assert (call.tokens_in, call.tokens_out, call.retries, call.error) == (1200, 300, 0, None)
    assert call.cost_usd == pytest.approx((1200 * 1.0 + 300 * 2.0) / 1e6)
    assert call.latency_s > 0  # measured; no upper bound on wall time
    assert reply.transcript == (*BRIEFING.messages, Message("assistant", ANSWER))
    assert reply.extra["finish_reason"] == "stop"

    (request,) = openai_stub.chat_requests
    assert request.headers["authorization"] == f"Bearer {SENTINEL}"
    assert request.body["model"] == "stub-model"
    assert request.messages == [{"role": m.role, "content": m.content} for m in BRIEFING.messages]
    assert request.body["temperature"] == 0.2 and request.body["max_tokens"] == 500
    assert_clean(reply)


@pytest.mark.parametrize("content", [
    f"```json\n{ANSWER}\n```",
    f"Here is my decision for today.\n{ANSWER}\nI will review again tomorrow.",
], ids=["fenced-json", "prose-around-json"])
def test_answer_is_returned_raw(openai_stub, content):
    """Parsing is the engine's job: the contestant hands back exactly what the model said."""
    openai_stub.script(StubResponse.answer(content))
    reply = contestant(openai_stub).answer(BRIEFING)
    assert reply.text == content and reply.error is None
    assert_clean(reply)


@pytest.mark.parametrize("content", [None, ""], ids=["null-content", "empty-content"])
def test_an_empty_answer_is_the_models_answer_with_its_tokens(openai_stub, content):
    """A call that succeeded with no text is an answer (the engine repairs it), not a failure."""
    openai_stub.script(StubResponse.answer(content, prompt_tokens=50, completion_tokens=0))
    reply = contestant(openai_stub).answer(BRIEFING)
    assert reply.text == "" and reply.error is None and reply.calls[0].error is None
    assert reply.transcript[-1] == Message("assistant", "")
    assert (reply.calls[0].tokens_in, reply.calls[0].tokens_out) == (50, 0)
    assert len(openai_stub.chat_requests) == 1


# -- timeouts and retries --------------------------------------------------------------------------


def test_slow_answer_past_the_timeout(openai_stub):
    # the answer never comes in time (the stub drops it when it stops)
    openai_stub.script(StubResponse.answer(ANSWER, delay=600.0))
    reply = contestant(openai_stub, timeout=1.0, num_retries=0).answer(BRIEFING)

    assert reply.text is None
    assert "timeout" in reply.error.lower()
    (call,) = reply.calls
    assert call.error == reply.error and call.retries == 0
    assert call.latency_s >= 0.9  # a timeout cannot fire early; no upper bound on wall time
    assert call.tokens_in is None and call.cost_usd is None
    assert reply.transcript == BRIEFING.messages  # the prompt, no assistant message
    assert len(openai_stub.chat_requests) == 1
    assert_clean(reply)


def test_a_timeout_is_retried(openai_stub):
    openai_stub.script(StubResponse.answer(ANSWER, delay=600.0), StubResponse.answer(ANSWER))
    reply = contestant(openai_stub, timeout=0.5, num_retries=1).answer(BRIEFING)
    assert reply.text == ANSWER
    assert reply.calls[0].retries == 1 and reply.calls[0].latency_s >= 0.45
    assert len(openai_stub.chat_requests) == 2


@pytest.mark.parametrize("failure", [
    StubResponse.error(500, "internal error"),
    StubResponse.error(503, "overloaded"),
    StubResponse.raw("<html>502 Bad Gateway</html>", status=502, content_type="text/html"),
    StubResponse.error(429, "rate limited"),
], ids=["500", "503", "502-html", "429"])
def test_transient_failure_then_success(openai_stub, failure):
    openai_stub.script(failure, StubResponse.answer(ANSWER, prompt_tokens=10, completion_tokens=5))
    reply = contestant(openai_stub).answer(BRIEFING)
    assert reply.text == ANSWER and reply.error is None
    (call,) = reply.calls
    assert call.retries == 1 and call.error is None
    assert (call.tokens_in, call.tokens_out) == (10, 5)
    assert len(openai_stub.chat_requests) == 2
    assert_clean(reply)


def test_retry_after_is_honoured(openai_stub):
    waits: list[float] = []
    openai_stub.script(StubResponse.error(429, "slow down", headers={"Retry-After": "7"}),
                       StubResponse.answer(ANSWER))
    llm = LLMContestant(spec_for(openai_stub.url), env=ENV,
                        retry=RetryPolicy(backoff_s=0.01, max_backoff_s=10.0), sleep=waits.append)
    assert llm.answer(BRIEFING).text == ANSWER
    assert waits == [7.0]


def test_exhausted_quota_429_is_not_retried(openai_stub):
    openai_stub.script(StubResponse.error(429, "You exceeded your current quota: insufficient_quota"))
    reply = contestant(openai_stub).answer(BRIEFING)
    assert reply.text is None and "rate_limit" in reply.error
    assert len(openai_stub.chat_requests) == 1


def test_persistent_server_error_gives_up_after_the_retries(openai_stub):
    openai_stub.script(*[StubResponse.error(500, "down")] * 5)
    reply = contestant(openai_stub, num_retries=2).answer(BRIEFING)
    assert reply.text is None
    assert reply.error.startswith("server:") and "after 3 attempts" in reply.error
    assert reply.calls[0].retries == 2
    assert len(openai_stub.chat_requests) == 3


def test_bad_request_is_not_retried(openai_stub):
    openai_stub.script(StubResponse.error(400, "max_tokens is too large"), StubResponse.answer(ANSWER))
    reply = contestant(openai_stub, num_retries=3).answer(BRIEFING)
    assert reply.text is None
    assert reply.error.startswith("bad_request:") and "max_tokens is too large" in reply.error
    assert reply.calls[0].retries == 0
    assert len(openai_stub.chat_requests) == 1


@pytest.mark.parametrize("body", [
    StubResponse.raw('{"id": "chatcmpl-1", "choices": [{"message": '),
    StubResponse.raw("<html>Service is up</html>", content_type="text/html"),
    StubResponse(200, {"id": "chatcmpl-1", "object": "chat.completion"}),
], ids=["truncated-json", "html-200", "no-choices"])
def test_malformed_body_is_not_retried(openai_stub, body):
    openai_stub.script(body, StubResponse.answer(ANSWER))
    reply = contestant(openai_stub, num_retries=3).answer(BRIEFING)
    assert reply.text is None and reply.error.startswith("bad_response:")
    assert reply.calls[0].retries == 0
    assert len(openai_stub.chat_requests) == 1
    assert_clean(reply)


def test_refused_connection_is_retried_then_reported():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    spec = spec_for(f"http://127.0.0.1:{port}/v1", num_retries=1)
    reply = LLMContestant(spec, env=ENV, retry=FAST).answer(BRIEFING)
    assert reply.text is None and reply.error.startswith("connection:")
    assert reply.calls[0].retries == 1


# -- repair ----------------------------------------------------------------------------------------


def test_repair_continues_the_conversation(openai_stub):
    openai_stub.script(StubResponse.answer("first answer", prompt_tokens=100, completion_tokens=10),
                       StubResponse.answer(ANSWER, prompt_tokens=130, completion_tokens=20))
    llm = contestant(openai_stub)
    first = llm.answer(BRIEFING)
    follow_up = "Your answer could not be read: no JSON object. Answer again."
    second = llm.repair(BRIEFING, first, follow_up)

    assert second.text == ANSWER
    (call,) = second.calls  # this reply's own call; the first answer keeps its record
    assert (call.role, call.tokens_in, call.tokens_out) == ("repair", 130, 20)
    expected = [*BRIEFING.messages, Message("assistant", "first answer"), Message("user", follow_up)]
    first_request, repair_request = openai_stub.chat_requests
    assert first_request.messages == [{"role": m.role, "content": m.content} for m in BRIEFING.messages]
    assert repair_request.messages == [{"role": m.role, "content": m.content} for m in expected]
    assert repair_request.headers["authorization"] == f"Bearer {SENTINEL}"
    assert second.transcript == (*expected, Message("assistant", ANSWER))
    assert_clean(second)


def test_failed_repair_keeps_the_conversation_and_reports(openai_stub):
    openai_stub.script(StubResponse.answer("first answer"), StubResponse.error(400, "bad"))
    llm = contestant(openai_stub)
    second = llm.repair(BRIEFING, llm.answer(BRIEFING), "Try again.")
    assert second.text is None and second.error.startswith("bad_request:")
    assert second.transcript[-1] == Message("user", "Try again.")
    assert second.calls[0].role == "repair"


# -- the key ---------------------------------------------------------------------------------------


def test_key_echoed_by_the_server_is_scrubbed_everywhere(openai_stub):
    """A server that repeats the key in its error (OpenAI does: "Incorrect API key provided: ...")
    or in its answer: the key reaches neither the reply, nor the records, nor any log."""
    openai_stub.script(StubResponse.error(401, f"Incorrect API key provided: {SENTINEL}"),
                       StubResponse.answer(f"My key is {SENTINEL}."))
    llm = contestant(openai_stub)
    denied = llm.answer(BRIEFING)
    assert denied.text is None and denied.error.startswith("auth:")
    assert "[redacted]" in denied.error
    assert len(openai_stub.chat_requests) == 1  # a 401 is not retried
    echoed = llm.answer(BRIEFING)
    assert echoed.text == "My key is [redacted]."
    for reply in (denied, echoed):
        assert_clean(reply)
    assert all(r.headers["authorization"] == f"Bearer {SENTINEL}" for r in openai_stub.chat_requests)


def test_missing_key_makes_no_call(openai_stub):
    llm = LLMContestant(spec_for(openai_stub.url), env={}, retry=FAST)
    reply = llm.answer(BRIEFING)
    assert reply.text is None and reply.error == f"missing_key: {KEY_ENV} is not set"
    assert openai_stub.requests == []


def test_keyless_local_server_never_gets_an_ambient_key(openai_stub, monkeypatch):
    """Without api_key_env, litellm would fall back to OPENAI_API_KEY; a placeholder is sent."""
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    openai_stub.script(StubResponse.answer(ANSWER))
    spec = spec_for(openai_stub.url, api_key_env=None)
    reply = LLMContestant(spec, retry=FAST).answer(BRIEFING)
    assert reply.text == ANSWER
    (request,) = openai_stub.chat_requests
    assert request.headers["authorization"] == f"Bearer {NO_KEY}"
    assert SENTINEL not in repr(request.headers)


def test_key_is_read_at_call_time(openai_stub):
    env: dict[str, str] = {}
    llm = LLMContestant(spec_for(openai_stub.url), env=env, retry=FAST)
    assert llm.answer(BRIEFING).error.startswith("missing_key")
    env[KEY_ENV] = SENTINEL
    openai_stub.script(StubResponse.answer(ANSWER))
    assert llm.answer(BRIEFING).text == ANSWER


# -- cost ------------------------------------------------------------------------------------------


def test_cost_from_litellm_price_map_for_a_mapped_model(openai_stub):
    """No roster prices: a model in litellm's offline price map is priced by litellm."""
    openai_stub.script(StubResponse.answer(ANSWER, prompt_tokens=1000, completion_tokens=100))
    reply = LLMContestant(spec_for(openai_stub.url, model="openai/gpt-4o-mini"), env=ENV,
                          retry=FAST).answer(BRIEFING)
    info = load_litellm().model_cost["gpt-4o-mini"]
    expected = 1000 * info["input_cost_per_token"] + 100 * info["output_cost_per_token"]
    assert reply.calls[0].cost_usd == pytest.approx(expected)


def test_cost_unknown_for_an_unmapped_model_without_prices(openai_stub):
    openai_stub.script(StubResponse.answer(ANSWER))
    reply = LLMContestant(spec_for(openai_stub.url, model="openai/my-local-model"), env=ENV,
                          retry=FAST).answer(BRIEFING)
    assert reply.text == ANSWER
    assert reply.calls[0].cost_usd is None and reply.calls[0].tokens_in == 100


def test_complete_passes_overrides(openai_stub):
    """The shared call path (for debate roles, researcher tools) accepts per-call overrides."""
    openai_stub.script(StubResponse.answer("bullish"))
    done = complete(spec_for(openai_stub.url), [Message("user", "Argue the bull case.")],
                    role="bull", env=ENV, retry=FAST, temperature=0.7)
    assert done.text == "bullish" and done.record.role == "bull"
    assert openai_stub.chat_requests[0].body["temperature"] == 0.7


# -- import cost -----------------------------------------------------------------------------------


def test_litellm_is_imported_lazily():
    code = ("import sys, arena.agents.llm, arena.agents.roster; "
            "print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_warm_up_before_a_fan_out_sends_nothing_and_leaves_little_for_the_first_call(
        monkeypatch):
    """``warm_calls`` imports what litellm's first completion of a process imports, by a
    mocked completion: no request leaves (run in a fresh interpreter, where the first call is
    really the first), and the first real call after it imports almost nothing more."""
    script = (
        "import sys, json\n"
        "from arena.core.settings import prepare_process\n"
        "prepare_process()\n"
        "from arena.agents.llm import load_litellm, warm_calls\n"
        "from tests.agents.openai_stub import OpenAIStub, StubResponse\n"
        "litellm = load_litellm()\n"
        "with OpenAIStub(default=StubResponse.answer('{}')) as stub:\n"
        "    before = set(sys.modules)\n"
        "    warm_calls()\n"
        "    warmed = len(set(sys.modules) - before)\n"
        "    sent = len(stub.requests)\n"
        "    before = set(sys.modules)\n"
        "    litellm.completion(model='openai/x', api_base=stub.url, api_key='k', num_retries=0,\n"
        "                       messages=[{'role': 'user', 'content': 'hi'}])\n"
        "    print(json.dumps({'warmed': warmed, 'sent': sent, 'after': len(stub.requests),\n"
        "                      'first_call': sorted(set(sys.modules) - before)}))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=True)
    import json

    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["sent"] == 0 and got["after"] == 1  # the warm-up reached no server
    assert got["warmed"] >= 20  # litellm's modules its first completion imports...
    left = [m for m in got["first_call"] if m.startswith("litellm")]
    assert len(left) <= 5, left  # ...are not left for the first real call (its HTTP ones are)
