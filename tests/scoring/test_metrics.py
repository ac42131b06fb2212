"""Leaderboard metrics against hand-computed numbers (all returns are fractions)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.engine.portfolio import ADD, CLOSE, LONG, OPEN, SHORT, Fill, fee, fold
from arena.scoring.metrics import (
    buy_and_hold_return,
    daily_returns,
    equal_weight_return,
    excess_returns,
    leaderboard_metrics,
    max_drawdown,
    open_trips,
    per_period_rate,
    round_trips,
    sharpe,
    total_return,
    trade_count,
    win_rate,
)


def close(a: float, b: float) -> bool:
    return bool(np.isclose(a, b, rtol=1e-12, atol=1e-12))


def eq(values: list[float], start: str = "2024-01-01") -> pd.Series:
    return pd.Series(values, index=pd.date_range(start, periods=len(values), freq="D", tz="UTC"))


# Daily returns +1%, -1%, +2%, 0%, +3% from 10,000: mean 0.01, deviations 0, -.02, .01, -.01, .02,
# squares sum 1e-3, variance (ddof=1) 2.5e-4, so mean/std = sqrt(0.4) and Sharpe = sqrt(0.4 x 365)
# = sqrt(146) = 12.0830...
FIVE = eq([10_100.0, 9_999.0, 10_198.98, 10_198.98, 10_504.9494])


def test_total_and_daily_returns() -> None:
    assert close(total_return(eq([10_100.0, 10_300.0, 9_900.0, 10_500.0])), 0.05)
    assert np.allclose(daily_returns(FIVE, 10_000.0), [0.01, -0.01, 0.02, 0.0, 0.03], rtol=1e-12)
    assert np.allclose(daily_returns(FIVE), [-0.01, 0.02, 0.0, 0.03], rtol=1e-12)  # no start


def test_sharpe_by_hand_and_degenerate_cases() -> None:
    assert close(sharpe(FIVE), math.sqrt(146))
    assert sharpe(eq([10_000.0] * 5)) is None  # flat: zero volatility
    assert sharpe(eq([10_100.0])) is None  # one return
    assert sharpe(eq([10_100.0, 10_200.0]), start_equity=None) is None


def test_sharpe_converts_annual_risk_free_rate() -> None:
    daily = 1.05 ** (1 / 365) - 1  # 5% a year compounds from 0.000133680617... a day
    assert close(per_period_rate(0.05), 0.00013368061711349633)
    assert close(sharpe(FIVE, risk_free_rate=0.05), (0.01 - daily) / math.sqrt(2.5e-4) * math.sqrt(365))
    assert close(sharpe(FIVE, periods_per_year=252), math.sqrt(0.4 * 252))


def test_max_drawdown() -> None:
    # 11,000 -> 9,900 is 10%; 12,000 -> 9,000 is 25%: the larger wins.
    assert close(max_drawdown(eq([11_000.0, 9_900.0, 10_500.0, 12_000.0, 9_000.0, 12_500.0])), 0.25)
    assert max_drawdown(eq([10_100.0, 10_200.0, 10_300.0])) == 0.0
    # The start equity is the first peak: 10,000 -> 9,000 is 10% although the series only rises.
    assert close(max_drawdown(eq([9_000.0, 9_500.0, 9_800.0])), 0.1)
    assert max_drawdown(eq([9_000.0, 9_500.0, 9_800.0]), start_equity=None) == 0.0


def fill(day: int, symbol: str, side: str, kind: str, qty: float, price: float,
         realised: float = 0.0, automatic: bool = False) -> Fill:
    return Fill(pd.Timestamp(f"2024-01-0{day}", tz="UTC"), symbol, side, kind, qty, price,
                fee(qty * price), realised, automatic=automatic)


FILLS = [
    fill(1, "BTC", LONG, OPEN, 1.0, 100.0),  # fee 0.10
    fill(1, "ETH", SHORT, OPEN, 10.0, 50.0),  # fee 0.50
    fill(2, "BTC", LONG, ADD, 1.0, 120.0),  # fee 0.12, entry (100 + 120) / 2 = 110
    fill(3, "BTC", LONG, CLOSE, 0.5, 130.0, realised=0.5 * 20),  # fee 0.065
    fill(3, "ETH", SHORT, CLOSE, 10.0, 55.0, realised=-50.0, automatic=True),  # fee 0.55
    fill(4, "BTC", LONG, CLOSE, 1.5, 140.0, realised=1.5 * 30),  # fee 0.21
]
OPEN_SOL = fill(5, "SOL", LONG, OPEN, 5.0, 20.0)  # fee 0.10, never closed


def test_round_trips_by_hand() -> None:
    eth, btc = round_trips([*FILLS, OPEN_SOL])  # ordered by final close; SOL still open
    assert (btc.symbol, btc.side, btc.quantity, btc.automatic) == ("BTC", LONG, 2.0, False)
    assert (btc.opened_at, btc.closed_at) == (FILLS[0].at, FILLS[5].at)
    assert close(btc.entry_price, 110.0) and close(btc.exit_price, (65.0 + 210.0) / 2)
    assert close(btc.fees, 0.1 + 0.12 + 0.065 + 0.21) and close(btc.gross_pnl, 55.0)
    assert close(btc.net_pnl, 55.0 - 0.495)
    assert (eth.side, eth.entry_price, eth.exit_price, eth.automatic) == (SHORT, 50.0, 55.0, True)
    assert close(eth.net_pnl, -50.0 - 0.5 - 0.55)
    assert win_rate([eth, btc]) == 0.5 and win_rate([]) is None
    assert list(open_trips([*FILLS, OPEN_SOL])) == ["SOL"]
    assert trade_count([*FILLS, OPEN_SOL]) == 7


def test_reopening_starts_a_new_trip() -> None:
    trips = round_trips([fill(1, "BTC", LONG, OPEN, 1.0, 100.0),
                         fill(2, "BTC", LONG, CLOSE, 1.0, 110.0, realised=10.0),
                         fill(3, "BTC", LONG, OPEN, 2.0, 120.0),
                         fill(4, "BTC", LONG, CLOSE, 2.0, 90.0, realised=-60.0)])
    assert [(t.quantity, t.gross_pnl) for t in trips] == [(1.0, 10.0), (2.0, -60.0)]
    with pytest.raises(ValueError):
        round_trips([fill(1, "BTC", LONG, CLOSE, 1.0, 100.0)])


def test_trips_agree_with_the_portfolio_fold() -> None:
    state = fold(FILLS)
    trips = round_trips(FILLS)
    assert close(sum(t.gross_pnl for t in trips), state.realised_pnl)
    assert close(sum(t.fees for t in trips), state.fees_paid)
    with_open = fold([*FILLS, OPEN_SOL])  # the open trip's fees are not in any closed trip
    open_fees = sum(f.fee for fs in open_trips([*FILLS, OPEN_SOL]).values() for f in fs)
    assert close(sum(t.fees for t in trips) + open_fees, with_open.fees_paid)


def test_benchmarks_and_excess() -> None:
    assert close(buy_and_hold_return(pd.Series([100.0, 110.0, 90.0, 120.0])), 0.2)
    frame = pd.DataFrame({"A": [10.0, 12.0, 15.0], "B": [20.0, 25.0, 18.0],
                          "C": [np.nan, 4.0, 5.0]})  # C has no start price: left out
    assert close(equal_weight_return(frame), (0.5 - 0.1) / 2)
    got = excess_returns(0.05, btc=0.2, spy=0.1, universe=0.2)
    assert got.keys() == {"vs_btc", "vs_spy", "vs_universe"}
    assert all(close(got[k], v) for k, v in
               {"vs_btc": -0.15, "vs_spy": -0.05, "vs_universe": -0.15}.items())


def test_leaderboard_metrics_aligns_benchmarks_to_the_equity_window() -> None:
    equity = eq([10_000.0, *FIVE.to_list()])  # Mon 2024-01-01 (start mark) .. Sat 2024-01-06
    btc = eq([90.0, 100.0, 101.0, 102.0, 103.0, 104.0, 125.0, 200.0], start="2023-12-31")
    spy = pd.Series([400.0, 410.0, 420.0, 430.0, 451.0, 500.0], index=pd.DatetimeIndex(
        ["2023-12-29", "2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"],
        tz="UTC"))  # weekdays only: Sat 01-06 uses Fri 01-05; Mon 01-01 uses Fri 12-29
    new = eq([1.0, 2.0], start="2024-01-03")  # listed mid-window: no start price, left out
    universe = pd.concat([btc.rename("BTC"), spy.rename("SPY"), new.rename("NEW")], axis=1)
    m = leaderboard_metrics(equity, FILLS, btc=btc, spy=spy, universe=universe)
    ret = 10_504.9494 / 10_000 - 1
    btc_r, spy_r = 125.0 / 100.0 - 1, 451.0 / 400.0 - 1
    # the start mark is counted once: the five daily returns of FIVE, Sharpe sqrt(146) by hand
    assert close(m["return"], ret) and close(m["sharpe"], math.sqrt(146.0))
    assert close(m["max_drawdown"], (10_100.0 - 9_999.0) / 10_100.0)
    with pytest.raises(ValueError, match="season-start mark"):
        leaderboard_metrics(FIVE, FILLS, btc=btc, spy=spy, universe=universe)
    assert (m["win_rate"], m["trades"], m["round_trips"]) == (0.5, 6, 2)
    assert close(m["excess_vs_btc"], ret - btc_r) and close(m["excess_vs_spy"], ret - spy_r)
    assert close(m["excess_vs_universe"], ret - (btc_r + spy_r) / 2)
