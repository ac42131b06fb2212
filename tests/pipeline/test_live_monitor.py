"""The live monitor: ticks between the cycles, each window recorded exactly once (also under
two concurrent runs), never past a due cycle, and the same closes as the cycle's own window."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from arena.data.lake import Lake, PartitionKey
from arena.ledger.store import Ledger
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.live.monitor import MonitorRefused, run_monitor
from arena.pipeline.season_config import load_season, season_contestants
from tests.conftest import ts
from tests.data.published import publish_frames
from tests.market_lakes import season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: random, kind: house, strategy: random}\n")
MON, TUE = ts("2025-11-24 16:00"), ts("2025-11-25 16:00")
LATER = ts("2026-06-01")


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe) -> Lake:
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)
    config = load_season(lake)
    contestants, _ = season_contestants(lake, {})
    play_season_cycle(lake, config, contestants, MON, now=MON)
    return lake


def _tick(lake: Lake, at: pd.Timestamp, now: pd.Timestamp = LATER):
    config = load_season(lake)
    contestants, _ = season_contestants(lake, {})
    return run_monitor(lake, config, contestants, at, now=now)


def _windows(lake: Lake) -> list[tuple[pd.Timestamp, pd.Timestamp, str]]:
    return [(k.start, k.end, k.contestant) for k in Ledger(lake).monitor_records()]


def _each_closed_something(lake: Lake) -> None:
    """A monitor window is recorded only when it closed a position."""
    outcome = Ledger(lake).table("outcome", monitor=True)
    assert (outcome["n_fills"] > 0).all(), outcome


def test_ticks_record_only_the_windows_that_close_and_stop_at_a_due_cycle(season):
    first = _tick(season, MON + pd.Timedelta(minutes=70))  # floored to 17:00
    assert first.end == ts("2025-11-24 17:00")
    assert first.contestants == ["momentum", "random"]
    before = _windows(season)
    assert all(s == MON for s, _, _ in before)  # from the cycle, the book's last change
    _each_closed_something(season)
    _tick(season, MON + pd.Timedelta(minutes=70))  # the same tick again: nothing new
    assert _windows(season) == before
    late = _tick(season, TUE + pd.Timedelta(hours=3))  # Tuesday's cycle is due, not played
    assert late.end == TUE
    _each_closed_something(season)
    config = load_season(season)
    contestants, _ = season_contestants(season, {})
    cycle = play_season_cycle(season, config, contestants, TUE, now=TUE)  # watched already
    assert cycle.automatic_closes == 0
    assert {k.cycle_at for k in Ledger(season).records()} == {MON, TUE}


def test_ticks_close_what_the_cycles_own_window_closes(season, tmp_path):
    other = Lake(tmp_path / "one-window")
    shutil.copytree(season.root, other.root)
    for hour in range(1, 25, 3):  # ticks through the night and the next session
        _tick(season, MON + pd.Timedelta(hours=hour))
    contestants, _ = season_contestants(season, {})
    for lake in (season, other):
        play_season_cycle(lake, load_season(lake), contestants, TUE, now=TUE)
    for name in ("momentum", "random"):
        ticked, whole = Ledger(season), Ledger(other)
        assert ticked.fills(name) == whole.fills(name)
        assert ticked.portfolio(name) == whole.portfolio(name)
    _each_closed_something(season)
    _each_closed_something(other)


def test_a_tick_is_refused_in_the_future_before_any_cycle_and_on_missing_bars(
        season, tmp_path_factory, tmp_path, universe):
    """Nothing recorded in each case."""
    with pytest.raises(MonitorRefused, match="in the future"):
        _tick(season, MON + pd.Timedelta(hours=1), now=MON + pd.Timedelta(minutes=30))
    fresh = season_lake(tmp_path_factory, universe, tmp_path / "fresh", HOUSE,
                        start="2025-11-24", days=3)
    with pytest.raises(MonitorRefused, match="no cycle played yet"):
        _tick(fresh, MON + pd.Timedelta(hours=1))
    # a held symbol whose 15-minute bars stop at 17:00: a tick at 19:00 would record a window
    # whose last bars were never ingested, so it is refused and nothing is recorded
    held = sorted({s for n in ("momentum", "random") for s in Ledger(season).portfolio(n).positions})
    assert held, "the house contestants opened no position on Monday"
    key = PartitionKey("synthetic", "15m", held[0])
    bars = season.read_bars(key)
    publish_frames(season, {key: bars[bars["timestamp"] < ts("2025-11-24 16:45")]})
    with pytest.raises(MonitorRefused, match=f"{held[0]} .*do not reach"):
        _tick(season, MON + pd.Timedelta(hours=3))
    assert _windows(season) == []


def test_two_concurrent_ticks_record_each_window_once(season, tmp_path):
    one = Lake(tmp_path / "one-tick")
    shutil.copytree(season.root, one.root)
    _tick(one, ts("2025-11-24 20:00"))  # what a single tick records
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    args = [sys.executable, "-m", "arena.cli", "monitor", "--at", "2025-11-24T20:00:00Z",
            "--lake", str(season.root), "--json"]
    runs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    codes = [r.wait(timeout=300) for r in runs]
    assert codes == [0, 0], [r.stderr.read() for r in runs]
    assert _windows(season) == _windows(one)
    assert Ledger(season).table("fills", monitor=True).equals(
        Ledger(one).table("fills", monitor=True))


def test_a_missed_cycle_leaves_no_gap_in_the_watch(season):
    """Monday played, Tuesday missed: Wednesday's cycle watches from Monday's, not Tuesday's."""
    wednesday = ts("2025-11-26 16:00")
    contestants, _ = season_contestants(season, {})
    play_season_cycle(season, load_season(season), contestants, wednesday, now=wednesday)
    assert {(s, e) for s, e, _ in _windows(season)} <= {(MON, wednesday)}
    _each_closed_something(season)
    assert {k.cycle_at for k in Ledger(season).records()} == {MON, wednesday}


def test_a_tick_at_the_session_open_leaves_the_opening_print_to_the_next(season):
    """The opening print is observed at 9:30 New York at the first bar's open price, but that bar
    closes at 9:45: a window ending at 9:30 would be written without it and the print, at its
    end, never watched. The tick at the open ends a step earlier; the next holds the print."""
    from arena.core.sessions import NYSE
    from arena.data.lake import PartitionKey
    from arena.engine.monitor import observations

    _tick(season, TUE - pd.Timedelta(hours=3))  # 13:00 UTC, before the open
    at_open = _tick(season, ts("2025-11-25 14:30"))
    assert at_open.end == ts("2025-11-25 14:15")
    after = _tick(season, ts("2025-11-25 14:45"))
    assert after.end == ts("2025-11-25 14:45")
    _each_closed_something(season)
    bars = season.read_bars(PartitionKey("synthetic", "15m", "AAPL"), ts("2025-11-25 14:00"),
                            ts("2025-11-25 14:45"))
    seen = observations(bars, NYSE, ts("2025-11-25 14:15"), ts("2025-11-25 14:45"))
    assert [t for t, _ in seen] == [ts("2025-11-25 14:30"), ts("2025-11-25 14:45")]
    assert seen[0][1] == bars["open"].iloc[-1]
