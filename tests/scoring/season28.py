"""A 28-day season on the synthetic market for the scoring tests: daily cycles at 16:00 UTC from
Monday 2025-01-13 (MLK day, Monday 2025-01-20, is an NYSE holiday; four weekends), 10 crypto
assets and 10 stocks; the fixtures ``prices`` and ``bars`` (tests/scoring/conftest.py) build it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.core.sessions import bar_close_times
from arena.scoring.arena_luck import RandomProfile
from tests.conftest import ts

START = ts("2025-01-13")  # a Monday
CYCLES = pd.date_range(START + pd.Timedelta(hours=16), periods=28, freq="1D")
HOLIDAY = pd.Timestamp("2025-01-20").date()
TIGHT = RandomProfile(level_min=0.01, level_max=0.02)
BUSY = RandomProfile(open_prob=1.0, close_prob=0.05, partial_prob=0.5, add_prob=0.5)


def _symbols(universe) -> list[str]:
    crypto = [a.symbol for a in universe.tradable if a.asset_class == "crypto"][:10]
    stocks = [a.symbol for a in universe.tradable if a.asset_class == "stock"][:10]
    return crypto + stocks


def season_prices(universe, synthetic) -> pd.DataFrame:
    """Price of each asset at each cycle: the last 1h close at or before 16:00 UTC on the cycle's
    own day; NaN when none (stocks on weekends and holidays: the module marks them at the last)."""
    columns = {}
    for symbol in _symbols(universe):
        asset = universe[symbol]
        hourly = synthetic.fetch_bars(asset, "1h", START, CYCLES[-1] + pd.Timedelta(hours=1))
        closes = pd.Series(hourly["close"].to_numpy(), index=bar_close_times(
            asset.calendar, "1h", pd.DatetimeIndex(hourly["timestamp"])))
        values = []
        for cycle in CYCLES:
            today = closes[(closes.index > cycle.normalize()) & (closes.index <= cycle)]
            values.append(today.iloc[-1] if len(today) else np.nan)
        columns[symbol] = values
    return pd.DataFrame(columns, index=CYCLES)


def season_bars(universe, synthetic, prices: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {s: synthetic.fetch_bars(universe[s], "15m", START, CYCLES[-1] + pd.Timedelta(hours=1))
            for s in prices.columns}
