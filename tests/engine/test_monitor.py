"""The invalidation monitor core: hand-built bars with exact fills, and tick-vs-day equivalence.

Dates used (UTC): 2025-06-10 (Tue) and 2025-06-13/16 (Fri/Mon) are regular NYSE days in summer
time, session 13:30-20:00 UTC; 2025-11-28 is an early close, 14:30-18:00 UTC (9:30-13:00 ET);
2025-06-14/15 is a weekend and 2025-07-04 a holiday.
"""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from arena.engine.monitor import MonitorResult, check_invalidations, observations
from arena.engine.portfolio import CLOSE, LONG, OPEN, SHORT, Fill, Portfolio, fee
from tests.conftest import ts

M15 = pd.Timedelta(minutes=15)


def bars(first: str, closes: list[float], first_open: float, *, lows: dict[int, float] | None = None,
         step: pd.Timedelta = M15) -> pd.DataFrame:
    """Consecutive bars from ``first`` (open time, UTC): bar i opens at the previous close."""
    opens = [first_open, *closes[:-1]]
    low = [min(o, c) - 0.01 for o, c in zip(opens, closes, strict=True)]
    for i, v in (lows or {}).items():
        low[i] = v
    return pd.DataFrame({
        "timestamp": pd.date_range(ts(first), periods=len(closes), freq=step).as_unit("us"),
        "open": opens, "high": [max(o, c) + 0.01 for o, c in zip(opens, closes, strict=True)],
        "low": low, "close": closes, "volume": 1.0})


def holding(*positions: tuple[str, str, float, float, float | None],
            at: str = "2025-01-01") -> Portfolio:
    """$10,000 with the given (symbol, side, quantity, entry, level) positions opened at ``at``."""
    state = Portfolio()
    for symbol, side, qty, entry, level in positions:
        state = state.apply(Fill(ts(at), symbol, side, OPEN, qty, entry, fee(qty * entry),
                                 invalidation_price=level))
    return state


def run(state: Portfolio, data: dict[str, pd.DataFrame], universe, start: str, end: str,
        **kw) -> MonitorResult:
    return check_invalidations(state, data, universe, ts(start), ts(end), **kw)


def only_fill(result: MonitorResult) -> Fill:
    assert len(result.fills) == 1, result.fills
    return result.fills[0]


AAPL_LONG = ("AAPL", LONG, 10.0, 200.0, 190.0)  # cash after the open: 10000 - 2000 - 2 = 7998
ETH_LONG = ("ETH", LONG, 1.0, 3000.0, 2900.0)  # cash after the open: 10000 - 3000 - 3 = 6997
ETH_SHORT = ("ETH", SHORT, 1.0, 3000.0, 3100.0)


def test_long_stopped_out_intraday_at_the_observed_close(universe):
    state = holding(AAPL_LONG)
    # the 14:00 bar's low (188) pierces the level but it closes at 191: not an observation
    data = {"AAPL": bars("2025-06-10 13:30", [198, 195, 191, 189.5, 185, 192], 200,
                         lows={2: 188.0})}
    result = run(state, data, universe, "2025-06-10 13:00", "2025-06-10 20:00")
    f = only_fill(result)
    assert f == Fill(at=ts("2025-06-10 14:30"), symbol="AAPL", side=LONG, kind=CLOSE,
                     quantity=10.0, price=189.5, fee=pytest.approx(1.895), realised_pnl=-105.0,
                     automatic=True, invalidation_price=190.0)
    p = result.portfolio
    assert p.positions == {}
    assert p.cash == pytest.approx(7998 + 2000 - 105 - 1.895)  # 9891.105
    assert p.equity({}) == pytest.approx(9891.105)
    assert p.fees_paid == pytest.approx(3.895) and p.realised_pnl == pytest.approx(-105.0)
    assert result.checked == {"AAPL": 5}  # 13:30 opening print, closes 13:45 .. 14:30
    assert result.unobserved == ()


