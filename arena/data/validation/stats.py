"""Preparation step of candle validation: per-bar and per-series statistics as columns.

Great Expectations checks columns, not groups, and costs ~75 ms per validated frame. So every
(symbol, interval) statistic is computed here with pandas, written as a column of one concatenated
frame, and the suite in ``expectations/candles.py`` compares those columns with thresholds in a
single validation run. This module imports no Great Expectations.

Series-level columns (``series_*``) are set on exactly one row per series (its first row) and are
null elsewhere; Great Expectations ignores nulls in these checks, so a failure counts once per
series. A series that arrived with zero bars gets one placeholder row (``is_bar`` False, no prices).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from arena.core.sessions import (
    CALENDARS,
    NAT,
    NY,
    NYSE,
    TS_UNIT,
    CalendarError,
    bar_close_times,
    canonical_labels,
    ceil_micros,
    expected_bars,
    interval_delta,
    utc_index,
    utc_stamp,
)
from arena.data.providers.base import BAR_COLUMNS, PRICE_COLUMNS
from arena.data.validation.config import ValidationConfig, Window
from arena.data.validation.jumps import (
    SeriesJumps,
    batch_jump_statistics,
    log_returns,
    market_moves,
    part_market_moves,
    sigmas,
)

# Names of the checks (one report row per series and check) and the columns of the prepared
# frame: the contract with expectations/candles.py.
BAR_COUNT = "bar_count"
OFF_CALENDAR = "off_calendar"
OHLC = "ohlc"
UNIQUE = "unique_timestamps"
INCREASING = "increasing_timestamps"
ALIGNED = "aligned_timestamps"
SPLICE = "splice"
STALENESS = "staleness"
INCOMPLETE = "incomplete_bars"
CHECKS = (BAR_COUNT, OFF_CALENDAR, OHLC, UNIQUE, INCREASING, ALIGNED, SPLICE, STALENESS, INCOMPLETE)

ROW_ID = "row_id"
IS_BAR = "is_bar"
BAR_TIME = "bar_time"  # the label mapped onto the calendar's convention (midnight -> session open)
ON_CALENDAR = "on_calendar"
STEP_SECONDS = "step_seconds"  # seconds since the series' previous row, in the order given
GRID_OFFSET = "grid_offset_seconds"  # 0 when the label sits on the interval grid
JUMP_SIGMAS = "jump_sigmas"  # the judged move: the smaller of LOCAL_SIGMAS and NET_SIGMAS
LOCAL_SIGMAS = "local_sigmas"  # |log return - trailing median| in trailing robust sigmas
NET_SIGMAS = "net_sigmas"  # the same for the log return minus the market's (null: no market)
VOLUME_RATIO = "volume_ratio"  # volume / trailing median volume; null: no volume data
JUMP_RETURN = "jump_return"  # simple close-to-close return (for messages)
LOG_RETURN = "log_return"  # close-to-close log return
ABS_LOG_RETURN = "abs_log_return"  # its size (moves by max_explained_factor are never excused)
MARKET_RETURN = "market_return"  # the market's log return at the bar (null: no market)
MARKET_SOURCE = "market_source"  # 0 none, 1 benchmark in the batch, 2 passed in, 3 batch median
JUMP_REVERTED = "jump_reverted"  # 1: the move came back within revert_bars bars (looks ahead)
JUMP_FOLLOWED = "jump_followed"  # robust sigma of the follow_bars returns after it, in its local
# sigmas (looks ahead; null until that many bars follow)
JUMP_TRADED = "jump_traded"  # share of the move made from the bar's open to its close
JUMP_NEWEST = "jump_newest"  # among the last max(revert_bars, follow_bars) bars, not reverted
OVERNIGHT = "overnight"  # first bar of a session after another session's bar (stock intraday)
SERIES_BARS = "series_bars"
SERIES_MISSING_SHARE = "series_missing_share"
SERIES_OFF_CALENDAR = "series_off_calendar_bars"
SERIES_STALE = "series_stale_bars"
SERIES_INCOMPLETE = "series_incomplete_bars"

_ONE_TICK = dt.timedelta(microseconds=1)  # one TS_UNIT


@dataclass(frozen=True)
class SeriesStats:
    """What the preparation found for one (symbol, interval); the messages are built from it."""

    symbol: str
    interval: str
    calendar: str
    start: pd.Timestamp | None
    end: pd.Timestamp | None
    bars: int
    expected: int
    missing: int
    first_missing: pd.Timestamp | None
    off_calendar: int
    first_off_calendar: pd.Timestamp | None  # as labelled in the input
    last_bar: pd.Timestamp | None
    as_of: pd.Timestamp | None
    reference: pd.Timestamp | None  # staleness judged at this time (None: not judged)
    stale: int | None
    incomplete: int | None
    returns: int  # close-to-close returns of the series (judged from min_returns on)
    sigma: float | None
    overnight_sigma: float | None  # own sigma of overnight returns, when there are enough
    max_jump: float | None  # largest judged move in local sigmas (None: not judged)
    judged: int = 0  # returns judged by the splice check (enough earlier returns)
    market: str = "none"  # where the market move came from (most bars): see MARKET_SOURCE

    @property
    def missing_share(self) -> float:
        return self.missing / self.expected if self.expected else 0.0


MARKET_SOURCES = ("none", "benchmark", "market series", "batch median")


def prepare(bars: pd.DataFrame, windows: Sequence[Window], *, as_of: pd.Timestamp | None,
            config: ValidationConfig,
            market: Mapping[tuple[str, str], pd.Series] | None = None,
            moves: tuple[np.ndarray, np.ndarray] | None = None
            ) -> tuple[pd.DataFrame, dict[tuple[str, str], SeriesStats]]:
    """The frame to validate (one row per judged bar - a window's context rows feed the
    statistics and leave, but for the series' first row - plus a placeholder per empty series)
    and the statistics of each series, keyed by (symbol, interval). ``market``: the benchmark's closes
    per (calendar, interval), indexed by bar open time, for batches that do not hold it.
    ``moves``: the market's move and its source per row of ``bars``, computed over a larger
    batch these bars are part of (:func:`series_market`); None: computed over ``bars``."""
    frame = _normalise(bars)
    by_key = _windows_by_key(windows)
    groups = frame.groupby(["symbol", "interval"], sort=False).indices
    unasked = sorted(set(groups) - set(by_key))
    if unasked:
        raise ValueError(f"bars for series without a window: {unasked[:5]}")
    batch = _prepare_series(frame, by_key, groups, as_of)
    jumps = _batch_jumps(frame, batch, by_key, config)
    stats, empty = _series_stats(batch, jumps)
    _add_row_columns(frame, batch, jumps)
    _judge_against_market(frame, batch.calendar, config, market, stats, batch.context, groups,
                          moves)
    return _validated_rows(frame, batch.context, groups, empty), stats


def _windows_by_key(windows: Sequence[Window]) -> dict[tuple[str, str], Window]:
    """The windows by (symbol, interval); :class:`CalendarError` for an unknown calendar or
    interval, ValueError for two windows of one series."""
    for w in windows:
        if w.calendar not in CALENDARS:
            raise CalendarError(f"{w.symbol} {w.interval}: unknown calendar {w.calendar!r}; "
                                f"expected one of {', '.join(CALENDARS)}")
        interval_delta(w.interval)  # raises CalendarError (a ValueError) for an unknown interval
    by_key = {(w.symbol, w.interval): w for w in windows}
    if len(by_key) != len(windows):
        raise ValueError("two windows name the same (symbol, interval)")
    return by_key


_STATISTICS_COLUMNS = (
    STEP_SECONDS, GRID_OFFSET, LOCAL_SIGMAS, VOLUME_RATIO, JUMP_RETURN, LOG_RETURN, "_centre",
    "_scale", JUMP_REVERTED, JUMP_FOLLOWED, JUMP_TRADED, SERIES_BARS, SERIES_MISSING_SHARE,
    SERIES_OFF_CALENDAR, SERIES_STALE, SERIES_INCOMPLETE)
"""The float columns of the prepared frame, in its order (``_centre`` and ``_scale``: the
splice check's trailing median and sigma, for the move net of the market; dropped after)."""


@dataclass
class _Batch:
    """A batch's series prepared one by one (:class:`_SeriesPrep`, in window order, each with
    its rows) and what they found per row of the frame: the bar times on the calendar's
    convention, whether each is on the calendar, its calendar, whether it is context (before
    its window's ``judged_from``), and the statistics columns."""

    prepared: list[tuple[tuple[str, str], np.ndarray, _SeriesPrep]]
    bar_time: np.ndarray
    midnights: np.ndarray
    on_calendar: np.ndarray
    calendar: np.ndarray
    context: np.ndarray
    columns: dict[str, np.ndarray]


def _prepare_series(frame: pd.DataFrame, by_key: Mapping[tuple[str, str], Window],
                    groups: Mapping[tuple[str, str], np.ndarray], as_of: pd.Timestamp | None
                    ) -> _Batch:
    """Every window's :class:`_SeriesPrep` over its rows (``groups``), written into the batch's
    rows; a series' columns on its first row."""
    all_ts = pd.DatetimeIndex(frame["timestamp"])
    micros = all_ts.asi8
    nyse = [groups[key] for key, w in by_key.items() if w.calendar == NYSE and key in groups]
    n = len(frame)
    batch = _Batch(
        prepared=[], bar_time=micros.copy(),
        midnights=_new_york_midnights(all_ts, np.concatenate(nyse) if nyse else None),
        on_calendar=np.zeros(n, dtype=bool), calendar=np.full(n, "", dtype=object),
        context=np.zeros(n, dtype=bool),
        columns={c: np.full(n, np.nan) for c in _STATISTICS_COLUMNS})
    calendar_cache: dict[tuple, object] = {}
    for key, window in by_key.items():
        idx = groups.get(key, np.array([], dtype=np.int64))
        series = _SeriesPrep(micros[idx], batch.midnights[idx], window, as_of, calendar_cache)
        batch.prepared.append((key, idx, series))
        if not len(idx):
            continue
        batch.bar_time[idx] = series.bar_time
        batch.on_calendar[idx] = series.on_calendar
        batch.calendar[idx] = window.calendar
        if window.judged_from is not None:
            ts = micros[idx]
            batch.context[idx] = (ts != NAT) & (ts < ceil_micros(window.judged_from))
        for name, values in series.row_columns.items():
            batch.columns[name][idx] = values
        for name, value in series.series_columns.items():
            batch.columns[name][idx[0]] = value
    return batch


def _batch_jumps(frame: pd.DataFrame, batch: _Batch,
                 by_key: Mapping[tuple[str, str], Window], config: ValidationConfig
                 ) -> SeriesJumps:
    """The splice statistics of the batch's series (:func:`batch_jump_statistics`)."""
    prepared = batch.prepared
    return batch_jump_statistics(
        frame["close"].to_numpy(), frame["volume"].to_numpy(), batch.bar_time,
        [idx for _, idx, _ in prepared],
        sessions_gap=[p.sessions_gap for _, _, p in prepared],
        interval_seconds=[p.interval_seconds for _, _, p in prepared],
        judged_from=[by_key[key].judged_from for key, _, _ in prepared],
        session_days=batch.midnights,
        min_returns=config.min_returns, volume_lookback=config.volume_lookback,
        local_window=config.local_window, fast_window=config.fast_window,
        revert_bars=config.revert_bars, jump_sigmas=config.splice_sigmas,
        follow_bars=config.follow_bars, open_=frame["open"].to_numpy())


def _series_stats(batch: _Batch, jumps: SeriesJumps
                  ) -> tuple[dict[tuple[str, str], SeriesStats], list[SeriesStats]]:
    """Each series' statistics with its splice statistics (returns and sigmas), keyed by
    (symbol, interval), and those of the series without bars."""
    stats: dict[tuple[str, str], SeriesStats] = {}
    empty: list[SeriesStats] = []
    for i, (key, idx, series) in enumerate(batch.prepared):
        stats[key] = replace(series.stats, returns=int(jumps.returns[i]), sigma=jumps.sigma[i],
                             overnight_sigma=jumps.overnight_sigma[i])
        if not len(idx):
            empty.append(stats[key])
    return stats, empty


def _add_row_columns(frame: pd.DataFrame, batch: _Batch, jumps: SeriesJumps) -> None:
    """Write the per-row columns into ``frame``: the bar times, on calendar, overnight, newest,
    then the statistics columns (the splice check's from ``jumps``)."""
    columns = batch.columns
    columns.update({
        LOCAL_SIGMAS: jumps.local_sigmas, VOLUME_RATIO: jumps.volume_ratio,
        JUMP_RETURN: jumps.simple, LOG_RETURN: jumps.log_return, "_centre": jumps.centre,
        "_scale": jumps.scale, JUMP_REVERTED: jumps.reverted, JUMP_FOLLOWED: jumps.followed,
        JUMP_TRADED: jumps.traded})
    frame[BAR_TIME] = utc_index(batch.bar_time)
    frame[ON_CALENDAR] = batch.on_calendar
    frame[OVERNIGHT] = jumps.overnight
    frame[JUMP_NEWEST] = jumps.newest
    for name, values in columns.items():
        frame[name] = values


def _validated_rows(frame: pd.DataFrame, context: np.ndarray,
                    groups: Mapping[tuple[str, str], np.ndarray], empty: list[SeriesStats]
                    ) -> pd.DataFrame:
    """The frame as the suite checks it: without the ``context`` rows (judged by earlier runs)
    but each series' first row (it carries the series' columns) and the working columns, every
    row a bar, a placeholder per ``empty`` series, and the rows numbered."""
    if context.any():
        context[[idx[0] for idx in groups.values()]] = False
        frame = frame[~context].reset_index(drop=True)
    frame = frame.drop(columns=["_centre", "_scale"])
    frame[IS_BAR] = True
    if empty:
        frame = pd.concat([frame, _placeholders(empty, frame.columns)], ignore_index=True)
    frame.insert(0, ROW_ID, np.arange(len(frame)))
    return frame


def _read_times(column: pd.Series) -> pd.Series:
    """A time column as the checks read it: UTC microseconds, NaT where it holds no time."""
    return pd.to_datetime(column, utc=True, errors="coerce").dt.as_unit(TS_UNIT)


def _read_numbers(column: pd.Series) -> pd.Series:
    """A price or volume column as the checks read it: float64, null where not a number."""
    return pd.to_numeric(column, errors="coerce").astype("float64")


def _utc_micros(column: pd.Series) -> np.ndarray:
    """:func:`_read_times` in epoch microseconds (``NAT``: no time)."""
    return pd.DatetimeIndex(_read_times(column)).asi8


def _float_values(column: pd.Series) -> np.ndarray:
    return _read_numbers(column).to_numpy()


def _normalise(bars: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in ("symbol", "interval", *BAR_COLUMNS) if c not in bars.columns]
    if missing and bars.empty:  # nothing arrived at all: every window fails with "zero bars"
        bars = pd.DataFrame(columns=["symbol", "interval", *BAR_COLUMNS])
    elif missing:
        raise ValueError(f"bars lack column(s) {', '.join(missing)}")
    frame = bars[["symbol", "interval", *BAR_COLUMNS]].reset_index(drop=True).copy()
    frame["symbol"] = frame["symbol"].astype(str)
    frame["interval"] = frame["interval"].astype(str)
    frame["timestamp"] = _read_times(frame["timestamp"])
    for c in (*PRICE_COLUMNS, "volume"):
        frame[c] = _read_numbers(frame[c])
    return frame


def _placeholders(empty: list[SeriesStats], columns: pd.Index) -> pd.DataFrame:
    rows = pd.DataFrame({c: [np.nan] * len(empty) for c in columns})
    rows["symbol"] = [s.symbol for s in empty]
    rows["interval"] = [s.interval for s in empty]
    for c in ("timestamp", BAR_TIME):
        rows[c] = pd.Series(pd.NaT, index=rows.index, dtype=f"datetime64[{TS_UNIT}, UTC]")
    rows[ON_CALENDAR] = False
    rows[OVERNIGHT] = False
    rows[JUMP_NEWEST] = False
    rows[MARKET_SOURCE] = 0.0
    rows[IS_BAR] = False
    rows[SERIES_BARS] = 0.0
    rows[SERIES_MISSING_SHARE] = [1.0 if s.expected else 0.0 for s in empty]
    rows[SERIES_OFF_CALENDAR] = 0.0
    return rows


class _SeriesPrep:
    """All statistics of one series (rows in the order given).

    Works on epoch microseconds (``NAT``: no time) rather than per-series pandas indexes: an
    ingest validates a few hundred series per run, and on series of a few hundred bars pandas'
    per-object overhead costs far more than the arithmetic. ``midnights``: each bar's New York midnight (epoch
    microseconds; stock series only), computed once for the batch. ``cache`` holds calendar
    answers shared by the batch's series (staleness at the same last bar, say). The splice
    statistics (returns, sigmas) are the batch's (:func:`batch_jump_statistics`): ``stats``
    leaves them empty."""

    def __init__(self, ts: np.ndarray, midnights: np.ndarray, window: Window,
                 as_of: pd.Timestamp | None, cache: dict[tuple, object]) -> None:
        cal, interval = window.calendar, window.interval
        self.bar_time = _bar_times(ts, window)
        valid = self.bar_time != NAT
        times = self.bar_time[valid]
        first = utc_stamp(times.min()) if len(times) else None
        last = utc_stamp(times.max()) if len(times) else None
        start = window.start if window.start is not None else first
        # by default through the last bar, nothing after
        end = window.end if window.end is not None else (
            utc_stamp(times.max() + 1) if len(times) else None)
        # bars older than the window's start are history: judged against the calendar, not counted
        span_start = min(start, first) if start is not None and len(times) else start
        grid = expected_bars(cal, interval, span_start, end) if start is not None else \
            pd.DatetimeIndex([], tz="UTC")
        grid_us = grid.as_unit(TS_UNIT).asi8
        hit = np.searchsorted(grid_us, self.bar_time)
        self.on_calendar = (hit < len(grid_us)) & (
            grid_us[np.minimum(hit, len(grid_us) - 1)] == self.bar_time) if len(grid_us) else \
            np.zeros(len(ts), dtype=bool)
        # the expected bars: the grid from the window's start (through the last bar with as_of:
        # the tail after it is staleness's)
        lo = int(np.searchsorted(grid_us, ceil_micros(start))) if start is not None else 0
        hi = len(grid_us)
        if as_of is not None and last is not None:
            hi = max(lo, int(np.searchsorted(grid_us, times.max(), side="right")))
        seen = np.zeros(len(grid_us), dtype=bool)
        seen[hit[self.on_calendar]] = True
        present = seen[lo:hi]
        expected = hi - lo
        step = np.diff(self.bar_time.astype("float64")) / 1e6  # seconds
        step[~valid[1:] | ~valid[:-1]] = np.nan
        self.row_columns = {
            STEP_SECONDS: np.concatenate([[np.nan], step]),
            GRID_OFFSET: _grid_offsets(ts, midnights, cal, interval),
        }
        # the splice check's view of the series (its statistics: batch_jump_statistics)
        self.sessions_gap = cal == NYSE and interval not in ("1d", "1w")
        self.interval_seconds = None if cal == NYSE and not self.sessions_gap \
            else interval_delta(interval).total_seconds()
        reference, stale, incomplete = _staleness(cal, interval, times, last, window, as_of, cache)
        n_bars = len(ts)
        missing = int(expected - np.count_nonzero(present))
        off_mask = valid & ~self.on_calendar  # a bar without a time is an OHLC failure instead
        off = int(np.count_nonzero(off_mask))
        self.series_columns = {
            SERIES_BARS: float(n_bars),
            SERIES_MISSING_SHARE: missing / expected if expected else 0.0,
            SERIES_OFF_CALENDAR: float(off),
            SERIES_STALE: np.nan if stale is None else float(stale),
            SERIES_INCOMPLETE: np.nan if incomplete is None else float(incomplete),
        }
        self.stats = SeriesStats(
            symbol=window.symbol, interval=interval, calendar=cal,
            start=None if start is None else pd.Timestamp(start),
            end=None if end is None else pd.Timestamp(end), bars=n_bars,
            expected=expected, missing=missing,
            first_missing=grid[lo + int(np.argmin(present))] if missing else None,
            off_calendar=off,
            first_off_calendar=utc_stamp(ts[np.argmax(off_mask)]) if off else None,
            last_bar=last, as_of=as_of, reference=reference, stale=stale, incomplete=incomplete,
            returns=0, sigma=None, overnight_sigma=None, max_jump=None)


def _bar_times(ts: np.ndarray, window: Window) -> np.ndarray:
    """The series' labels (epoch microseconds) on the calendar's convention: date labels of
    daily and weekly stock bars mapped onto the session opens."""
    if window.calendar == NYSE and window.interval in ("1d", "1w") and len(ts):
        return canonical_labels(utc_index(ts), window.calendar, window.interval).as_unit(
            TS_UNIT).asi8
    return ts


def series_market(series: Sequence[tuple[Window, pd.DataFrame]], config: ValidationConfig,
                  market: Mapping[tuple[str, str], pd.Series] | None = None
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per series of a batch (its rows in the order given): the market's log return at each bar
    and where it came from, as :func:`prepare` computes them over the whole batch - for a batch
    prepared a group of series at a time (pass each group's part as ``prepare(moves=...)``).
    The market is the only statistic that crosses series, and it never crosses a (calendar,
    interval): it is computed one (calendar, interval) at a time, from each series' bar times
    and log returns alone."""
    parts: dict[tuple[str, str], list[int]] = {}
    for i, (window, _) in enumerate(series):
        parts.setdefault((window.calendar, window.interval), []).append(i)
    out: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros(0), np.zeros(0, dtype=np.int8))] * \
        len(series)
    for (calendar, interval), members in parts.items():
        times, returns, bench = [], [], []
        benchmark = dict(config.benchmarks).get(calendar)
        for i in members:
            window, bars = series[i]
            if bars.empty:
                continue
            micros = _bar_times(_utc_micros(bars["timestamp"]), window)
            times.append(micros)
            returns.append(log_returns(_float_values(bars["close"]), micros))
            bench.append(np.full(len(bars), window.symbol == benchmark))
        if not times:
            continue
        move, source = part_market_moves(
            np.concatenate(returns), np.concatenate(times), np.concatenate(bench),
            (market or {}).get((calendar, interval)), min_others=config.market_min_others)
        bounds = np.cumsum([len(t) for t in times])[:-1]
        full = [i for i in members if not series[i][1].empty]
        for i, m, src in zip(full, np.split(move, bounds), np.split(source, bounds), strict=True):
            out[i] = (m, src)
    return out


def _new_york_midnights(ts: pd.DatetimeIndex, rows: np.ndarray | None) -> np.ndarray:
    """Per row: the epoch microseconds of New York midnight of the row's day (``NAT`` for rows
    not in ``rows`` and rows without a time). One time zone conversion for the whole batch:
    stock series need it for the overnight gap and the grid check."""
    out = np.full(len(ts), NAT, dtype=np.int64)
    if rows is not None and len(rows):
        out[rows] = ts[rows].tz_convert(NY).normalize().as_unit(TS_UNIT).asi8
    return out


def _judge_against_market(frame: pd.DataFrame, calendar: np.ndarray, config: ValidationConfig,
                          market: Mapping[tuple[str, str], pd.Series] | None,
                          stats: dict[tuple[str, str], SeriesStats],
                          context: np.ndarray, groups: Mapping[tuple[str, str], np.ndarray],
                          moves: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """Add the market's move at each bar, the move net of it in local sigmas, and the judged
    move (the smaller of the two; null on ``context`` rows, which are not judged again); record
    the largest judged move of each series in ``stats``. ``groups``: the rows of each series."""
    if moves is None:
        move, source = market_moves(frame, calendar, dict(config.benchmarks), market,
                                    min_others=config.market_min_others, needed=~context)
    else:
        move, source = moves
        if len(move) != len(frame):
            raise ValueError(f"{len(move)} market moves for {len(frame)} bars")
    frame[MARKET_RETURN] = move
    frame[MARKET_SOURCE] = source.astype("float64")
    centre, scale = frame["_centre"].to_numpy(), frame["_scale"].to_numpy()
    log_return = frame[LOG_RETURN].to_numpy()
    net = sigmas(log_return - move, centre, scale)
    frame[NET_SIGMAS] = net
    local = frame[LOCAL_SIGMAS].to_numpy()
    size = np.abs(log_return)
    frame[ABS_LOG_RETURN] = size
    huge = size >= np.log(config.max_explained_factor)  # the market cannot explain it either
    judged_move = np.where(np.isnan(net) | huge, local, np.fmin(local, net))
    jump = np.where(context, np.nan, judged_move)
    frame[JUMP_SIGMAS] = jump
    judged = ~np.isnan(jump)
    for key, idx in groups.items():
        if key not in stats:
            continue
        z = jump[idx]
        seen = judged[idx]
        src = np.bincount(source[idx][seen], minlength=len(MARKET_SOURCES)) if seen.any() else None
        stats[key] = replace(
            stats[key], judged=int(seen.sum()),
            max_jump=float(np.nanmax(z)) if seen.any() else None,
            market=MARKET_SOURCES[int(np.argmax(src))] if src is not None else "none")


def _grid_offsets(micros: np.ndarray, midnights: np.ndarray, calendar: str, interval: str
                  ) -> np.ndarray:
    """How far (seconds) each label (epoch microseconds; ``NAT``: no time) is from the
    interval grid; 0 when aligned, null when no time. ``midnights``: each label's New York
    midnight in epoch microseconds (used for stocks only).

    Crypto: multiples of the interval from the Unix epoch (weekly: Monday 00:00 UTC). Stocks:
    intraday bars step from 9:30 New York time; daily/weekly bars open at 9:30 New York time or,
    for date-labelled files, at midnight UTC or New York."""
    step = interval_delta(interval).value // 1000  # microseconds
    nat = micros == NAT
    if calendar != NYSE:
        anchor = pd.Timestamp("1970-01-05").value // 1000 if interval == "1w" else 0
        off = np.mod(micros - anchor, step)
    else:
        since_local_midnight = micros - midnights
        since_open = since_local_midnight - 34_200_000_000  # 9:30 in microseconds
        if interval in ("1d", "1w"):
            since_midnight_utc = np.mod(micros, 86_400_000_000)
            # the session open, or a date label (midnight UTC or midnight New York)
            off = np.minimum(np.minimum(np.abs(since_open), since_midnight_utc), since_local_midnight)
        else:
            off = np.mod(since_open, step)
    out = off.astype("float64") / 1e6
    out[nat] = np.nan
    return out


OHLC_COLUMNS = BAR_COLUMNS  # the order the suite uses


def ohlc_problems(bars: pd.DataFrame) -> pd.DataFrame:
    """One boolean column per OHLC sanity rule a bar breaks (columns named by the problem)."""
    prices = bars[list(PRICE_COLUMNS)].apply(pd.to_numeric, errors="coerce")
    volume = pd.to_numeric(bars["volume"], errors="coerce")
    body_low = prices[["open", "close"]].min(axis=1)
    body_high = prices[["open", "close"]].max(axis=1)
    return pd.DataFrame({
        "missing or non-numeric values": bars[list(OHLC_COLUMNS)].isna().any(axis=1),
        "price not a positive finite number":
            (prices.notna() & ~(np.isfinite(prices) & (prices > 0))).any(axis=1),
        "negative or infinite volume": volume.notna() & ~(np.isfinite(volume) & (volume >= 0)),
        "low above open/close": prices["low"] > body_low,
        "high below open/close": prices["high"] < body_high,
    }, index=bars.index)


def jumps_explained(jump: np.ndarray, volume: np.ndarray, reverted: np.ndarray,
                    size: np.ndarray, followed: np.ndarray, traded: np.ndarray, *,
                    max_sigmas: float, min_volume_ratio: float, max_log_move: float,
                    min_follow_sigmas: float, min_follow_share: float,
                    min_traded_share: float) -> np.ndarray:
    """Per bar: whether its move passes the splice check (the rule of the suite's
    ``ExpectJumpsToBeExplained``): no judged move (null), a move of at most ``max_sigmas``, or
    - when its |log return| ``size`` is below ``max_log_move`` - a volume ratio of
    ``min_volume_ratio``, a reversion, ``min_traded_share`` of the move made within the bar, or
    volatility after it of ``min_follow_sigmas`` and ``min_follow_share`` of its own sigmas.
    A null volume ratio, traded share or follow-up never excuses a move (NaN compares false)."""
    with np.errstate(invalid="ignore"):
        explained = (size < max_log_move) & (
            (volume >= min_volume_ratio) | (reverted == 1) | (traded >= min_traded_share)
            | ((followed >= min_follow_sigmas) & (followed >= min_follow_share * jump)))
        return np.isnan(jump) | (jump <= max_sigmas) | explained


def _staleness(calendar: str, interval: str, times: np.ndarray, last: pd.Timestamp | None,
               window: Window, as_of: pd.Timestamp | None, cache: dict[tuple, object]
               ) -> tuple[pd.Timestamp | None, int | None, int | None]:
    """(reference time, expected bars completed after the last bar, bars not closed at as_of).
    ``times``: the series' bar open times (epoch microseconds). The calendar answers are kept in
    ``cache``: the series of a batch mostly share their last bar and reference time."""
    if as_of is None or last is None:
        return None, None, None
    reference = min(as_of, window.end) if window.end is not None else as_of
    step = interval_delta(interval)
    stale = 0
    if reference >= last + step:  # else no bar opening after the last one can have closed
        key = ("stale", calendar, interval, last, reference)
        if key not in cache:
            after = expected_bars(calendar, interval, last + _ONE_TICK, reference)
            cache[key] = int((bar_close_times(calendar, interval, after) <= reference).sum())
        stale = cache[key]
    # only bars opened less than an interval before as_of can still be open at as_of
    recent = times[times + step.value // 1000 > pd.Timestamp(as_of).as_unit("ns").value // 1000]
    incomplete = 0
    if len(recent):
        key = ("incomplete", calendar, interval, as_of, recent.tobytes())
        if key not in cache:
            closes = bar_close_times(calendar, interval, utc_index(recent))
            cache[key] = int((closes > as_of).sum())
        incomplete = cache[key]
    return reference, stale, incomplete
