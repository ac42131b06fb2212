"""Per-asset clocks: the bar grid an asset is scored on, never with invented bars.

Hourly bars where the lake has them for the window (crypto around the clock, stocks inside their
NYSE sessions only, as the lake stores them), the daily grid otherwise. The grid used is part of
every luck and rules result, so a number is never read against the wrong clock.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from arena.core.sessions import expected_bars, utc
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


def asset_clock(lake: Lake, provider: str, asset: Asset, start: object, end: object) -> Clock:
    """The asset's bars in ``[start, end)``: hourly if the lake covers the window hourly."""
    start_ts, end_ts = utc(start), utc(end)
    hourly = lake.read_bars(PartitionKey(provider, "1h", asset.symbol), start_ts, end_ts)
    expected = len(expected_bars(asset.calendar, "1h", start_ts, end_ts))
    if expected and len(hourly) >= HOURLY_COVERAGE * expected:
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
