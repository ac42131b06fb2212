"""The single-asset track's score does not depend on the minute of the call (issue 27, item 2).

A live lake never holds the bar still forming at ``now``; the clock used to count it as
expected, so a short window called mid-bar fell below 95% hourly coverage: AAPL dropped to the
daily grid and SOL to "the lake has no synthetic bars". Each test scores one window at several
minutes of one bar's hour, on a lake holding exactly the bars closed then, and checks the answer
against closes read straight from the lake.
"""

from __future__ import annotations

import pandas as pd
import pytest

from arena.data.lake import PartitionKey
from arena.market.clocks import asset_clock, closed_expected
from arena.pipeline.entrants import Entrant, add_entrant
from arena.pipeline.outside import Arena, entrant_score, submit_positions
from arena.pipeline.season_config import load_season
from arena.scoring.scorer import COST_RATES
from tests.conftest import ts
from tests.live_lakes import live_lake

SOL_SENT = ts("2025-11-21 00:30")  # held from the close of SOL's 00:00 bar (01:00)
AAPL_SENT = ts("2025-11-19 14:00")  # before Wednesday's open: held from the 14:30 bar's close
SOL_MINUTES = [ts(f"2025-11-21 16:{m:02d}") for m in (0, 10, 30, 59)]
# AAPL's bar of 15:30-16:29 UTC (:00, :10, :30 and :59 of its hour)
AAPL_MINUTES = [ts(f"2025-11-21 {t}") for t in ("15:30", "15:40", "16:00", "16:29")]


@pytest.fixture
def arena(tmp_path_factory, tmp_path, universe) -> Arena:
    lake = live_lake(tmp_path_factory, universe, tmp_path / "lake")
    return Arena(lake, load_season(lake))


def _close(arena: Arena, symbol: str, at: pd.Timestamp) -> float:
    bars = arena.lake.read_bars(PartitionKey("synthetic", "1h", symbol)).set_index("timestamp")
    return float(bars.loc[at, "close"])


def _track(arena: Arena, entrant: Entrant, symbol: str, now: pd.Timestamp) -> dict:
    [track] = [t for t in entrant_score(arena, entrant, now)["single_asset"]
               if t["symbol"] == symbol]
    return track


@pytest.mark.parametrize(("symbol", "sent", "minutes", "first", "last", "bars"), [
    ("SOL", SOL_SENT, SOL_MINUTES, ts("2025-11-21 00:00"), ts("2025-11-21 15:00"), 16),
    # Wednesday 7 + Thursday 7 + Friday's 14:30 bar (its 15:30 bar is forming)
    ("AAPL", AAPL_SENT, AAPL_MINUTES, ts("2025-11-19 14:30"), ts("2025-11-21 14:30"), 15),
])
def test_a_track_scores_the_same_grid_at_every_minute_of_an_hour(arena, symbol, sent, minutes,
                                                                  first, last, bars):
    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", sent)
    submit_positions(arena, entrant, {symbol: 1.0}, sent)
    got = [_track(arena, entrant, symbol, now) for now in minutes]
    assert all("error" not in t for t in got), got
    assert [t["grid"] for t in got] == ["1h"] * 4
    assert [t["bars"] for t in got] == [bars] * 4
    assert all(t == got[0] for t in got)  # the same score, luck and all
    # the oracle, from the lake's closes: long 1.0 from the first bar's close, one entry fee
    rate = COST_RATES["crypto" if symbol == "SOL" else "stock"]
    expected = (1 - rate) * _close(arena, symbol, last) / _close(arena, symbol, first) - 1
    assert got[0]["from"] == first.isoformat()
    assert got[0]["return"] == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_the_clock_expects_only_the_bars_closed_by_its_end(arena, universe):
    """Minute by minute across SOL's 16:00 bar: the same 16 hourly bars, never the forming one."""
    sol = universe["SOL"]
    start = ts("2025-11-21 00:00")
    for now in SOL_MINUTES:
        assert list(closed_expected("24/7", "1h", start, now)) == list(
            pd.date_range(start, periods=16, freq="1h"))
        clock = asset_clock(arena.lake, "synthetic", sol, start, now)
        assert clock.grid == "1h" and len(clock.bars) == 16
    # a stock's last bar of a session closes with the session (20:30 opens, closes 21:00)
    session = closed_expected("XNYS", "1h", ts("2025-11-20 14:00"), ts("2025-11-20 21:00"))
    assert len(session) == 7 and session[-1] == ts("2025-11-20 20:30")
    assert len(closed_expected("XNYS", "1h", ts("2025-11-20 14:00"), ts("2025-11-20 20:59"))) == 6


def test_a_track_with_one_closed_bar_waits_at_any_minute(arena):
    """Sent at 15:30: SOL's 15:00 bar closes at 16:00, its 16:00 bar at 17:00. Through the hour
    one bar has closed: a note at every minute, never an error (mid-bar, the forming bar used to
    count as missing and the track fell to a daily grid without bars)."""
    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", ts("2025-11-21 15:30"))
    submit_positions(arena, entrant, {"SOL": -1.0}, ts("2025-11-21 15:30"))
    for now in SOL_MINUTES:
        track = _track(arena, entrant, "SOL", now)
        assert "error" not in track and track["bars"] == 1, track
        assert track["note"].startswith("scored once two bars have closed")
