"""A season replayed on a simulated clock: monitor and cycle every day, resumable."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from arena.agents.factory import build_contestant
from arena.agents.roster import load_roster
from arena.cli import main
from arena.core.sessions import daily_cycles
from arena.data.lake import Lake
from arena.data.market_store import set_market
from arena.data.providers.synthetic import SyntheticProvider
from arena.ledger.store import Ledger
from arena.pipeline.season import replay_season
from tests.conftest import ts
from tests.ledger_books import ledger_tables

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
    report = replay_season(SyntheticProvider(), sub, contestants, daily_cycles(START, DAYS), lake=straight)
    assert [d.at for d in report.days] == [ts("2025-11-24 16:00"), ts("2025-11-25 16:00"),
                                           ts("2025-11-26 16:00"), ts("2025-11-27 16:00")]
    ledger = Ledger(straight)
    assert len(ledger.records()) == DAYS * len(contestants)
    # a day's monitor window is recorded when it closed something (the book moved)
    assert len(ledger.monitor_records()) <= (DAYS - 1) * len(contestants)
    assert (ledger.table("outcome", monitor=True)["n_fills"] > 0).all()
    assert report.fills > 0

    # interrupted after two days, then run again for the whole season
    resumed = Lake(tmp_path / "resumed")
    replay_season(SyntheticProvider(), sub, contestants, daily_cycles(START, 2), lake=resumed)
    replay_season(SyntheticProvider(), sub, contestants, daily_cycles(START, DAYS), lake=resumed)
    assert _fills(Ledger(resumed), contestants) == _fills(ledger, contestants)
    assert len(Ledger(resumed).records()) == DAYS * len(contestants)


def _books(lake: Lake) -> dict[str, object]:
    """Everything a season leaves for its readers, minus the wall-clock latency of the calls:
    every ledger table, every bar partition and the daily reports."""
    books: dict[str, object] = dict(ledger_tables(lake))
    books.update({f"bars/{k}": lake.read_bars(k) for k in lake.partitions()})
    books.update({f"report/{p.name}": p.read_text()
                  for p in sorted((lake.root / "reports" / "daily").glob("*.md"))})
    return books


def test_the_season_ingest_plays_the_same_books_as_daily_ingests(tmp_path, universe, contestants):
    """The season's market ingested in one run before the first day (the lake holds every later
    bar while each day plays) against one ingest before each day (the lake ends at the day):
    the same bars, the same decisions, fills, equity and daily reports - no day sees a bar after
    its time."""
    sub = universe.select(SYMBOLS)
    once, daily = Lake(tmp_path / "once"), Lake(tmp_path / "daily")
    said: list[str] = []
    played = replay_season(SyntheticProvider(), sub, contestants, daily_cycles(START, DAYS), lake=once,
                           say=said.append)
    replay_season(SyntheticProvider(), sub, contestants, daily_cycles(START, DAYS), lake=daily, ingest="daily")
    assert sorted(played.ingest.published) == sorted(SYMBOLS)
    assert not played.ingest.not_published
    assert said[0].startswith(f"ingest: {len(SYMBOLS)} assets from ") and "done in" in said[1]
    assert all("ingest" not in d.timings for d in played.days)
    a, b = _books(once), _books(daily)
    assert a.keys() == b.keys() and sum(k.startswith("bars/") for k in a) == 5 * len(SYMBOLS)
    assert sum(len(a[k]) for k in a if k.startswith("cycles/fills")) > 0
    for key in a:
        if isinstance(a[key], str):
            assert a[key] == b[key], key
        else:
            pd.testing.assert_frame_equal(a[key], b[key], obj=key)


def test_a_season_on_an_object_store_market_keeps_the_same_books(tmp_path, universe, contestants,
                                                                 s3_bucket):
    """The market data on object storage (an S3-compatible server on 127.0.0.1), the ledger on
    disk: the same bars, decisions, fills, equity and daily reports as an all-local lake."""
    sub = universe.select(SYMBOLS[:4])
    local, remote = Lake(tmp_path / "local"), tmp_path / "remote"
    set_market(remote, f"s3://{s3_bucket}/market")
    for lake in (local, Lake(remote)):
        replay_season(SyntheticProvider(), sub, contestants, daily_cycles(START, 2), lake=lake)
    assert not (remote / "bars").exists() and (remote / "ledger").is_dir()
    a, b = _books(local), _books(Lake(remote))
    assert a.keys() == b.keys() and sum(k.startswith("bars/") for k in a) == 5 * 4
    for key in a:
        if isinstance(a[key], str):
            assert a[key] == b[key], key
        else:
            pd.testing.assert_frame_equal(a[key], b[key], obj=key)


def test_replay_refuses_an_unknown_ingest(tmp_path, universe, contestants):
    with pytest.raises(ValueError, match="ingest must be 'season' or 'daily'"):
        replay_season(SyntheticProvider(), universe.select(SYMBOLS), contestants, daily_cycles(START, 1),
                      lake=Lake(tmp_path / "lake"), ingest="hourly")


def test_replay_command(tmp_path, capsys):
    args = ["replay", "--start", "2025-11-24", "--days", "2", "--symbols", ",".join(SYMBOLS),
            "--players", "500", "--lake", str(tmp_path / "lake")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "day  2/2  2025-11-25 16:00" in out and "SYNTHETIC" in out
    assert main([*args, "--json"]) == 0  # resuming: everything already recorded
    again = json.loads(capsys.readouterr().out)
    assert {o["recorded"] for d in again["days"] for o in d["outcomes"]} == {"already recorded"}
    assert main(["replay", "--start", "someday"]) == 2


def test_demo_prints_the_leaderboard_and_the_report_then_report_rebuilds_it(tmp_path, capsys):
    lake = tmp_path / "demo"
    args = ["demo", "--days", "2", "--symbols", "BTC,SPY,ETH,AAPL", "--players", "500",
            "--lake", str(lake)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "day  2/2" in out and "contestant" in out and "luck pct" in out
    assert f"season report: {lake / 'reports' / 'season.html'}" in out
    # the demo's roster holds house rules only: rulers, not ranked, and no contestant to name
    assert "no contestant played this season, only the house rules (rulers)" in out
    assert not any(line[:3].strip().isdigit() for line in out.splitlines())
    board = [line for line in out.splitlines() if line.startswith("–  ")]
    assert len(board) == 5  # one line per house agent
    assert main([*args, "--json"]) == 0  # resumes: nothing played twice, same leaderboard
    payload = json.loads(capsys.readouterr().out)
    assert {o["recorded"] for d in payload["days"] for o in d["outcomes"]} == {"already recorded"}
    assert [r["contestant"] for r in payload["leaderboard"]] == [line.split()[1] for line in board]
    assert payload["best_contestant"] is None
    assert {(r["role"], r["place"]) for r in payload["leaderboard"]} == {("ruler", None)}
    (lake / "reports" / "season.html").unlink()
    assert main(["report", "--lake", str(lake)]) == 0
    assert (lake / "reports" / "season.html").stat().st_size > 10_000
    # a report without marts, and a second season in the same lake, are refused clearly
    assert main(["report", "--lake", str(tmp_path / "empty")]) == 2
    assert "build the marts first" in capsys.readouterr().err
    assert main(["replay", "--start", "2026-11-01", "--days", "1", "--symbols", "BTC,SPY",
                 "--lake", str(lake)]) == 2
    err = capsys.readouterr().err
    assert "holds season '2026-10-01-synthetic-replay'" in err and "in a new lake" in err
