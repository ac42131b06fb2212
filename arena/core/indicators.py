"""Indicators on a price series, shared by the briefing and the reference rules.

Every value at row t uses rows 0..t only (no lookahead; the reference rules' tests and the
briefing's prove it). SMA(n) is the mean of the last n values (undefined before n); EMA(n) has
``alpha = 2 / (n + 1)`` and is seeded with the SMA of its first n inputs (the StockCharts / TA-Lib
convention); Wilder smoothing is the same with ``alpha = 1 / n``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


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


def rsi_wilder(close: pd.Series, n: int = 14, step: int = 1) -> pd.Series:
    """Wilder's RSI(n), indexed like ``close``; NaN on the first ``n + step - 1`` rows.

    Changes ``d_t = close_t - close_(t-step)`` (``step = 1``: bar to bar, the textbook); gains
    ``max(d, 0)``, losses ``max(-d, 0)``. The first average gain/loss (row ``n + step - 1``) is the
    simple mean of the first n gains/losses; then Wilder smoothing ``avg_t = (avg_(t-1) x (n - 1)
    + value_t) / n``. ``RSI = 100 - 100 / (1 + avg_gain / avg_loss) = 100 x avg_gain / (avg_gain
    + avg_loss)``: 100 when the average loss is 0, and 50 when both averages are 0 (a flat window
    is neither overbought nor oversold).
    """
    delta = close.astype(float).diff(step)
    gain = seeded_ewm(delta.clip(lower=0.0), n, 1.0 / n)
    loss = seeded_ewm((-delta).clip(lower=0.0), n, 1.0 / n)
    total = gain + loss
    rsi = 100.0 * gain / total.where(total > 0)
    return rsi.where(~(total == 0), 50.0)
