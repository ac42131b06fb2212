"""Trading calendars: NYSE regular sessions (exchange-calendars ``XNYS``) and crypto's 24/7.

Conventions used everywhere in the product:

* all timestamps are UTC (``pandas.Timestamp`` with ``tz="UTC"``);
* a bar is labelled by its **open time**;
* crypto bars are aligned to UTC: ``4h`` bars open at 00/04/.../20h, daily bars at 00:00, weekly
  bars on Monday 00:00;
* US-equity bars live inside regular sessions only (9:30-16:00 ET, 9:30-13:00 ET on early-close
  days). Intraday bars step from the session open, the last one of a session may be short
  (15:30-16:00 for ``1h``); ``4h`` bars are the session's first four hours and the rest; a daily bar
  opens at the session open and a weekly bar at the first session open of the (Monday-based) week.
  Nothing is ever expected outside a session.

The NYSE schedule is built once per process, on first use, and kept between processes in a file
named by the exchange-calendars version (:func:`schedule_file`): a later process reads it
instead of importing the library and building the calendar again.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import os
import tempfile
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import exchange_calendars as xcals
import numpy as np
import pandas as pd

from arena.core.errors import UnusableInput

CRYPTO = "24/7"
NYSE = "XNYS"
FX = "FX"  # spot currencies: Sunday 17:00 to Friday 17:00 New York time, intraday bars only
CALENDARS = (CRYPTO, NYSE, FX)

INTERVAL_ORDER = ("15m", "1h", "4h", "1d", "1w")  # finest first
INTERVALS: Mapping[str, pd.Timedelta] = {
    "15m": pd.Timedelta(minutes=15),
    "1h": pd.Timedelta(hours=1),
    "4h": pd.Timedelta(hours=4),
    "1d": pd.Timedelta(days=1),
    "1w": pd.Timedelta(weeks=1),
}
_INTRADAY = ("15m", "1h", "4h")
NY = "America/New_York"  # the NYSE clock
TS_UNIT = "us"  # resolution of every timestamp column the product writes
_CAL_START, _CAL_END = "1990-01-02", "2035-12-31"


class CalendarError(UnusableInput, ValueError):
    """Unknown calendar or interval, or a time outside what the calendar covers."""


@dataclass(frozen=True, slots=True)
class Session:
    """One NYSE regular session. ``open``/``close`` are UTC; ``early_close`` is a 13:00 ET close."""

    date: dt.date
    open: pd.Timestamp
    close: pd.Timestamp
    early_close: bool


def interval_delta(interval: str) -> pd.Timedelta:
    """The nominal length of an interval name (``15m``, ``1h``, ``4h``, ``1d``, ``1w``)."""
    try:
        return INTERVALS[interval]
    except KeyError:
        raise CalendarError(
            f"unknown interval {interval!r}; expected one of {', '.join(INTERVALS)}") from None


CYCLE_HOUR = 16  # the daily decision cycle runs at 16:00 UTC


def cycle_at(now: pd.Timestamp) -> pd.Timestamp:
    """The latest 16:00 UTC cycle time at or before ``now`` (a UTC timestamp)."""
    today = now.normalize() + pd.Timedelta(hours=CYCLE_HOUR)
    return today if today <= now else today - pd.Timedelta(days=1)


def daily_cycles(start: object, days: int, hour: int = CYCLE_HOUR) -> list[pd.Timestamp]:
    """A season's schedule: ``days`` consecutive days at ``hour`` UTC from ``start``'s day (the
    one definition; :attr:`arena.pipeline.season_config.SeasonConfig.times` is it)."""
    first = utc(start).normalize() + pd.Timedelta(hours=hour)
    return [first + pd.Timedelta(days=i) for i in range(days)]


def utc(ts: object) -> pd.Timestamp:
    """A UTC timestamp from a string, datetime or Timestamp (naive values are taken as UTC)."""
    t = pd.Timestamp(ts)  # type: ignore[arg-type]
    if t is pd.NaT:
        raise CalendarError(f"not a time: {ts!r}")
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


NAT = -(2**63)  # a missing time among epoch microseconds (NaT's integer value, int64's min)
DAY_US = 86_400_000_000  # a day in microseconds
_HOUR_US = 3_600_000_000


def utc_index(micros: np.ndarray) -> pd.DatetimeIndex:
    """UTC times (microsecond unit, as the lake stores them) from epoch microseconds."""
    return pd.DatetimeIndex(np.asarray(micros, dtype=np.int64).view(f"datetime64[{TS_UNIT}]")
                            ).tz_localize("UTC")


def utc_stamp(micros: int) -> pd.Timestamp:
    """One UTC time (microsecond unit) from epoch microseconds."""
    return pd.Timestamp(int(micros), unit=TS_UNIT, tz="UTC")


def ceil_micros(ts: pd.Timestamp) -> int:
    """The smallest whole epoch microsecond at or after ``ts`` (which may carry nanoseconds):
    for integer microseconds ``t``, ``t >= ts`` and ``t < ts`` compare the same against it."""
    return -(-pd.Timestamp(ts).value // 1000)  # ``value`` is nanoseconds whatever the unit


def _check_calendar(calendar: str) -> None:
    if calendar not in CALENDARS:
        raise CalendarError(f"unknown calendar {calendar!r}; expected one of {', '.join(CALENDARS)}")


@lru_cache(maxsize=1)
def _xnys():
    return xcals.get_calendar(NYSE, start=_CAL_START, end=_CAL_END)


_SCHEDULE_FORMAT = 1  # of the file below: another layout takes another name


def schedule_file() -> Path | None:
    """Where the NYSE sessions of the installed exchange-calendars are kept between processes
    (``$XDG_CACHE_HOME/arena``, else ``~/.cache/arena``), or None without the library. Named by
    the library's version and the calendar's span, so a release with other sessions (a holiday
    added, say) is never read from the file of an older one."""
    try:
        version = importlib.metadata.version("exchange-calendars")
    except importlib.metadata.PackageNotFoundError:
        return None
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "arena" / f"xnys-{version}-{_CAL_START}-{_CAL_END}-v{_SCHEDULE_FORMAT}.npy"


def _session_times() -> np.ndarray:
    """The NYSE sessions as int64 nanoseconds, one row each: the session's date (naive
    midnight), its open and its close as New York wall-clock time after that midnight.

    Read from :func:`schedule_file`; else built from exchange-calendars (its import and the
    calendar cost about 0.35 s of CPU, every process) and written there, atomically; a file that
    cannot be read is built again, one that cannot be written is skipped. Wall-clock times, not
    UTC: the file holds what the library decides (sessions, hours, early closes), and the process
    reading it turns them into UTC with its own time zone rules, as the library would."""
    path = schedule_file()
    if path is not None:
        with suppress(OSError, ValueError, EOFError):
            times = np.load(path, allow_pickle=False)
            if times.dtype == np.int64 and times.ndim == 2 and times.shape[0] == 3:
                return times
    sched = _xnys().schedule
    days = sched.index.as_unit("ns").asi8
    times = np.stack([days, *(pd.DatetimeIndex(sched[c]).tz_convert(NY).tz_localize(None)
                              .as_unit("ns").asi8 - days for c in ("open", "close"))])
    if path is not None:
        with suppress(OSError):
            _write_atomically(path, times)
    return times


def _write_atomically(path: Path, times: np.ndarray) -> None:
    """``times`` as ``path`` (``.npy``), whole or not at all: a reader never sees a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as f:
        tmp = Path(f.name)
    try:
        with tmp.open("wb") as f:
            np.save(f, times)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@lru_cache(maxsize=1)
