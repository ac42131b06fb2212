"""Wilder's RSI (:func:`arena.core.indicators.rsi_wilder`) against a textbook implementation
written here, and against the pandas formulation it replaces (:func:`seeded_ewm` of the gains and
losses), on random, flat, monotone, stepped, short and NaN-led paths."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.core import indicators
from arena.core.indicators import rsi_values, rsi_wilder, seeded_ewm


def wilder_rsi_reference(close: list[float], n: int = 14, step: int = 1) -> list[float]:
    """Wilder's RSI by the book: changes over ``step`` bars from the first known close, the first
    averages the simple means of the first n gains and losses, then ``avg = (avg x (n - 1) +
    value) / n``; 100 without losses, 50 without any change."""
    out = [math.nan] * len(close)
    known = [i for i, c in enumerate(close) if not math.isnan(c)]
    if not known:
        return out
    first = known[0]
    seed = first + step + n - 1
    if seed >= len(close):
        return out
    gains, losses = [], []
    for t in range(first + step, len(close)):
        d = close[t] - close[t - step]
        gains.append(max(d, 0.0))
        losses.append(max(-d, 0.0))
    avg_gain = sum(gains[:n]) / n
    avg_loss = sum(losses[:n]) / n
    for k, t in enumerate(range(seed, len(close))):
        if k:
            avg_gain = (avg_gain * (n - 1) + gains[n - 1 + k]) / n
            avg_loss = (avg_loss * (n - 1) + losses[n - 1 + k]) / n
        total = avg_gain + avg_loss
        out[t] = 50.0 if total == 0 else 100.0 * avg_gain / total
    return out


def pandas_rsi(close: pd.Series, n: int = 14, step: int = 1) -> pd.Series:
    """The RSI as :func:`seeded_ewm` of the gains and losses (pandas' recursive mean)."""
    delta = close.astype(float).diff(step)
    gain = seeded_ewm(delta.clip(lower=0.0), n, 1.0 / n)
    loss = seeded_ewm((-delta).clip(lower=0.0), n, 1.0 / n)
    total = gain + loss
    return (100.0 * gain / total.where(total > 0)).where(~(total == 0), 50.0)


def _paths() -> list[tuple[str, np.ndarray, int, int]]:
    rng = np.random.default_rng(20261130)
    paths: list[tuple[str, np.ndarray, int, int]] = []
    for k in range(40):
        length = int(rng.integers(15, 400))
        n = int(rng.choice([2, 3, 5, 14, 21]))
        step = int(rng.choice([1, 1, 2, 5]))
        walk = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.02, length)))
        paths.append((f"random-{k}", walk, n, step))
        paths.append((f"rounded-{k}", np.round(walk, 1), n, step))  # many zero changes
    paths += [
        ("flat", np.full(60, 7.0), 14, 1),
        ("up", np.arange(60, dtype=float) + 10.0, 14, 1),
        ("down", 200.0 - np.arange(60, dtype=float), 14, 1),
        ("up-by-two", np.arange(60, dtype=float) + 10.0, 14, 2),
        ("flat-then-moves", np.r_[np.full(20, 5.0), 5.0 + np.sin(np.arange(40))], 14, 1),
        ("tiny-moves", 1.0 + 1e-9 * rng.normal(size=200), 14, 1),
        ("long", 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.01, 3000))), 14, 1),
        ("nan-led", np.r_[np.full(25, np.nan), 50.0 + np.cumsum(rng.normal(size=80))], 14, 1),
        ("nan-led-short", np.r_[np.full(10, np.nan), 50.0 + np.cumsum(rng.normal(size=14))], 14, 1),
        ("all-nan", np.full(30, np.nan), 14, 1),
        ("exactly-enough", 50.0 + np.cumsum(rng.normal(size=15)), 14, 1),
        ("one-short", 50.0 + np.cumsum(rng.normal(size=14)), 14, 1),
        ("one-close", np.array([42.0]), 14, 1),
        ("empty", np.array([], dtype=float), 14, 1),
    ]
    return paths


PATHS = _paths()


@pytest.mark.parametrize(("name", "close", "n", "step"), PATHS, ids=[p[0] for p in PATHS])
def test_rsi_equals_the_textbook_wilder_rsi(name, close, n, step) -> None:
    got = rsi_wilder(pd.Series(close), n, step).to_numpy()
    expected = np.array(wilder_rsi_reference(close.tolist(), n, step))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=0.0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize(("name", "close", "n", "step"), PATHS, ids=[p[0] for p in PATHS])
def test_rsi_is_bit_for_bit_the_pandas_recursion(name, close, n, step) -> None:
    """Briefings print the RSI in full: the values must not move by even one unit in the last
    place, so the array formulation equals the pandas one exactly."""
    got = rsi_wilder(pd.Series(close), n, step).to_numpy()
    expected = pandas_rsi(pd.Series(close), n, step).to_numpy()
    np.testing.assert_array_equal(got, expected)


def test_rsi_with_a_gap_inside_equals_the_pandas_recursion() -> None:
    """A NaN inside the closes (outside what the briefing feeds it) still ages the averages the
    way pandas' recursion does, for every period, including ``n = 2``."""
    rng = np.random.default_rng(7)
    close = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.02, 120)))
    close[[30, 31, 77]] = np.nan
    for n in (2, 3, 14):
        for step in (1, 2):
            np.testing.assert_array_equal(rsi_wilder(pd.Series(close), n, step).to_numpy(),
                                          pandas_rsi(pd.Series(close), n, step).to_numpy())


def test_a_gap_ages_the_wilder_average_as_documented_for_every_period() -> None:
    """By hand, at ``n = 2`` (alpha 1/2) and ``n = 3`` (alpha 1/3): the seed is the mean of the
    first n values; after k missing values the average weighs ``(1 - alpha) ** (k + 1)`` and
    the next value ``alpha``, divided by their sum (pandas 3.0 to 3.1.1 gave the new value
    ``1 - (1 - alpha) ** (k + 1)`` at ``n = 2`` only, pandas-dev/pandas#66521)."""
    nan = float("nan")
    # n = 2: seed (1 + 3) / 2 = 2; one gap: (0.25 * 2 + 0.5 * 8) / 0.75 = 6; then 6 / 2 + 2 / 2 = 4
    got = indicators._wilder_averages(np.array([1.0, 3.0, nan, 8.0, 2.0]), 2)
    np.testing.assert_allclose(got, [nan, 2.0, 2.0, 6.0, 4.0], rtol=0, atol=1e-15)
    # n = 3: seed 3; two gaps: ((2/3) ** 3 * 3 + (1/3) * 12) / ((2/3) ** 3 + 1/3) = 132 / 17
    got = indicators._wilder_averages(np.array([2.0, 3.0, 4.0, nan, nan, 12.0]), 3)
    np.testing.assert_allclose(got, [nan, nan, 3.0, 3.0, 3.0, 132 / 17],
                               rtol=0, atol=1e-13)


def test_rsi_keeps_the_index_and_reads_integers() -> None:
    close = pd.Series([10, 11, 12, 11, 13, 12, 14, 15, 14, 16, 17, 16, 18, 19, 18, 20],
                      index=pd.date_range("2026-01-01", periods=16, freq="D", tz="UTC"))
    rsi = rsi_wilder(close)
    assert rsi.index.equals(close.index)
    assert rsi.iloc[:14].isna().all()
    assert rsi.iloc[-1] == pytest.approx(wilder_rsi_reference(close.astype(float).tolist())[-1],
                                         abs=1e-12)
    np.testing.assert_array_equal(rsi_values(close.to_numpy()), rsi.to_numpy())
