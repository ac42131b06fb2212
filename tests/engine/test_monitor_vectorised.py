"""The vectorised monitor against the per-bar loop it replaced (``tests.engine.reference_monitor``):
the same observations (times, prices, their order and units), fills, books, counts and
unobserved symbols - on the synthetic market's bars over weekends, an early close and a
holiday, on random frames (unsorted, repeated, non-finite and non-positive prices, bars outside
sessions), for crypto, NYSE and FX calendars, 15-minute and hourly bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.core.sessions import CRYPTO, FX, NYSE
from arena.core.universe import load_universe
from arena.engine.monitor import check_invalidations, observations
from arena.engine.portfolio import LONG, OPEN, SHORT, Fill, Portfolio, fee
from tests.conftest import ts
from tests.engine.reference_monitor import check_invalidations_per_bar, observations_per_bar

UNIVERSE = load_universe()
# 2025-11-26 Wed .. 2025-12-02 Tue: Thanksgiving (closed), its early close (Fri 28th), a weekend
FIRST, LAST = ts("2025-11-24"), ts("2025-12-03")


def _same_observations(got, want) -> None:
    assert got == want
    assert [t.unit for t, _ in got] == [t.unit for t, _ in want]
    assert [type(p) for _, p in got] == [type(p) for _, p in want]


def _same_result(got, want) -> None:
    assert got == want
    assert [f.at.unit for f in got.fills] == [f.at.unit for f in want.fills]


@pytest.fixture(scope="module")
def week(synthetic) -> dict[str, pd.DataFrame]:
    return {s: synthetic.fetch_bars(UNIVERSE[s], "15m", FIRST, LAST)
            for s in ("ETH", "SOL", "AAPL", "KO", "SPY")}


WINDOWS = [("2025-11-25 16:00", "2025-11-26 16:00"), ("2025-11-26 16:00", "2025-11-27 16:00"),
           ("2025-11-27 16:00", "2025-11-28 16:00"), ("2025-11-28 16:00", "2025-12-01 16:00"),
           ("2025-11-28 14:30", "2025-11-28 18:00"), ("2025-11-24 00:00", "2025-12-02 23:45"),
           ("2025-12-01 14:29:59.999999", "2025-12-01 14:30:00.000001")]


@pytest.mark.parametrize(("start", "end"), WINDOWS)
def test_observations_equal_the_per_bar_loop(week, start, end):
    for symbol, frame in week.items():
        for calendar in {UNIVERSE[symbol].calendar, CRYPTO, FX}:
            _same_observations(observations(frame, calendar, ts(start), ts(end)),
                               observations_per_bar(frame, calendar, ts(start), ts(end)))


@pytest.mark.parametrize(("start", "end"), WINDOWS)
@pytest.mark.parametrize("seed", range(4))
def test_fills_equal_the_per_bar_loop(week, start, end, seed):
    rng = np.random.default_rng(seed)
    begin, stop = ts(start), ts(end)
    state = Portfolio()
    for symbol, frame in week.items():
        if symbol == "SPY":  # a benchmark: never held
            continue
        inside = frame[(frame["timestamp"] >= begin) & (frame["timestamp"] < stop)]
        mid = float(frame["close"].median()) if inside.empty else float(inside["close"].iloc[0])
        side = LONG if rng.random() < 0.5 else SHORT
        level = mid * (1 + (rng.uniform(-0.02, 0.005) if side == LONG else rng.uniform(-0.005, 0.02)))
        opened = begin + (stop - begin) * float(rng.uniform(-0.2, 0.5))
        qty = 1000.0 / mid
        state = state.apply(Fill(opened, symbol, side, OPEN, qty, mid, fee(qty * mid),
                                 invalidation_price=level))
    got = check_invalidations(state, week, UNIVERSE, begin, stop)
    _same_result(got, check_invalidations_per_bar(state, week, UNIVERSE, begin, stop))


def test_hourly_bars_equal_the_per_bar_loop(synthetic):
    data = {s: synthetic.fetch_bars(UNIVERSE[s], "1h", FIRST, LAST) for s in ("ETH", "AAPL")}
    state = Portfolio()
    for symbol, side, level in (("ETH", LONG, 0.97), ("AAPL", SHORT, 1.02)):
        price = float(data[symbol]["close"].iloc[0])
        state = state.apply(Fill(FIRST, symbol, side, OPEN, 1.0, price, fee(price),
                                 invalidation_price=price * level))
    for start, end in WINDOWS:
        args = (state, data, UNIVERSE, ts(start), ts(end))
        _same_result(check_invalidations(*args, interval="1h"),
                     check_invalidations_per_bar(*args, interval="1h"))


# ------------------------------------------------------------------------------ random frames
PRICE = st.one_of(st.floats(90, 110), st.sampled_from([0.0, -1.0, float("nan"), float("inf")]))
SLOTS = 4 * 24 * 6  # 15-minute slots over six days from Wednesday 2025-11-26


@st.composite
def frames(draw):
    slots = draw(st.lists(st.integers(0, SLOTS), min_size=0, max_size=40))
    if draw(st.booleans()):
        slots = sorted(set(slots))  # a lake's frame; else unsorted, maybe repeated
    n = len(slots)
    opens = draw(st.lists(PRICE, min_size=n, max_size=n))
    closes = draw(st.lists(PRICE, min_size=n, max_size=n))
    stamps = ts("2025-11-26") + pd.to_timedelta(np.asarray(slots, dtype=np.int64) * 15, unit="min")
    # the lake's own type, or another unit and zone (converted to UTC as pandas reads it)
    stamps = pd.DatetimeIndex(stamps).as_unit(draw(st.sampled_from(["us", "ns"]))).tz_convert(
        draw(st.sampled_from(["UTC", "America/New_York"])))
    return pd.DataFrame({"timestamp": stamps, "open": opens,
                         "high": 120.0, "low": 80.0, "close": closes, "volume": 1.0})


MINUTES = st.integers(-60, SLOTS * 15 + 60)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=frames(), a=MINUTES, b=MINUTES, calendar=st.sampled_from([NYSE, CRYPTO, FX]))
def test_random_frames_observed_as_the_per_bar_loop(frame, a, b, calendar):
    start = ts("2025-11-26") + pd.Timedelta(minutes=min(a, b))
    end = ts("2025-11-26") + pd.Timedelta(minutes=max(a, b))
    _same_observations(observations(frame, calendar, start, end),
                       observations_per_bar(frame, calendar, start, end))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stock=frames(), coin=frames(), a=MINUTES, b=MINUTES, opened=MINUTES,
       levels=st.tuples(st.floats(85, 115), st.floats(85, 115)),
       sides=st.tuples(st.sampled_from([LONG, SHORT]), st.sampled_from([LONG, SHORT])))
def test_random_frames_filled_as_the_per_bar_loop(stock, coin, a, b, opened, levels, sides):
    start = ts("2025-11-26") + pd.Timedelta(minutes=min(a, b))
    end = ts("2025-11-26") + pd.Timedelta(minutes=max(a, b))
    state = Portfolio()
    for symbol, side, level in (("AAPL", sides[0], levels[0]), ("ETH", sides[1], levels[1])):
        state = state.apply(Fill(ts("2025-11-26") + pd.Timedelta(minutes=opened), symbol, side,
                                 OPEN, 2.0, 100.0, fee(200.0), invalidation_price=level))
    data = {"AAPL": stock, "ETH": coin}
    _same_result(check_invalidations(state, data, UNIVERSE, start, end),
                 check_invalidations_per_bar(state, data, UNIVERSE, start, end))


def test_a_window_of_naive_times_is_refused(week):
    with pytest.raises(TypeError, match="timezone-aware"):
        observations(week["ETH"], CRYPTO, pd.Timestamp("2025-11-26"), pd.Timestamp("2025-11-27"))