def test_short_stopped_out(universe):
    state = holding(ETH_SHORT)
    data = {"ETH": bars("2025-06-10 10:00", [3050, 3090, 3120, 3080], 3000)}
    result = run(state, data, universe, "2025-06-10 10:00", "2025-06-10 11:00")
    f = only_fill(result)
    assert (f.at, f.side, f.kind, f.quantity, f.price) == (ts("2025-06-10 10:45"), SHORT, CLOSE, 1.0, 3120.0)
    assert f.fee == pytest.approx(3.12) and f.realised_pnl == pytest.approx(-120.0)
    assert f.automatic and f.invalidation_price == 3100.0
    assert result.portfolio.cash == pytest.approx(6997 + 3000 - 120 - 3.12)  # 9873.88
    assert result.portfolio.locked == 0.0
    assert result.checked == {"ETH": 3}


def test_level_never_reached_leaves_the_portfolio_alone(universe):
    state = holding(ETH_LONG)
    data = {"ETH": bars("2025-06-10 10:00", [2950, 2910, 2905, 2990], 3000, lows={1: 2800.0})}
    result = run(state, data, universe, "2025-06-10 09:00", "2025-06-10 12:00")
    assert result.fills == ()
    assert result.portfolio == state
    assert result.checked == {"ETH": 4} and result.unobserved == ()


def test_gap_through_the_level_at_the_open_after_a_weekend(universe):
    state = holding(AAPL_LONG)
    data = {"AAPL": pd.concat([bars("2025-06-13 19:30", [196, 195], 197),       # Friday close
                               bars("2025-06-16 13:30", [188, 191], 185)])}     # Monday gap
    result = run(state, data, universe, "2025-06-13 19:00", "2025-06-16 14:00")
    f = only_fill(result)
    assert f.at == ts("2025-06-16 13:30")  # 9:30 ET, the opening print
    assert f.price == 185.0 < f.invalidation_price  # worse than the level: gap risk
    assert f.fee == pytest.approx(1.85) and f.realised_pnl == pytest.approx(-150.0)
    assert result.portfolio.cash == pytest.approx(7998 + 2000 - 150 - 1.85)  # 9846.15
    assert result.checked == {"AAPL": 3}  # Fri 19:45, Fri 20:00, Mon 13:30 open


def _early_close_day(last_in_session: float) -> pd.DataFrame:
    # 2025-11-28: 14 bars 14:30..17:45 UTC, then two bars after the 13:00 ET close
    return bars("2025-11-28 14:30", [195.0] * 13 + [last_in_session, 180.0, 170.0], 196)


def test_early_close_day_stops_observing_at_1300_et(universe):
    state = holding(AAPL_LONG)
    result = run(state, {"AAPL": _early_close_day(195.0)}, universe,
                 "2025-11-28 14:00", "2025-11-29 00:00")
    assert result.fills == ()  # 180 at 13:15 ET and 170 at 13:30 ET are outside the session
    assert result.checked == {"AAPL": 15}  # the opening print + 14 closes up to 18:00 UTC
    # a window that only covers the afternoon sees nothing at all
    late = run(state, {"AAPL": _early_close_day(195.0)}, universe,
               "2025-11-28 18:00", "2025-11-28 19:00")
    assert late.fills == () and late.unobserved == ("AAPL",)


def test_early_close_day_bar_closing_at_the_session_close_counts(universe):
    state = holding(AAPL_LONG)
    result = run(state, {"AAPL": _early_close_day(189.0)}, universe,
                 "2025-11-28 14:00", "2025-11-29 00:00")
    f = only_fill(result)
    assert f.at == ts("2025-11-28 18:00") and f.price == 189.0  # 13:00 ET
    assert result.portfolio.cash == pytest.approx(7998 + 2000 - 110 - 1.89)


@pytest.mark.parametrize("day", ["2025-06-14 13:30", "2025-06-15 15:00", "2025-07-04 13:30"])
def test_stock_never_observed_on_weekend_or_holiday(universe, day):
    state = holding(AAPL_LONG)
    data = {"AAPL": bars(day, [150.0] * 8, 150.0)}
    start = ts(day).normalize()
    result = check_invalidations(state, data, universe, start, start + pd.Timedelta(days=1))
    assert result.fills == () and result.portfolio == state
    assert result.checked == {"AAPL": 0} and result.unobserved == ("AAPL",)


