"""EMA, MACD, Bollinger bands, the true range and the ATR of :mod:`arena.core.indicators`: values
computed by hand (exact fractions), closed forms (ramps and flat lines), and no lookahead (every
value at row t is the value computed on rows 0..t alone). Wilder's RSI has its own file,
``test_indicators_rsi.py``."""

from __future__ import annotations

import math
import re
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from arena.core.errors import UnusableInput
from arena.core.indicators import (
    atr,
    bollinger,
    ema,
    macd,
    rolling_std,
    rsi_wilder,
    sma,
    true_range,
)

NAN = math.nan


def _s(values) -> pd.Series:
    return pd.Series([float(v) for v in values])


def _same(got: pd.Series, expected: list[float], rel: float = 1e-12) -> None:
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got.tolist(), expected, strict=True)):
        if math.isnan(e):
            assert math.isnan(g), (i, g)
        else:
            assert g == pytest.approx(float(e), rel=rel, abs=1e-12), (i, g, e)


def test_ema_by_hand_and_on_a_ramp():
    # seed: the mean of the first 3 (= 2) at row 2; then alpha = 1/2: (10 + 2) / 2 = 6
    _same(ema(_s([1, 2, 3, 10]), 3), [NAN, NAN, 2, 6])
    ramp = _s(range(80))
    for n in (5, 12, 20, 26, 50):  # from its seed on, an EMA(n) of a ramp lags it by (n - 1) / 2
        _same(ema(ramp, n), [NAN] * (n - 1) + [t - (n - 1) / 2 for t in range(n - 1, 80)])


def test_macd_by_hand():
    """MACD(2, 3, 2) of 1, 2, 4, 8, 16 in exact fractions: EMA(2) has alpha 2/3 and starts at
    the mean of the first two closes, EMA(3) alpha 1/2 and the mean of the first three; the
    signal, alpha 2/3, starts at the mean of the line's first two values."""
    fast = [None, F(3, 2)]
    for x in (4, 8, 16):
        fast.append(F(2, 3) * x + F(1, 3) * fast[-1])
    slow = [None, None, F(7, 3)]
    for x in (8, 16):
        slow.append(F(1, 2) * x + F(1, 2) * slow[-1])
    line = [fast[t] - slow[t] for t in (2, 3, 4)]
    assert line == [F(5, 6), F(11, 9), F(239, 108)]
    signal = [(line[0] + line[1]) / 2]
    signal.append(F(2, 3) * line[2] + F(1, 3) * signal[0])
    assert signal == [F(37, 36), F(589, 324)]
    got = macd(_s([1, 2, 4, 8, 16]), 2, 3, 2)
    _same(got.line, [NAN, NAN, *line])
    _same(got.signal, [NAN, NAN, NAN, *signal])
    _same(got.histogram, [NAN, NAN, NAN, line[1] - signal[0], line[2] - signal[1]])
    assert line[2] - signal[1] == F(32, 81)


def test_macd_closed_forms():
    """On a ramp the line is the difference of the two lags, (26 - 12) / 2 = 7 times the slope,
    and so is its signal (the histogram is 0); on a flat line all three are 0. The line starts at
    row 25, the signal and histogram at row 33."""
    for slope in (1.0, -0.5, 0.0):
        got = macd(_s([100 + slope * t for t in range(120)]))
        _same(got.line, [NAN] * 25 + [7.0 * slope] * 95, rel=1e-10)
        _same(got.signal, [NAN] * 33 + [7.0 * slope] * 87, rel=1e-10)
        assert got.histogram.iloc[33:].abs().max() < 1e-9 and got.histogram.iloc[:33].isna().all()


def test_bollinger_by_hand():
    # 2, 4, 4, 4, 5, 5, 7, 9: mean 5, population deviation exactly 2
    bands = bollinger(_s([2, 4, 4, 4, 5, 5, 7, 9]), 8)
    assert [b.iloc[-1] for b in bands] == [1.0, 5.0, 9.0, 1.0]
    assert all(b.iloc[:7].isna().all() for b in bands)
    # alternating 1 and 3 over 4 bars: mean 2, deviation 1, bands 0 and 4
    bands = bollinger(_s([1, 3] * 5), 4, 2.0)
    _same(bands.lower, [NAN] * 3 + [0.0] * 7)
    _same(bands.upper, [NAN] * 3 + [4.0] * 7)
    _same(bands.position, [NAN] * 3 + [0.75, 0.25] * 3 + [0.75])
    # a close above the upper band sits above 1 (not clipped): mean 2, deviation sqrt(7)
    [lower, middle, upper, position] = [b.iloc[-1] for b in bollinger(_s([1] * 7 + [9]), 8)]
    r7 = math.sqrt(7)
    assert (lower, middle, upper) == (pytest.approx(2 - 2 * r7), pytest.approx(2.0),
                                      pytest.approx(2 + 2 * r7))
    assert position == pytest.approx((9 - (2 - 2 * r7)) / (4 * r7)) and position > 1
    # a flat window: no width, the close in the middle
    flat = bollinger(_s([7.25] * 25), 20)
    assert [b.iloc[-1] for b in flat] == [7.25, 7.25, 7.25, 0.5]


