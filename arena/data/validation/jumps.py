"""Jump statistics of price series for the splice check: how far each close-to-close move lies
outside the series' LOCAL volatility, whether the market made the same move, whether the series
traded on it, and whether the move reverted.

A splice (two price series stitched together, an unadjusted split, a unit change) is a level shift
that a series makes alone, without volume, and keeps. So a bar's move is judged

* on scale: its log return's distance from the trailing median return, in trailing robust sigmas
  (1.4826 x MAD of the ``local_window`` returns BEFORE the bar; never the bar itself or a later
  one): a crisis month is judged against a crisis month's volatility;
* net of the market: the same distance for the return minus the market's move at that bar (the
  benchmark's return, else the median return of the batch's other series of the same calendar
  and interval), and the smaller of the two counts;
* on volume: its volume against the median volume of the ``volume_lookback`` bars before it;
* on reversion (the only look forward, by design): a move that comes back within
  ``revert_bars`` bars was no level shift. The newest bars cannot show that yet: a suspect there
  is reported as "suspect at the newest bar" (judged again when later bars arrive).

A move by a factor of ``max_explained_factor`` (1.9) or more - an unadjusted 2:1 split, a unit
error - is never explained by the market, volume or reversion: only its scale can pass it.

Everything here except reversion is causal: changing bars after ``t`` never changes the
statistics of bar ``t``. This module imports no Great Expectations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

from arena.core.sessions import NY

MAD_TO_SIGMA = 1.4826  # robust sigma = 1.4826 x median absolute deviation (normal consistency)
MEAN_AD_TO_SIGMA = 1.2533  # fallback when over half of the returns are identical (MAD = 0)
MAX_SIGMAS = 1e6  # cap for a move in a series that never moved before
_TICKS_PER_SECOND = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}  # DatetimeIndex.asi8 units


def robust_sigma(returns: np.ndarray) -> tuple[float, float]:
    """(median, robust sigma) of returns: 1.4826 x MAD, else 1.2533 x mean absolute deviation."""
    med = float(np.median(returns))
    dev = np.abs(returns - med)
    sigma = MAD_TO_SIGMA * float(np.median(dev))
    return med, sigma if sigma > 0 else MEAN_AD_TO_SIGMA * float(dev.mean())


def trailing_robust(returns: np.ndarray, window: int, min_periods: int, start: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per position ``t``: (median, robust sigma) of the finite values among the last ``window``
    finite values before ``t`` (``t`` itself excluded); null with fewer than ``min_periods`` of
    them. Robust sigma as in :func:`robust_sigma` (MAD, else mean absolute deviation).
    ``start``: only positions from there on are needed (the earlier ones may stay null)."""
    n = len(returns)
    centre, scale = np.full(n, np.nan), np.full(n, np.nan)
    finite = np.isfinite(returns)
    values = returns[finite].astype("float64")
    before = np.cumsum(finite) - finite  # finite values before each position
    m = len(values)
    if m < min_periods:
        return centre, scale
    # stats[k]: of values[k - window .. k - 1], for k = 0 .. m (k values seen)
    med, sig = np.full(m + 1, np.nan), np.full(m + 1, np.nan)
    k0 = int(before[min(start, n - 1)]) if n else 0  # values seen at the first needed position
    full = np.arange(max(window, k0), m + 1)
    if len(full):
        _robust_rows(sliding_window_view(values, window)[full - window], med, sig, full)
    first = np.arange(max(min_periods, k0), min(window, m + 1))  # k < window values seen
    if len(first):
        rows = np.where(np.arange(window)[None, :] < first[:, None],
                        np.r_[values[:window], np.full(max(window - m, 0), np.nan)][None, :],
                        np.nan)
        _robust_rows(rows, med, sig, first, counts=first)
    return med[before], sig[before]


