"""The invalidation monitor as it was first written: one Python step per bar, a calendar look-up
per bar (:func:`arena.core.sessions.is_open`, :func:`arena.core.sessions.regular_session`). The
oracle the vectorised :mod:`arena.engine.monitor` is checked and benchmarked against."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from arena.core.sessions import NYSE, bar_close_times, is_open, regular_session, utc
from arena.core.universe import Universe
from arena.engine.monitor import MonitorResult, Observation
from arena.engine.portfolio import CLOSE, FEE_RATE, LONG, Fill, Portfolio, Position, fee


def observations_per_bar(bars: pd.DataFrame | None, calendar: str, start: pd.Timestamp,
                         end: pd.Timestamp, interval: str = "15m") -> list[Observation]:
    if bars is None or bars.empty:
        return []
    opens = pd.DatetimeIndex(pd.to_datetime(bars["timestamp"], utc=True))
    closes = bar_close_times(calendar, interval, opens)
    keep = np.asarray((closes > start) & (opens <= end))
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


def check_invalidations_per_bar(portfolio: Portfolio, bars: Mapping[str, pd.DataFrame],
                                universe: Universe, start: pd.Timestamp, end: pd.Timestamp, *,
                                fee_rate: float = FEE_RATE, interval: str = "15m"
                                ) -> MonitorResult:
    fills: list[Fill] = []
    checked: dict[str, int] = {}
    unobserved: list[str] = []
    for symbol, position in sorted(portfolio.positions.items()):
        level = position.invalidation_price
        if level is None:
            continue
        calendar = universe[symbol].calendar
        obs = observations_per_bar(bars.get(symbol), calendar, start, end, interval)
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
