"""A recorded season re-runs from the ledger without any model call."""

from __future__ import annotations

import json

from arena.agents.llm import LLMContestant, RetryPolicy
from arena.agents.replay import ReplayContestant, parse_source
from arena.agents.roster import ContestantSpec, Params
from arena.ledger.store import Ledger
from arena.pipeline.cycle import run_cycle
from tests.agents.openai_stub import StubResponse
from tests.conftest import ts
from tests.market_lakes import PROVIDER, market_lakes

CYCLES = [ts("2025-11-24 16:00"), ts("2025-11-25 16:00")]
BAD = json.dumps({"reasoning": "r", "decisions": [{"action": "open_long", "symbol": "ETH",
                  "percent_of_equity": 20, "confidence": 0.9, "invalidation_price": 10**9,
                  "thesis": "t", "invalidation": "i"}]})
GOOD = json.dumps({"reasoning": "r", "decisions": [{"action": "open_long", "symbol": "SOL",
                   "percent_of_equity": 20, "confidence": 0.9, "invalidation_price": 1.0,
                   "thesis": "t", "invalidation": "i"}]})


def test_replay_reproduces_a_season_without_calls(openai_stub, tmp_path, tmp_path_factory,
                                                  universe):
    lake = market_lakes(tmp_path_factory, universe).full
    recorded_root, replay_root = tmp_path / "recorded", tmp_path / "replayed"
    spec = ContestantSpec(name="stub-llm", kind="llm", model="openai/stub-model",
                          api_base=openai_stub.url,
                          params=Params(temperature=0.2, max_tokens=300, timeout=5, num_retries=1))
    llm = LLMContestant(spec, retry=RetryPolicy(backoff_s=0.01, max_backoff_s=0.02))
    # day 1: a rejected level, then a valid repair; day 2: valid at once
    hold = json.dumps({"reasoning": "r", "decisions": [{"action": "hold", "symbol": "SOL"}]})
    openai_stub.script(StubResponse.answer(BAD), StubResponse.answer(GOOD),
                       StubResponse.answer(hold))
    for at in CYCLES:
        run_cycle(lake, PROVIDER, universe, [llm], at, ledger=Ledger(recorded_root))
    calls = len(openai_stub.chat_requests)
    replay = ReplayContestant("replayer", f"{recorded_root}#stub-llm")
    for at in CYCLES:
        run_cycle(lake, PROVIDER, universe, [replay], at, ledger=Ledger(replay_root))
    assert len(openai_stub.chat_requests) == calls == 3  # the replay called no model
    original, again = Ledger(recorded_root).fills("stub-llm"), Ledger(replay_root).fills("replayer")
    assert [(f.symbol, f.quantity, f.price) for f in again] == \
        [(f.symbol, f.quantity, f.price) for f in original]
    assert Ledger(replay_root).table("outcome")["repaired"].tolist() == [True, False]


def test_a_missing_record_is_a_skip(tmp_path):
    from arena.core.types import Briefing, Message

    replay = ReplayContestant("x", str(tmp_path))
    reply = replay.answer(Briefing(ts("2025-11-24 16:00"), "x", {}, (Message("user", "p"),)))
    assert reply.skipped and reply.text is None and "no recorded answer of x" in reply.error
    assert parse_source("lake#gpt", "me") == (tmp_path.__class__("lake"), "gpt")
