"""Per-asset clocks: the bar grid an asset is scored on, never with invented bars.

Hourly bars where the lake has them for the window (crypto around the clock, stocks inside their
NYSE sessions only, as the lake stores them), the daily grid otherwise. The grid used is part of
every luck and rules result, so a number is never read against the wrong clock.

Coverage is judged on the bars that have *closed* by the window's end: a lake never holds the
bar still forming then, so counting it as expected would make the grid (and a track's score)
depend on the minute of the call - a short window read at 16:30 would miss its 95% and fall to
the daily grid, or to no bars at all, where the same window read at 16:00 is hourly.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from arena.core.sessions import bar_close_times, expected_bars, utc
from arena.core.universe import Asset
from arena.data.lake import Lake, PartitionKey

HOURLY_COVERAGE = 0.95  # share of expected hourly bars that must be present to use the 1h grid
PERIODS_PER_YEAR = {("24/7", "1h"): 8760.0, ("24/7", "1d"): 365.0,
                    ("XNYS", "1h"): 252.0 * 7, ("XNYS", "1d"): 252.0}


@dataclass(frozen=True)
class Clock:
    """An asset's bars on its grid (``"1h"`` or ``"1d"``) and how many such bars make a year."""

    symbol: str
    calendar: str
    grid: str
    bars: pd.DataFrame

    @property
    def periods_per_year(self) -> float:
        return PERIODS_PER_YEAR[(self.calendar, self.grid)]

    @property
    def closes(self) -> pd.Series:
        return self.bars.set_index("timestamp")["close"]


def closed_expected(calendar: str, interval: str, start: object, end: object) -> pd.DatetimeIndex:
    """Open times of the bars ``calendar`` expects in ``[start, end)`` that have closed by
    ``end`` (a stock's last bar of a session closes with the session)."""
    opens = expected_bars(calendar, interval, start, end)
    return opens[bar_close_times(calendar, interval, opens) <= utc(end)]


def asset_clock(lake: Lake, provider: str, asset: Asset, start: object, end: object) -> Clock:
    """The asset's bars in ``[start, end)``: hourly if the lake holds at least
    :data:`HOURLY_COVERAGE` of the hourly bars closed by ``end`` (the one still forming at
    ``end`` is neither expected nor counted, whatever the lake holds)."""
    start_ts, end_ts = utc(start), utc(end)
    hourly = lake.read_bars(PartitionKey(provider, "1h", asset.symbol), start_ts, end_ts)
    expected = closed_expected(asset.calendar, "1h", start_ts, end_ts)
    held = int(pd.DatetimeIndex(hourly["timestamp"]).isin(expected).sum())
    if len(expected) and held >= HOURLY_COVERAGE * len(expected):
        return Clock(asset.symbol, asset.calendar, "1h", hourly)
    daily = lake.read_bars(PartitionKey(provider, "1d", asset.symbol), start_ts, end_ts)
    if daily.empty:
        raise LookupError(f"the lake has no {provider} bars for {asset.symbol} between "
                          f"{start_ts} and {end_ts}")
    return Clock(asset.symbol, asset.calendar, "1d", daily)


def infer_grid(timestamps: pd.DatetimeIndex) -> tuple[str, str]:
    """(calendar, grid) of a price file: hourly or daily bars, with or without weekends."""
    ts = pd.DatetimeIndex(timestamps)
    if len(ts) < 2:
        return "24/7", "1d"
    spacing = pd.Series(ts[1:] - ts[:-1]).median()
    grid = "1h" if spacing <= pd.Timedelta(hours=2) else "1d"
    # NYSE bars (session opens, or dates for daily files) all fall on UTC weekdays
    weekends = (ts.tz_convert("UTC").weekday >= 5).any()
    return ("24/7" if weekends else "XNYS"), grid
