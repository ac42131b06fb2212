"""Custom expectations for candles, where the built-ins do not fit.

* ``ExpectCandlesToBeSane``: every bar has a time, finite prices above zero, a finite volume not
  below zero, and low <= min(open, close), max(open, close) <= high. One multicolumn expectation
  instead of fifteen built-ins (not-null, between, pair comparisons): each expectation costs
  ~12 ms per run whatever the row count, and the built-in "between" lets ``inf`` through. The
  rules live in :func:`arena.data.validation.stats.ohlc_problems`, which also names them in messages.
* ``ExpectJumpsToBeMatchedByVolume``: a jump beyond ``max_sigmas`` robust sigmas passes only when
  the bar's volume is at least ``min_volume_ratio`` x the series' median volume (a genuine move
  trades heavily; a contract roll or a splice of two price series does not). A null volume ratio
  (the series has no volume data) never excuses a jump. A null jump (first bar) passes.

Classes register themselves with Great Expectations when this module is imported; a suite that
uses them must be built in code after the import (a suite reloaded from JSON in a process that has
not imported this module silently loses them).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import pandas as pd
from great_expectations.execution_engine import PandasExecutionEngine
from great_expectations.expectations.expectation import (
    ColumnPairMapExpectation,
    MulticolumnMapExpectation,
)
from great_expectations.expectations.metrics.map_metric_provider import (
    ColumnPairMapMetricProvider,
    MulticolumnMapMetricProvider,
    column_pair_condition_partial,
    multicolumn_condition_partial,
)

from arena.data.validation.stats import OHLC_COLUMNS, ohlc_problems

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


class JumpsMatchedByVolume(ColumnPairMapMetricProvider):
    condition_metric_name = "column_pair_values.arena_jump_matched_by_volume"
    condition_domain_keys = ("column_A", "column_B", *_DOMAIN_KEYS)
    condition_value_keys = ("max_sigmas", "min_volume_ratio")

    @column_pair_condition_partial(engine=PandasExecutionEngine)
    def _pandas(cls, column_A: pd.Series, column_B: pd.Series, max_sigmas: float,
                min_volume_ratio: float, **kwargs) -> pd.Series:
        return column_A.isna() | (column_A <= max_sigmas) | (column_B >= min_volume_ratio)


class ExpectJumpsToBeMatchedByVolume(ColumnPairMapExpectation):
    """Expect every jump larger than ``max_sigmas`` (column A, in robust sigmas) to come with
    volume of at least ``min_volume_ratio`` x the median (column B, a ratio; null = no volume)."""

    max_sigmas: float
    min_volume_ratio: float
    ignore_row_if: Literal["both_values_are_missing", "neither"] = "both_values_are_missing"

    map_metric: ClassVar[str] = "column_pair_values.arena_jump_matched_by_volume"
    success_keys: ClassVar[tuple[str, ...]] = (
        "max_sigmas", "min_volume_ratio", "ignore_row_if", "mostly")
    args_keys: ClassVar[tuple[str, ...]] = ("column_A", "column_B", "max_sigmas", "min_volume_ratio")


__all__ = ["ExpectCandlesToBeSane", "ExpectJumpsToBeMatchedByVolume"]
