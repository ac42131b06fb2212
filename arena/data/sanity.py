"""Whether stored bars are still bars: the row rules every validated bar met when it was
published, checked again where the bars are used.

Validation (:mod:`arena.data.validation`) judged every bar before it reached the lake. A file
can still change afterwards - a disk that returns other bytes, a partial copy, a hand edit - and
Parquet often reads such bytes without complaint (lows of ``-6e-33``, highs of ``3e79``). These
checks are cheap (vectorised over the rows a reader keeps), so the cycle's market runs them on
every series it reads and ``arena season verify`` on every partition: a bar that breaks one is
damage, named with its time, never a price.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

MAX_BAR_RANGE = 100.0
"""A bar's high over its low, or a close over the close before it, beyond any real bar and far
beyond what validation lets through (it refuses a 10x unit change): damage, not a market."""


def bar_problem(table: pa.Table) -> str | None:
    """The first way ``table`` (bar columns: ``timestamp`` and any of open, high, low, close,
    volume) is not a series of validated bars, e.g. ``the bar at 2025-11-20 14:00 UTC has low
    -6e-33 (prices are positive)``; ``None`` when every row holds."""
    if table.num_rows == 0:
        return None
    names = set(table.column_names)
    stamps = table.column("timestamp").to_numpy().view(np.int64) if "timestamp" in names else None

    def at(i: int) -> str:
        if stamps is None:
            return f"row {i}"
        return f"the bar at {pd.Timestamp(stamps[i], unit='us', tz='UTC'):%Y-%m-%d %H:%M} UTC"

    if stamps is not None and len(stamps) > 1:
        bad = np.flatnonzero(np.diff(stamps) <= 0)
        if len(bad):
            return f"{at(int(bad[0]) + 1)} does not come after the bar before it"
    prices = {c: table.column(c).to_numpy(zero_copy_only=False).astype("float64", copy=False)
              for c in ("open", "high", "low", "close") if c in names}
    for name, values in prices.items():
        bad = np.flatnonzero(~np.isfinite(values) | (values <= 0))
        if len(bad):
            return f"{at(int(bad[0]))} has {name} {values[bad[0]]:.6g} (prices are positive)"
    if "volume" in names:
        volume = table.column("volume").to_numpy(zero_copy_only=False).astype("float64",
                                                                              copy=False)
        bad = np.flatnonzero(~np.isfinite(volume) | (volume < 0))
        if len(bad):
            return f"{at(int(bad[0]))} has volume {volume[bad[0]]:.6g} (volumes are not negative)"
    close = prices.get("close")
    if close is not None and len(close) > 1:  # no validated series moves 100x in one bar
        step = close[1:] / close[:-1]
        bad = np.flatnonzero((step > MAX_BAR_RANGE) | (step < 1 / MAX_BAR_RANGE))
        if len(bad):
            i = int(bad[0]) + 1
            return (f"{at(i)} has close {close[i]:.6g} after {close[i - 1]:.6g}, a move no "
                    "validated series makes")
    high, low = prices.get("high"), prices.get("low")
    if high is not None and low is not None:
        for name in ("open", "close"):
            if name in prices:
                bad = np.flatnonzero((prices[name] > high) | (prices[name] < low))
                if len(bad):
                    i = int(bad[0])
                    return (f"{at(i)} has {name} {prices[name][i]:.6g} outside its low "
                            f"{low[i]:.6g} and high {high[i]:.6g}")
        bad = np.flatnonzero((high < low) | (high > low * MAX_BAR_RANGE))
        if len(bad):
            i = int(bad[0])
            return f"{at(i)} has high {high[i]:.6g} and low {low[i]:.6g}, which no bar has"
    return None
