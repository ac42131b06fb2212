"""Jump statistics of one price series: how far each close-to-close move lies outside the series'
own robust volatility, and how its volume compares with ordinary volume (the splice check).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.core.sessions import NY

MAD_TO_SIGMA = 1.4826  # robust sigma = 1.4826 x median absolute deviation (normal consistency)
MEAN_AD_TO_SIGMA = 1.2533  # fallback when over half of the returns are identical (MAD = 0)
MAX_SIGMAS = 1e6  # cap for a move in a series that never moved before


def robust_sigma(returns: np.ndarray) -> tuple[float, float]:
    """(median, robust sigma) of returns: 1.4826 x MAD, else 1.2533 x mean absolute deviation."""
    med = float(np.median(returns))
    dev = np.abs(returns - med)
    sigma = MAD_TO_SIGMA * float(np.median(dev))
    return med, sigma if sigma > 0 else MEAN_AD_TO_SIGMA * float(dev.mean())


def jump_statistics(close: np.ndarray, volume: np.ndarray, bar_time: pd.DatetimeIndex, *,
                    sessions_gap: bool, min_returns: int, volume_lookback: int) -> tuple:
    """Per row, in the order given: jump size in robust sigmas, volume ratio, simple return,
    overnight flag; plus (returns used, sigma, overnight sigma) of the series.

    Returns are close-to-close over the bars sorted by time (duplicates and unusable closes
    left out). ``sessions_gap``: the series is stock intraday, so the first bar of each session
    is an overnight return, judged against the series' own overnight returns when there are
    ``min_returns`` of them. The volume ratio divides a bar's volume by the larger of the series'
    median volume and the median of the ``volume_lookback`` bars before it; it is null for a
    series without volume (median 0), which therefore has no volume escape."""
    n = len(close)
    jumps, ratio, simple = (np.full(n, np.nan) for _ in range(3))
    overnight = np.zeros(n, dtype=bool)
    ok = np.isfinite(close) & (close > 0) & ~np.asarray(bar_time.isna())
    ok &= ~pd.Series(bar_time).duplicated().to_numpy()
    pos = np.flatnonzero(ok)
    pos = pos[np.argsort(bar_time.asi8[pos], kind="stable")]
    volume = volume[pos]
    med_volume = float(np.nanmedian(volume)) if len(pos) else 0.0
    if med_volume > 0:  # series without volume (FX, some indices): no volume escape at all
        recent = pd.Series(volume).shift(1).rolling(volume_lookback, min_periods=5).median()
        ratio[pos] = volume / np.fmax(med_volume, recent.to_numpy())
    if len(pos) < 2:
        return jumps, ratio, simple, overnight, (0, None, None)
    log_ret = np.diff(np.log(close[pos]))
    simple[pos[1:]] = np.expm1(log_ret)
    gap = np.zeros(len(log_ret), dtype=bool)
    if sessions_gap:
        day = bar_time[pos].tz_convert(NY).normalize().asi8
        gap = day[1:] != day[:-1]
        overnight[pos[1:]] = gap
    if len(log_ret) < min_returns:
        return jumps, ratio, simple, overnight, (len(log_ret), None, None)
    med, sigma = robust_sigma(log_ret[~gap] if (~gap).sum() >= min_returns else log_ret)
    centre, scale = np.full(len(log_ret), med), np.full(len(log_ret), sigma)
    night_sigma = None
    if gap.sum() >= min_returns:  # overnight gaps judged against their own distribution
        night_med, night_sigma = robust_sigma(log_ret[gap])
        centre[gap], scale[gap] = night_med, night_sigma
    dev = np.abs(log_ret - centre)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(dev == 0, 0.0, dev / scale)
    jumps[pos[1:]] = np.minimum(z, MAX_SIGMAS)
    return jumps, ratio, simple, overnight, (len(log_ret), sigma, night_sigma)
