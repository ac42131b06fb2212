"""Jump statistics of price series for the splice check: how far each close-to-close move lies
outside the series' LOCAL volatility, whether the market made the same move, whether the series
traded on it (volume, and the part of the move made within the bar), whether the move reverted,
and whether volatility followed it.

A splice (two price series stitched together, an unadjusted split, a unit change) is a level shift
that a series makes alone, without volume, and keeps. So a bar's move is judged

* on scale: its log return's distance from the trailing median return, in trailing robust sigmas
  (1.4826 x MAD of the ``local_window`` returns BEFORE the bar; never the bar itself or a later
  one): a crisis month is judged against a crisis month's volatility;
* net of the market: the same distance for the return minus the market's move at that bar (the
  benchmark's return, else the median return of the batch's other series of the same calendar
  and interval), and the smaller of the two counts;
* on volume: its volume against the median volume of the ``volume_lookback`` bars before it;
* within its bar: the share of the move made between the bar's open and its close (a splice
  stitched at a bar boundary moves the level between two bars; the shifted bar is ordinary);
* on reversion (a look forward, by design): a move that comes back within ``revert_bars`` bars
  was no level shift;
* on what follows (the other look forward): the robust sigma of the ``follow_bars`` returns after
  the move, in the move's own trailing sigmas. A crash starts the volatility that follows it; a
  splice is a level shift the series then carries calmly.

The newest bars cannot show reversion or what follows yet: a suspect there is reported as
"suspect at the newest bar" (judged again when later bars arrive).

A move by a factor of ``max_explained_factor`` (1.9) or more - an unadjusted 2:1 split, a unit
error - is never explained by the market, volume or reversion: only its scale can pass it.

Everything here except reversion and what follows is causal: changing bars after ``t`` never changes the
statistics of bar ``t``. This module imports no Great Expectations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.core.sessions import NAT, ceil_micros

MAD_TO_SIGMA = 1.4826  # robust sigma = 1.4826 x median absolute deviation (normal consistency)
MEAN_AD_TO_SIGMA = 1.2533  # fallback when over half of the returns are identical (MAD = 0)
MAX_SIGMAS = 1e6  # cap for a move in a series that never moved before


def robust_sigma(returns: np.ndarray) -> tuple[float, float]:
    """(median, robust sigma) of returns: 1.4826 x MAD, else 1.2533 x mean absolute deviation."""
    med = float(np.median(returns))
    dev = np.abs(returns - med)
    sigma = MAD_TO_SIGMA * float(np.median(dev))
    return med, sigma if sigma > 0 else MEAN_AD_TO_SIGMA * float(dev.mean())


def trailing_robust(returns: np.ndarray, lengths: np.ndarray, window: int, min_periods: int,
                    starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per position ``t`` of each series: (median, robust sigma) of the finite values among the
    last ``window`` finite values of its series before ``t`` (``t`` itself excluded); null with
    fewer than ``min_periods`` of them. Robust sigma as in :func:`robust_sigma` (MAD, else mean
    absolute deviation).

    ``returns`` holds the series one after another, ``lengths`` their lengths: the windows of a
    whole batch are evaluated together (each window on its own, so every series gets exactly the
    numbers it would get alone). ``starts``: per series, only positions from there on are needed
    (the earlier ones may stay null)."""
    n = len(returns)
    centre, scale = np.full(n, np.nan), np.full(n, np.nan)
    if not n:
        return centre, scale
    finite = np.isfinite(returns)
    values = returns[finite].astype("float64")
    series = np.repeat(np.arange(len(lengths)), lengths)
    seen = np.bincount(series[finite], minlength=len(lengths))  # finite values per series
    first_row = np.r_[0, np.cumsum(lengths)[:-1]]
    first_value = np.r_[0, np.cumsum(seen)[:-1]]
    before = np.cumsum(finite) - finite - first_value[series]  # finite values before, per series
    # stats of series s after k values seen (k = 0 .. seen[s]) sit at slot[s] + k
    slot = np.r_[0, np.cumsum(seen + 1)[:-1]]
    med, sig = np.full(int((seen + 1).sum()), np.nan), np.full(int((seen + 1).sum()), np.nan)
    full: list[np.ndarray] = []  # (series, k) with k >= window values seen
    partial: list[np.ndarray] = []  # min_periods <= k < window
    used = np.zeros(len(lengths), dtype=bool)
    for s in np.flatnonzero((lengths > 0) & (seen >= min_periods)):
        used[s] = True
        m = int(seen[s])
        k0 = int(before[first_row[s] + min(int(starts[s]), int(lengths[s]) - 1)])
        for ks, target in ((np.arange(max(window, k0), m + 1), full),
                           (np.arange(max(min_periods, k0), min(window, m + 1)), partial)):
            if len(ks):
                target.append(np.stack([np.full(len(ks), s), ks]))
    cols = np.arange(window)
    if full:
        s, k = np.concatenate(full, axis=1)
        first_of = first_value[s] + k - window  # where each window starts in ``values``
        low, high = int(first_of.min()), int(first_of.max()) + 1
        if 2 * len(k) >= high - low:
            # most windows of the range are needed (a first ingest): evaluate every window of
            # the range in place - those straddling two series are computed and never read
            windows = np.lib.stride_tricks.sliding_window_view(values, window)
            range_med, range_sig = np.empty(high - low), np.empty(high - low)
            for chunk in _chunks(high - low, window):
                at = np.arange(chunk.start, min(chunk.stop, high - low))
                _robust_rows(windows[low + at[0]:low + at[-1] + 1], range_med, range_sig, at)
            med[slot[s] + k], sig[slot[s] + k] = range_med[first_of - low], range_sig[first_of - low]
        else:  # a few windows per series (an incremental ingest): gather just those
            for chunk in _chunks(len(k), window):
                rows = values[first_of[chunk][:, None] + cols]
                _robust_rows(rows, med, sig, slot[s[chunk]] + k[chunk])
    if partial:
        s, k = np.concatenate(partial, axis=1)
        at = np.minimum(first_value[s][:, None] + cols, len(values) - 1)
        rows = np.where(cols[None, :] < k[:, None], values[at], np.nan)
        _robust_rows(rows, med, sig, slot[s] + k, counts=k)
    rows_used = used[series]
    where = slot[series[rows_used]] + before[rows_used]
    centre[rows_used], scale[rows_used] = med[where], sig[where]
    return centre, scale