def test_crypto_observed_at_0300_on_a_sunday(universe):
    state = holding(ETH_LONG)
    data = {"ETH": bars("2025-06-15 02:00", [2950, 2920, 2910, 2890, 2950], 2960)}
    result = run(state, data, universe, "2025-06-15 00:00", "2025-06-16 00:00")
    f = only_fill(result)
    assert f.at == ts("2025-06-15 03:00") and f.at.day_name() == "Sunday"
    assert f.price == 2890.0 and f.fee == pytest.approx(2.89)
    assert f.realised_pnl == pytest.approx(-110.0)
    assert result.portfolio.cash == pytest.approx(6997 + 3000 - 110 - 2.89)  # 9884.11


@pytest.mark.parametrize(("start", "end", "at", "price"), [
    ("2025-06-15 02:45", "2025-06-15 03:00", "2025-06-15 03:00", 2890.0),  # end is included
    ("2025-06-15 03:00", "2025-06-15 03:15", "2025-06-15 03:15", 2895.0),  # start is excluded
    ("2025-06-15 02:00", "2025-06-15 02:59:59", None, None),               # 03:00 not yet
])
def test_window_bounds_crypto(universe, start, end, at, price):
    state = holding(ETH_LONG)
    data = {"ETH": bars("2025-06-15 02:00", [2950, 2920, 2910, 2890, 2895], 2960)}
    result = run(state, data, universe, start, end)
    if at is None:
        assert result.fills == ()
    else:
        f = only_fill(result)
        assert (f.at, f.price) == (ts(at), price)


@pytest.mark.parametrize(("start", "end", "at", "price"), [
    ("2025-06-13 19:00", "2025-06-16 13:30", "2025-06-16 13:30", 185.0),  # opening print at end
    ("2025-06-16 13:30", "2025-06-16 14:00", "2025-06-16 13:45", 188.0),  # ... at start: not used
])
def test_window_bounds_opening_print(universe, start, end, at, price):
    state = holding(AAPL_LONG)
    data = {"AAPL": pd.concat([bars("2025-06-13 19:30", [196, 195], 197),
                               bars("2025-06-16 13:30", [188, 191], 185)])}
    f = only_fill(run(state, data, universe, start, end))
    assert (f.at, f.price) == (ts(at), price)


@pytest.mark.parametrize("position", [ETH_LONG, ETH_SHORT])
def test_price_equal_to_the_level_triggers(universe, position):
    level = position[4]
    state = holding(position)
    data = {"ETH": bars("2025-06-10 10:00", [3000.0, level, 3000.0], 3000.0)}
    f = only_fill(run(state, data, universe, "2025-06-10 10:00", "2025-06-10 11:00"))
    assert (f.at, f.price) == (ts("2025-06-10 10:30"), level)


def test_position_without_a_level_is_untouched(universe):
    state = holding(("AAPL", LONG, 10.0, 200.0, None), ETH_LONG)
    data = {"AAPL": bars("2025-06-10 13:30", [100.0] * 4, 100.0),
            "ETH": bars("2025-06-10 13:30", [2800.0] * 4, 2800.0)}
    result = run(state, data, universe, "2025-06-10 13:00", "2025-06-10 15:00")
    assert [f.symbol for f in result.fills] == ["ETH"]
    assert result.portfolio.positions["AAPL"] == state.positions["AAPL"]
    assert "AAPL" not in result.checked and "AAPL" not in result.unobserved


def test_missing_bars_are_reported_not_guessed(universe):
    state = holding(("SOL", LONG, 10.0, 150.0, 140.0), ("BNB", LONG, 1.0, 600.0, 550.0), ETH_LONG)
    empty = bars("2025-06-10 10:00", [1.0], 1.0).iloc[:0]
    data = {"BNB": empty, "ETH": bars("2025-06-10 10:00", [2990.0], 3000.0)}
    result = run(state, data, universe, "2025-06-10 10:00", "2025-06-10 10:15")
    assert result.fills == () and result.portfolio == state
    assert result.unobserved == ("BNB", "SOL")
    assert result.checked == {"BNB": 0, "ETH": 1, "SOL": 0}


def test_positions_are_independent_and_closed_once(universe):
    state = holding(ETH_LONG, ("SOL", SHORT, 10.0, 150.0, 160.0))
    data = {"ETH": bars("2025-06-10 10:00", [2950, 2890, 2800, 2700], 2990),
            "SOL": bars("2025-06-10 10:00", [155, 158, 159, 161], 150)}
    result = run(state, data, universe, "2025-06-10 10:00", "2025-06-10 11:00")
    assert [(f.symbol, f.at, f.price) for f in result.fills] == [
        ("ETH", ts("2025-06-10 10:30"), 2890.0), ("SOL", ts("2025-06-10 11:00"), 161.0)]
    assert result.checked == {"ETH": 2, "SOL": 4}  # ETH not examined after its close
    assert result.portfolio.positions == {}
    assert result.portfolio.cash == pytest.approx(
        10_000 - 3 - 1.5 - 110 - 2.89 - 110 - 1.61)


