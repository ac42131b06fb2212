"""Candle validation: every check on a passing and a failing case, real GOOG data, price files."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from arena.core.sessions import CRYPTO, FX, NYSE, bar_close_times, expected_bars
from arena.data.validation import stats as cs
from arena.data.validation.checks import (
    UnusableInputError,
    ValidationConfig,
    ValidationReport,
    Window,
    build_data_docs,
    load_price_file,
    validate_bars,
    validate_file,
)
from arena.data.validation.jumps import robust_sigma

PRICES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
GOOG = PRICES / "GOOG.csv"
UTC = "UTC"


def ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz=UTC)


def make_bars(times: pd.DatetimeIndex, *, symbol: str, interval: str, seed: int = 0,
              sigma: float = 0.004, start: float = 100.0) -> pd.DataFrame:
    """A tidy random-walk series: low/high envelope open and close, volume 80-120."""
    rng = np.random.default_rng(seed)
    n = len(times)
    close = start * np.exp(np.cumsum(rng.normal(0, sigma, n)))
    open_ = np.r_[start, close[:-1]]
    wick = np.abs(rng.normal(0, sigma / 2, (2, n)))
    return pd.DataFrame({
        "symbol": symbol, "interval": interval, "timestamp": times,
        "open": open_, "high": np.maximum(open_, close) * (1 + wick[0]),
        "low": np.minimum(open_, close) * (1 - wick[1]), "close": close,
        "volume": rng.uniform(80, 120, n)})


def scale_prices(bars: pd.DataFrame, rows: slice | pd.Series, factor: float) -> pd.DataFrame:
    out = bars.copy()
    cols = ["open", "high", "low", "close"]
    out.loc[rows, cols] = out.loc[rows, cols] * factor
    return out


def check(report: ValidationReport, name: str, symbol: str | None = None):
    hits = [r for r in report.results if r.check == name and (symbol is None or r.symbol == symbol)]
    assert len(hits) == 1, hits
    return hits[0]


# --- small synthetic series -----------------------------------------------------------------

ETH_TIMES = pd.date_range("2025-03-01", periods=72, freq="h", tz=UTC)  # 3 days of crypto 1h
ETH_AS_OF = ts("2025-03-04 00:00")
# Thanksgiving week 2025: Thursday closed, Friday closes 13:00 ET (4 hourly bars)
THANKSGIVING = expected_bars(NYSE, "1h", "2025-11-24", "2025-11-29")
WEEK_AS_OF = ts("2025-12-01 14:00")  # Monday 9:00 ET, before the open


@pytest.fixture
def eth() -> pd.DataFrame:
    return make_bars(ETH_TIMES, symbol="ETH", interval="1h")


@pytest.fixture
def aapl() -> pd.DataFrame:
    return make_bars(THANKSGIVING, symbol="AAPL", interval="1h", seed=1)


def run(bars: pd.DataFrame, calendar: str = CRYPTO, *, as_of: pd.Timestamp | None = ETH_AS_OF,
        config: ValidationConfig = ValidationConfig(), **window) -> ValidationReport:  # noqa: B008
    sym, iv = bars["symbol"].iloc[0], bars["interval"].iloc[0]
    return validate_bars(bars, [Window(sym, iv, calendar, **window)], as_of=as_of, config=config)


def test_clean_crypto_and_thanksgiving_week_pass_in_one_batch(aapl):
    assert len(THANKSGIVING) == 7 * 3 + 4  # Mon-Wed full, Thu holiday, Fri early close
    crypto = pd.date_range(WEEK_AS_OF - pd.Timedelta(hours=72), WEEK_AS_OF, freq="h",
                           inclusive="left")
    eth = make_bars(crypto, symbol="ETH", interval="1h")
    report = validate_bars(pd.concat([eth, aapl]), [Window("ETH", "1h", CRYPTO),
                                                    Window("AAPL", "1h", NYSE)], as_of=WEEK_AS_OF)
    assert report.success, report.summary()
    assert len(report.results) == 2 * 9
    assert report.failed() == [] and report.failed_keys() == set()
    assert report.summary() == "candle validation passed: 97 bars, 2 series, 18 checks"


# --- bar count and calendar ------------------------------------------------------------------

def test_bar_count_tolerates_one_missing_hour_but_not_three(eth):
    window = {"start": ETH_TIMES[0], "end": ETH_TIMES[-1] + pd.Timedelta(hours=1)}
    one = run(eth.drop(index=[10]), **window)
    assert check(one, "bar_count").success
    three = run(eth.drop(index=[10, 11, 30]), **window)
    result = check(three, "bar_count")
    assert not result.success
    assert result.observed["missing"] == 3 and result.observed["expected"] == 72
    assert "3 of 72 expected bars missing" in result.message
    assert "first missing 2025-03-01 10:00 UTC" in result.message
    looser = run(eth.drop(index=[10, 11, 30]), config=ValidationConfig(max_missing_share=0.05),
                 **window)
    assert check(looser, "bar_count").success


def test_zero_bars_fail_bar_count(eth):
    report = validate_bars(eth, [Window("ETH", "1h", CRYPTO),
                                 Window("BTC", "1h", CRYPTO, ETH_TIMES[0], ETH_AS_OF)],
                           as_of=ETH_AS_OF)
    assert not report.success
    assert report.failed_keys() == {("BTC", "1h")}
    result = check(report, "bar_count", "BTC")
    assert "BTC 1h: zero bars (72 expected" in result.message


def test_nothing_at_all_fails_every_window():
    report = validate_bars(pd.DataFrame(), [Window("ETH", "1h", CRYPTO, ETH_TIMES[0], ETH_AS_OF)],
                           as_of=ETH_AS_OF)
    assert [(r.symbol, r.check) for r in report.failed()] == [("ETH", "bar_count")]


def test_early_close_day_expects_four_bars(aapl):
    report = run(aapl, NYSE, as_of=WEEK_AS_OF)
    assert report.success, report.summary()
    late = aapl.iloc[[-1]].assign(timestamp=ts("2025-11-28 18:30"))  # 13:30 ET, after the close
    report = run(pd.concat([aapl, late], ignore_index=True), NYSE, as_of=WEEK_AS_OF)
    assert not check(report, "off_calendar").success
    assert check(report, "aligned_timestamps").success  # on the hourly grid, outside the session


@pytest.mark.parametrize(("label", "when"), [
    ("Saturday 10:30 ET", "2025-11-29 15:30"),
    ("03:00 UTC", "2025-11-25 03:00"),
])
def test_stock_bar_outside_the_calendar_fails(aapl, label, when):
    extra = aapl.iloc[[0]].assign(timestamp=ts(when))
    bars = pd.concat([aapl, extra], ignore_index=True).sort_values("timestamp")
    report = run(bars, NYSE, as_of=None)
    result = check(report, "off_calendar")
    assert not result.success, label
    assert "where the XNYS calendar (or the requested window) expects none" in result.message
    assert result.observed["off_calendar_bars"] == 1


def test_bars_outside_the_requested_window_fail(eth):
    report = run(eth, start=ETH_TIMES[0], end=ETH_TIMES[48])
    assert not check(report, "off_calendar").success
    assert check(report, "off_calendar").observed["off_calendar_bars"] == 24


# --- OHLC sanity -----------------------------------------------------------------------------

@pytest.mark.parametrize(("column", "value", "problem"), [
    ("low", 1e9, "low above open/close"),
    ("high", 1.0, "high below open/close"),
    ("close", np.nan, "missing or non-numeric values"),
    ("open", -5.0, "price not a positive finite number"),
    ("high", np.inf, "price not a positive finite number"),
    ("volume", -1.0, "negative or infinite volume"),
])
def test_ohlc_sanity_fails_and_names_the_problem(eth, column, value, problem):
    assert check(run(eth), "ohlc").success
    bad = eth.copy()
    bad.loc[5, column] = value
    result = check(run(bad), "ohlc")
    assert not result.success
    assert problem in result.message
    assert "first at 2025-03-01 05:00 UTC" in result.message


def test_zero_volume_is_sane(eth):
    assert check(run(eth.assign(volume=0.0)), "ohlc").success


# --- timestamps ------------------------------------------------------------------------------

def test_duplicate_timestamp_fails_uniqueness(eth):
    assert check(run(eth), "unique_timestamps").success
    report = run(pd.concat([eth.iloc[:20], eth.iloc[[19]], eth.iloc[20:]], ignore_index=True))
    result = check(report, "unique_timestamps")
    assert not result.success and "2025-03-01 19:00 UTC" in result.message


def test_out_of_order_rows_fail_increasing(eth):
    assert check(run(eth), "increasing_timestamps").success
    swapped = eth.iloc[[*range(30), 31, 30, *range(32, 72)]].reset_index(drop=True)
    report = run(swapped)
    result = check(report, "increasing_timestamps")
    assert not result.success
    assert "first 2025-03-02 06:00 UTC after 2025-03-02 07:00 UTC" in result.message
    assert check(report, "unique_timestamps").success


def test_misaligned_timestamps_fail(eth, aapl):
    assert check(run(eth), "aligned_timestamps").success
    shifted = eth.copy()
    shifted.loc[4, "timestamp"] = ts("2025-03-01 04:30")
    result = check(run(shifted), "aligned_timestamps")
    assert not result.success and "(30 min off the grid)" in result.message
    stock = aapl.copy()
    stock.loc[1, "timestamp"] = ts("2025-11-24 15:00")  # 10:00 ET: stock hours step from 9:30
    assert not check(run(stock, NYSE, as_of=None), "aligned_timestamps").success


# --- roll gaps / splices ---------------------------------------------------------------------

def test_splice_without_volume_fails(eth):
    assert check(run(eth), "splice").success
    result = check(run(scale_prices(eth.assign(volume=100.0), slice(40, None), 1.35)), "splice")
    assert not result.success
    assert result.message.startswith(
        "ETH 1h: 1 bar jumps more than 6 local sigmas without market, volume, trading within "
        "the bar, reversion or volatility after it, first at 2025-03-02 16:00 UTC (+3")
    assert "sigmas, no market, volume 1.0x median, 0% within the bar, " in result.message
    assert result.message.endswith(" sigmas after it)")
    assert not result.suspect


def test_jump_on_heavy_volume_is_a_genuine_move(eth):
    moved = scale_prices(eth, slice(40, None), 1.35)
    moved.loc[40, "volume"] = 3 * moved["volume"].median()
    assert check(run(moved), "splice").success


def test_splice_in_a_high_volume_regime_is_still_flagged():
    # GOOG traded 2.5x its 2004-2013 median volume all through November 2008: against the
    # series median alone a splice on 2008-11-21 would pass as "matching volume"
    goog = load_price_file(GOOG).assign(symbol="GOOG", interval="1d")
    spliced = scale_prices(goog, goog["timestamp"] >= ts("2008-11-21"), 1.35)
    result = check(run(spliced, NYSE, as_of=None), "splice")
    assert not result.success and "first at 2008-11-21 00:00 UTC" in result.message
    assert "volume 1.3x median" in result.message  # 10.2M vs 8.0M over the 20 bars before


def test_series_without_volume_has_no_volume_escape(eth):
    fx = eth.assign(volume=0.0)
    assert check(run(fx), "splice").success
    result = check(run(scale_prices(fx, slice(40, None), 1.35)), "splice")
    assert not result.success and "no volume data" in result.message


def test_overnight_gaps_are_judged_against_their_own_distribution():
    times = expected_bars(NYSE, "1h", "2025-09-02", "2025-10-15")
    bars = make_bars(times, symbol="MSFT", interval="1h", sigma=0.002)
    first = pd.Series(times.tz_convert("America/New_York").date).diff().ne(pd.Timedelta(0))
    first.iloc[0] = False  # first bar of each later session: give it a 1.5% overnight sigma
    rng = np.random.default_rng(7)
    factor = np.exp(np.cumsum(np.where(first, rng.normal(0, 0.015, len(times)), 0.0)))
    bars[["open", "high", "low", "close"]] = bars[["open", "high", "low", "close"]].mul(factor, axis=0)
    gap_day = int(np.flatnonzero(first)[15])
    ordinary_gap = scale_prices(bars, slice(gap_day, None), 1.06)  # ~4 overnight sigmas
    report = run(ordinary_gap, NYSE, as_of=None)
    result = check(report, "splice")
    assert result.success, result.message
    assert result.observed["overnight_sigma"] > 3 * result.observed["robust_sigma"]
    spliced = scale_prices(bars, slice(gap_day, None), 1.35)
    result = check(run(spliced, NYSE, as_of=None), "splice")
    assert not result.success and "overnight gap +" in result.message


def test_robust_sigma_is_1_4826_mad_with_a_fallback_for_flat_series():
    assert robust_sigma(np.array([-2.0, -1.0, 0.0, 1.0, 2.0])) == (0.0, 1.4826)
    med, sigma = robust_sigma(np.array([0.0, 0.0, 0.0, 0.0, 0.01]))  # MAD 0: mean abs. deviation
    assert med == 0.0 and np.isclose(sigma, 1.2533 * 0.002)


def test_too_few_returns_are_not_judged(eth):
    result = check(run(scale_prices(eth.iloc[:10], slice(5, None), 1.35)), "splice")
    assert result.success and "not judged" in result.message


# --- the splice check knows the market: local volatility, the batch's market, reversion --------

EURUSD = PRICES / "EURUSD_1h.csv"
SPLICE_CONFIG = ValidationConfig()


def splice_frame(bars: pd.DataFrame, windows: list[Window], market=None) -> pd.DataFrame:
    return cs.prepare(bars, windows, as_of=None, config=SPLICE_CONFIG, market=market)[0]


def flagged(frame: pd.DataFrame, config: ValidationConfig = SPLICE_CONFIG) -> pd.Series:
    """The rows the splice expectation rejects (same rule as expectations/custom.py)."""
    followed = frame[cs.JUMP_FOLLOWED]
    explained = (frame[cs.ABS_LOG_RETURN] < np.log(config.max_explained_factor)) & (
        (frame[cs.VOLUME_RATIO] >= config.splice_volume_multiple) | (frame[cs.JUMP_REVERTED] == 1)
        | (frame[cs.JUMP_TRADED] >= config.traded_share)
        | ((followed >= config.follow_sigmas)
           & (followed >= config.follow_share * frame[cs.JUMP_SIGMAS])))
    return (frame[cs.JUMP_SIGMAS] > config.splice_sigmas) & ~explained


def false_positive_rate(frame: pd.DataFrame) -> float:
    return float(flagged(frame).sum() / frame[cs.JUMP_SIGMAS].notna().sum())


def goog_bars() -> pd.DataFrame:
    return load_price_file(GOOG).assign(symbol="GOOG", interval="1d")


def eurusd_bars() -> pd.DataFrame:
    return load_price_file(EURUSD).assign(symbol="EURUSD", interval="1h")


def shift_from(bars: pd.DataFrame, when: pd.Timestamp, factor: float) -> pd.DataFrame:
    """Prices from ``when`` on times ``factor``; the first shifted bar trades its trailing median
    volume (an ordinary day: no news, no volume escape)."""
    out = scale_prices(bars, bars["timestamp"] >= when, factor)
    i = int(np.flatnonzero(out["timestamp"] >= when)[0])
    out.loc[i, "volume"] = out["volume"].iloc[i - 20:i].median()
    return out


def no_false_positive(capsys, bars: pd.DataFrame, window: Window) -> pd.DataFrame:
    """The judged frame of a real series (by bar time), after printing and pinning its
    false-positive rate at zero."""
    frame = splice_frame(bars, [window])
    rate = false_positive_rate(frame)
    with capsys.disabled():
        print(f"\n[splice] {window.symbol} {window.interval}: "
              f"{int(frame[cs.JUMP_SIGMAS].notna().sum())} bars judged, "
              f"false-positive rate {rate:.4%}")
    assert rate == 0.0
    return frame.set_index("timestamp")


def test_goog_daily_crisis_days_pass_and_no_bar_is_flagged(capsys):
    day = no_false_positive(capsys, goog_bars(), Window("GOOG", "1d", NYSE))
    # 2008: judged against the crisis' own volatility, the crash days are ordinary
    for date in ("2008-09-29", "2008-10-06", "2008-10-13", "2008-10-22", "2008-11-13"):
        assert not flagged(day.loc[[ts(date)]]).any(), date
    assert day.loc[ts("2008-09-29"), cs.JUMP_SIGMAS] < 6  # -11.6%: 5.4 local sigmas
    assert day.loc[ts("2008-10-13"), cs.JUMP_SIGMAS] < 6  # +14.8% in a month of 5% days
    assert day.loc[ts("2008-04-18"), cs.JUMP_SIGMAS] > 6  # +20% on earnings: escapes by volume
    assert day.loc[ts("2008-04-18"), cs.VOLUME_RATIO] > 3


def test_eurusd_hourly_passes_including_the_french_election_weekend(capsys):
    # on the FX calendar the weekend closure is expected; the one bar it rejects is real: a
    # single tick (volume 1, open = high = low = close) printed after Friday's 17:00 close
    report = validate_file(EURUSD, interval="1h", calendar=FX, symbol="EURUSD")
    assert [r.check for r in report.failed()] == ["off_calendar"], report.summary()
    assert "1 bar where the FX calendar" in report.failed()[0].message
    assert "first at Fri 2017-10-06 21:00 UTC" in report.failed()[0].message
    # under 24/7 the same weekends are missing bars (28.6%), and the splice check still passes
    report = validate_file(EURUSD, interval="1h", calendar=CRYPTO, symbol="EURUSD")
    assert [r.check for r in report.failed()] == ["bar_count"]
    bar = no_false_positive(capsys, eurusd_bars(), Window("EURUSD", "1h", FX))
    # first round of the French election: +1.6% over the 49-hour weekend gap, 1.2x volume;
    # 23 hourly sigmas, 3.3 once widened by sqrt(49)
    assert bar.loc[ts("2017-04-23 21:00"), cs.JUMP_SIGMAS] < 4
    fomc = bar.loc[ts("2017-09-20 18:00")]  # -1.0% in an hour: 22 sigmas on 17x volume
    assert fomc[cs.JUMP_SIGMAS] > 20 and fomc[cs.VOLUME_RATIO] > 10


CALM_GOOG = ts("2007-05-29")  # GOOG's calmest stretch (local sigma 0.64%), a 0.4% day
CALM_EURUSD = ts("2017-08-16 10:00")


@pytest.mark.parametrize("factor", [1.05, 0.5, 10.0], ids=["5% shift", "2:1 split", "10x unit"])
@pytest.mark.parametrize(("name", "calendar", "when"), [
    ("GOOG", NYSE, CALM_GOOG), ("EURUSD", FX, CALM_EURUSD)])
def test_a_level_shift_without_volume_in_a_calm_month_fails(name, calendar, when, factor):
    bars = goog_bars() if name == "GOOG" else eurusd_bars()
    result = check(run(shift_from(bars, when, factor), calendar, as_of=None), "splice")
    assert not result.success
    assert f"first at {when:%Y-%m-%d %H:%M} UTC" in result.message
    assert result.observed["jumps"] == 1 and not result.suspect


@pytest.mark.parametrize("factor", [0.5, 10.0])
def test_a_split_or_unit_error_fails_even_on_heavy_volume_or_undone(eth, factor):
    heavy = scale_prices(eth, slice(40, None), factor)
    heavy.loc[40, "volume"] = 10 * heavy["volume"].median()  # a split day trades heavily
    assert not check(run(heavy), "splice").success
    blip = scale_prices(eth, slice(40, 40), factor)  # one bar off by the factor, then back
    result = check(run(blip), "splice")
    assert not result.success and "first at 2025-03-02 16:00 UTC" in result.message


def test_a_spike_that_reverts_is_no_level_shift(eth):
    spike = scale_prices(eth.assign(volume=100.0), slice(40, 41), 1.05)  # two bars up 5%, back
    frame = splice_frame(spike, [Window("ETH", "1h", CRYPTO)])
    assert frame.loc[40, cs.JUMP_SIGMAS] > 6 and frame.loc[40, cs.JUMP_REVERTED] == 1
    assert check(run(spike), "splice").success
    kept = scale_prices(eth.assign(volume=100.0), slice(40, None), 1.05)
    assert not check(run(kept), "splice").success


def basket(n: int, shock_at: int, shock: float, *, shocked: int | None = None,
           symbols: list[str] | None = None) -> tuple[pd.DataFrame, list[Window]]:
    """``n`` daily crypto series with a common factor; at ``shock_at`` all (or ``shocked`` of
    them) drop by ``shock`` on ordinary volume."""
    symbols = symbols or [f"C{i}" for i in range(n)]
    times = pd.date_range("2025-01-01", periods=120, freq="D", tz=UTC)
    common = np.random.default_rng(99).normal(0, 0.02, len(times))
    frames = []
    for i, sym in enumerate(symbols):
        bars = make_bars(times, symbol=sym, interval="1d", seed=10 + i, sigma=0.01)
        factor = np.exp(np.cumsum(common))
        if shocked is None or i < shocked:
            factor[shock_at:] *= shock
        bars[["open", "high", "low", "close"]] = bars[["open", "high", "low", "close"]].mul(
            factor, axis=0)
        frames.append(bars)
    return pd.concat(frames, ignore_index=True), [Window(s, "1d", CRYPTO) for s in symbols]


def test_a_move_the_whole_batch_makes_is_the_market_not_a_splice():
    bars, windows = basket(5, 80, 0.8)  # every series -20% on the same day, ordinary volume
    report = validate_bars(bars, windows, as_of=None)
    assert report.success, report.summary()
    assert all(check(report, "splice", w.symbol).observed["market"] == "batch median"
               for w in windows)
    alone, windows = basket(5, 80, 0.8, shocked=1)  # only C0 drops: a splice
    report = validate_bars(alone, windows, as_of=None)
    assert report.failed_keys() == {("C0", "1d")}


def test_the_benchmark_in_the_batch_is_the_market():
    bars, windows = basket(2, 80, 0.8, symbols=["BTC", "ETH"])  # BTC is the 24/7 benchmark
    report = validate_bars(bars, windows, as_of=None)
    assert report.success, report.summary()
    assert check(report, "splice", "ETH").observed["market"] == "benchmark"
    # BTC itself is judged against the median of the others (one is enough for the benchmark)
    assert check(report, "splice", "BTC").observed["market"] == "batch median"
    lone, windows = basket(2, 80, 0.8, symbols=["BTC", "ETH"], shocked=1)  # BTC alone drops
    report = validate_bars(lone, windows, as_of=None)
    assert report.failed_keys() == {("BTC", "1d")}


def test_one_series_has_no_market_unless_one_is_passed_in():
    bars, windows = basket(2, 80, 0.8, symbols=["ETH", "BTC"])
    eth_only = bars[bars["symbol"] == "ETH"]
    report = validate_bars(eth_only, windows[:1], as_of=None)  # a batch of one: no market
    result = check(report, "splice")
    assert not result.success and "no market" in result.message
    btc = bars[bars["symbol"] == "BTC"].set_index("timestamp")["close"]
    report = validate_bars(eth_only, windows[:1], as_of=None, market={(CRYPTO, "1d"): btc})
    assert report.success, report.summary()
    assert check(report, "splice").observed["market"] == "market series"


def test_judging_a_bar_never_looks_at_later_bars_except_for_reversion_and_what_follows():
    goog = goog_bars()
    t = int(np.flatnonzero(goog["timestamp"] >= ts("2008-10-01"))[0])
    later = goog.copy()
    rng = np.random.default_rng(3)
    later.loc[t + 1:, ["open", "high", "low", "close"]] *= rng.uniform(0.2, 5.0)  # a new future
    later.loc[t + 1:, "volume"] *= rng.uniform(0.1, 10.0, len(later) - t - 1)
    window = [Window("GOOG", "1d", NYSE)]
    before, after = splice_frame(goog, window), splice_frame(later, window)
    for column in (cs.JUMP_SIGMAS, cs.LOCAL_SIGMAS, cs.VOLUME_RATIO, cs.JUMP_RETURN,
                   cs.JUMP_TRADED):
        pd.testing.assert_series_equal(before[column].iloc[:t + 1], after[column].iloc[:t + 1])
    # reversion and what follows look up to revert_bars / follow_bars ahead by design: only the
    # last bars before t may change
    for column, bars in ((cs.JUMP_REVERTED, SPLICE_CONFIG.revert_bars),
                         (cs.JUMP_FOLLOWED, SPLICE_CONFIG.follow_bars)):
        settled = t + 1 - bars
        pd.testing.assert_series_equal(before[column].iloc[:settled], after[column].iloc[:settled])
    # the market move of a bar is causal too: another series' later bars do not change it
    bars, windows = basket(4, 80, 0.8)
    moved = bars.copy()
    future = (moved["symbol"] == "C1") & (moved["timestamp"] > ts("2025-03-01"))
    moved.loc[future, ["open", "high", "low", "close"]] *= 3.0
    a, b = splice_frame(bars, windows), splice_frame(moved, windows)
    mask = (a["timestamp"] <= ts("2025-03-01")).to_numpy()
    np.testing.assert_array_equal(a[cs.MARKET_RETURN].to_numpy()[mask],
                                  b[cs.MARKET_RETURN].to_numpy()[mask])
    np.testing.assert_array_equal(a[cs.JUMP_SIGMAS].to_numpy()[mask],
                                  b[cs.JUMP_SIGMAS].to_numpy()[mask])


def test_a_jump_at_the_newest_bar_is_suspect_and_judged_again_later(eth):
    calm = eth.assign(volume=100.0)
    newest = scale_prices(calm, slice(len(calm) - 1, None), 1.35)  # the last bar jumps
    report = run(newest)
    result = check(report, "splice")
    assert not result.success and result.suspect
    assert "suspect at the newest bar: 1 bar jumps" in result.message
    assert report.suspects() == {("ETH", "1h"): ETH_TIMES[-1]}
    assert report.to_dict()["results"][6]["suspect"] is True
    # the next run sees five more bars: the shift stayed -> a splice; it came back -> a spike
    more = make_bars(pd.date_range(ETH_TIMES[-1] + pd.Timedelta(hours=1), periods=5, freq="h",
                                   tz=UTC), symbol="ETH", interval="1h", seed=5,
                     start=float(calm["close"].iloc[-1])).assign(volume=100.0)
    as_of = ETH_AS_OF + pd.Timedelta(hours=5)
    stayed = pd.concat([newest, scale_prices(more, slice(None), 1.35)], ignore_index=True)
    result = check(run(stayed, as_of=as_of), "splice")
    assert not result.success and not result.suspect
    assert run(stayed, as_of=as_of).suspects() == {}
    came_back = pd.concat([newest, more], ignore_index=True)
    assert check(run(came_back, as_of=as_of), "splice").success


# --- staleness and completeness --------------------------------------------------------------

def test_stale_crypto_fails(eth):
    assert check(run(eth, as_of=ETH_AS_OF + pd.Timedelta(hours=1)), "staleness").success
    result = check(run(eth, as_of=ETH_AS_OF + pd.Timedelta(hours=5)), "staleness")
    assert not result.success
    assert result.observed["late_bars"] == 5
    assert "last bar 2025-03-03 23:00 UTC" in result.message


def test_weekends_and_holidays_do_not_make_stocks_stale(aapl):
    # last bar Friday 2025-11-28 12:30 ET (early close); Monday before the open: nothing missed
    assert check(run(aapl, NYSE, as_of=WEEK_AS_OF), "staleness").success
    # data through Wednesday, judged on Thanksgiving evening: the holiday expects no bars
    through_wed = aapl[aapl["timestamp"] < ts("2025-11-27")]
    assert check(run(through_wed, NYSE, as_of=ts("2025-11-27 23:00")), "staleness").success
    # ... but on Friday evening the four early-close bars are missing
    result = check(run(through_wed, NYSE, as_of=ts("2025-11-28 23:00")), "staleness")
    assert not result.success and result.observed["late_bars"] == 4


def test_stale_daily_stock_after_a_week(aapl):
    days = expected_bars(NYSE, "1d", "2025-09-01", "2025-11-22")
    daily = make_bars(days, symbol="AAPL", interval="1d", sigma=0.01)
    assert check(run(daily, NYSE, as_of=ts("2025-11-24 12:00")), "staleness").success
    assert not check(run(daily, NYSE, as_of=ts("2025-11-28 23:00")), "staleness").success


def test_the_tail_after_the_last_bar_is_judged_by_staleness_not_bar_count():
    as_of = ts("2025-03-31 16:00")  # today's daily bar is still open: nobody delivers it
    start = as_of.normalize() - pd.Timedelta(days=30)
    daily = make_bars(pd.date_range(start, periods=30, freq="D", tz=UTC), symbol="SOL",
                      interval="1d")
    assert run(daily, start=start, end=as_of, as_of=as_of).success
    late = run(daily.iloc[:-1], start=start, end=as_of, as_of=as_of)  # one bar late: allowed
    assert late.success, late.summary()
    later = run(daily.iloc[:-2], start=start, end=as_of, as_of=as_of)
    assert [r.check for r in later.failed()] == ["staleness"]
    # without as_of nothing judges lateness, so the whole window counts
    assert not check(run(daily.iloc[:-2], start=start, end=as_of, as_of=None), "bar_count").success


def test_as_of_none_skips_staleness(eth):
    result = check(run(eth.iloc[:10], as_of=None), "staleness")
    assert result.success and "no as_of" in result.message


def test_bar_still_open_at_as_of_fails(eth):
    result = check(run(eth, as_of=ETH_TIMES[-1] + pd.Timedelta(minutes=30)), "incomplete_bars")
    assert not result.success and result.observed["incomplete_bars"] == 1
    assert check(run(eth, as_of=ETH_AS_OF), "incomplete_bars").success


# --- real data and price files ---------------------------------------------------------------

def test_goog_daily_passes_including_2008_on_heavy_volume():
    report = validate_file(GOOG, interval="1d", calendar=NYSE)
    assert report.success, report.summary()
    assert report.bars == 2148
    splice = check(report, "splice", "GOOG")
    assert splice.observed["max_sigmas"] > 6  # earnings days (2011-07-15 +13%) on heavy volume
    assert check(report, "bar_count").observed["missing"] == 0


def test_goog_labelled_at_session_open_passes_too():
    bars = load_price_file(GOOG).tail(300).reset_index(drop=True)
    opens = expected_bars(NYSE, "1d", bars["timestamp"].iloc[0], bars["timestamp"].iloc[-1]
                          + pd.Timedelta(days=1))
    bars["timestamp"] = opens
    report = run(bars.assign(symbol="GOOG", interval="1d"), NYSE, as_of=None)
    assert report.success, report.summary()


def test_daily_midnight_label_on_a_saturday_is_off_calendar():
    bars = load_price_file(GOOG).tail(100).reset_index(drop=True)
    bars.loc[len(bars)] = [ts("2013-03-02"), 806.0, 807.0, 805.0, 806.5, 2e6]
    report = run(bars.assign(symbol="GOOG", interval="1d"), NYSE, as_of=None)
    assert not check(report, "off_calendar").success


def test_spliced_goog_file_fails_naming_the_splice(tmp_path):
    goog = pd.read_csv(GOOG)
    after = goog["timestamp"] >= "2009-06-01"
    goog.loc[after, ["open", "high", "low", "close"]] *= 1.35
    path = tmp_path / "GOOG_spliced.csv"
    goog.to_csv(path, index=False)
    report = validate_file(path, symbol="GOOG")
    assert not report.success
    assert [(r.symbol, r.check) for r in report.failed()] == [("GOOG", "splice")]
    assert "first at 2009-06-01 00:00 UTC (+3" in report.failed()[0].message


def test_html_body_is_unusable_input():
    with pytest.raises(UnusableInputError, match="HTML page"):
        load_price_file(PRICES / "html_body.csv")
    with pytest.raises(UnusableInputError, match="HTML page"):
        validate_file(PRICES / "html_body.csv")


def test_zero_row_file_fails_on_bar_count_not_as_unusable(tmp_path):
    assert load_price_file(PRICES / "empty.csv").empty
    report = validate_file(PRICES / "empty.csv", symbol="SPY")
    assert not report.success
    assert [r.check for r in report.failed()] == ["bar_count"]
    assert "zero bars" in report.failed()[0].message
    zero_bytes = tmp_path / "SPY.csv"
    zero_bytes.write_bytes(b"")
    assert "zero bars" in validate_file(zero_bytes).failed()[0].message


@pytest.mark.parametrize(("text", "match"), [
    ("timestamp,open,high,low,close\n2025-01-02,1,2,0.5,1.5\n", "no volume column"),
    ("timestamp,open,high,low,close,volume\n2025-01-02,1,2,abc,1.5,10\n", "no time or no prices"),
    ("timestamp,open,high,low,close,volume\n2025-01-02,1,2,0.5,1.5,lots\n", "non-numeric volume"),
    ("date;open;high\n2025-01-02;1;2\n", "column"),
])
def test_malformed_files_are_unusable(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(UnusableInputError, match=match):
        load_price_file(path)
    with pytest.raises(UnusableInputError, match="cannot read"):
        load_price_file(tmp_path / "absent.csv")


def test_parquet_with_extra_columns_is_read(tmp_path):
    bars = load_price_file(GOOG).tail(60).assign(symbol="GOOG", interval="1d")
    path = tmp_path / "goog.parquet"
    bars.to_parquet(path)
    assert validate_file(path).success
    with pytest.raises(UnusableInputError, match="no rows for symbol"):
        load_price_file(path, symbol="MSFT")


# --- the report, Data Docs, the batch --------------------------------------------------------

def test_report_serialises_and_writes(tmp_path, eth):
    report = run(scale_prices(eth, slice(40, None), 1.35))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["success"] is False and data["failed"] == 1 and data["checks"] == 9
    assert data["great_expectations"]["evaluated_expectations"] == 10
    path = report.write(tmp_path / "run")
    assert json.loads(path.read_text())["results"][6]["check"] == "splice"
    assert "FAILED" in report.summary() and "ETH 1h: 1 bar jumps" in report.summary()


def test_data_docs_are_built(tmp_path, eth):
    report = run(scale_prices(eth, slice(40, None), 1.35))
    index = build_data_docs(report, tmp_path / "docs")
    assert index.name == "index.html" and index.exists()
    pages = list((tmp_path / "docs" / "validations").rglob("*.html"))
    assert pages and "local sigmas" in pages[0].read_text()


def test_an_expectation_that_cannot_run_is_a_failure():
    from arena.data.validation.checks import _unexpected_rows

    broken = SimpleNamespace(
        expectation_config=SimpleNamespace(meta={"check": "splice", "problem": "x"}, type="e"),
        exception_info={"m": {"raised_exception": True, "exception_message": "boom"}},
        success=False, result={})
    failures, errors = _unexpected_rows(SimpleNamespace(results=[broken]))
    assert failures == {} and len(errors) == 1
    assert not errors[0].success and "boom" in errors[0].message


def test_one_batch_of_62_symbols_by_2_intervals(capsys):
    as_of = ts("2025-12-01 16:00")
    frames, windows = [], []
    for i in range(62):
        calendar = CRYPTO if i < 12 else NYSE
        for interval, days in (("1h", 60), ("1d", 400)):
            start = as_of - pd.Timedelta(days=days)
            times = expected_bars(calendar, interval, start, as_of)
            times = times[bar_close_times(calendar, interval, times) <= as_of]
            frames.append(make_bars(times, symbol=f"S{i:02d}", interval=interval, seed=i))
            windows.append(Window(f"S{i:02d}", interval, calendar, start, as_of))
    bars = pd.concat(frames, ignore_index=True)
    bars.loc[bars.index[-1], "low"] = 1e9  # one broken bar in the last series
    validate_bars(bars.iloc[:50], windows[:1], as_of=as_of)  # import and warm-up, not timed
    started = time.perf_counter()
    report = validate_bars(bars, windows, as_of=as_of)
    seconds = time.perf_counter() - started
    with capsys.disabled():
        print(f"\n[candle validation] {len(bars)} bars, {len(windows)} series: {seconds:.3f} s")
    assert len(report.results) == len(windows) * 9
    assert report.failed_keys() == {("S61", "1d")}


def test_validation_module_does_not_import_great_expectations():
    code = ("import sys, arena.data.validation.checks; "
            "sys.exit('great_expectations' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
