"""The researcher + strategist over the real litellm HTTP path: tool calls, the cap, the packages."""

from __future__ import annotations

import json

import pytest

from arena.agents.llm import RetryPolicy
from arena.agents.researcher import ResearcherContestant
from arena.agents.roster import ContestantSpec, Params
from arena.core.types import Briefing, Message
from arena.market.types import DEPTH
from tests.agents.chart_lake import AT, chart_lake, ramp_closes
from tests.agents.openai_stub import StubResponse

MARKET = {"assets": [], "benchmarks": [],  # nothing screened or held: the tools read the charts
          "table": [{"symbol": "ETH", "return_1d": 0.01, "return_10d": 0.05, "return_30d": 0.1,
                     "volatility_30d": 0.6, "distance_from_30d_high": -0.02}]}
SECTIONS = {k: f"<{k}>" for k in ("header", "rules", "contract", "screen_note", "universe_table",
                                  "candles", "benchmarks", "portfolio")}


@pytest.fixture(scope="module")
def briefing(tmp_path_factory, universe) -> Briefing:
    charts = chart_lake(tmp_path_factory.mktemp("charts") / "lake", universe)[1]
    return Briefing(AT, "researcher", {"market": MARKET, "sections": SECTIONS},
                    (Message("system", "You manage a simulated portfolio."), Message("user", "p")),
                    {"cash": 10_000.0, "positions": []}, charts=charts)


PACKAGES = json.dumps({"packages": [
    {"symbol": "ETH", "direction": "long", "confidence": 75, "thesis": "trend"},
    {"symbol": "SOL", "direction": "short", "confidence": 40, "thesis": "weak"}]})
DECISION = json.dumps({"reasoning": "take the ETH package", "decisions": [{"action": "hold",
                                                                          "symbol": "ETH"}]})


def _tool_calls(n: int, start: int) -> StubResponse:
    return StubResponse.tool_calls([("get_candles", {"symbol": "ETH", "interval": "1d"})] * n,
                                   first_id=start)


def test_tool_calls_are_capped_and_only_strong_packages_reach_the_strategist(openai_stub,
                                                                              briefing):
    counter = {"n": 0}

    def handler(request):
        content = request.messages[-1]["content"] or ""
        if "Strategy decision" in content:
            return StubResponse.answer(DECISION)
        if "tools" in request.body:  # keep asking for tools while they are offered
            counter["n"] += 3
            return _tool_calls(3, counter["n"])
        return StubResponse.answer(PACKAGES)

    openai_stub.handler = handler
    spec = ContestantSpec(name="researcher-stub", kind="researcher", model="openai/stub-model",
                          api_base=openai_stub.url,
                          params=Params(temperature=0.3, max_tokens=400, timeout=5, num_retries=1))
    reply = ResearcherContestant(spec, retry=RetryPolicy(backoff_s=0.01, max_backoff_s=0.02)
                                 ).answer(briefing)
    assert reply.text == DECISION and reply.error is None
    served = [t for t in reply.extra["tool_calls"] if "error" not in t["result"]]
    assert len(served) == 10  # the cap, although the model asked for 12
    closes = ramp_closes("1d")[-DEPTH["1d"]:]
    assert all([r[4] for r in t["result"]["rows"]] == closes for t in served)
    researcher_requests = [r for r in openai_stub.chat_requests
                           if "Strategy decision" not in (r.messages[-1]["content"] or "")]
    assert "tools" not in researcher_requests[-1].body  # the last call must answer in text
    strategist = openai_stub.chat_requests[-1].messages[-1]["content"]
    assert '"ETH"' in strategist and '"SOL"' not in strategist  # 40 < 60 stays with the researcher
    assert [c.role for c in reply.calls][-1] == "strategist"


def test_tool_call_turns_are_not_errors(openai_stub, briefing):
    openai_stub.script(_tool_calls(1, 0), StubResponse.answer(json.dumps({"packages": []})),
                       StubResponse.answer(DECISION))
    spec = ContestantSpec(name="researcher-stub", kind="researcher", model="openai/stub-model",
                          api_base=openai_stub.url,
                          params=Params(temperature=0.3, max_tokens=400, timeout=5, num_retries=1))
    reply = ResearcherContestant(spec, retry=RetryPolicy(backoff_s=0.01, max_backoff_s=0.02)
                                 ).answer(briefing)
    assert reply.text == DECISION and [c.error for c in reply.calls] == [None, None, None]
    assert reply.extra["packages"] == []


def test_odd_model_output_is_an_error_or_no_package_never_a_crash(openai_stub, briefing):
    spec = ContestantSpec(name="researcher-stub", kind="researcher", model="openai/stub-model",
                          api_base=openai_stub.url,
                          params=Params(temperature=0.3, max_tokens=400, timeout=5, num_retries=1))
    odd = _tool_calls(1, 0)
    odd.body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "[]"
    openai_stub.script(odd, StubResponse.answer('Notes:\n```json\n{"packages": 5}\n```'),
                       StubResponse.answer(DECISION))
    reply = ResearcherContestant(spec, retry=RetryPolicy(backoff_s=0.01, max_backoff_s=0.02)
                                 ).answer(briefing)
    assert reply.text == DECISION and reply.extra["packages"] == []
    assert "no data for None" in reply.extra["tool_calls"][0]["result"]["error"]