def test_prices_from_before_the_position_was_opened_do_not_count(universe):
    state = holding(ETH_LONG, at="2025-06-10 10:30")
    data = {"ETH": bars("2025-06-10 10:00", [2850, 2880, 2950, 2899], 2990)}
    f = only_fill(run(state, data, universe, "2025-06-10 10:00", "2025-06-10 11:00"))
    assert (f.at, f.price) == (ts("2025-06-10 11:00"), 2899.0)


def test_hourly_stock_bars_last_bar_cut_at_the_session_close(universe):
    state = holding(AAPL_LONG)
    data = {"AAPL": bars("2025-06-10 13:30", [199, 198, 197, 196, 195, 194, 189], 200,
                         step=pd.Timedelta(hours=1))}  # the 19:30 bar closes at 20:00
    f = only_fill(run(state, data, universe, "2025-06-10 00:00", "2025-06-11 00:00",
                      interval="1h"))
    assert (f.at, f.price) == (ts("2025-06-10 20:00"), 189.0)


# ---------------------------------------------------------------- one tick vs a whole day
DAY = ts("2025-06-10")


def _mid_day_level(frame: pd.DataFrame, calendar: str) -> tuple[str, float, float]:
    """(side, entry, level): no trigger before 16:00 UTC (noon ET), a trigger after it."""
    obs = observations(frame, calendar, DAY, DAY + pd.Timedelta(days=1))
    morning = [p for t, p in obs if t <= DAY + pd.Timedelta(hours=16)]
    afternoon = [p for t, p in obs if t > DAY + pd.Timedelta(hours=16)]
    if min(afternoon) < min(morning):
        return LONG, morning[0], (min(morning) + min(afternoon)) / 2
    assert max(afternoon) > max(morning), "pick another day: the afternoon stays in range"
    return SHORT, morning[0], (max(morning) + max(afternoon)) / 2


@pytest.mark.parametrize("step_minutes", [15, 37])
def test_one_tick_at_a_time_equals_the_whole_day(universe, synthetic, step_minutes):
    data = {s: synthetic.fetch_bars(universe[s], "15m", DAY - pd.Timedelta(days=1),
                                    DAY + pd.Timedelta(days=2)) for s in ("ETH", "AAPL")}
    state = Portfolio()
    for s in data:
        side, entry, level = _mid_day_level(data[s], universe[s].calendar)
        qty = 4000.0 / entry
        state = state.apply(Fill(DAY, s, side, OPEN, qty, entry, fee(qty * entry),
                                 invalidation_price=level))
    whole = check_invalidations(state, data, universe, DAY, DAY + pd.Timedelta(days=1))
    assert sorted(f.symbol for f in whole.fills) == ["AAPL", "ETH"]
    assert all(DAY + pd.Timedelta(hours=16) < f.at < DAY + pd.Timedelta(days=1)
               for f in whole.fills)

    step = pd.Timedelta(minutes=step_minutes)
    fills: list[Fill] = []
    checked: dict[str, int] = {}
    ticks = pd.date_range(DAY, DAY + pd.Timedelta(days=1), freq=step).append(
        pd.DatetimeIndex([DAY + pd.Timedelta(days=1)])).unique()
    if step_minutes == 15:
        assert len(ticks) == 97  # 96 windows
    tick_state = state
    for a, b in itertools.pairwise(ticks):
        r = check_invalidations(tick_state, data, universe, a, b)
        fills.extend(r.fills)
        tick_state = r.portfolio
        for s, n in r.checked.items():
            checked[s] = checked.get(s, 0) + n
    assert tuple(fills) == whole.fills
    assert tick_state == whole.portfolio
    assert checked == whole.checked
    assert whole.portfolio.positions == {}
    assert whole.portfolio.cash == pytest.approx(
        state.cash + sum(f.quantity * state.positions[f.symbol].entry_price + f.realised_pnl - f.fee
                         for f in whole.fills))
