"""Indicators on a price series, shared by the briefing, the reference rules and the researcher's
tools (and written once for any other reader of bars).

Every value at row t uses rows 0..t only (no lookahead; ``tests/core/test_indicators.py`` checks
each indicator on every prefix of its input). SMA(n) is the mean of the last n values (undefined
before n); EMA(n) has ``alpha = 2 / (n + 1)`` and is seeded with the SMA of its first n inputs (the
StockCharts / TA-Lib convention); Wilder smoothing is the same with ``alpha = 1 / n``. On top of
them:

* :func:`macd`: the line ``EMA(fast) - EMA(slow)`` of the closes (each EMA seeded on its own first
  closes, so the line starts at row ``slow - 1``), the signal ``EMA(signal)`` of the line (seeded
  with the mean of the line's first ``signal`` values, at row ``slow + signal - 2``) and the
  histogram ``line - signal``;
* :func:`bollinger`: the SMA(n) and the bands ``SMA(n) +- width x sigma``, sigma the
  **population** standard deviation (``ddof = 0``) of the last n closes (:func:`rolling_std`);
  the position ``(close - lower) / (upper - lower)``, not clipped, 0.5 when the band has no width;
* :func:`atr`: Wilder's average of the true range ``max(high - low, |high - previous close|,
  |low - previous close|)`` (:func:`true_range`: from the second bar on), seeded with the mean of
  the first n true ranges (row n), so it needs n + 1 bars.

A period below one is an :class:`~arena.core.errors.UnusableInput` naming it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from arena.core.errors import UnusableInput


def _period(name: str, n: object) -> int:
    """``n`` when it is a whole number of bars of at least one, else :class:`UnusableInput`."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UnusableInput(f"{name} must be a whole number of bars of at least 1, not {n!r}")
    return n


def sma(x: pd.Series, n: int) -> pd.Series:
    """The mean of the last n values, current included (NaN before n)."""
    return x.rolling(n, min_periods=n).mean()


def seeded_ewm(x: pd.Series, n: int, alpha: float) -> pd.Series:
    """``y_t = alpha x_t + (1 - alpha) y_(t-1)`` seeded with the mean of the first n valid inputs
    (at the n-th of them); NaN before. ``x`` may be NaN only in a leading block."""
    out = pd.Series(np.nan, index=x.index)
    valid = x.notna().to_numpy()
    if not valid.any():
        return out
    seed_at = int(valid.argmax()) + n - 1
    if seed_at >= len(x):
        return out
    tail = x.iloc[seed_at:].astype(float).copy()
    tail.iloc[0] = x.iloc[seed_at - n + 1:seed_at + 1].mean()
    out.iloc[seed_at:] = tail.ewm(alpha=alpha, adjust=False).mean().to_numpy()
    return out


def ema(x: pd.Series, n: int) -> pd.Series:
    """EMA(n): ``alpha = 2 / (n + 1)``, seeded with the SMA of its first n inputs."""
    return seeded_ewm(x, n, 2.0 / (n + 1))


def midrange(high: pd.Series, low: pd.Series, n: int) -> pd.Series:
    """(highest high + lowest low) / 2 over the last n bars, current bar included."""
    return (high.rolling(n, min_periods=n).max() + low.rolling(n, min_periods=n).min()) / 2.0


LOOP_MAX = 2_000  # values above which a Wilder average is pandas' rather than a Python loop


def _wilder_averages(values: np.ndarray, n: int) -> np.ndarray:
    """:func:`seeded_ewm` of ``values`` with ``alpha = 1 / n`` as a float loop, bit for bit.

    The RSI is read once per series per cycle, on at most a few hundred bars, where building
    pandas objects costs far more than the recursion itself. The arithmetic is the one pandas'
    ``ewm(alpha, adjust=False).mean()`` performs (its alpha goes through the centre of mass,
    each step is divided by the sum of its weights, a value equal to the average leaves it
    untouched, and a NaN inside the series only ages the average: after a gap of k values the
    average weighs ``(1 - alpha) ** (k + 1)`` and the new value ``alpha``, as pandas documents
    for ``ignore_na=False``), and the seed is the same
    NaN-skipping mean, so the RSI matches :func:`seeded_ewm` exactly, not just closely. A
    series longer than :data:`LOOP_MAX` (a reference rule over a season of hourly bars) goes
    through pandas itself, whose loop is compiled.
    """
    if len(values) > LOOP_MAX:
        return seeded_ewm(pd.Series(values), n, 1.0 / n).to_numpy()
    out = np.full(len(values), np.nan)
    valid = ~np.isnan(values)
    if not valid.any():
        return out
    first = int(valid.argmax())
    seed_at = first + n - 1
    if seed_at >= len(values):
        return out
    window = values[first:seed_at + 1]
    inside = ~np.isnan(window)
    weighted = float(np.where(inside, window, 0.0).sum() / inside.sum())
    com = (1.0 - 1.0 / n) / (1.0 / n)
    alpha = 1.0 / (1.0 + com)
    keep = 1.0 - alpha
    result = [weighted]
    old_wt = 1.0
    for cur in values[seed_at + 1:].tolist():
        if weighted == weighted:
            old_wt *= keep
            if cur == cur:
                if weighted != cur:
                    weighted = (old_wt * weighted + alpha * cur) / (old_wt + alpha)
                old_wt = 1.0
        elif cur == cur:
            weighted = cur
        result.append(weighted)
    out[seed_at:] = result
    return out


