"""Resampling bar frames to coarser intervals, per calendar, inventing nothing.

Every output bar is labelled by its open time (UTC) on the grid of :mod:`arena.calendar`. For
US equities a coarser bar only ever aggregates bars of one regular session (4h candles are the
session's first four hours and the rest; never across the overnight gap); a weekly bar aggregates
the sessions of one Monday-based week. Grid slots without source bars produce no output row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.calendar import (
    CRYPTO,
    INTERVAL_ORDER,
    TS_UNIT,
    bar_close_times,
    expected_bars,
    interval_delta,
)


def resample(bars: pd.DataFrame, source: str, target: str, calendar: str, *,
             complete_only: bool = False) -> pd.DataFrame:
    """Aggregate a bar frame of interval ``source`` into ``target`` bars (OHLCV rules).

    open = first open, high = max high, low = min low, close = last close, volume = sum.
    Extra columns (e.g. ``symbol``) must be constant and are carried through.

    By default every source bar must fall inside a ``target`` bar of the calendar (else
    ``ValueError``). With ``complete_only`` source bars outside the calendar are left out (the
    validation of the source series reports them) and a ``target`` bar is kept only when every
    source bar the calendar expects inside it is present: a day with a missing hour yields no
    daily bar rather than a wrong one.
    """
    if INTERVAL_ORDER.index(target) < INTERVAL_ORDER.index(source):
        raise ValueError(f"cannot resample {source} bars to the finer interval {target}")
    if bars.empty or source == target:
        return bars.copy()
    keys = _target_keys(pd.DatetimeIndex(bars["timestamp"]), target, calendar)
    valid = ~np.isnat(keys)
    if not valid.all() and not complete_only:
        raise ValueError(f"{int((~valid).sum())} bar(s) lie outside every {calendar} {target} bar")
    frame = bars[valid].assign(_key=keys[valid])
    out = frame.groupby("_key", sort=True).agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"),
        close=("close", "last"), volume=("volume", "sum"), _n=("close", "size"))
    out.index = pd.DatetimeIndex(out.index).tz_localize("UTC").as_unit(TS_UNIT)
    if complete_only and not out.empty:
        out = out[out["_n"].to_numpy() == _expected_counts(out.index, source, target, calendar)]
    out = out.drop(columns="_n").rename_axis("timestamp").reset_index()
    for col in bars.columns.difference([*out.columns, "_key"]):
        out[col] = bars[col].iloc[0]
    return out[list(bars.columns)]


def _expected_counts(opens: pd.DatetimeIndex, source: str, target: str, calendar: str) -> np.ndarray:
    """How many ``source`` bars the calendar puts inside each ``target`` bar."""
    closes = bar_close_times(calendar, target, opens)
    grid = expected_bars(calendar, source, opens[0], closes[-1])
    counts = pd.Series(1, index=_target_keys(grid, target, calendar)).groupby(level=0).size()
    return counts.reindex(opens.tz_localize(None).to_numpy(), fill_value=0).to_numpy()


def _target_keys(ts: pd.DatetimeIndex, target: str, calendar: str) -> np.ndarray:
    """Open time (UTC, ``datetime64[us]``) of the ``target`` bar containing each source bar
    (NaT where none does). Works on int64 microseconds: tz-aware ``to_numpy`` is object-slow."""
    ts = ts.as_unit(TS_UNIT)
    if calendar == CRYPTO:
        if target == "1w":
            day = ts.normalize()
            keys = day - pd.to_timedelta(day.weekday, unit="D")
        else:
            keys = ts.floor(interval_delta(target))
        return keys.as_unit(TS_UNIT).asi8.view("datetime64[us]")
    step = interval_delta(target)
    grid = expected_bars(calendar, target, ts.min() - step, ts.max() + pd.Timedelta(minutes=1))
    if grid.empty:
        return np.full(len(ts), np.datetime64("NaT"), dtype="datetime64[us]")
    grid_i8 = grid.as_unit(TS_UNIT).asi8
    ends_i8 = bar_close_times(calendar, target, grid).as_unit(TS_UNIT).asi8
    ts_i8 = ts.asi8
    pos = np.searchsorted(grid_i8, ts_i8, side="right") - 1
    safe = np.clip(pos, 0, None)
    inside = (pos >= 0) & (ts_i8 < ends_i8[safe])
    keys = np.where(inside, grid_i8[safe], np.iinfo(np.int64).min)  # int64 min is NaT
    return keys.view("datetime64[us]")


def drop_unclosed(bars: pd.DataFrame, interval: str, calendar: str, as_of: pd.Timestamp) -> pd.DataFrame:
    """Keep only bars that have closed by ``as_of`` (a still-forming bar is not a bar yet)."""
    if bars.empty:
        return bars
    closes = bar_close_times(calendar, interval, pd.DatetimeIndex(bars["timestamp"]))
    return bars[np.asarray(closes <= as_of)].reset_index(drop=True)