def _schedule() -> pd.DataFrame:
    """All NYSE sessions: index = session date (naive), columns open/close (UTC), early_close."""
    days, opens, closes = _session_times()

    def as_utc(after_midnight: np.ndarray) -> pd.DatetimeIndex:
        wall = pd.DatetimeIndex((days + after_midnight).view("datetime64[ns]"))
        return wall.tz_localize(NY).tz_convert("UTC")

    index = pd.DatetimeIndex(days.view("datetime64[ns]"))
    sched = pd.DataFrame({"open": as_utc(opens), "close": as_utc(closes)}, index=index)
    ny_close = sched["close"].dt.tz_convert(NY)
    sched["early_close"] = (ny_close.dt.hour * 60 + ny_close.dt.minute) < 16 * 60
    return sched


def _as_date(day: object) -> pd.Timestamp:
    d = pd.Timestamp(day)  # type: ignore[arg-type]
    if d.tzinfo is not None:
        d = d.tz_convert("UTC").tz_localize(None)
    return d.normalize()


def is_trading_day(day: object, calendar: str = NYSE) -> bool:
    """Whether ``day`` (a date; a timestamp's UTC date) has a regular session on ``calendar``."""
    _check_calendar(calendar)
    if calendar == CRYPTO:
        return True
    if calendar == FX:
        return _as_date(day).weekday() < 5
    return _as_date(day) in _schedule().index


