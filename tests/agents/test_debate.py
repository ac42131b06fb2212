"""The debate contestant over the real litellm HTTP path: analysts in parallel, then the judge."""

from __future__ import annotations

import json

from arena.agents.debate import DebateContestant
from arena.agents.llm import RetryPolicy, load_litellm
from arena.agents.roster import ContestantSpec, Params
from arena.core.types import Briefing, Message
from tests.agents.openai_stub import Gate, StubResponse
from tests.conftest import ts

SECTIONS = {k: f"<{k}>" for k in ("header", "rules", "contract", "screen_note", "universe_table",
                                  "candles", "benchmarks", "portfolio")}
BRIEFING = Briefing(ts("2025-11-26 16:00"), "debate", {"sections": SECTIONS},
                    (Message("system", "You manage a simulated portfolio."),
                     Message("user", "investor prompt")))
VERDICT = json.dumps({"reasoning": "two of three bullish, low risk", "decisions": [
    {"action": "hold", "symbol": "ETH"}]})


def _spec(url: str, timeout: float = 5) -> ContestantSpec:
    return ContestantSpec(name="debate-stub", kind="debate", model="openai/stub-model",
                          api_base=url, params=Params(temperature=0.5, max_tokens=400,
                                                      timeout=timeout, num_retries=1))


def _handler(request, gate: Gate | None = None):
    text = request.messages[-1]["content"]
    if "Committee decision" in text:
        return StubResponse.answer(VERDICT)
    for role, marker in (("BULL", "bullish analyst"), ("BEAR", "bearish analyst"),
                         ("RISK", "risk officer")):
        if marker in text:
            return StubResponse.answer(f"{role} OPINION: LOW RISK" if role == "RISK"
                                       else f"{role} OPINION", gate=gate)
    return StubResponse.error(400, "unexpected prompt")


def test_analysts_run_in_parallel_and_the_judge_sees_them_all(openai_stub):
    # each analyst is answered only once all three are in the server together: one after another,
    # the gate breaks after 20 s and answers 400 (not retried); the client waits longer than that
    gate = Gate(parties=3, timeout=20)
    openai_stub.handler = lambda request: _handler(request, gate)
    agent = DebateContestant(_spec(openai_stub.url, timeout=60),
                             retry=RetryPolicy(backoff_s=0.01, max_backoff_s=0.05))
    load_litellm()  # the import costs seconds: not inside the gate's window
    reply = agent.answer(BRIEFING)
    assert gate.opened and openai_stub.max_in_flight == 3, (gate, reply.error)
    assert reply.text == VERDICT and reply.error is None
    roles = [c.role for c in reply.calls]
    assert roles == ["bull", "bear", "risk", "judge"]
    assert [c.retries for c in reply.calls] == [0, 0, 0, 0]  # no retry counted at the gate
    requests = openai_stub.chat_requests
    assert len(requests) == 4
    temperatures = sorted(r.body["temperature"] for r in requests)
    assert temperatures == [0.2, 0.7, 0.7, 0.7]
    judge = next(r for r in requests if "Committee decision" in r.messages[-1]["content"])
    for opinion in ("BULL OPINION", "BEAR OPINION", "RISK OPINION: LOW RISK"):
        assert opinion in judge.messages[-1]["content"]
    debate = reply.extra["debate"]
    assert set(debate) == {"bull", "bear", "risk", "judge"} and debate["bear"]["answer"] == "BEAR OPINION"


def test_a_failed_analyst_is_an_operational_failure(openai_stub):
    def handler(request):
        if "bearish analyst" in request.messages[-1]["content"]:
            return StubResponse.error(400, "bad request")
        return _handler(request)

    openai_stub.handler = handler
    reply = DebateContestant(_spec(openai_stub.url), retry=RetryPolicy(backoff_s=0.01, max_backoff_s=0.05)).answer(BRIEFING)
    assert reply.text is None and not reply.skipped and "bear" in reply.error
    assert "judge" not in reply.extra["debate"]


def test_the_repair_continues_the_judges_conversation(openai_stub):
    openai_stub.handler = _handler
    agent = DebateContestant(_spec(openai_stub.url), retry=RetryPolicy(backoff_s=0.01, max_backoff_s=0.05))
    first = agent.answer(BRIEFING)
    openai_stub.handler = lambda request: StubResponse.answer(VERDICT)
    again = agent.repair(BRIEFING, first, "Rejected decision 0: fix it.")
    last = openai_stub.chat_requests[-1].messages
    assert again.text == VERDICT and last[-1]["content"] == "Rejected decision 0: fix it."
    assert last[-2] == {"role": "assistant", "content": VERDICT}
    assert "Committee decision" in last[1]["content"]
