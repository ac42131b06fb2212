"""Leaderboard metrics (SPEC §4): pure functions over an equity series, fills and benchmark prices.

Conventions:

* Every return, drawdown, rate and win rate is a **fraction, not percent** (0.05 means 5%).
* ``equity`` is a daily ``pd.Series`` indexed by UTC timestamps in increasing order, one value per
  day: the end-of-day equity in USD. The season starts from ``start_equity`` (10,000 USD), which
  counts as the value before the first point (first daily return, first drawdown peak).
* Sharpe is annualised with ``periods_per_year=365``: crypto trades every calendar day and the
  equity series is marked every day, weekends included.
* Benchmarks are buy-and-hold **without fees**, over the same window as the equity series: per
  symbol, the last available price at or before the first and at or before the last equity
  timestamp (so a stock's Friday close stands for a Sunday). Begin the equity series with the
  season-start mark (``start_equity`` at the start time) for the windows to line up exactly;
  otherwise the benchmarks miss the first day's move.
* A **round trip** runs from a position's open until it is fully closed: adds and partial closes
  belong to it. Trips still open at the end are not scored (see :func:`open_trips`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.engine.portfolio import CLOSE, START_CASH, Fill

_ZERO_VOL = 1e-12  # a return standard deviation at or below this counts as zero volatility


def _require(equity: pd.Series) -> None:
    if len(equity) == 0:
        raise ValueError("empty equity series")
    if equity.isna().any():
        raise ValueError("equity series has missing values")


def total_return(equity: pd.Series, start_equity: float = START_CASH) -> float:
    """``(final equity - start) / start``, a fraction."""
    _require(equity)
    return float((equity.iloc[-1] - start_equity) / start_equity)


def daily_returns(equity: pd.Series, start_equity: float | None = None) -> pd.Series:
    """Simple day-over-day returns (fractions), indexed like ``equity``.

    With ``start_equity`` the first day's return is measured against it (one return per point);
    without it the first point has no return and is dropped (one return fewer than points).
    """
    _require(equity)
    values = equity.astype(float)
    previous = values.shift(1)
    if start_equity is None:
        return (values / previous - 1.0).iloc[1:]
    previous.iloc[0] = start_equity
    return values / previous - 1.0


def per_period_rate(annual_rate: float, periods_per_year: int = 365) -> float:
    """The per-period rate that compounds to ``annual_rate`` over ``periods_per_year`` periods."""
    return (1.0 + annual_rate) ** (1.0 / periods_per_year) - 1.0


def sharpe(equity: pd.Series, *, risk_free_rate: float = 0.0, periods_per_year: int = 365,
           start_equity: float | None = START_CASH) -> float | None:
    """Annualised Sharpe ratio of daily returns: ``mean(excess) / std(excess, ddof=1) x
    sqrt(periods_per_year)``.

    ``risk_free_rate`` is annual (a fraction), converted to a per-period rate by compounding.
    ``periods_per_year`` defaults to 365 because crypto trades every day. ``None`` (never NaN or
    inf) when there are fewer than 2 returns or the returns have zero volatility.
    """
    returns = daily_returns(equity, start_equity).to_numpy(dtype=float)
    if len(returns) < 2:
        return None
    excess = returns - per_period_rate(risk_free_rate, periods_per_year)
    std = float(np.std(excess, ddof=1))
    if not math.isfinite(std) or std <= _ZERO_VOL:
        return None
    return float(np.mean(excess) / std * math.sqrt(periods_per_year))


def max_drawdown(equity: pd.Series, start_equity: float | None = START_CASH) -> float:
    """Largest ``(running peak - value) / running peak`` over the series, a fraction.

    ``start_equity`` is the first peak. 0.0 for a series that never falls; in [0, 1] while equity
    stays non-negative.
    """
    _require(equity)
    values = equity.to_numpy(dtype=float)
    if start_equity is not None:
        values = np.concatenate([[start_equity], values])
    peaks = np.maximum.accumulate(values)
    return float(max(0.0, np.max((peaks - values) / peaks)))


@dataclass(frozen=True, slots=True)
class RoundTrip:
    """A position from its open until fully closed. Prices in USD per unit, amounts in USD.

    ``entry_price``/``exit_price`` are volume-weighted over the opens+adds / the closes;
    ``quantity`` is the total quantity opened (opens plus adds, which the closes sum to);
    ``fees`` are all fees of its fills; ``gross_pnl`` is the sum of its closes' realised P&L;
    ``automatic`` is True when its final close was an automatic (invalidation) close.
    """

    symbol: str
    side: str
    opened_at: pd.Timestamp
    closed_at: pd.Timestamp
    entry_price: float
    exit_price: float
    quantity: float
    fees: float
    gross_pnl: float
    automatic: bool

    @property
    def net_pnl(self) -> float:
        return self.gross_pnl - self.fees


def _trip(fills: list[Fill]) -> RoundTrip:
    entries = [f for f in fills if f.kind != CLOSE]
    exits = [f for f in fills if f.kind == CLOSE]
    quantity = sum(f.quantity for f in entries)
    return RoundTrip(
        symbol=fills[0].symbol, side=fills[0].side, opened_at=fills[0].at, closed_at=exits[-1].at,
        entry_price=sum(f.notional for f in entries) / quantity,
        exit_price=sum(f.notional for f in exits) / sum(f.quantity for f in exits),
        quantity=quantity, fees=sum(f.fee for f in fills),
        gross_pnl=sum(f.realised_pnl for f in exits), automatic=exits[-1].automatic)


def _pair(fills: Sequence[Fill]) -> tuple[list[RoundTrip], dict[str, list[Fill]]]:
    """Closed trips in order of their final close, and the fills of the trips still open."""
    trips: list[RoundTrip] = []
    current: dict[str, list[Fill]] = {}
    held: dict[str, float] = {}
    for fill in fills:  # execution order, as for ``fold``
        group = current.setdefault(fill.symbol, [])
        group.append(fill)
        if fill.kind != CLOSE:
            held[fill.symbol] = held.get(fill.symbol, 0.0) + fill.quantity
            continue
        before = held.get(fill.symbol, 0.0)
        if before <= 0 or group[0].side != fill.side:
            raise ValueError(f"close of {fill.side} {fill.symbol} with no such position open")
        held[fill.symbol] = before - fill.quantity
        if held[fill.symbol] <= before * 1e-12:  # fully closed (same tolerance as Portfolio)
            trips.append(_trip(group))
            del current[fill.symbol], held[fill.symbol]
    return trips, current


def round_trips(fills: Sequence[Fill]) -> list[RoundTrip]:
    """Closed round trips from fills in execution order, ordered by their final close."""
    return _pair(fills)[0]


def open_trips(fills: Sequence[Fill]) -> dict[str, list[Fill]]:
    """The fills of round trips still open after ``fills``, by symbol (not scored)."""
    return _pair(fills)[1]


def win_rate(trips: Sequence[RoundTrip]) -> float | None:
    """Share of closed round trips with net P&L (after all fees) > 0; None when there are none."""
    if not trips:
        return None
    return sum(t.net_pnl > 0 for t in trips) / len(trips)


def trade_count(fills: Sequence[Fill]) -> int:
    """Number of trades = number of fills (each open, add and close, manual or automatic)."""
    return len(fills)


def buy_and_hold_return(prices: pd.Series) -> float:
    """``last / first - 1`` of ``prices`` (a fraction): buy at the first, sell at the last, no
    fees. Raises ValueError if the first or last price is missing."""
    first, last = float(prices.iloc[0]), float(prices.iloc[-1])
    if not (math.isfinite(first) and math.isfinite(last)) or first <= 0:
        raise ValueError(f"no usable buy-and-hold prices: first {first}, last {last}")
    return last / first - 1.0


def equal_weight_return(prices: pd.DataFrame) -> float:
    """Mean over columns of ``last / first - 1`` (first and last rows): equal weights at the
    start, held without rebalancing or fees. Columns with a missing first or last price are
    left out; ValueError if none is left."""
    first, last = prices.iloc[0], prices.iloc[-1]
    usable = first.notna() & last.notna() & (first > 0)
    if not usable.any():
        raise ValueError("no column has both a first and a last price")
    return float((last[usable] / first[usable] - 1.0).mean())


def excess_returns(contestant_return: float, *, btc: float, spy: float,
                   universe: float) -> dict[str, float]:
    """Contestant return minus each benchmark return (fractions)."""
    return {"vs_btc": contestant_return - btc, "vs_spy": contestant_return - spy,
            "vs_universe": contestant_return - universe}


def window_prices(prices: pd.Series | pd.DataFrame, start: pd.Timestamp,
                  end: pd.Timestamp) -> pd.DataFrame:
    """Two rows (``start``, ``end``): per column, the last non-missing price at or before each."""
    frame = prices.to_frame() if isinstance(prices, pd.Series) else prices
    filled = frame.sort_index().ffill()
    missing = pd.Series(np.nan, index=filled.columns)
    rows = [filled.loc[:t].iloc[-1] if len(filled.loc[:t]) else missing for t in (start, end)]
    return pd.DataFrame(rows, index=[start, end])


def leaderboard_metrics(equity: pd.Series, fills: Sequence[Fill], *, btc: pd.Series,
                        spy: pd.Series, universe: pd.DataFrame, risk_free_rate: float = 0.0,
                        start_equity: float = START_CASH) -> dict[str, float | int | None]:
    """Every SPEC §4 metric for one contestant and season (fractions, counts, or None).

    ``equity`` must begin with the season-start mark (``start_equity`` at the season's start), so
    returns, Sharpe, drawdown and the benchmark windows all start at the same instant; the mark is
    counted once. Benchmarks run over ``equity``'s first to last timestamp.
    """
    _require(equity)
    if not math.isclose(float(equity.iloc[0]), start_equity, rel_tol=1e-12):
        raise ValueError(f"the equity series must begin with the season-start mark {start_equity:,.2f}"
                         f" (got {float(equity.iloc[0]):,.2f} at {equity.index[0]})")
    start, end = equity.index[0], equity.index[-1]
    ret = total_return(equity, start_equity)
    trips = round_trips(fills)
    excess = excess_returns(
        ret, btc=buy_and_hold_return(window_prices(btc, start, end).iloc[:, 0]),
        spy=buy_and_hold_return(window_prices(spy, start, end).iloc[:, 0]),
        universe=equal_weight_return(window_prices(universe, start, end)))
    return {"return": ret,
            "sharpe": sharpe(equity, risk_free_rate=risk_free_rate, start_equity=None),
            "max_drawdown": max_drawdown(equity, None), "win_rate": win_rate(trips),
            "trades": trade_count(fills), "round_trips": len(trips),
            "excess_vs_btc": excess["vs_btc"], "excess_vs_spy": excess["vs_spy"],
            "excess_vs_universe": excess["vs_universe"]}
