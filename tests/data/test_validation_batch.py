"""Batch evaluation of the splice statistics: a batch of series gets exactly the numbers each
series gets alone, the fast medians are numpy's medians, and a batch validated a group of series
at a time gets the results of the batch validated at once."""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.core.sessions import CRYPTO, NAT, NYSE, bar_close_times, expected_bars
from arena.data.validation.config import Window
from arena.data.validation.jumps import (
    _bar_groups,
    _full_row_medians,
    batch_jump_statistics,
    log_returns,
)

SETTINGS = dict(min_returns=20, volume_lookback=20, local_window=60, fast_window=20,
                revert_bars=5, jump_sigmas=6.0, follow_bars=5)
HOUR_US = 3_600_000_000


def _series(rng: np.random.Generator, n: int, start_us: int, step_us: int, *, messy: bool
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    times = start_us + np.arange(n, dtype=np.int64) * step_us
    close = 100 * np.exp(np.cumsum(rng.standard_t(3, n) * 0.01))
    volume = rng.integers(0, 1000, n).astype("float64")
    if messy:  # a repeated time, an unsorted pair, a missing time, a null close and volume
        times[n // 2] = times[n // 2 - 1]
        times[[n // 3, n // 3 + 1]] = times[[n // 3 + 1, n // 3]]
        times[n // 4] = NAT
        close[n // 5] = np.nan
        volume[n // 6] = np.nan
        close[-3] *= 2.0
    return times, close, volume


def test_a_batch_judges_each_series_as_if_alone() -> None:
    rng = np.random.default_rng(7)
    start = pd.Timestamp("2024-01-01", tz="UTC").value // 1000
    specs = [  # (length, gap sessions, interval seconds, judged from bar, messy)
        (300, False, 3600.0, None, False), (0, False, 3600.0, None, False),
        (1, False, 3600.0, None, False), (25, True, 3600.0, None, True),
        (400, True, 3600.0, 350, True), (150, False, None, 100, False),
        (90, False, 900.0, None, True)]
    parts = [_series(rng, n, start, HOUR_US, messy=messy and n > 10)
             for n, _, _, _, messy in specs]
    days = [(t // (24 * HOUR_US)) * (24 * HOUR_US) for t, _, _ in parts]
    since = [None if k is None else pd.Timestamp(int(parts[i][0][k]), unit="us", tz="UTC")
             for i, (_, _, _, k, _) in enumerate(specs)]
    opens = [c * np.exp(rng.normal(0, 0.005, len(c))) for _, c, _ in parts]  # off the close
    batch = batch_jump_statistics(
        np.concatenate([c for _, c, _ in parts]), np.concatenate([v for _, _, v in parts]),
        np.concatenate([t for t, _, _ in parts]),
        np.split(np.arange(sum(s[0] for s in specs)), np.cumsum([s[0] for s in specs])[:-1]),
        sessions_gap=[s[1] for s in specs], interval_seconds=[s[2] for s in specs],
        judged_from=since, session_days=np.concatenate(days), open_=np.concatenate(opens),
        **SETTINGS)
    offset = 0
    for i, (spec, (times, close, volume)) in enumerate(zip(specs, parts, strict=True)):
        n, gap, seconds = spec[:3]
        alone = batch_jump_statistics(close, volume, times, [np.arange(n)], sessions_gap=[gap],
                                      interval_seconds=[seconds], judged_from=[since[i]],
                                      session_days=days[i], open_=opens[i], **SETTINGS)
        rows = slice(offset, offset + n)
        for name in ("log_return", "simple", "centre", "scale", "local_sigmas", "volume_ratio",
                     "reverted", "followed", "traded", "newest", "overnight"):
            np.testing.assert_array_equal(getattr(batch, name)[rows], getattr(alone, name),
                                          err_msg=f"series {i} {name}")
        assert (batch.returns[i], batch.sigma[i], batch.overnight_sigma[i]) == \
            (alone.returns[0], alone.sigma[0], alone.overnight_sigma[0])
        offset += n


def test_full_row_medians_are_numpy_medians() -> None:
    rng = np.random.default_rng(3)
    for width in (1, 2, 7, 20, 60):
        for rows in (rng.standard_t(2, (500, width)),
                     rng.integers(-2, 3, (500, width)) * 0.01):  # many ties
            np.testing.assert_array_equal(_full_row_medians(rows), np.median(rows, axis=1))


def test_bar_groups_group_as_pandas_does() -> None:
    calendars = np.array(["XNYS", "24/7", "XNYS", "XNYS", "24/7"], dtype=object)
    intervals = pd.Series(["1h", "1h", "1h", "1d", "1h"])
    micros = np.array([5, 5, 5, 5, NAT], dtype=np.int64)
    expected = pd.DataFrame({"c": calendars, "i": intervals, "t": micros}).groupby(
        ["c", "i", "t"], sort=False).ngroup().to_numpy()
    got = _bar_groups(calendars, intervals, micros)
    # the same partition of the rows (the numbering may differ)
    assert len(set(zip(got, expected, strict=True))) == len(set(got)) == len(set(expected))


def test_log_returns_are_the_batch_statistics_log_returns() -> None:
    rng = np.random.default_rng(11)
    start = pd.Timestamp("2024-01-01", tz="UTC").value // 1000
    for messy in (False, True):
        times, close, volume = _series(rng, 120, start, HOUR_US, messy=messy)
        batch = batch_jump_statistics(close, volume, times, [np.arange(len(close))],
                                      sessions_gap=[False], interval_seconds=[3600.0],
                                      judged_from=[None], session_days=None, **SETTINGS)
        np.testing.assert_array_equal(log_returns(close, times), batch.log_return)


def _groups_batch() -> list[tuple[Window, pd.DataFrame]]:
    """Stocks with their benchmark, crypto without BTC (the batch median is its market), a
    series judged from a time (context before it), an empty series, a broken bar."""
    from tests.data.test_validation import make_bars

    as_of = pd.Timestamp("2025-12-01 16:00", tz="UTC")
    rng = np.random.default_rng(5)
    common = rng.normal(0, 0.004, 4000)
    series = []
    for i, (symbol, calendar) in enumerate([("SPY", NYSE), ("AAPL", NYSE), ("MSFT", NYSE),
                                            ("ETH", CRYPTO), ("SOL", CRYPTO), ("XRP", CRYPTO)]):
        times = expected_bars(calendar, "1h", as_of - pd.Timedelta(days=40), as_of)
        times = times[bar_close_times(calendar, "1h", times) <= as_of]
        bars = make_bars(times, symbol=symbol, interval="1h", seed=i)
        factor = np.exp(np.cumsum(common[:len(bars)]))
        factor[len(bars) // 2:] *= 0.85  # a market-wide drop: every series at once
        bars[["open", "high", "low", "close"]] = bars[["open", "high", "low", "close"]].mul(
            factor, axis=0)
        since = times[len(times) - 30] if symbol == "MSFT" else None
        series.append((Window(symbol, "1h", calendar, judged_from=since),
                       bars.drop(columns=["symbol", "interval"])))
    series[4][1].loc[200:, ["open", "high", "low", "close"]] *= 1.4  # SOL alone: a splice
    series[2][1].loc[len(series[2][1]) - 3, "low"] = 1e9  # MSFT: a broken bar
    series.insert(3, (Window("IBM", "1h", NYSE, as_of - pd.Timedelta(days=3), as_of),
                      series[0][1].iloc[:0]))
    return series


def test_a_batch_validated_in_groups_is_the_batch_validated_at_once() -> None:
    from arena.data.validation.checks import _end_to_end, validate_bars

    series = _groups_batch()
    as_of = pd.Timestamp("2025-12-01 16:00", tz="UTC")
    btc = series[4][1].set_index("timestamp")["close"] * 30  # the crypto benchmark, stored
    for market, crypto in ((None, "batch median"), ({(CRYPTO, "1h"): btc}, "market series")):
        whole = validate_bars(_end_to_end(series), [w for w, _ in series], as_of=as_of,
                              market=market)
        _same_in_groups(series, whole, market, as_of)
        markets = {r.symbol: r.observed["market"] for r in whole.results if r.check == "splice"}
        assert markets["AAPL"] == "benchmark" and markets["XRP"] == crypto
    assert whole.failed_keys() == {("SOL", "1h"), ("MSFT", "1h"), ("IBM", "1h")}


def _same_in_groups(series, whole, market, as_of) -> None:
    from arena.data.validation.checks import validate_series

    for chunk_rows in (1, 400, 1500):  # every series alone, a few together, half the batch
        grouped = validate_series(series, as_of=as_of, chunk_rows=chunk_rows, market=market,
                                  single_pass_rows=0)
        assert grouped.results == whole.results, chunk_rows
        assert (grouped.success, grouped.bars) == (whole.success, whole.bars)
        assert [(e.expectation, e.success, e.element_count, e.missing_count,
                 e.unexpected_count) for e in grouped.expectations] == \
            [(e.expectation, e.success, e.element_count, e.missing_count, e.unexpected_count)
             for e in whole.expectations]