def _chunks(n: int, width: int, cells: int = 2_000_000) -> list[slice]:
    """Slices of ``n`` rows of ``width`` values, at most ``cells`` values each (bounds memory on
    a first ingest with years of 15-minute bars)."""
    step = max(cells // max(width, 1), 1)
    return [slice(i, i + step) for i in range(0, n, step)]


def trailing_scale(returns: np.ndarray, lengths: np.ndarray, window: int, fast_window: int,
                   min_periods: int, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per position: the trailing median of ``window`` returns and the LARGER of their robust
    sigma and that of the last ``fast_window`` (volatility rises faster than a long window sees:
    the first days of a stressed spell are judged against the spell, not the calm before it).
    Series laid out as in :func:`trailing_robust`."""
    centre, scale = trailing_robust(returns, lengths, window, min_periods, starts)
    if fast_window < window:
        scale = np.fmax(scale, trailing_robust(returns, lengths, fast_window, fast_window,
                                               starts)[1])
    return centre, scale


def _robust_rows(rows: np.ndarray, med: np.ndarray, sig: np.ndarray, at: np.ndarray,
                 counts: np.ndarray | None = None) -> None:
    """(median, robust sigma) of each row into ``med[at]``, ``sig[at]``; ``counts``: each row
    holds that many values, then NaN."""
    if counts is None:
        centre = _full_row_medians(rows)
        mad = _full_row_medians(np.abs(rows - centre[:, None]))
        flat = np.flatnonzero(~(mad > 0))  # the fallback's mean, only where it is needed
        mean_ad = np.full(len(rows), np.nan)
        mean_ad[flat] = np.abs(rows[flat] - centre[flat, None]).mean(axis=1)
    else:
        centre = _row_medians(rows, counts)
        dev = np.abs(rows - centre[:, None])
        mad, mean_ad = _row_medians(dev, counts), np.nanmean(dev, axis=1)
    med[at] = centre
    sig[at] = np.where(mad > 0, MAD_TO_SIGMA * mad, MEAN_AD_TO_SIGMA * mean_ad)


def _full_row_medians(rows: np.ndarray) -> np.ndarray:
    """The median of each row (no NaN): the mean of the two middle values, as ``np.median``
    gives it, from one selection of the lower middle value (a single-rank partition is several
    times faster than the two-rank one ``np.median`` runs on wide batches of windows)."""
    width = rows.shape[1]
    lo = (width - 1) // 2
    part = np.partition(rows, lo, axis=1)
    low = part[:, lo]
    high = low if width % 2 else part[:, lo + 1:].min(axis=1)
    return 0.5 * (low + high)


def _row_medians(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    ordered = np.sort(rows, axis=1)  # NaN last
    lo = np.take_along_axis(ordered, ((counts - 1) // 2)[:, None], axis=1)[:, 0]
    hi = np.take_along_axis(ordered, (counts // 2)[:, None], axis=1)[:, 0]
    return 0.5 * (lo + hi)


@dataclass
class SeriesJumps:
    """Per row (in the order given; null where there is no return) and, per series, a summary
    (one entry per series of the batch, :func:`batch_jump_statistics`)."""

    log_return: np.ndarray
    simple: np.ndarray
    centre: np.ndarray  # trailing median return
    scale: np.ndarray  # trailing robust sigma
    local_sigmas: np.ndarray  # |log return - centre| / scale (capped at MAX_SIGMAS)
    volume_ratio: np.ndarray  # volume / trailing median volume; null: no volume data
    reverted: np.ndarray  # 1.0: the move came back within revert_bars bars; 0.0: not (yet)
    followed: np.ndarray  # robust sigma of the follow_bars returns after it, in its local sigmas
    traded: np.ndarray  # share of the move made from the bar's open to its close (null: no open)
    newest: np.ndarray  # True: fewer than max(revert_bars, follow_bars) bars after it and not
    # reverted yet (what follows is not known yet)
    overnight: np.ndarray
    returns: Sequence[int]  # close-to-close returns
    sigma: Sequence[float | None]  # whole-series robust sigma (reported for context, not judged)
    overnight_sigma: Sequence[float | None]


def batch_jump_statistics(close: np.ndarray, volume: np.ndarray, bar_time: np.ndarray,
                          series: Sequence[np.ndarray], *, sessions_gap: Sequence[bool],
                          interval_seconds: Sequence[float | None],
                          judged_from: Sequence[pd.Timestamp | None],
                          session_days: np.ndarray | None, min_returns: int,
                          volume_lookback: int, local_window: int, fast_window: int,
                          revert_bars: int, jump_sigmas: float, follow_bars: int = 0,
                          open_: np.ndarray | None = None) -> SeriesJumps:
    """Jump statistics of every series of a batch (see the module docstring).

    ``close``, ``volume``, ``bar_time`` are the batch's rows; ``series`` lists the rows of each
    series in the order given, and ``sessions_gap``, ``interval_seconds``, ``judged_from`` hold
    one entry per series. The series are laid end to end and judged with whole-batch array
    operations (a return never looks across a series' boundary): an ingest judges a few hundred
    series, and per-series array calls cost more than the arithmetic.

    ``bar_time``: the bars' open times as epoch microseconds (``NAT``: no time).
    ``session_days`` (needed when a series has ``sessions_gap``): per row, its New York day (any
    value that differs between days, e.g. the epoch microseconds of New York midnight).

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

    ``follow_bars`` (0: not measured): what follows a move is the robust sigma (1.2533 x mean
    absolute deviation) of the next ``follow_bars`` returns in the move's local sigmas, each
    from the move's trailing median (an overnight return after an intraday move, or the other
    way round, from its own trailing median and in its own sigmas: the two kinds have different
    scales); null until that many returns follow. ``open_`` (per row; None: not measured): the
    share of each move made within its bar, log(close / open) over the log return.

    ``judged_from``: the bars before it are context (judged by an earlier run): their trailing
    statistics are left null, except for the last ``revert_bars`` (a spike's way back looks at
    them). The statistics of the judged bars are the same either way."""
    out = _no_statistics(len(close), len(series))
    laid = _lay_out(close, bar_time, series, judged_from, revert_bars)
    needed, ratio = _volume_ratios(volume, laid, volume_lookback)
    out.volume_ratio[laid.rows[needed]] = ratio
    out.returns[:] = laid.n_returns
    moves = _moves_of(close, laid, sessions_gap, session_days)
    if moves is None:
        return out
    at = laid.rows[moves.into]  # the row each return moves into
    out.log_return[at], out.simple[at], out.overnight[at] = moves.r, np.expm1(moves.r), moves.gap
    centre, scale = trailing_scale(np.where(moves.gap, np.nan, moves.r), laid.n_returns,
                                   local_window, fast_window, min_returns, laid.first)
    _widen(scale, bar_time, interval_seconds, laid, moves)
    if moves.gap.any():
        _judge_overnight_apart(centre, scale, laid, moves, local_window, fast_window, min_returns)
    z = sigmas(moves.r, centre, scale)
    out.centre[at], out.scale[at], out.local_sigmas[at] = centre, scale, z
    reverted = _reverted(moves, z, revert_bars, jump_sigmas)
    out.reverted[at] = reverted.astype("float64")
    out.followed[at] = _what_follows(moves.r, centre, scale, moves.gap, moves.left, follow_bars)
    if open_ is not None:
        out.traded[at] = _traded_shares(open_, laid.rows, moves)
    out.newest[at] = (moves.left < max(revert_bars, follow_bars)) & ~reverted
    _series_sigmas(out, laid.n_returns, moves, min_returns)
    return out


def _no_statistics(n: int, count: int) -> SeriesJumps:
    """The statistics of ``n`` rows of ``count`` series before any is computed: null, False,
    no returns, no sigma."""
    return SeriesJumps(*(np.full(n, np.nan) for _ in range(9)), newest=np.zeros(n, dtype=bool),
                       overnight=np.zeros(n, dtype=bool), returns=np.zeros(count, dtype=np.int64),
                       sigma=[None] * count, overnight_sigma=[None] * count)


@dataclass(frozen=True)
class _Laid:
    """A batch's series laid end to end: the rows a return is computed over (each series' usable
    rows in time order, :func:`_ordered_rows`), series after series, and per series how many,
    where they start and which returns need statistics."""

    rows: np.ndarray  # the batch's rows, series after series
    lengths: np.ndarray  # per series: how many of ``rows`` are its
    first_bar: np.ndarray  # per series: the position of its first row in ``rows``
    n_returns: np.ndarray  # per series: its returns (one fewer than its rows)
    first: np.ndarray  # per series: the first return whose statistics are needed


def _lay_out(close: np.ndarray, bar_time: np.ndarray, series: Sequence[np.ndarray],
             judged_from: Sequence[pd.Timestamp | None], revert_bars: int) -> _Laid:
    """The batch laid end to end; a series' first needed return is the ``revert_bars``-th
    before the one into its first judged bar (the bars before ``judged_from`` are context)."""
    ordered = _ordered_rows(close, bar_time, series)
    lengths = np.array([len(p) for p in ordered], dtype=np.int64)
    rows = np.concatenate(ordered) if len(series) else np.zeros(0, dtype=np.int64)
    first_bar = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
    n_returns = np.maximum(lengths - 1, 0)
    first = np.zeros(len(series), dtype=np.int64)
    for s, since in enumerate(judged_from):
        if since is not None and n_returns[s]:
            times = bar_time[rows[first_bar[s]:first_bar[s] + lengths[s]]]
            judged = int(np.searchsorted(times, ceil_micros(since)))
            first[s] = max(judged - 1 - revert_bars, 0)  # return i moves into bar i + 1
    return _Laid(rows, lengths, first_bar, n_returns, first)


def _volume_ratios(volume: np.ndarray, laid: _Laid, lookback: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The positions (in ``laid.rows``) from each series' first needed return's bar on, and
    each one's volume against the median of the ``lookback`` bars before it (null: no volume
    data; a context bar before them excuses no judged move). The series are laid end to end,
    each after ``lookback`` nulls, so no window reaches into the series before."""
    rows, lengths, count = laid.rows, laid.lengths, len(laid.lengths)
    spaced = np.arange(len(rows)) + np.repeat((np.arange(count) + 1) * lookback, lengths)
    padded = np.full(len(rows) + count * lookback, np.nan)
    padded[spaced] = volume[rows]
    needed = np.flatnonzero(np.arange(len(rows)) - laid.first_bar.repeat(lengths)
                            >= laid.first.repeat(lengths))
    trailing = _trailing_medians(padded, spaced[needed], lookback, 5)
    with np.errstate(divide="ignore", invalid="ignore"):
        return needed, np.where(trailing > 0, volume[rows[needed]] / trailing, np.nan)


@dataclass(frozen=True)
class _Moves:
    """The close-to-close returns of a laid-out batch: into every bar but the first of its
    series, series after series."""

    into: np.ndarray  # the position (in ``rows``) of the bar each return moves into
    owner: np.ndarray  # its series
    order_in: np.ndarray  # its place within its series
    left: np.ndarray  # the returns after it in its series
    log_close: np.ndarray  # per position of ``rows``: the log of its close
    r: np.ndarray  # the log return
    gap: np.ndarray  # an overnight return (the first bar of a session, stock intraday)


def _moves_of(close: np.ndarray, laid: _Laid, sessions_gap: Sequence[bool],
              session_days: np.ndarray | None) -> _Moves | None:
    """The batch's returns (None: there is none); with ``sessions_gap``, a return into
    another New York day (``session_days``) than its bar before is overnight."""
    into = np.ones(len(laid.rows), dtype=bool)
    into[laid.first_bar[laid.lengths > 0]] = False
    into = np.flatnonzero(into)
    if not len(into):
        return None
    owner = np.repeat(np.arange(len(laid.lengths)), laid.n_returns)
    order_in = into - laid.first_bar[owner] - 1
    log_close = np.log(close[laid.rows])
    r = log_close[into] - log_close[into - 1]
    gap = np.zeros(len(r), dtype=bool)
    gapped = np.asarray(sessions_gap, dtype=bool)
    if gapped.any():
        day = session_days[laid.rows]
        gap = gapped[owner] & (day[into] != day[into - 1])
    left = laid.n_returns[owner] - 1 - order_in
    return _Moves(into, owner, order_in, left, log_close, r, gap)


def _widen(scale: np.ndarray, bar_time: np.ndarray, interval_seconds: Sequence[float | None],
           laid: _Laid, moves: _Moves) -> None:
    """Widen in place the scale of each return of a series with ``interval_seconds`` by
    sqrt(the intervals it spans) (at least 1)."""
    widened = np.array([bool(x) for x in interval_seconds], dtype=bool)
    if widened.any():
        ticks = np.array([x * 1e6 if x else np.nan for x in interval_seconds])
        times = bar_time[laid.rows]
        into = moves.into
        spans = (times[into] - times[into - 1]) / ticks[moves.owner]  # intervals spanned
        wide = widened[moves.owner]
        scale[wide] = scale[wide] * np.sqrt(np.fmax(spans[wide], 1.0))


def _judge_overnight_apart(centre: np.ndarray, scale: np.ndarray, laid: _Laid, moves: _Moves,
                           local_window: int, fast_window: int, min_returns: int) -> None:
    """Set in place the centre and scale of each overnight return from its series' trailing
    overnight returns (:func:`trailing_scale` of them alone), where there are enough."""
    owner, count = moves.owner, len(laid.lengths)
    night = np.flatnonzero(moves.gap)
    night_counts = np.bincount(owner[night], minlength=count)
    night_first = np.bincount(owner[night], weights=moves.order_in[night] < laid.first[owner[night]],
                              minlength=count).astype(np.int64)
    night_c, night_s = trailing_scale(moves.r[night], night_counts, local_window, fast_window,
                                      min_returns, night_first)
    use = np.isfinite(night_s)
    centre[night[use]], scale[night[use]] = night_c[use], night_s[use]


def _reverted(moves: _Moves, z: np.ndarray, revert_bars: int, jump_sigmas: float
              ) -> np.ndarray:
    """Per return: whether a later close (within ``revert_bars``) is back within half the move
    of the close before it (looks ahead), or the move undoes a jump (beyond ``jump_sigmas``,
    ``z`` in local sigmas) of the ``revert_bars`` bars before: it brings the price back within
    half of it of the close before that jump (causal)."""
    r, into, log_close, order_in = moves.r, moves.into, moves.log_close, moves.order_in
    reverted = np.zeros(len(r), dtype=bool)
    half = 0.5 * np.abs(r)
    before, after = log_close[into - 1], log_close[into]
    for j in range(1, revert_bars + 1):
        later = np.where(moves.left >= j, log_close[np.minimum(into + j, len(log_close) - 1)],
                         np.nan)
        reverted |= np.abs(later - before) <= half
        back = order_in >= j  # the move j bars earlier is of the same series ...
        was_jump = back & (z[np.maximum(np.arange(len(r)) - j, 0)] > jump_sigmas)  # ... a jump
        earlier = np.where(back, log_close[np.maximum(into - 1 - j, 0)], np.nan)
        reverted |= was_jump & (np.abs(after - earlier) <= half)
    return reverted


def _traded_shares(open_: np.ndarray, rows: np.ndarray, moves: _Moves) -> np.ndarray:
    """Per return: the share of it made from its bar's open to its close (null: no move)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = moves.log_close[moves.into] - np.log(open_[rows][moves.into])
        return np.where(moves.r != 0, inside / moves.r, np.nan)


def _series_sigmas(out: SeriesJumps, n_returns: np.ndarray, moves: _Moves, min_returns: int
                   ) -> None:
    """Set each series' whole-series robust sigma (of its intraday returns when there are
    ``min_returns`` of them) and, with ``min_returns`` overnight returns, theirs."""
    r, gap = moves.r, moves.gap
    ends = np.cumsum(n_returns)
    for s in np.flatnonzero(n_returns >= min_returns):
        rs, gs = r[ends[s] - n_returns[s]:ends[s]], gap[ends[s] - n_returns[s]:ends[s]]
        out.sigma[s] = robust_sigma(rs[~gs] if (~gs).sum() >= min_returns else rs)[1]
        if gs.sum() >= min_returns:
            out.overnight_sigma[s] = robust_sigma(rs[gs])[1]


def _trailing_medians(values: np.ndarray, at: np.ndarray, window: int, min_periods: int
                      ) -> np.ndarray:
    """Per position of ``at``: the median of the non-null values among the ``window`` values
    before it (null with fewer than ``min_periods``), as pandas' ``shift(1).rolling(window,
    min_periods).median()`` gives it; every position is at least ``window`` into ``values``.
    Few positions (an incremental ingest's judged bars) gather just their windows; many, the
    rolling median over the whole array."""
    if len(at) * 4 > len(values):
        trailing = pd.Series(values).shift(1).rolling(window, min_periods=min_periods).median()
        return trailing.to_numpy()[at]
    out = np.full(len(at), np.nan)
    if not len(at):
        return out
    rows = values[at[:, None] - window + np.arange(window)]
    counts = np.count_nonzero(~np.isnan(rows), axis=1)
    enough = counts >= min_periods
    out[enough] = _row_medians(rows[enough], counts[enough])
    return out


def _ordered_rows(close: np.ndarray, bar_time: np.ndarray, series: Sequence[np.ndarray]
                  ) -> list[np.ndarray]:
    """Per series: its rows a return is computed over - usable closes (finite, above zero) with
    a time, the first of each repeated time - in time order."""
    usable = np.isfinite(close) & (close > 0) & (bar_time != NAT)
    ordered = []
    for rows in series:
        ok, times = usable[rows], bar_time[rows]
        if len(rows) > 1 and not bool(np.all(times[1:] > times[:-1])):  # unsorted or repeated
            first_seen = np.zeros(len(rows), dtype=bool)
            first_seen[np.unique(times, return_index=True)[1]] = True
            pos = np.flatnonzero(ok & first_seen)
            pos = pos[np.argsort(times[pos], kind="stable")]
        else:
            pos = np.flatnonzero(ok)
        ordered.append(rows[pos])
    return ordered


def log_returns(close: np.ndarray, bar_time: np.ndarray) -> np.ndarray:
    """Per row of one series (in the order given): the close-to-close log return into it, as
    :func:`batch_jump_statistics` computes it (null for the series' first usable bar and for
    the rows no return is computed over)."""
    out = np.full(len(close), np.nan)
    rows = _ordered_rows(close, bar_time, [np.arange(len(close))])[0]
    if len(rows) > 1:
        log_close = np.log(close[rows])
        out[rows[1:]] = log_close[1:] - log_close[:-1]
    return out


def _what_follows(r: np.ndarray, centre: np.ndarray, scale: np.ndarray, gap: np.ndarray,
                  left: np.ndarray, bars: int) -> np.ndarray:
    """Per return: the robust sigma (1.2533 x mean absolute deviation) of the ``bars`` returns
    after it, in its own trailing sigmas and from its trailing median (a return of the other
    kind - overnight after intraday, or the reverse - from its own median, in its own sigmas);
    null with fewer than ``bars`` returns after it in its series (``left``) or no scale."""
    out = np.full(len(r), np.nan)
    if bars < 1 or not len(r):
        return out
    total = np.zeros(len(r))
    at = np.arange(len(r))
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(1, bars + 1):
            later = np.minimum(at + j, len(r) - 1)
            same = gap[later] == gap
            own = np.abs(r[later] - centre[later]) / scale[later] * scale  # in its own sigmas
            total += np.where(same, np.abs(r[later] - centre), own)
        ok = (left >= bars) & (scale > 0)
        out[ok] = MEAN_AD_TO_SIGMA * total[ok] / bars / scale[ok]
    return out


def sigmas(r: np.ndarray, centre: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """|r - centre| / scale, 0 for no move, capped at MAX_SIGMAS; null where scale is null."""
    dev = np.abs(r - centre)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(dev == 0, 0.0, dev / scale)
    return np.where(np.isnan(scale), np.nan, np.minimum(z, MAX_SIGMAS))


# --- the market -------------------------------------------------------------------------------

def _leave_one_out(group: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the median of ``values`` of the other rows of its group (null without any) and
    how many other rows with a value the group has (-1 for a row without a value): one sort
    serves every threshold on the number of others."""
    out, count = np.full(len(values), np.nan), np.full(len(values), -1, dtype=np.int64)
    rows = np.flatnonzero(np.isfinite(values) & (group >= 0))
    if not len(rows):
        return out, count
    # by group, then by value (ties in both are interchangeable: same value, same median)
    by_value = rows[np.argsort(values[rows])]
    order = by_value[np.argsort(group[by_value], kind="stable")]
    g, v = group[order], values[order]
    starts = np.r_[0, np.flatnonzero(g[1:] != g[:-1]) + 1]
    sizes = np.diff(np.r_[starts, len(g)])
    start, size = np.repeat(starts, sizes), np.repeat(sizes, sizes)
    rank = np.arange(len(g)) - start
    others = size - 1

    def pick(j: np.ndarray) -> np.ndarray:  # j-th value of the group without the row itself
        return v[np.clip(start + j + (j >= rank), 0, len(v) - 1)]

    med = 0.5 * (pick((others - 1) // 2) + pick(others // 2))
    med[others < 1] = np.nan
    out[order], count[order] = med, others
    return out, count


def market_moves(frame: pd.DataFrame, calendars: np.ndarray, benchmarks: Mapping[str, str],
                 external: Mapping[tuple[str, str], pd.Series] | None, *, min_others: int,
                 needed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`market_moves_of` the prepared frame's columns: ``frame`` holds ``symbol``,
    ``interval``, ``bar_time`` and ``log_return``; ``calendars`` is the calendar of each row.
    ``needed`` (a mask; None: every row): the rows whose move is asked for. A move depends only
    on the rows of the same bar time, so only the rows at the needed rows' times are read, and
    the others are left without a move (null, source 0): an incremental ingest judges a few
    hundred bars among a hundred thousand of context."""
    times = pd.DatetimeIndex(frame["bar_time"]).asi8
    r, intervals = frame["log_return"].to_numpy(), frame["interval"].to_numpy()
    symbols = frame["symbol"].to_numpy()
    if needed is None or needed.all():
        return market_moves_of(r, times, calendars, intervals, symbols, benchmarks, external,
                               min_others=min_others)
    rows = np.flatnonzero(np.isin(times, np.unique(times[needed])))
    move, source = np.full(len(r), np.nan), np.zeros(len(r), dtype=np.int8)
    move[rows], source[rows] = market_moves_of(
        r[rows], times[rows], calendars[rows], intervals[rows], symbols[rows], benchmarks,
        external, min_others=min_others)
    return move, source


def market_moves_of(r: np.ndarray, bar_time: np.ndarray, calendars: np.ndarray,
                    intervals: np.ndarray, symbols: np.ndarray, benchmarks: Mapping[str, str],
                    external: Mapping[tuple[str, str], pd.Series] | None, *, min_others: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per row of the prepared frame: the market's log return at the row's bar and where it came
    from (0 none, 1 the batch's benchmark, 2 a market series passed in, 3 the median of the
    batch's other series of the same calendar and interval).

    The rows' log returns ``r``, bar open times (epoch microseconds, ``NAT``: none), calendars,
    intervals and symbols; ``benchmarks`` maps a calendar to its benchmark symbol (SPY for
    XNYS, BTC for 24/7); ``external`` maps (calendar, interval) to the benchmark's closes indexed
    by bar open time (the lake's benchmark, for a batch that does not hold it). The benchmark's
    own rows are judged against the median of the others (here one other is enough). Rows of
    different (calendar, interval) never meet: the moves of a batch are those of each of its
    (calendar, interval) parts."""
    n = len(r)
    if not n:
        return np.full(n, np.nan), np.zeros(n, dtype=np.int8)
    is_bench = np.zeros(n, dtype=bool)  # the row is its calendar's benchmark
    for cal, symbol in benchmarks.items():
        is_bench |= (calendars == cal) & (symbols == symbol)
    return _moves(r, bar_time, _bar_groups(calendars, intervals, bar_time), is_bench,
                  [((calendars == cal) & (intervals == interval), closes)
                   for (cal, interval), closes in (external or {}).items()], min_others)


def part_market_moves(r: np.ndarray, bar_time: np.ndarray, is_bench: np.ndarray,
                      closes: pd.Series | None, *, min_others: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`market_moves_of` the rows of one (calendar, interval): ``is_bench`` marks the
    rows of its benchmark, ``closes`` are the benchmark's closes passed in for it (None:
    none). The same moves as over a batch holding other parts too, from less memory."""
    if not len(r):
        return np.full(0, np.nan), np.zeros(0, dtype=np.int8)
    return _moves(r, bar_time, pd.factorize(bar_time)[0], is_bench,
                  [] if closes is None else [(np.ones(len(r), dtype=bool), closes)], min_others)


def _moves(r: np.ndarray, bar_time: np.ndarray, group: np.ndarray, is_bench: np.ndarray,
           external: Sequence[tuple[np.ndarray, pd.Series]], min_others: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """The moves of :func:`market_moves_of`: ``group`` numbers the rows' (calendar, interval,
    bar time), ``external`` pairs the rows of a (calendar, interval) with the closes passed in
    for it."""
    n = len(r)
    move, source = np.full(n, np.nan), np.zeros(n, dtype=np.int8)
    # 1. the benchmark in the batch
    bench_rows = np.flatnonzero(is_bench & np.isfinite(r))
    if len(bench_rows):
        by_group = pd.Series(r[bench_rows], index=group[bench_rows])
        by_group = by_group[~by_group.index.duplicated()]
        hit = by_group.reindex(group).to_numpy()
        use = ~is_bench & np.isfinite(hit)
        move[use], source[use] = hit[use], 1
    # 2. a market series passed in (for a batch without its benchmark)
    for part, closes in external:
        closes = closes.dropna()
        closes = closes[closes > 0]
        if len(closes) < 2:
            continue
        idx = pd.DatetimeIndex(closes.index)
        idx = idx.tz_localize("UTC") if idx.tz is None else idx.tz_convert("UTC")
        ext = pd.Series(np.r_[np.nan, np.diff(np.log(closes.to_numpy()))], index=idx.asi8)
        ext = ext[~ext.index.duplicated()]
        rows = np.flatnonzero(part & (source == 0) & ~is_bench)
        hit = ext.reindex(bar_time[rows]).to_numpy()
        ok = np.isfinite(hit)
        move[rows[ok]], source[rows[ok]] = hit[ok], 2
    # 3. the median of the batch's other series at that bar
    median, others = _leave_one_out(group, r)
    loo = np.where(others >= max(min_others, 1), median, np.nan)
    use = (source == 0) & np.isfinite(loo)
    move[use], source[use] = loo[use], 3
    if is_bench.any():  # the benchmark against whatever else the batch holds at that bar
        loo = np.where(others >= 1, median, np.nan)
        use = is_bench & (source == 0) & np.isfinite(loo)
        move[use], source[use] = loo[use], 3
    return move, source


def _bar_groups(calendars: np.ndarray, intervals: pd.Series, micros: np.ndarray) -> np.ndarray:
    """Integer codes of (calendar, interval, bar time): rows with equal codes are the same bar
    of the same market. Each part is factorized, then the packed codes once more (they fit in
    int64 whatever the times: the bar times are numbered first)."""
    cal_code = pd.factorize(calendars)[0]
    int_code, int_names = pd.factorize(intervals)
    time_code, times = pd.factorize(micros)
    pair = cal_code.astype(np.int64) * max(len(int_names), 1) + int_code
    return pd.factorize(pair * max(len(times), 1) + time_code)[0]