def rsi_values(close: np.ndarray, n: int = 14, step: int = 1) -> np.ndarray:
    """:func:`rsi_wilder` of an array of closes, as an array (no index)."""
    close = np.asarray(close, dtype=float)
    delta = np.full(len(close), np.nan)
    if step < len(close):
        delta[step:] = close[step:] - close[:-step]
    missing = np.isnan(delta)
    gain = _wilder_averages(np.where(missing | (delta > 0), delta, 0.0), n)
    loss = _wilder_averages(np.where(missing | (delta < 0), -delta, 0.0), n)
    total = gain + loss
    with np.errstate(invalid="ignore", divide="ignore"):
        rsi = np.where(total > 0, 100.0 * gain / np.where(total > 0, total, 1.0), np.nan)
    return np.where(total == 0, 50.0, rsi)


def rsi_wilder(close: pd.Series, n: int = 14, step: int = 1) -> pd.Series:
    """Wilder's RSI(n), indexed like ``close``; NaN on the first ``n + step - 1`` rows.

    Changes ``d_t = close_t - close_(t-step)`` (``step = 1``: bar to bar, the textbook); gains
    ``max(d, 0)``, losses ``max(-d, 0)``. The first average gain/loss (row ``n + step - 1``) is the
    simple mean of the first n gains/losses; then Wilder smoothing ``avg_t = (avg_(t-1) x (n - 1)
    + value_t) / n``. ``RSI = 100 - 100 / (1 + avg_gain / avg_loss) = 100 x avg_gain / (avg_gain
    + avg_loss)``: 100 when the average loss is 0, and 50 when both averages are 0 (a flat window
    is neither overbought nor oversold). The averages are :func:`seeded_ewm` with ``alpha = 1 /
    n``, computed on the bare values (:func:`rsi_values`).
    """
    return pd.Series(rsi_values(close.to_numpy(dtype=float, na_value=np.nan), n, step),
                     index=close.index)


class Macd(NamedTuple):
    """:func:`macd`'s three series, indexed like the closes."""

    line: pd.Series
    signal: pd.Series
    histogram: pd.Series


def macd(close: pd.Series, fast: int = 12, slow: int = 26, signal: int = 9) -> Macd:
    """MACD(fast, slow, signal) of ``close`` (module docstring): NaN before row ``slow - 1`` (the
    line) and row ``slow + signal - 2`` (the signal and the histogram)."""
    fast, slow = _period("the fast period", fast), _period("the slow period", slow)
    signal = _period("the signal period", signal)
    if fast >= slow:
        raise UnusableInput(f"the fast period ({fast}) must be shorter than the slow one ({slow})")
    line = ema(close, fast) - ema(close, slow)
    smooth = ema(line, signal)
    return Macd(line, smooth, line - smooth)


def rolling_std(x: pd.Series, n: int) -> pd.Series:
    """The population standard deviation (``ddof = 0``) of the last n values, current included
    (NaN before n): each value is exactly ``np.std`` of its window."""
    n = _period("the window", n)
    values = x.to_numpy(dtype=float, na_value=np.nan)
    out = np.full(len(values), np.nan)
    if len(values) >= n:
        windows = np.lib.stride_tricks.sliding_window_view(values, n)
        out[n - 1:] = np.std(windows, axis=1, ddof=0)
    return pd.Series(out, index=x.index)


class Bands(NamedTuple):
    """:func:`bollinger`'s series, indexed like the closes."""

    lower: pd.Series
    middle: pd.Series
    upper: pd.Series
    position: pd.Series  # 0 at the lower band, 1 at the upper; 0.5 when they meet


def bollinger(close: pd.Series, n: int = 20, width: float = 2.0) -> Bands:
    """Bollinger bands (n, width) of ``close`` (module docstring); NaN before row n - 1."""
    n = _period("the window", n)
    if not width > 0:
        raise UnusableInput(f"the band width must be a positive number of deviations, not "
                            f"{width!r}")
    middle = sma(close, n)
    spread = width * rolling_std(close, n)
    upper, lower = middle + spread, middle - spread
    span = upper - lower
    position = ((close - lower) / span.where(span != 0)).where(span != 0, 0.5)
    return Bands(lower, middle, upper, position.where(middle.notna()))


def true_range(high: pd.Series, low: pd.Series, close: pd.Series) -> pd.Series:
    """The true range of every bar (module docstring); NaN on the first, which has no previous
    close."""
    h, lo = high.to_numpy(dtype=float), low.to_numpy(dtype=float)
    c = close.to_numpy(dtype=float)
    if not len(h) == len(lo) == len(c):
        raise UnusableInput(f"highs, lows and closes differ in length ({len(h)}, {len(lo)}, "
                            f"{len(c)})")
    out = np.full(len(c), np.nan)
    prev = c[:-1]
    out[1:] = np.maximum(h[1:] - lo[1:], np.maximum(np.abs(h[1:] - prev), np.abs(lo[1:] - prev)))
    return pd.Series(out, index=close.index)


def atr(high: pd.Series, low: pd.Series, close: pd.Series, n: int = 14) -> pd.Series:
    """Wilder's ATR(n) (module docstring): NaN on the first n rows."""
    n = _period("the ATR period", n)
    return seeded_ewm(true_range(high, low, close), n, 1.0 / n)
