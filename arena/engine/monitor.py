"""The invalidation monitor core: close positions whose invalidation level the price has reached.

A pure function (no I/O, no clock) over a portfolio and a window ``(start, end]`` of bars; the same
call serves one live 15-minute tick and a replayed day (running it window by window gives the same
fills as one call over the union).

Observation rule (what a job checking prices every bar would have seen):

* a bar (labelled by its open time, UTC) is observed at its **close time** at its ``close`` price;
  close times come from :func:`arena.core.sessions.bar_close_times` (open + interval, cut at the
  session close for stocks);
* crypto (calendar ``24/7``) is observed around the clock;
* a stock is observed only through bars that open inside an NYSE regular session
  (:func:`arena.core.sessions.is_open` at the bar's open), so a bar closing exactly at the session close
  counts and nothing outside sessions (pre/post-market, weekends, holidays) ever does; in addition,
  the first bar of a session gives the **opening print**: an observation at the session open at the
  bar's ``open`` price, so a gap through the level is caught at 9:30 ET at the gap price;
* only observation times ``t`` with ``start < t <= end`` count, and for a position only those after
  its ``opened_at`` (a position cannot be stopped by a price from before it existed);
* non-finite or non-positive prices are not observations (never guess a price).

A position with an ``invalidation_price`` is closed in full at the first observation where the
price has reached the level (long: ``price <= level``; short: ``price >= level``), at the observed
price - worse than the level when the price jumped through it - with a fee of
``fee_rate x quantity x price`` (USD).

The search is vectorised: a window's observations are built as arrays (a session's opening
print and each bar's close, interleaved in bar order, then sorted by time, stably - the order
one step per bar produced), and the first that reaches a level is found with NumPy. The
session of an instant is the last NYSE session opening at or before it, if it has not closed
(:func:`_nyse_session_open`), which is :func:`arena.core.sessions.is_open` for many instants at
once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from arena.core.sessions import NYSE, bar_close_times, sessions, utc
from arena.core.universe import Universe
from arena.engine.portfolio import CLOSE, FEE_RATE, LONG, Fill, Portfolio, fee

Observation = tuple["pd.Timestamp", float]  # (check time UTC, observed price USD)
_NAT = -(2**63)  # NaT's integer value (int64's min): an instant in no session


@dataclass(frozen=True)
class MonitorResult:
    """The monitor's output for one window.

    ``fills``: automatic closes, sorted by time (then symbol); ``portfolio``: the input state with
    them applied in that order; ``checked``: observations examined per symbol held with a level (up
    to and including the triggering one); ``unobserved``: symbols held with a level that had no
    observation in the window (no bars, or none usable) - the caller logs them.
    """

    fills: tuple[Fill, ...]
    portfolio: Portfolio
    checked: dict[str, int] = field(default_factory=dict)
    unobserved: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Observed:
    """One symbol's observations in a window, time-ordered: epoch nanoseconds, prices, and
    where each comes from (``row`` of the frame's bars; ``close``: the bar's close, else the
    session's opening print at its open)."""

    ns: np.ndarray
    price: np.ndarray
    row: np.ndarray
    close: np.ndarray
    opens: pd.DatetimeIndex
    closes: pd.DatetimeIndex

    def __len__(self) -> int:
        return len(self.ns)

    def at(self, i: int) -> pd.Timestamp:
        """The time of observation ``i`` (the bar's own timestamp, in its unit)."""
        return (self.closes if self.close[i] else self.opens)[int(self.row[i])]

    def after(self, t_ns: int) -> _Observed:
        """The observations later than ``t_ns``."""
        later = self.ns > t_ns
        if later.all():
            return self
        return _Observed(self.ns[later], self.price[later], self.row[later], self.close[later],
                         self.opens, self.closes)


def _ns(t: pd.Timestamp) -> int:
    """Epoch nanoseconds of a timezone-aware time (comparisons exact whatever its unit)."""
    stamp = pd.Timestamp(t)
    if stamp.tzinfo is None:
        raise TypeError(f"the monitor's window needs timezone-aware times, not {t!r}")
    return int(stamp.value)


@lru_cache(maxsize=1)
def _nyse_sessions() -> tuple[np.ndarray, np.ndarray]:
    """Every NYSE regular session's open and close (epoch nanoseconds), in time order."""
    table = sessions("1900-01-01", "2100-12-31")
    return (pd.DatetimeIndex(table["open"]).as_unit("ns").asi8,
            pd.DatetimeIndex(table["close"]).as_unit("ns").asi8)


def _nyse_session_open(ns: np.ndarray) -> np.ndarray:
    """For each instant, the open of the NYSE regular session it lies in (``open <= t <
    close``), ``_NAT`` where none: sessions never overlap, so it is the last one opening at or
    before the instant, while that one has not closed."""
    opens, closes = _nyse_sessions()
    pos = np.searchsorted(opens, ns, side="right") - 1
    safe = np.maximum(pos, 0)
    inside = (pos >= 0) & (ns < closes[safe])
    return np.where(inside, opens[safe], _NAT)


def _observed(bars: pd.DataFrame | None, calendar: str, start: pd.Timestamp, end: pd.Timestamp,
              interval: str) -> _Observed | None:
    """The observations of one symbol's bars in ``(start, end]`` (None: no bars)."""
    if bars is None or bars.empty:
        return None
    lo, hi = _ns(start), _ns(end)
    opens = _utc_index(bars["timestamp"])
    closes = bar_close_times(calendar, interval, opens)
    o_ns, c_ns = opens.as_unit("ns").asi8, closes.as_unit("ns").asi8
    keep = (o_ns != _NAT) & (c_ns > lo) & (o_ns <= hi)  # may hold an observation in the window
    rows = np.flatnonzero(keep)
    o_ns, c_ns = o_ns[rows], c_ns[rows]
    p_open, p_close = _prices(bars["open"])[rows], _prices(bars["close"])[rows]
    closing = (c_ns > lo) & (c_ns <= hi)
    if calendar == NYSE:  # only bars opening inside a regular session; its first bar's open
        session = _nyse_session_open(o_ns)
        inside = session != _NAT
        printing = inside & (session == o_ns) & (o_ns > lo) & (o_ns <= hi)
        closing &= inside
    else:
        printing = np.zeros(len(rows), dtype=bool)
    # one step per bar: its opening print, then its close; then a stable sort by time
    ns = np.column_stack([o_ns, c_ns]).ravel()
    price = np.column_stack([p_open, p_close]).ravel()
    used = np.column_stack([printing, closing]).ravel()
    used &= np.isfinite(price) & (price > 0)
    pick = np.flatnonzero(used)
    pick = pick[np.argsort(ns[pick], kind="stable")]
    return _Observed(ns[pick], price[pick], rows[pick // 2], (pick % 2).astype(bool), opens,
                     closes)


def _utc_index(stamps: pd.Series) -> pd.DatetimeIndex:
    """Bar open times as a UTC index (``pd.to_datetime(..., utc=True)``, which a column of the
    lake's own type, UTC already, passes through as it is)."""
    dtype = stamps.dtype
    if isinstance(dtype, pd.DatetimeTZDtype) and dtype.tz is dt.UTC:
        return pd.DatetimeIndex(stamps)
    return pd.DatetimeIndex(pd.to_datetime(stamps, utc=True))


def _prices(column: pd.Series) -> np.ndarray:
    """A price column as float64, a missing price as NaN (never an observation)."""
    if column.dtype == np.float64:
        return column.to_numpy()
    return column.to_numpy(dtype="float64", na_value=np.nan)


def observations(bars: pd.DataFrame | None, calendar: str, start: pd.Timestamp, end: pd.Timestamp,
                 interval: str = "15m") -> list[Observation]:
    """The observations ``(time, price)`` of one symbol's bars in ``(start, end]``, time-ordered."""
    obs = _observed(bars, calendar, start, end, interval)
    if obs is None:
        return []
    return [(obs.at(i), float(obs.price[i])) for i in range(len(obs))]


def check_invalidations(portfolio: Portfolio, bars: Mapping[str, pd.DataFrame],
                        universe: Universe, start: pd.Timestamp, end: pd.Timestamp, *,
                        fee_rate: float = FEE_RATE, interval: str = "15m") -> MonitorResult:
    """Close every position whose level the observed price reached in ``(start, end]``.

    ``bars`` maps house symbol -> bar frame (timestamp = bar open UTC, open/high/low/close in USD)
    of ``interval`` bars covering at least the window; bars outside it are ignored. Positions are
    independent: each is closed at most once, at its first triggering observation.
    """
    fills: list[Fill] = []
    checked: dict[str, int] = {}
    unobserved: list[str] = []
    for symbol, position in sorted(portfolio.positions.items()):
        level = position.invalidation_price
        if level is None:
            continue
        obs = _observed(bars.get(symbol), universe[symbol].calendar, start, end, interval)
        if obs is not None:
            obs = obs.after(_ns(utc(position.opened_at)))
        if obs is None or not len(obs):
            unobserved.append(symbol)
            checked[symbol] = 0
            continue
        reached = obs.price <= level if position.side == LONG else obs.price >= level
        first = int(reached.argmax()) if reached.any() else -1
        checked[symbol] = first + 1 if first >= 0 else len(obs)
        if first >= 0:
            price = float(obs.price[first])
            fills.append(Fill(
                at=obs.at(first), symbol=symbol, side=position.side, kind=CLOSE,
                quantity=position.quantity, price=price,
                fee=fee(position.quantity * price, fee_rate),
                realised_pnl=position.unrealised(price), automatic=True,
                invalidation_price=level))
    fills.sort(key=lambda f: (f.at, f.symbol))
    state = portfolio
    for f in fills:
        state = state.apply(f)
    return MonitorResult(tuple(fills), state, checked, tuple(unobserved))
