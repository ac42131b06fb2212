"""Resampling bar frames to coarser intervals, per calendar, inventing nothing.

Every output bar is labelled by its open time (UTC) on the grid of :mod:`arena.core.sessions`. For
US equities a coarser bar only ever aggregates bars of one regular session (4h candles are the
session's first four hours and the rest; never across the overnight gap); a weekly bar aggregates
the sessions of one Monday-based week. Grid slots without source bars produce no output row.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from arena.core.sessions import (
    CRYPTO,
    DAY_US,
    INTERVAL_ORDER,
    NAT,
    TS_UNIT,
    bar_close_times,
    expected_bars,
    interval_delta,
    monday_of,
    utc_stamp,
)

# arena.data.providers.base.BAR_COLUMNS, spelt out: the providers import this module
OHLCV = ("open", "high", "low", "close", "volume")


@lru_cache(maxsize=1)
def _frame_layout() -> tuple[pd.Index, np.ndarray, np.ndarray]:
    """A bar frame's columns and the placements of its two blocks (built once, on first use)."""
    return pd.Index(["timestamp", *OHLCV]), np.array([0]), np.arange(1, len(OHLCV) + 1)


def bar_frame_from_columns(micros: np.ndarray, columns: np.ndarray) -> pd.DataFrame:
    """A bar frame (timestamp, open, high, low, close, volume; RangeIndex) from UTC
    microseconds and a (5, n) C-ordered float64 array holding the open, high, low, close and
    volume columns, which the frame takes over (no copy): pass an array nobody else holds.

    Built from its two column blocks directly: the ``DataFrame`` constructor and ``insert`` cost
    more than the merge or the resampling that produced the arrays, and the ingest builds a few
    hundred small frames a day. The frame is the one ``DataFrame`` + ``insert`` would give."""
    stamps = pd.array(np.array(micros, dtype=np.int64).view(f"datetime64[{TS_UNIT}]"))
    frame_columns, time_place, value_place = _frame_layout()
    return pd.api.internals.create_dataframe_from_blocks(
        [(stamps.tz_localize("UTC"), time_place), (columns, value_place)],
        index=pd.RangeIndex(len(stamps)), columns=frame_columns)


def utc_micros(column: pd.Series | pd.Index) -> np.ndarray:
    """Epoch microseconds (int64) of a datetime column; a view, no copy, when the column is
    already stored in microseconds (every frame the lake returns)."""
    values = column.array
    if isinstance(values, pd.arrays.DatetimeArray) and values.unit == TS_UNIT:
        return values.asi8
    return pd.DatetimeIndex(column).as_unit(TS_UNIT).asi8


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
    if not bars["timestamp"].is_monotonic_increasing:
        bars = bars.sort_values("timestamp", kind="stable")
    keys = _target_keys(pd.DatetimeIndex(bars["timestamp"]), target, calendar)
    valid = ~np.isnat(keys)
    if not valid.all() and not complete_only:
        raise ValueError(f"{int((~valid).sum())} bar(s) lie outside every {calendar} {target} bar")
    keys = keys[valid]
    if not len(keys):
        return bars.iloc[0:0].copy()
    # source bars are in time order, so each target bar is one contiguous run: reduce runs
    first = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    last = np.concatenate([first[1:], [len(keys)]]) - 1
    col = {c: bars[c].to_numpy(dtype="float64")[valid] for c in OHLCV}
    micros = keys[first].view(np.int64)
    values = np.vstack([
        col["open"][first], np.maximum.reduceat(col["high"], first),
        np.minimum.reduceat(col["low"], first), col["close"][last],
        np.add.reduceat(col["volume"], first)])
    if complete_only:
        whole = (last - first + 1) == _expected_counts(micros, source, target, calendar)
        micros, values = micros[whole], values[:, whole]
    out = bar_frame_from_columns(micros, values)
    if tuple(bars.columns) == ("timestamp", *OHLCV):  # a plain bar frame
        return out
    for extra in bars.columns.difference(out.columns):
        out[extra] = bars[extra].iloc[0]
    return out[list(bars.columns)]