def trailing_scale(returns: np.ndarray, window: int, fast_window: int, min_periods: int,
                   start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per position: the trailing median of ``window`` returns and the LARGER of their robust
    sigma and that of the last ``fast_window`` (volatility rises faster than a long window sees:
    the first days of a stressed spell are judged against the spell, not the calm before it)."""
    centre, scale = trailing_robust(returns, window, min_periods, start)
    if fast_window < window:
        scale = np.fmax(scale, trailing_robust(returns, fast_window, fast_window, start)[1])
    return centre, scale


def _robust_rows(rows: np.ndarray, med: np.ndarray, sig: np.ndarray, at: np.ndarray,
                 counts: np.ndarray | None = None) -> None:
    """(median, robust sigma) of each row into ``med[at]``, ``sig[at]``; ``counts``: each row
    holds that many values, then NaN."""
    if counts is None:
        centre = np.median(rows, axis=1)
        dev = np.abs(rows - centre[:, None])
        mad, mean_ad = np.median(dev, axis=1), dev.mean(axis=1)
    else:
        centre = _row_medians(rows, counts)
        dev = np.abs(rows - centre[:, None])
        mad, mean_ad = _row_medians(dev, counts), np.nanmean(dev, axis=1)
    med[at] = centre
    sig[at] = np.where(mad > 0, MAD_TO_SIGMA * mad, MEAN_AD_TO_SIGMA * mean_ad)


def _row_medians(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    ordered = np.sort(rows, axis=1)  # NaN last
    lo = np.take_along_axis(ordered, ((counts - 1) // 2)[:, None], axis=1)[:, 0]
    hi = np.take_along_axis(ordered, (counts // 2)[:, None], axis=1)[:, 0]
    return 0.5 * (lo + hi)


@dataclass
class SeriesJumps:
    """Per row of one series (in the order given; null where there is no return) and a summary."""

    log_return: np.ndarray
    simple: np.ndarray
    centre: np.ndarray  # trailing median return
    scale: np.ndarray  # trailing robust sigma
    local_sigmas: np.ndarray  # |log return - centre| / scale (capped at MAX_SIGMAS)
    volume_ratio: np.ndarray  # volume / trailing median volume; null: no volume data
    reverted: np.ndarray  # 1.0: the move came back within revert_bars bars; 0.0: not (yet)
    newest: np.ndarray  # True: fewer than revert_bars bars after it and not reverted yet
    overnight: np.ndarray
    returns: int
    sigma: float | None  # whole-series robust sigma (reported for context, not judged)
    overnight_sigma: float | None


def jump_statistics(close: np.ndarray, volume: np.ndarray, bar_time: pd.DatetimeIndex, *,
                    sessions_gap: bool, min_returns: int, volume_lookback: int,
                    local_window: int, fast_window: int, revert_bars: int,
                    jump_sigmas: float, interval_seconds: float | None = None,
                    judged_from: pd.Timestamp | None = None) -> SeriesJumps:
    """Jump statistics of one series (see the module docstring).

    Returns are close-to-close over the bars sorted by time (duplicates and unusable closes
    left out). A return is judged from the ``min_returns``-th on (its trailing sigma needs that
    many earlier returns). ``sessions_gap``: the series is stock intraday, so the first bar of each
    session is an overnight return, judged against the trailing ``local_window`` overnight returns
    when there are ``min_returns`` of them. ``interval_seconds`` (intraday stock and 24/7
    series; None for daily stock bars, which step by session): a return that spans ``s`` > 1
    intervals accumulated ``s`` intervals of news, so the intraday sigma it is judged against is
    widened by sqrt(s) - an overnight gap before there are enough earlier ones, bars missing, or
    a market that closes without a calendar saying so (the FX weekend under 24/7). A move counts
    as reverted when a close among the next ``revert_bars`` bars lies within half the move of the
    close before it, or when it undoes a jump (beyond ``jump_sigmas``) of the ``revert_bars``
    bars before: back within half of it of the close before that jump (a spike's way back).

    ``judged_from``: the bars before it are context (judged by an earlier run): their trailing
    statistics are left null, except for the last ``revert_bars`` (a spike's way back looks at
    them). The statistics of the judged bars are the same either way."""
    n = len(close)
    out = SeriesJumps(*(np.full(n, np.nan) for _ in range(7)), newest=np.zeros(n, dtype=bool),
                      overnight=np.zeros(n, dtype=bool), returns=0, sigma=None,
                      overnight_sigma=None)
    ok = np.isfinite(close) & (close > 0) & ~np.asarray(bar_time.isna())
    ok &= ~pd.Series(bar_time).duplicated().to_numpy()
    pos = np.flatnonzero(ok)
    pos = pos[np.argsort(bar_time.asi8[pos], kind="stable")]
    vol = pd.Series(volume[pos])
    trailing = vol.shift(1).rolling(volume_lookback, min_periods=5).median().to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out.volume_ratio[pos] = np.where(trailing > 0, vol.to_numpy() / trailing, np.nan)
    if len(pos) < 2:
        return out
    log_close = np.log(close[pos])
    r = np.diff(log_close)
    out.returns = len(r)
    out.log_return[pos[1:]] = r
    out.simple[pos[1:]] = np.expm1(r)
    gap = np.zeros(len(r), dtype=bool)
    if sessions_gap:
        day = bar_time[pos].tz_convert(NY).normalize().asi8
        gap = day[1:] != day[:-1]
        out.overnight[pos[1:]] = gap
    first = 0  # the first return whose statistics are needed
    if judged_from is not None:
        judged = int(bar_time[pos].searchsorted(judged_from))
        first = max(judged - 1 - revert_bars, 0)  # return i is the move into bar pos[i + 1]
    centre, scale = trailing_scale(np.where(gap, np.nan, r), local_window, fast_window,
                                   min_returns, first)
    if interval_seconds:
        ticks = interval_seconds * _TICKS_PER_SECOND[bar_time.unit]
        spans = np.diff(bar_time[pos].asi8) / ticks  # intervals each return spans
        scale = scale * np.sqrt(np.fmax(spans, 1.0))
    if gap.any():
        night_c, night_s = trailing_scale(r[gap], local_window, fast_window, min_returns,
                                          int(np.count_nonzero(gap[:first])))
        use = np.isfinite(night_s)
        idx = np.flatnonzero(gap)[use]
        centre[idx], scale[idx] = night_c[use], night_s[use]
    out.centre[pos[1:]], out.scale[pos[1:]] = centre, scale
    out.local_sigmas[pos[1:]] = sigmas(r, centre, scale)
    # reversion: a later close (within revert_bars) back within half the move of the close
    # before it (looks ahead); or the move undoes a jump of the revert_bars bars before: it
    # brings the price back within half of it of the close before that jump (causal)
    z = out.local_sigmas[pos[1:]]
    reverted = np.zeros(len(r), dtype=bool)
    half = 0.5 * np.abs(r)
    for j in range(1, revert_bars + 1):
        later = np.full(len(r), np.nan)  # the close j bars after the move's bar
        earlier = np.full(len(r), np.nan)  # the close before the move j bars earlier ...
        was_jump = np.zeros(len(r), dtype=bool)  # ... when that move was a jump
        if len(r) > j:
            later[: len(r) - j] = log_close[1 + j:]
            earlier[j:] = log_close[: len(r) - j]
            was_jump[j:] = z[: len(r) - j] > jump_sigmas
        reverted |= np.abs(later - log_close[:-1]) <= half
        reverted |= was_jump & (np.abs(log_close[1:] - earlier) <= half)
    out.reverted[pos[1:]] = reverted.astype("float64")
    seen_after = len(r) - 1 - np.arange(len(r))  # bars after the move's bar
    out.newest[pos[1:]] = (seen_after < revert_bars) & ~reverted
    if len(r) >= min_returns:
        out.sigma = robust_sigma(r[~gap] if (~gap).sum() >= min_returns else r)[1]
        if gap.sum() >= min_returns:
            out.overnight_sigma = robust_sigma(r[gap])[1]
    return out


def sigmas(r: np.ndarray, centre: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """|r - centre| / scale, 0 for no move, capped at MAX_SIGMAS; null where scale is null."""
    dev = np.abs(r - centre)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(dev == 0, 0.0, dev / scale)
    return np.where(np.isnan(scale), np.nan, np.minimum(z, MAX_SIGMAS))


# --- the market -------------------------------------------------------------------------------

def leave_one_out_median(group: np.ndarray, values: np.ndarray, min_others: int) -> np.ndarray:
    """Per row: the median of ``values`` of the OTHER rows of its group (integer codes); null
    when the group has fewer than ``min_others`` other rows. Rows with a null value take no part
    (and get null)."""
    out = np.full(len(values), np.nan)
    rows = np.flatnonzero(np.isfinite(values) & (group >= 0))
    if not len(rows):
        return out
    order = rows[np.lexsort((values[rows], group[rows]))]
    g, v = group[order], values[order]
    starts = np.r_[0, np.flatnonzero(g[1:] != g[:-1]) + 1]
    sizes = np.diff(np.r_[starts, len(g)])
    start, size = np.repeat(starts, sizes), np.repeat(sizes, sizes)
    rank = np.arange(len(g)) - start
    others = size - 1

    def pick(j: np.ndarray) -> np.ndarray:  # j-th value of the group without the row itself
        return v[np.clip(start + j + (j >= rank), 0, len(v) - 1)]

    med = 0.5 * (pick((others - 1) // 2) + pick(others // 2))
    med[others < max(min_others, 1)] = np.nan
    out[order] = med
    return out


def market_moves(frame: pd.DataFrame, calendars: np.ndarray, benchmarks: Mapping[str, str],
                 external: Mapping[tuple[str, str], pd.Series] | None, *, min_others: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per row of the prepared frame: the market's log return at the row's bar and where it came
    from (0 none, 1 the batch's benchmark, 2 a market series passed in, 3 the median of the
    batch's other series of the same calendar and interval).

    ``frame`` holds ``symbol``, ``interval``, ``bar_time`` and ``log_return``; ``calendars`` is
    the calendar of each row; ``benchmarks`` maps a calendar to its benchmark symbol (SPY for
    XNYS, BTC for 24/7); ``external`` maps (calendar, interval) to the benchmark's closes indexed
    by bar open time (the lake's benchmark, for a batch that does not hold it). The benchmark's
    own rows are judged against the median of the others (here one other is enough)."""
    n = len(frame)
    move, source = np.full(n, np.nan), np.zeros(n, dtype=np.int8)
    if not n:
        return move, source
    r = frame["log_return"].to_numpy()
    times = pd.DatetimeIndex(frame["bar_time"])
    keys = pd.DataFrame({"c": calendars, "i": frame["interval"].to_numpy(), "t": times.asi8})
    group = keys.groupby(["c", "i", "t"], sort=False).ngroup().to_numpy()
    is_bench = (pd.Series(calendars).map(benchmarks).to_numpy() == frame["symbol"].to_numpy())
    # 1. the benchmark in the batch
    bench_rows = np.flatnonzero(is_bench & np.isfinite(r))
    if len(bench_rows):
        by_group = pd.Series(r[bench_rows], index=group[bench_rows])
        by_group = by_group[~by_group.index.duplicated()]
        hit = by_group.reindex(group).to_numpy()
        use = ~is_bench & np.isfinite(hit)
        move[use], source[use] = hit[use], 1
    # 2. a market series passed in (for a batch without its benchmark)
    for (cal, interval), closes in (external or {}).items():
        closes = closes.dropna()
        closes = closes[closes > 0]
        if len(closes) < 2:
            continue
        idx = pd.DatetimeIndex(closes.index)
        idx = idx.tz_localize("UTC") if idx.tz is None else idx.tz_convert("UTC")
        ext = pd.Series(np.r_[np.nan, np.diff(np.log(closes.to_numpy()))], index=idx.asi8)
        ext = ext[~ext.index.duplicated()]
        rows = np.flatnonzero((calendars == cal) & (frame["interval"].to_numpy() == interval)
                              & (source == 0) & ~is_bench)
        hit = ext.reindex(times.asi8[rows]).to_numpy()
        ok = np.isfinite(hit)
        move[rows[ok]], source[rows[ok]] = hit[ok], 2
    # 3. the median of the batch's other series at that bar
    loo = leave_one_out_median(group, r, min_others)
    use = (source == 0) & np.isfinite(loo)
    move[use], source[use] = loo[use], 3
    if is_bench.any():  # the benchmark against whatever else the batch holds at that bar
        loo = leave_one_out_median(group, r, 1)
        use = is_bench & (source == 0) & np.isfinite(loo)
        move[use], source[use] = loo[use], 3
    return move, source
