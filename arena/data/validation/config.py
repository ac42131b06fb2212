"""What a candle validation is asked: the series (:class:`Window`) and the thresholds
(:class:`ValidationConfig`), shared by the statistics, the suite and the checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from arena.core.sessions import utc


@dataclass(frozen=True)
class Window:
    """What was asked for one series: bars with open time in ``[start, end)`` on ``calendar``
    (``24/7`` or ``XNYS``). ``None`` start/end: the frame's own first bar / through its last bar.

    The bar count covers ``[start, end)`` only; bars older than ``start`` are stored history
    (still judged against the calendar, but not counted), bars after ``end`` are unexpected."""

    symbol: str
    interval: str
    calendar: str
    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None

    def __post_init__(self) -> None:
        for name in ("start", "end"):
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
    * ``splice_sigmas`` 10 and ``splice_volume_multiple`` 1.5: a close-to-close log return more
      than 10 robust sigmas (1.4826 x MAD of the series' own returns) from their median fails
      unless the bar's volume is at least 1.5x the median volume. The median is the larger of the
      whole series' median and the median of the ``volume_lookback`` (20) bars before the jump:
      volume trends and clusters (GOOG 2004-2013 trades >= 1.5x its decade median on 31% of days,
      and 2.5x through November 2008), so the series median alone would excuse a splice on about
      one day in three. Real GOOG tops out at 12.2 sigmas (2008-04-18 earnings, +20%, 3.1x its
      reference volume); a 35% splice is ~20 sigmas. Stock intraday overnight gaps are judged
      against the series' own overnight returns when it has ``min_returns`` of them, else with the
      same sigma as the rest. A series without volume (median 0: FX, indices) has no volume
      escape: every jump beyond k sigmas fails.
    * ``min_returns`` 20: fewer returns than this and the splice check is not judged (a sigma from
      a handful of returns means nothing).
    * ``max_stale_bars`` 1: calendar bars that may have completed after the last bar by as_of
      (a provider a bar late); weekends and holidays expect no bars, so they never make stock
      data stale.
    * ``max_incomplete_bars`` 0: bars still open at as_of (the product uses completed bars only).
    """

    max_missing_share: float = 0.02
    max_off_calendar_bars: int = 0
    splice_sigmas: float = 10.0
    splice_volume_multiple: float = 1.5
    volume_lookback: int = 20
    min_returns: int = 20
    max_stale_bars: int = 1
    max_incomplete_bars: int = 0