def _expected_counts(opens: np.ndarray, source: str, target: str, calendar: str) -> np.ndarray:
    """How many ``source`` bars the calendar puts inside each ``target`` bar (given by its open
    time, UTC microseconds)."""
    grid_keys = _grid_keys(calendar, source, target, utc_stamp(opens[0]), utc_stamp(opens[-1]))
    wanted = opens.view(f"datetime64[{TS_UNIT}]")
    return np.searchsorted(grid_keys, wanted, side="right") - np.searchsorted(grid_keys, wanted)


@lru_cache(maxsize=64)
def _grid_keys(calendar: str, source: str, target: str, first: pd.Timestamp, last: pd.Timestamp
               ) -> np.ndarray:
    """The ``target`` key of every ``source`` bar the calendar expects in the ``target`` bars
    opening from ``first`` to ``last`` (cached: the assets of a calendar share it in a run)."""
    closes = bar_close_times(calendar, target, pd.DatetimeIndex([last]))
    keys = _target_keys(expected_bars(calendar, source, first, closes[-1]), target, calendar)
    keys.flags.writeable = False
    return keys


def _target_keys(ts: pd.DatetimeIndex, target: str, calendar: str) -> np.ndarray:
    """Open time (UTC, ``datetime64[us]``) of the ``target`` bar containing each source bar
    (NaT where none does). Works on int64 microseconds: tz-aware ``to_numpy`` is object-slow."""
    ts = ts.as_unit(TS_UNIT)
    if calendar == CRYPTO and str(ts.tz) == "UTC" and not ts.hasnans:
        # UTC bars on the UTC grid: flooring the epoch microseconds is pandas' floor
        micros = ts.asi8
        if target == "1w":
            keys = monday_of(micros - micros % DAY_US)
        else:
            keys = micros - micros % (interval_delta(target).value // 1000)
        return keys.view(f"datetime64[{TS_UNIT}]")
    if calendar == CRYPTO:
        if target == "1w":
            day = ts.normalize()
            keys = day - pd.to_timedelta(day.weekday, unit="D")
        else:
            keys = ts.floor(interval_delta(target))
        return keys.as_unit(TS_UNIT).asi8.view("datetime64[us]")
    step = interval_delta(target)
    grid_i8, ends_i8 = _target_grid(calendar, target, ts.min() - step,
                                    ts.max() + pd.Timedelta(minutes=1))
    if not len(grid_i8):
        return np.full(len(ts), np.datetime64("NaT"), dtype="datetime64[us]")
    ts_i8 = ts.asi8
    pos = np.searchsorted(grid_i8, ts_i8, side="right") - 1
    safe = np.clip(pos, 0, None)
    inside = (pos >= 0) & (ts_i8 < ends_i8[safe])
    keys = np.where(inside, grid_i8[safe], NAT)
    return keys.view("datetime64[us]")


@lru_cache(maxsize=64)
def _target_grid(calendar: str, target: str, start: pd.Timestamp, end: pd.Timestamp
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Open and close times (int64 microseconds) of the ``target`` bars in ``[start, end)``."""
    grid = expected_bars(calendar, target, start, end)
    opens = grid.as_unit(TS_UNIT).asi8
    closes = bar_close_times(calendar, target, grid).as_unit(TS_UNIT).asi8
    opens.flags.writeable = closes.flags.writeable = False
    return opens, closes


def drop_unclosed(bars: pd.DataFrame, interval: str, calendar: str, as_of: pd.Timestamp) -> pd.DataFrame:
    """Keep only bars that have closed by ``as_of`` (a still-forming bar is not a bar yet)."""
    if bars.empty:
        return bars
    # whole microseconds against a time that may carry nanoseconds: close <= as_of
    closed = bar_close_times(calendar, interval, bars["timestamp"]).asi8 <= as_of.value // 1000
    if closed.all():  # the usual case: every bar fetched up to as_of has closed
        return bars.reset_index(drop=True)
    return bars[closed].reset_index(drop=True)