def test_rolling_std_is_numpys_population_deviation_of_each_window():
    rng = np.random.default_rng(20261201)
    x = pd.Series(100 * np.exp(np.cumsum(rng.normal(0, 0.02, 300))))
    for n in (1, 2, 10, 20, 33):
        got = rolling_std(x, n).to_numpy()
        assert np.isnan(got[:n - 1]).all()
        assert got[n - 1:].tolist() == [float(np.std(x.to_numpy()[t - n + 1:t + 1], ddof=0))
                                        for t in range(n - 1, len(x))]  # bit for bit
        np.testing.assert_allclose(got[n - 1:], x.rolling(n).std(ddof=0).to_numpy()[n - 1:],
                                   rtol=1e-9)


def test_true_range_and_atr_by_hand():
    """TR of bar t: max(high - low, |high - close_(t-1)|, |low - close_(t-1)|); ATR(3) starts at
    row 3 with the mean of the first three true ranges, then (ATR x 2 + TR) / 3."""
    high, low = _s([10, 11, 12, 11, 14, 8]), _s([8, 9, 9, 10, 11, 7])
    close = _s([9, 10, 11, 10.5, 13, 7.5])
    # row 4: a gap up, |14 - 10.5| = 3.5; row 5: a gap down, |7 - 13| = 6
    _same(true_range(high, low, close), [NAN, 2, 3, 1, 3.5, 6])
    _same(atr(high, low, close, 3), [NAN, NAN, NAN, 2, 2.5, (2.5 * 2 + 6) / 3])
    # every bar 2 wide around a ramp: the ATR is 2 from its first value on
    ramp = _s(range(100, 160))
    _same(atr(ramp + 1, ramp - 1, ramp, 14), [NAN] * 14 + [2.0] * 46)


def _walk(seed: int, n: int) -> tuple[pd.Series, pd.Series, pd.Series]:
    rng = np.random.default_rng(seed)
    close = 50 * np.exp(np.cumsum(rng.normal(0, 0.03, n)))
    spread = close * rng.uniform(0.001, 0.04, n)
    high = close + spread * rng.uniform(0, 1, n)
    low = close - spread * rng.uniform(0, 1, n)
    return pd.Series(high), pd.Series(low), pd.Series(close)


INDICATORS = {
    "sma": lambda h, lo, c: [sma(c, 20)],
    "ema": lambda h, lo, c: [ema(c, 9), ema(c, 50)],
    "rsi": lambda h, lo, c: [rsi_wilder(c, 14)],
    "macd": lambda h, lo, c: list(macd(c)),
    "bollinger": lambda h, lo, c: list(bollinger(c, 20, 2.0)),
    "rolling_std": lambda h, lo, c: [rolling_std(c, 10)],
    "true_range": lambda h, lo, c: [true_range(h, lo, c)],
    "atr": lambda h, lo, c: [atr(h, lo, c, 14)],
}


@pytest.mark.parametrize("name", sorted(INDICATORS))
def test_no_value_uses_a_later_bar(name):
    """The value at row t on the whole series is, bit for bit, the value at row t on rows 0..t
    alone; and a later bar changed beyond recognition changes no earlier value."""
    compute = INDICATORS[name]
    for seed, n in ((1, 90), (2, 140)):
        h, lo, c = _walk(seed, n)
        whole = compute(h, lo, c)
        for t in range(n):
            cut = compute(h.iloc[:t + 1], lo.iloc[:t + 1], c.iloc[:t + 1])
            for full, part in zip(whole, cut, strict=True):
                assert np.array_equal(full.to_numpy()[:t + 1], part.to_numpy(), equal_nan=True), t
        shocked = [s.copy() for s in (h, lo, c)]
        for s in shocked:
            s.iloc[n // 2:] *= 3.0
        for full, moved in zip(whole, compute(*shocked), strict=True):
            assert np.array_equal(full.to_numpy()[:n // 2], moved.to_numpy()[:n // 2],
                                  equal_nan=True)


@pytest.mark.parametrize(("call", "message"), [
    (lambda c: macd(c, 26, 12), "the fast period (26) must be shorter than the slow one (12)"),
    (lambda c: macd(c, 0), "the fast period must be a whole number of bars of at least 1, not 0"),
    (lambda c: macd(c, 12, 26, 2.5), "the signal period must be a whole number"),
    (lambda c: bollinger(c, 20, 0), "the band width must be a positive number"),
    (lambda c: bollinger(c, True), "the window must be a whole number of bars"),
    (lambda c: rolling_std(c, -3), "not -3"),
    (lambda c: atr(c, c, c, 0), "the ATR period must be a whole number"),
    (lambda c: true_range(c, c.iloc[:3], c), "highs, lows and closes differ in length (5, 3, 5)"),
])
def test_unusable_parameters_are_named(call, message):
    with pytest.raises(UnusableInput, match=re.escape(message)):
        call(_s([1, 2, 3, 4, 5]))
