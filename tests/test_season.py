"""A season replayed on a simulated clock: monitor and cycle every day, resumable."""

from __future__ import annotations

import json

import pytest

from arena.agents.factory import build_contestant
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.ledger import Ledger
from arena.roster import load_roster
from arena.season import replay_season
from tests.conftest import ts

SYMBOLS = ["BTC", "SPY", "ETH", "SOL", "ADA", "AAPL", "MSFT", "NVDA"]
START, DAYS = ts("2025-11-24"), 4


@pytest.fixture(scope="module")
def contestants():
    runnable, _ = load_roster().available({})
    return [build_contestant(s) for s in runnable]


def _fills(ledger: Ledger, contestants) -> dict[str, list]:
    return {c.name: [(f.at, f.symbol, f.kind, round(f.quantity, 12), f.automatic)
                     for f in ledger.fills(c.name)] for c in contestants}


def test_a_season_replays_and_resumes_without_duplicates(tmp_path, universe, contestants):
    sub = universe.select(SYMBOLS)
    straight = Lake(tmp_path / "straight")
    report = replay_season(SyntheticProvider(), sub, contestants, START, DAYS, lake=straight)
    assert [d.at for d in report.days] == [ts("2025-11-24 16:00"), ts("2025-11-25 16:00"),
                                           ts("2025-11-26 16:00"), ts("2025-11-27 16:00")]
    ledger = Ledger(straight)
    assert len(ledger.records()) == DAYS * len(contestants)
    assert len(ledger.monitor_records()) == (DAYS - 1) * len(contestants)
    assert report.trades > 0

    # interrupted after two days, then run again for the whole season
    resumed = Lake(tmp_path / "resumed")
    replay_season(SyntheticProvider(), sub, contestants, START, 2, lake=resumed)
    replay_season(SyntheticProvider(), sub, contestants, START, DAYS, lake=resumed)
    assert _fills(Ledger(resumed), contestants) == _fills(ledger, contestants)
    assert len(Ledger(resumed).records()) == DAYS * len(contestants)


def test_replay_command(tmp_path, capsys):
    from arena.cli import main

    args = ["replay", "--start", "2025-11-24", "--days", "2", "--symbols", ",".join(SYMBOLS),
            "--lake", str(tmp_path / "lake")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "day  2/2  2025-11-25 16:00" in out and "SYNTHETIC" in out
    assert main([*args, "--json"]) == 0  # resuming: everything already recorded
    again = json.loads(capsys.readouterr().out)
    assert {o["recorded"] for d in again["days"] for o in d["outcomes"]} == {"already recorded"}
    assert main(["replay", "--start", "someday"]) == 2
