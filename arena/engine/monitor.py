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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from arena.core.lazy import lazy_import
from arena.core.sessions import NYSE, bar_close_times, is_open, regular_session, utc
from arena.core.universe import Universe
from arena.engine.portfolio import CLOSE, FEE_RATE, LONG, Fill, Portfolio, Position, fee

np = lazy_import("numpy")
pd = lazy_import("pandas")

Observation = tuple["pd.Timestamp", float]  # (check time UTC, observed price USD)


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


def observations(bars: pd.DataFrame | None, calendar: str, start: pd.Timestamp, end: pd.Timestamp,
                 interval: str = "15m") -> list[Observation]:
    """The observations ``(time, price)`` of one symbol's bars in ``(start, end]``, time-ordered."""
    if bars is None or bars.empty:
        return []
    opens = pd.DatetimeIndex(pd.to_datetime(bars["timestamp"], utc=True))
    closes = bar_close_times(calendar, interval, opens)
    keep = np.asarray((closes > start) & (opens <= end))  # may hold an observation in the window
    out: list[Observation] = []
    for o, c, p_open, p_close in zip(opens[keep], closes[keep], bars["open"].to_numpy()[keep],
                                     bars["close"].to_numpy()[keep], strict=True):
        if calendar == NYSE:
            if not is_open(NYSE, o):
                continue
            session = regular_session(o)
            if session is not None and session.open == o and start < o <= end:
                out.append((o, float(p_open)))
        if start < c <= end:
            out.append((c, float(p_close)))
    out = [(t, p) for t, p in out if np.isfinite(p) and p > 0]
    out.sort(key=lambda obs: obs[0])
    return out


def _reached(position: Position, price: float) -> bool:
    level = position.invalidation_price
    assert level is not None
    return price <= level if position.side == LONG else price >= level


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
        calendar = universe[symbol].calendar
        obs = observations(bars.get(symbol), calendar, start, end, interval)
        opened = utc(position.opened_at)
        obs = [(t, p) for t, p in obs if t > opened]
        if not obs:
            unobserved.append(symbol)
        checked[symbol] = 0
        for t, price in obs:
            checked[symbol] += 1
            if _reached(position, price):
                fills.append(Fill(
                    at=t, symbol=symbol, side=position.side, kind=CLOSE,
                    quantity=position.quantity, price=price,
                    fee=fee(position.quantity * price, fee_rate),
                    realised_pnl=position.unrealised(price), automatic=True,
                    invalidation_price=level))
                break
    fills.sort(key=lambda f: (f.at, f.symbol))
    state = portfolio
    for f in fills:
        state = state.apply(f)
    return MonitorResult(tuple(fills), state, checked, tuple(unobserved))
