"""The candle suite, defined in code (never loaded from JSON: custom expectations would be lost).

It validates ONE prepared frame per ingest: all symbols and intervals concatenated, with the
per-series statistics already computed as columns by :mod:`arena.data.validation.stats`. Each
expectation carries ``meta["check"]`` (the report row it feeds) and ``meta["problem"]`` (a few
words for the message), and a ``description`` that Data Docs shows instead of the raw kwargs.
"""

from __future__ import annotations

import math
from functools import lru_cache

import great_expectations as gx
from great_expectations import expectations as gxe
from great_expectations.expectations.row_conditions import Column

from arena.data.validation import stats as cs
from arena.data.validation.config import ValidationConfig
from arena.data.validation.expectations.custom import (
    ExpectCandlesToBeSane,
    ExpectJumpsToBeExplained,
)

SUITE_NAME = "candles"


def _meta(check: str, problem: str) -> dict[str, str]:
    return {"check": check, "problem": problem}


@lru_cache(maxsize=8)
def candle_suite(config: ValidationConfig) -> gx.ExpectationSuite:
    """The suite for one set of thresholds (cached: the config is frozen)."""
    k, m = config.splice_sigmas, config.splice_volume_multiple
    series = [
        gxe.ExpectColumnValuesToBeBetween(
            column=cs.SERIES_BARS, min_value=1, meta=_meta(cs.BAR_COUNT, "zero bars"),
            description="Every requested series has at least one bar."),
        gxe.ExpectColumnValuesToBeBetween(
            column=cs.SERIES_MISSING_SHARE, max_value=config.max_missing_share,
            meta=_meta(cs.BAR_COUNT, "missing bars"),
            description=f"At most {config.max_missing_share:.1%} of the bars the calendar "
                        "expects are missing in each series."),
        gxe.ExpectColumnValuesToBeBetween(
            column=cs.SERIES_OFF_CALENDAR, max_value=config.max_off_calendar_bars,
            meta=_meta(cs.OFF_CALENDAR, "bars where the calendar expects none"),
            description=f"At most {config.max_off_calendar_bars} bars per series where the "
                        "calendar (or the requested window) expects none."),
        gxe.ExpectColumnValuesToBeBetween(
            column=cs.SERIES_STALE, max_value=config.max_stale_bars,
            meta=_meta(cs.STALENESS, "stale"),
            description=f"At most {config.max_stale_bars} calendar bars completed after each "
                        "series' last bar by as_of."),
        gxe.ExpectColumnValuesToBeBetween(
            column=cs.SERIES_INCOMPLETE, max_value=config.max_incomplete_bars,
            meta=_meta(cs.INCOMPLETE, "bars not closed at as_of"),
            description=f"At most {config.max_incomplete_bars} bars still open at as_of."),
    ]
    timestamps = [
        gxe.ExpectCompoundColumnsToBeUnique(
            column_list=["symbol", "interval", cs.BAR_TIME], meta=_meta(cs.UNIQUE, "duplicate"),
            description="Bar times are unique per (symbol, interval)."),
        gxe.ExpectColumnValuesToBeBetween(
            column=cs.STEP_SECONDS, min_value=0, strict_min=True,
            meta=_meta(cs.INCREASING, "not after the previous bar"),
            description="Bar times strictly increase within each series."),
        gxe.ExpectColumnValuesToBeBetween(
            column=cs.GRID_OFFSET, min_value=0, max_value=0,
            meta=_meta(cs.ALIGNED, "off the interval grid"),
            description="Bar times sit on the interval grid of their calendar."),
    ]
    ohlc = [
        ExpectCandlesToBeSane(
            column_list=list(cs.OHLC_COLUMNS), row_condition=Column(cs.IS_BAR) == True,  # noqa: E712
            meta=_meta(cs.OHLC, "OHLC sanity"),
            description="Every bar has a time, finite prices above zero, a volume not below zero, "
                        "a low at most its open and close, and a high at least both."),
    ]
    splice = [
        ExpectJumpsToBeExplained(
            column_list=[cs.JUMP_SIGMAS, cs.VOLUME_RATIO, cs.JUMP_REVERTED, cs.ABS_LOG_RETURN,
                         cs.JUMP_FOLLOWED, cs.JUMP_TRADED],
            max_sigmas=k, min_volume_ratio=m,
            max_log_move=math.log(config.max_explained_factor),
            min_follow_sigmas=config.follow_sigmas, min_follow_share=config.follow_share,
            min_traded_share=config.traded_share,
            row_condition=Column(cs.IS_BAR) == True,  # noqa: E712
            meta=_meta(cs.SPLICE, "level shift without market, volume, trading, reversion or "
                                  "volatility after it"),
            description=f"No close-to-close move beyond {k:g} local sigmas (trailing "
                        f"{config.local_window} returns; net of the market's move when smaller) "
                        f"unless the bar's volume is at least {m:g}x its trailing median, "
                        f"{config.traded_share:.0%} of the move is made within the bar, the "
                        f"move reverts within {config.revert_bars} bars or the "
                        f"{config.follow_bars} returns after it move {config.follow_sigmas:g} "
                        f"of its local sigmas and {config.follow_share:.0%} of the move on "
                        "average (a splice otherwise); a move by a factor of "
                        f"{config.max_explained_factor:g} or more is never excused."),
    ]
    return gx.ExpectationSuite(name=SUITE_NAME, expectations=[*series, *timestamps, *ohlc, *splice])
