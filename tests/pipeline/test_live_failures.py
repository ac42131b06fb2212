"""A live season's operational failures: retried within the cycle's deadline, logged in the
attempts log (never the ledger), played again by ``arena season retry``, and recorded as
forfeited when the next cycle starts - with real HTTP through litellm to a loopback server."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from arena.cli import main
from arena.ledger.attempts import MASK, Attempts
from arena.ledger.store import Ledger
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.live.monitor import run_monitor
from arena.pipeline.season_config import load_season, season_contestants
from tests.agents.openai_stub import OpenAIStub, StubResponse
from tests.conftest import ts
from tests.market_lakes import season_lake

MON, TUE, WED = ts("2025-11-24 16:00"), ts("2025-11-25 16:00"), ts("2025-11-26 16:00")
HOLD = json.dumps({"reasoning": "Nothing to do.", "decisions": []})
DOWN = StubResponse.error(503, "model overloaded")


def _roster(url: str) -> str:
    return ("contestants:\n"
            "  - {name: momentum, kind: house, strategy: momentum}\n"
            f"  - {{name: stub-llm, kind: llm, model: openai/stub-model, api_base: '{url}', "
            "params: {timeout: 5, num_retries: 0}}\n")


class FakeClock:
    """A monotonic clock that only the cycle's waits move."""

    def __init__(self) -> None:
        self.now, self.waits = 0.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


@pytest.fixture
def stub():
    with OpenAIStub(default=StubResponse.answer(HOLD)) as server:
        yield server


@pytest.fixture
def lake(tmp_path_factory, tmp_path, universe, stub):
    return season_lake(tmp_path_factory, universe, tmp_path / "lake", _roster(stub.url),
                       start="2025-11-24", days=3)


def _play(lake, at, clock=None, **kw):
    season = load_season(lake)
    contestants, _ = season_contestants(lake, {}, call_timeout=season.call_timeout_s)
    clock = clock or FakeClock()
    return play_season_cycle(lake, season, contestants, at, now=at, clock=clock,
                             sleep=clock.sleep, **kw)


def test_a_failed_model_is_retried_within_the_cycle(lake, stub):
    stub.script(DOWN)  # the first call fails, the retry answers
    clock = FakeClock()
    run = _play(lake, MON, clock)
    by_name = {o.contestant: o for o in run.outcomes}
    assert by_name["stub-llm"].status == "no_trade" and by_name["stub-llm"].recorded == "recorded"
    assert run.attempts == 2 and clock.waits == [2.0]
    assert len(stub.chat_requests) == 2  # one failed call, one answered: nothing played twice
    [attempt] = Attempts(lake).of(MON)["stub-llm"]
    assert "503" in attempt.error or "overloaded" in attempt.error
    assert {k.contestant for k in Ledger(lake).records()} == {"momentum", "stub-llm"}


def test_retries_stop_at_the_cycle_deadline_and_record_nothing(lake, stub):
    stub.default = DOWN
    clock = FakeClock()
    run = _play(lake, MON, clock)  # deadline 600 s: waits 2, 4, ... 256 (510 s), then 512 > 90
    by_name = {o.contestant: o for o in run.outcomes}
    assert by_name["stub-llm"].status == "failed" and by_name["stub-llm"].recorded == "not recorded"
    assert clock.waits == [2.0 * 2 ** i for i in range(8)]
    assert run.attempts == 9 == len(stub.chat_requests) == len(Attempts(lake).of(MON)["stub-llm"])
    assert [k.contestant for k in Ledger(lake).records()] == ["momentum"]


def test_a_record_the_ledger_refuses_is_not_played_again(lake, stub, monkeypatch):
    """An answer echoing an API key's value: the ledger refuses the record, the outcome says
    why, and the cycle does not ask the model again (it would be refused again)."""
    monkeypatch.setenv("LEAKY_API_KEY", "sk-leaky-0123456789abcdef")
    stub.default = StubResponse.answer(json.dumps(
        {"reasoning": "my key is sk-leaky-0123456789abcdef", "decisions": []}))
    clock = FakeClock()
    run = _play(lake, MON, clock)
    by_name = {o.contestant: o for o in run.outcomes}
    assert by_name["stub-llm"].status == "failed" and not by_name["stub-llm"].transient
    assert "LEAKY_API_KEY" in by_name["stub-llm"].error
    assert run.attempts == 1 and clock.waits == [] and len(stub.chat_requests) == 1
    assert [k.contestant for k in Ledger(lake).records()] == ["momentum"]


