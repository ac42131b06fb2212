"""The single-asset track's score does not depend on the minute of the call (issue 27, item 2).

A track is scored over the season's window, from its first cycle to its latest one at or before
the call, on the bars closed by that cycle (issue 30, item 5): every minute between two cycles
reads the same window. (Before, the window ran from the first submission to the call, and a live
lake never holds the bar still forming at the call: a short window called mid-bar fell below 95%
hourly coverage, AAPL dropped to the daily grid and SOL to "the lake has no synthetic bars".)
The lake holds exactly the bars closed at Friday 16:00, the last cycle of a three-day season from
Wednesday; each test scores the window at several minutes after that cycle and checks the answer
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

WED = ts("2025-11-19 16:00")  # the season's first cycle; its last is Friday's, at the lake's cut
SOL_SENT = ts("2025-11-21 00:30")  # held from the close of SOL's 00:00 bar (01:00)
AAPL_SENT = ts("2025-11-19 14:00")  # before the season: held from the window's first bar's open
# SOL's bar of 16:00-16:59 UTC, after the last cycle (:00, :10, :30 and :59 of its hour)
SOL_MINUTES = [ts(f"2025-11-21 16:{m:02d}") for m in (0, 10, 30, 59)]
# AAPL's bar of 15:30-16:29 UTC after the cycle (16:00, 16:29) and later the same day
AAPL_MINUTES = [ts(f"2025-11-21 {t}") for t in ("16:00", "16:10", "16:29", "20:59")]


@pytest.fixture
def arena(tmp_path_factory, tmp_path, universe) -> Arena:
    lake = live_lake(tmp_path_factory, universe, tmp_path / "lake", start="2025-11-19", days=3)
    return Arena(lake, load_season(lake))


def _price(arena: Arena, symbol: str, at: pd.Timestamp, column: str = "close") -> float:
    bars = arena.lake.read_bars(PartitionKey("synthetic", "1h", symbol)).set_index("timestamp")
    return float(bars.loc[at, column])


def _track(arena: Arena, entrant: Entrant, symbol: str, now: pd.Timestamp) -> dict:
    [track] = [t for t in entrant_score(arena, entrant, now)["single_asset"]
               if t["symbol"] == symbol]
    return track


@pytest.mark.parametrize(("symbol", "sent", "minutes", "first", "last", "bars"), [
    # Wednesday 16:00 to Friday 15:00; held from Friday 00:00's close
    ("SOL", SOL_SENT, SOL_MINUTES, (ts("2025-11-21 00:00"), "close"), ts("2025-11-21 15:00"),
     48),
    # Wednesday 16:30 to 20:30 (5) + Thursday 7 + Friday's 14:30 bar (its 15:30 bar closes
    # after the cycle); held from the window's opening, its first bar's open
    ("AAPL", AAPL_SENT, AAPL_MINUTES, (ts("2025-11-19 16:30"), "open"), ts("2025-11-21 14:30"),
     13),
])
def test_a_track_scores_the_same_grid_at_every_minute_of_an_hour(arena, symbol, sent, minutes,
                                                                  first, last, bars):
    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", sent)
    submit_positions(arena, entrant, {symbol: 1.0}, sent)
    got = [_track(arena, entrant, symbol, now) for now in minutes]
    assert [t["status"] for t in got] == ["scored"] * 4, got
    assert [t["grid"] for t in got] == ["1h"] * 4
    assert [t["bars"] for t in got] == [bars] * 4
    assert all(t == got[0] for t in got)  # the same score, luck and all
    # the oracle, from the lake's prices: long 1.0 from where it started, one entry fee
    rate = COST_RATES["crypto" if symbol == "SOL" else "stock"]
    expected = (1 - rate) * _price(arena, symbol, last) / _price(arena, symbol, *first) - 1
    assert (got[0]["from"], got[0]["to"]) == (WED.isoformat(), ts("2025-11-21 16:00").isoformat())
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


def test_a_track_sent_in_the_windows_last_bar_waits_at_any_minute(arena):
    """Sent at 15:30: SOL's 15:00 bar, the window's last, closes at 16:00 with the cycle; the
    position held from that close earns nothing inside the window. At every minute the track
    says so (no_position, no numbers), never an error."""
    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", ts("2025-11-21 15:30"))
    submit_positions(arena, entrant, {"SOL": -1.0}, ts("2025-11-21 15:30"))
    for now in SOL_MINUTES:
        track = _track(arena, entrant, "SOL", now)
        assert (track["status"], track["bars"], track["coverage"]) == ("no_position", 48, 0.0)
        assert track["return"] is None and track["luck_percentile"] is None
        assert track["note"].startswith("no position of yours earns")