def regular_session(day: object) -> Session | None:
    """The NYSE regular session of a date, or ``None`` on weekends and holidays."""
    d = _as_date(day)
    sched = _schedule()
    if d not in sched.index:
        return None
    row = sched.loc[d]
    return Session(d.date(), row["open"], row["close"], bool(row["early_close"]))


def sessions(start: object, end: object) -> pd.DataFrame:
    """NYSE sessions whose date lies in ``[start, end]`` (dates, inclusive)."""
    sched = _schedule()
    return sched.loc[_as_date(start):_as_date(end)]


_EXPECTED_CACHE = 128  # windows kept (each at most a few hundred kB)


def _sessions_overlapping(start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
    sched = sessions(start - pd.Timedelta(days=1), end + pd.Timedelta(days=1))
    return sched[(sched["close"] > start) & (sched["open"] < end)]


def expected_bars(calendar: str, interval: str, start: object, end: object) -> pd.DatetimeIndex:
    """Open times (UTC) of every bar the calendar expects with open time in ``[start, end)``.

    Cached: resampling, validation and the ingest plan ask for the same few windows for every
    series of a run (1,400 calls, 38 distinct, in a day's ingest of the universe); the index
    returned is immutable."""
    _check_calendar(calendar)
    return _expected_bars(calendar, interval, utc(start), utc(end))


@lru_cache(maxsize=_EXPECTED_CACHE)
def _expected_bars(calendar: str, interval: str, start_ts: pd.Timestamp,
                   end_ts: pd.Timestamp) -> pd.DatetimeIndex:
    step = interval_delta(interval)
    if end_ts <= start_ts:
        return pd.DatetimeIndex([], tz="UTC", name="timestamp")
    if calendar in (CRYPTO, FX):
        if calendar == FX and interval not in _INTRADAY:
            raise CalendarError(f"the {FX} calendar has intraday bars only, not {interval}")
        if interval == "1w":
            first = start_ts.normalize() - pd.Timedelta(days=start_ts.weekday())
        else:
            first = start_ts.floor(step)
        idx = pd.date_range(first, end_ts, freq=step, inclusive="left", name="timestamp")
        idx = idx[idx >= start_ts]
        if calendar == FX:  # a bar the market is open for at any moment
            idx = idx[_fx_open(idx) | _fx_open(idx + step - pd.Timedelta(microseconds=1))]
        return idx.as_unit(TS_UNIT)
    sched = _sessions_overlapping(start_ts - step, end_ts)
    opens = _session_bar_opens(sched, interval)
    return opens[(opens >= start_ts) & (opens < end_ts)].as_unit(TS_UNIT)


def _session_bar_opens(sched: pd.DataFrame, interval: str) -> pd.DatetimeIndex:
    """Bar open times of the given NYSE sessions under the product's labelling convention."""
    if sched.empty:
        return pd.DatetimeIndex([], tz="UTC", name="timestamp")
    opens = sched["open"].to_numpy(dtype="datetime64[ns]")
    if interval == "1d":
        return pd.DatetimeIndex(opens, name="timestamp").tz_localize("UTC")
    if interval == "1w":
        weeks = sched.index.to_period("W-SUN")
        first = pd.Series(opens, index=sched.index).groupby(weeks).transform("min")
        return pd.DatetimeIndex(first.drop_duplicates().to_numpy(), name="timestamp").tz_localize("UTC")
    step = INTERVALS[interval].to_timedelta64()
    closes = sched["close"].to_numpy(dtype="datetime64[ns]")
    counts = -((opens - closes) // step)  # ceil((close - open) / step)
    counts = counts.astype(np.int64)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    values = np.repeat(opens, counts) + offsets * step
    return pd.DatetimeIndex(values, name="timestamp").tz_localize("UTC")


def bar_close_times(calendar: str, interval: str, opens: pd.DatetimeIndex | pd.Series) -> pd.DatetimeIndex:
    """When each bar (given by its open time) closes: open + interval, cut at the session close.

    Stock bars in microseconds (every frame of the lake) are placed on their New York date with
    int64 arithmetic over a cached table of New York's UTC offsets: the ingest asks this for a
    few bars at a time, hundreds of times a day, where pandas' time zone conversions cost far
    more than the lookup. Any other input takes the pandas route; both give the same answer."""
    _check_calendar(calendar)
    step = interval_delta(interval)
    if calendar == NYSE:
        micros = _aware_micros(opens)
        if micros is not None:
            day = _ny_days(micros)
            if day is not None:
                return _cut_at_close(interval, micros + step.value // 1000, day)
    idx = pd.DatetimeIndex(opens)
    if calendar in (CRYPTO, FX):
        return (idx + step).as_unit(TS_UNIT)
    end = (idx + step).as_unit(TS_UNIT).asi8
    day = idx.tz_convert(NY).tz_localize(None).normalize().as_unit(TS_UNIT).asi8
    return _cut_at_close(interval, end, day)


def monday_of(day: np.ndarray) -> np.ndarray:
    """The Monday (naive midnight, microseconds) of each naive midnight ``day``."""
    return day - ((day // DAY_US + 3) % 7) * DAY_US  # 1970-01-01 was a Thursday


def _cut_at_close(interval: str, end: np.ndarray, day: np.ndarray) -> pd.DatetimeIndex:
    """Bar ends (UTC microseconds) cut at the close of the session of their New York date
    ``day`` (naive midnight, microseconds); weekly bars at the last close of their week."""
    if interval == "1w":  # a weekly bar closes at the last session close of its week
        day = monday_of(day)
        keys, closes = _week_closes()
    else:
        keys, closes = _session_closes()
    pos = np.clip(np.searchsorted(keys, day), 0, len(keys) - 1)
    found = keys[pos] == day
    # a bar outside every session has no close to be cut at: it keeps open + interval
    cut = np.where(found, np.minimum(end, closes[pos]), end)
    return utc_index(cut)


def _aware_micros(opens: pd.DatetimeIndex | pd.Series) -> np.ndarray | None:
    """Epoch microseconds of tz-aware microsecond open times without NaT; None for anything
    else (naive, other units, missing values), which takes the general pandas route."""
    values = opens.array if isinstance(opens, pd.Series | pd.Index) else None
    if (not isinstance(values, pd.arrays.DatetimeArray) or values.tz is None
            or values.unit != TS_UNIT):
        return None
    micros = values.asi8
    if len(micros) and micros.min() == NAT:
        return None
    return micros


def ny_dates(micros: np.ndarray) -> np.ndarray:
    """The New York calendar date (naive midnight, epoch microseconds) of each UTC instant
    (epoch microseconds): from the cached table of New York's offsets, or through pandas'
    time zones for an instant outside it."""
    day = _ny_days(micros)
    if day is not None:
        return day
    wall = utc_index(micros).tz_convert(NY).tz_localize(None)
    return wall.normalize().as_unit(TS_UNIT).asi8


def _ny_days(micros: np.ndarray) -> np.ndarray | None:
    """New York calendar date (naive midnight, microseconds) of each UTC instant, from the
    cached table of New York's UTC offsets; None when an instant lies outside that table."""
    starts, offsets = _ny_offsets()
    if not len(micros):
        return micros.copy()
    if micros.min() < starts[0] or micros.max() >= starts[-1]:
        return None
    local = micros + offsets[np.searchsorted(starts, micros, side="right") - 1]
    return local - local % DAY_US


@lru_cache(maxsize=1)
def _ny_offsets() -> tuple[np.ndarray, np.ndarray]:
    """Instants (UTC microseconds) from which New York's UTC offset holds, and that offset,
    over the calendar's span (a year of margin each side); the last instant ends the table.

    Offsets change on whole UTC hours, so an hourly grid finds every change exactly."""
    hours = pd.date_range(pd.Timestamp(_CAL_START) - pd.Timedelta(days=366),
                          pd.Timestamp(_CAL_END) + pd.Timedelta(days=366), freq="h", tz="UTC",
                          unit=TS_UNIT)
    utc_us = hours.asi8
    offsets = hours.tz_convert(NY).tz_localize(None).as_unit(TS_UNIT).asi8 - utc_us
    change = np.r_[True, offsets[1:] != offsets[:-1]]
    starts = np.r_[utc_us[change], utc_us[-1] + _HOUR_US]
    return starts, np.r_[offsets[change], offsets[-1]]


@lru_cache(maxsize=1)
def _session_closes() -> tuple[np.ndarray, np.ndarray]:
    """Session dates (naive midnight, microseconds) and their closes (UTC microseconds), sorted:
    the lookup of :func:`bar_close_times` (a searchsorted, not a pandas reindex)."""
    sched = _schedule()
    return sched.index.as_unit(TS_UNIT).asi8, pd.DatetimeIndex(sched["close"]).as_unit(TS_UNIT).asi8


@lru_cache(maxsize=1)
def _week_closes() -> tuple[np.ndarray, np.ndarray]:
    """Each week's Monday (naive midnight, microseconds) and its last session close."""
    days, closes = _session_closes()
    monday = monday_of(days)
    last = np.r_[monday[1:] != monday[:-1], True]
    return monday[last], closes[last]


def _fx_open(ts: pd.DatetimeIndex) -> np.ndarray:
    """Whether spot FX trades at each instant: from Sunday 17:00 to Friday 17:00 New York time
    (the week's rollover; holidays are not modelled)."""
    local = ts.tz_convert(NY)
    day, minute = local.weekday, local.hour * 60 + local.minute
    closed = (day == 5) | ((day == 4) & (minute >= 17 * 60)) | ((day == 6) & (minute < 17 * 60))
    return ~np.asarray(closed)


def coarser_or_equal(interval: str) -> tuple[str, ...]:
    """``interval`` and every coarser interval, finest first."""
    interval_delta(interval)
    return INTERVAL_ORDER[INTERVAL_ORDER.index(interval):]


def canonical_labels(ts: pd.DatetimeIndex, calendar: str, interval: str) -> pd.DatetimeIndex:
    """Labels on the product's convention (bar open time, UTC).

    Daily and weekly stock bars labelled by their date - midnight UTC (date-only files) or
    midnight New York (vendor exports such as yfinance's) - become their session's open; a weekly
    label on the Monday or on the week's first session date becomes the week's first session open.
    Every other label is returned unchanged, so validation can still judge it.
    """
    if calendar != NYSE or interval not in ("1d", "1w") or not len(ts):
        return ts
    ts = pd.DatetimeIndex(ts).tz_convert("UTC")
    ny = ts.tz_convert(NY)
    utc_mid = np.asarray((ts == ts.normalize()) & ~ts.isna())
    ny_mid = np.asarray((ny == ny.normalize()) & ~ts.isna()) & ~utc_mid
    dated = utc_mid | ny_mid
    if not dated.any():
        return ts
    days = pd.DatetimeIndex(np.where(utc_mid, ts.tz_localize(None).normalize(),
                                     ny.tz_localize(None).normalize()))[dated]
    sched = sessions(days.min() - pd.Timedelta(days=7), days.max() + pd.Timedelta(days=7))
    opens = sched["open"].dt.as_unit(TS_UNIT)
    if interval == "1d":
        mapped = opens.reindex(days)
    else:
        weeks = sched.index.to_period("W-SUN")
        first_open = opens.groupby(weeks).min().reindex(days.to_period("W-SUN"))
        first_day = pd.Series(sched.index, index=sched.index).groupby(weeks).min()
        first_day = first_day.reindex(days.to_period("W-SUN")).to_numpy()
        usable = (days.weekday == 0) | (days.to_numpy() == first_day)
        mapped = first_open.where(usable)
    micros = ts.as_unit(TS_UNIT).asi8.copy()
    found = ~mapped.isna().to_numpy()
    micros[np.flatnonzero(dated)[found]] = pd.DatetimeIndex(mapped[found]).as_unit(TS_UNIT).asi8
    return utc_index(micros)


def is_open(calendar: str, ts: object) -> bool:
    """Whether the market of ``calendar`` is in its regular session at instant ``ts``."""
    _check_calendar(calendar)
    if calendar == CRYPTO:
        return True
    t = utc(ts)
    if calendar == FX:
        return bool(_fx_open(pd.DatetimeIndex([t]))[0])
    sess = regular_session(t.tz_convert(NY).date())
    return sess is not None and sess.open <= t < sess.close
