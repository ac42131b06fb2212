"""Custom expectations for candles, where the built-ins do not fit.

* ``ExpectCandlesToBeSane``: every bar has a time, finite prices above zero, a finite volume not
  below zero, and low <= min(open, close), max(open, close) <= high. One multicolumn expectation
  instead of fifteen built-ins (not-null, between, pair comparisons): each expectation costs
  ~12 ms per run whatever the row count, and the built-in "between" lets ``inf`` through. The
  rules live in :func:`arena.data.validation.stats.ohlc_problems`, which also names them in messages.
* ``ExpectJumpsToBeExplained``: a jump beyond ``max_sigmas`` local sigmas (already net of the
  market's move when that is smaller: see :mod:`arena.data.validation.jumps`) passes only when the
  bar's volume is at least ``min_volume_ratio`` x its trailing median volume (a genuine move
  trades heavily; a splice of two price series does not), at least ``min_traded_share`` of the
  move was made within the bar (a splice shifts a whole, ordinary bar), the move reverted (a
  level shift does not), or the returns after it moved at least ``min_follow_sigmas`` of its
  local sigmas and ``min_follow_share`` of the jump itself (a crash starts volatility in
  proportion to its size; a splice is carried calmly); a move by a factor of
  ``exp(max_log_move)`` or more is never excused. A null volume ratio (no volume data), traded
  share or follow-up never excuses a jump. A null jump (first bars, not judged) passes. The
  rule lives in :func:`arena.data.validation.stats.jumps_explained` (the NumPy evaluation of
  the suite, :mod:`arena.data.validation.suite`, uses it too).

Classes register themselves with Great Expectations when this module is imported; a suite that
uses them must be built in code after the import (a suite reloaded from JSON in a process that has
not imported this module silently loses them).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import pandas as pd
from great_expectations.execution_engine import PandasExecutionEngine
from great_expectations.expectations.expectation import MulticolumnMapExpectation
from great_expectations.expectations.metrics.map_metric_provider import (
    MulticolumnMapMetricProvider,
    multicolumn_condition_partial,
)

from arena.data.validation.stats import OHLC_COLUMNS, jumps_explained, ohlc_problems

_DOMAIN_KEYS = ("batch_id", "table", "row_condition", "condition_parser", "ignore_row_if")


class CandlesSane(MulticolumnMapMetricProvider):
    condition_metric_name = "multicolumn_values.arena_candles_sane"
    condition_domain_keys = ("column_list", *_DOMAIN_KEYS)

    @multicolumn_condition_partial(engine=PandasExecutionEngine)
    def _pandas(cls, column_list: pd.DataFrame, **kwargs) -> pd.Series:
        bars = column_list.set_axis(list(OHLC_COLUMNS), axis=1)  # columns come in suite order
        return ~ohlc_problems(bars).any(axis=1)


class ExpectCandlesToBeSane(MulticolumnMapExpectation):
    """Expect every row of ``column_list`` = (timestamp, open, high, low, close, volume) to be a
    sane candle: no nulls, prices finite and above zero, volume finite and not negative,
    low <= min(open, close) and max(open, close) <= high."""

    ignore_row_if: Literal["all_values_are_missing", "any_value_is_missing", "never"] = "never"

    map_metric: ClassVar[str] = "multicolumn_values.arena_candles_sane"


class JumpsExplained(MulticolumnMapMetricProvider):
    condition_metric_name = "multicolumn_values.arena_jump_explained"
    condition_domain_keys = ("column_list", *_DOMAIN_KEYS)
    condition_value_keys = ("max_sigmas", "min_volume_ratio", "max_log_move",
                            "min_follow_sigmas", "min_follow_share", "min_traded_share")

    @multicolumn_condition_partial(engine=PandasExecutionEngine)
    def _pandas(cls, column_list: pd.DataFrame, max_sigmas: float, min_volume_ratio: float,
                max_log_move: float, min_follow_sigmas: float, min_follow_share: float,
                min_traded_share: float, **kwargs) -> pd.Series:
        ok = jumps_explained(
            *(column_list.iloc[:, i].to_numpy(dtype="float64") for i in range(6)),
            max_sigmas=max_sigmas, min_volume_ratio=min_volume_ratio, max_log_move=max_log_move,
            min_follow_sigmas=min_follow_sigmas, min_follow_share=min_follow_share,
            min_traded_share=min_traded_share)
        return pd.Series(ok, index=column_list.index)


class ExpectJumpsToBeExplained(MulticolumnMapExpectation):
    """Expect every row of ``column_list`` = (jump in local sigmas, volume ratio, reverted 0/1,
    |log return|, follow-up volatility in local sigmas, share traded within the bar) to move at
    most ``max_sigmas``, or - when its |log return| is below ``max_log_move`` - to trade at least
    ``min_volume_ratio`` x its trailing median volume, make ``min_traded_share`` of the move
    within its bar, revert, or be followed by volatility of ``min_follow_sigmas`` and of
    ``min_follow_share`` x its own sigmas."""

    max_sigmas: float
    min_volume_ratio: float
    max_log_move: float
    min_follow_sigmas: float
    min_follow_share: float
    min_traded_share: float
    ignore_row_if: Literal["all_values_are_missing", "any_value_is_missing", "never"] = "never"

    map_metric: ClassVar[str] = "multicolumn_values.arena_jump_explained"
    success_keys: ClassVar[tuple[str, ...]] = (
        "max_sigmas", "min_volume_ratio", "max_log_move", "min_follow_sigmas",
        "min_follow_share", "min_traded_share", "ignore_row_if", "mostly")
    args_keys: ClassVar[tuple[str, ...]] = (
        "column_list", "max_sigmas", "min_volume_ratio", "max_log_move", "min_follow_sigmas",
        "min_follow_share", "min_traded_share")


__all__ = ["ExpectCandlesToBeSane", "ExpectJumpsToBeExplained"]
