"""What a candle validation is asked: the series (:class:`Window`) and the thresholds
(:class:`ValidationConfig`), shared by the statistics, the suite and the checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from arena.core.sessions import CRYPTO, NYSE, utc


@dataclass(frozen=True)
class Window:
    """What was asked for one series: bars with open time in ``[start, end)`` on ``calendar``
    (``24/7`` or ``XNYS``). ``None`` start/end: the frame's own first bar / through its last bar.

    The bar count covers ``[start, end)`` only; bars older than ``start`` are stored history
    (still judged against the calendar, but not counted), bars after ``end`` are unexpected.

    ``judged_from``: bars opening before it are context - stored bars judged when they were
    published - that feed the splice check's trailing statistics (local sigma, volume median,
    overnight returns) without being judged again, by the splice check or any other (an
    incremental ingest validates what it adds plus this context; None: every bar is judged)."""

    symbol: str
    interval: str
    calendar: str
    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None
    judged_from: pd.Timestamp | None = None

    def __post_init__(self) -> None:
        for name in ("start", "end", "judged_from"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, utc(value))


@dataclass(frozen=True)
class ValidationConfig:
    """Thresholds of the candle checks.

    * ``max_missing_share`` 0.02: share of calendar-expected bars that may be missing (a venue's
      maintenance hour: 1 of 72 hourly crypto bars passes, 2 do not). Counted from the window
      start to the last bar when ``as_of`` is given (the tail after the last bar is the
      staleness check's), over the whole window otherwise.
    * ``max_off_calendar_bars`` 0: a bar where the calendar expects none (a stock bar on a
      Saturday or at 03:00 UTC) is never right.
    * The splice check (``arena.data.validation.jumps``). A bar fails when ALL of:

      1. its close-to-close log return lies more than ``splice_sigmas`` (6) local sigmas from the
         local median, both from the ``local_window`` (60) returns BEFORE the bar (1.4826 x MAD;
         never the bar itself or a later one); the local sigma is the larger of that and the
         robust sigma of the last ``fast_window`` (20) returns, since volatility rises faster
         than a long window sees. A crisis is judged against the crisis' own
         volatility: GOOG's 2008 crash days stay within 5.6 local sigmas (2008-10-13 +14.8%;
         2008-09-29 -11.6%: 5.4), against up to 12 sigmas of the whole series. Measured
         false-positive rate (bars flagged / bars judged, after rules 2-6): GOOG daily
         2004-2013 0 of 2,127, EURUSD hourly 2017 0 of 2,979, the S&P 500 and the NASDAQ
         Composite daily 1999-2018, each alone, 0 of 5,010 (2 and 1 without rules 5-6), a year
         of the synthetic market 0 at every interval (``benchmarks/jump_check.py``);
      2. the same holds for the return net of the market's move at that bar: the benchmark's
         return when the batch holds it (``benchmarks``: SPY for XNYS, BTC for 24/7), else the
         benchmark's closes passed to ``validate_bars(market=...)``, else the median return of at
         least ``market_min_others`` (2) other series of the batch with the same calendar and
         interval (the benchmark itself: of at least one other). A batch of one series has no
         market: rule 2 then changes nothing;
      3. its volume is below ``splice_volume_multiple`` (1.5) x the median volume of the
         ``volume_lookback`` (20) bars before it (a series without volume - median 0: FX,
         indices - has no volume escape);
      4. it does not revert: no close among the next ``revert_bars`` (5) bars lies within half
         the move of the close before it, and it does not undo a jump (beyond ``splice_sigmas``)
         of the ``revert_bars`` bars before, back within half of it of the close before that
         jump (a spike's way back). Only the first half of this rule looks forward: changing
         bars after ``t`` never changes rules 1-3 for bar ``t``. A failing bar among the last
         ``revert_bars`` bars of its series (reversion not yet visible) is reported as "suspect
         at the newest bar" (``CheckResult.suspect``), to be judged again at the next run.

      5. no volatility follows it: the robust sigma of the ``follow_bars`` (5) returns after it
         (1.2533 x their mean absolute deviation from its local median), in its local sigmas,
         is below ``follow_sigmas`` (3) or below ``follow_share`` (0.4) of the move itself. A
         crash starts volatility in proportion to its size (as in a GARCH model, where the next
         variance grows with the shock's square); a splice is a level shift the series then
         carries calmly. SP500 2018-02-05 (-4.1% after a calm year, 7.3 local sigmas, 1.45x
         volume) is followed by 3.8 sigmas, 2018-10-10 (-3.3%, 6.9) by 3.2; a 5% shift in a
         calm stretch (the quietest quarter of the bars) is followed by that much in 1-1.5% of
         the real daily series' bars (0 of EURUSD's hourly ones: a 100-sigma move there needs
         40 sigmas after it);
      6. it was not traded within its own bar: less than ``traded_share`` (0.4) of the move
         lies between the bar's open and its close. A splice (two series stitched at a bar
         boundary) moves the level between two bars and leaves the shifted bar an ordinary one;
         a genuine move is made in the session (NASDAQ 2017-10-27, +2.2% on big tech earnings
         at 6.5 local sigmas, 1.3x volume, calm after: 46% of it from the open to the close).

      Rules 4 and 5 look forward: a failing bar among the last ``max(revert_bars,
      follow_bars)`` bars of its series is "suspect at the newest bar" until later bars show it.
      A move by a factor of ``max_explained_factor`` (1.9: -47% or +90%) or more - an
      unadjusted 2:1 split, a 10x unit error - is never explained by rules 2-6: it fails whenever
      it exceeds ``splice_sigmas`` local sigmas, reverting or not, on any volume, whatever follows.
      Stock intraday overnight gaps are judged against the trailing ``local_window`` overnight
      returns when there are ``min_returns`` of them, else against the intraday sigma widened by
      sqrt(intervals spanned) (an 18-hour overnight gap of 1h bars: 4.2x). The same widening
      applies to any 24/7 return spanning several intervals (missing bars; the FX weekend, while
      FX has no calendar of its own). Daily stock bars step by session: no widening.
    * ``min_returns`` 20: a return is judged only when its trailing window holds this many
      earlier returns (a sigma from a handful of returns means nothing).
    * ``max_stale_bars`` 1: calendar bars that may have completed after the last bar by as_of
      (a provider a bar late); weekends and holidays expect no bars, so they never make stock
      data stale.
    * ``max_incomplete_bars`` 0: bars still open at as_of (the product uses completed bars only).
    """

    max_missing_share: float = 0.02
    max_off_calendar_bars: int = 0
    splice_sigmas: float = 6.0
    splice_volume_multiple: float = 1.5
    volume_lookback: int = 20
    min_returns: int = 20
    local_window: int = 60
    fast_window: int = 20
    revert_bars: int = 5
    follow_bars: int = 5
    follow_sigmas: float = 3.0
    follow_share: float = 0.4
    traded_share: float = 0.4
    max_explained_factor: float = 1.9
    benchmarks: tuple[tuple[str, str], ...] = ((NYSE, "SPY"), (CRYPTO, "BTC"))
    market_min_others: int = 2
    max_stale_bars: int = 1
    max_incomplete_bars: int = 0