def test_an_outage_then_the_retry_command_plays_only_the_failed_contestant(lake, stub, capsys,
                                                                             monkeypatch):
    """Down: the cycle exits 1, the house contestant is recorded, the model's attempts are
    logged. Up: ``arena season retry`` asks the model once and never replays the other."""
    stub.default = DOWN
    monkeypatch.setattr("arena.pipeline.day.RETRY_WAIT", 1e6)  # no retry within the cycle
    assert main(["season", "backfill", "2025-11-24", "--no-publish", "--lake", str(lake.root)]) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "not recorded" in out
    assert main(["season", "status", "--lake", str(lake.root), "--json"]) == 0
    [monday, *_] = json.loads(capsys.readouterr().out)["cycles"]
    assert monday["state"] == "failed (retry allowed)" and monday["failed"] == ["stub-llm"]
    # a monitor tick meanwhile watches only the recorded contestant: the failed one's record
    # must still be able to come first
    season = load_season(lake)
    contestants, _ = season_contestants(lake, {})
    tick = run_monitor(lake, season, contestants, MON + pd.Timedelta(hours=2), now=TUE)
    assert {k.contestant for k in Ledger(lake).monitor_records()} <= {"momentum"}
    assert tick.contestants == ["momentum"]
    asked = len(stub.chat_requests)
    stub.default = StubResponse.answer(HOLD)
    assert main(["season", "retry", "2025-11-24", "--no-publish", "--lake", str(lake.root), "--json"]) == 0
    rows = {r["contestant"]: r for r in json.loads(capsys.readouterr().out)["outcomes"]}
    assert rows["stub-llm"]["recorded"] == "recorded"
    assert rows["momentum"]["recorded"] == "already recorded"
    assert len(stub.chat_requests) == asked + 1
    assert {k.contestant for k in Ledger(lake).records()} == {"momentum", "stub-llm"}
    assert main(["season", "retry", "2025-11-25", "--lake", str(lake.root)]) == 2
    assert "never played" in capsys.readouterr().err


def test_a_contestant_without_a_record_is_forfeited_when_the_next_cycle_starts(lake, stub):
    stub.default = DOWN
    first = _play(lake, MON)
    assert {o.contestant: o.status for o in first.outcomes}["stub-llm"] == "failed"
    stub.default = StubResponse.answer(HOLD)
    second = _play(lake, TUE)
    assert second.forfeits == [(MON, "stub-llm")]
    ledger = Ledger(lake)
    [outcome] = ledger.record_rows("outcome", MON, "stub-llm")
    assert outcome["status"] == "forfeited"
    assert "9 failed attempt(s)" in outcome["errors"][0]
    assert "model overloaded" in outcome["errors"][0]
    [equity] = ledger.record_rows("equity", MON, "stub-llm")
    assert equity["equity"] == pytest.approx(10_000.0)
    assert {k.cycle_at for k in ledger.records("stub-llm")} == {MON, TUE}


def test_the_attempts_log_never_holds_a_key(tmp_path):
    from arena.data.lake import Lake

    os.environ["ARENA_TEST_SECRET_API_KEY"] = "sk-verysecret-0123456789"
    try:
        log = Attempts(Lake(tmp_path))
        log.add(MON, "stub-llm", "401: Incorrect API key provided: sk-verysecret-0123456789")
        [attempt] = log.of(MON)["stub-llm"]
    finally:
        del os.environ["ARENA_TEST_SECRET_API_KEY"]
    assert attempt.error == f"401: Incorrect API key provided: {MASK}"
    assert b"verysecret" not in next((tmp_path / "attempts").rglob("*.jsonl")).read_bytes()
