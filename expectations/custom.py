"""Custom expectations for candles, where the built-ins do not fit.

* ``ExpectColumnValuesToBeFiniteAtLeast``: the built-in "between" lets ``inf`` through when there is
  no upper bound; a price must be a finite number above zero (a volume: finite, not negative).
* ``ExpectJumpsToBeMatchedByVolume``: a jump beyond ``max_sigmas`` robust sigmas passes only when the
  bar's volume is at least ``min_volume_ratio`` x the series' median volume (a genuine move trades
  heavily; a contract roll or a splice of two price series does not). A null volume ratio (the
  series has no volume data) never excuses a jump. A null jump (the first bar) passes.

Classes register themselves with Great Expectations when this module is imported; a suite that
uses them must be built in code after the import (a suite reloaded from JSON in a process that has
not imported this module silently loses them).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
import pandas as pd
from great_expectations.execution_engine import PandasExecutionEngine
from great_expectations.expectations.expectation import (
    ColumnMapExpectation,
    ColumnPairMapExpectation,
)
from great_expectations.expectations.metrics.map_metric_provider import (
    ColumnMapMetricProvider,
    ColumnPairMapMetricProvider,
    column_condition_partial,
    column_pair_condition_partial,
)


class ColumnValuesFiniteAtLeast(ColumnMapMetricProvider):
    condition_metric_name = "column_values.arena_finite_at_least"
    condition_value_keys = ("min_value", "strict_min")

    @column_condition_partial(engine=PandasExecutionEngine)
    def _pandas(cls, column: pd.Series, min_value: float, strict_min: bool, **kwargs) -> pd.Series:
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype="float64")
        above = values > min_value if strict_min else values >= min_value
        return pd.Series(np.isfinite(values) & above, index=column.index)


class ExpectColumnValuesToBeFiniteAtLeast(ColumnMapExpectation):
    """Expect column values to be finite numbers, at least ``min_value`` (above it if
    ``strict_min``). Nulls are left to ``ExpectColumnValuesToNotBeNull``."""

    min_value: float = 0.0
    strict_min: bool = False

    map_metric: ClassVar[str] = "column_values.arena_finite_at_least"
    success_keys: ClassVar[tuple[str, ...]] = ("min_value", "strict_min", "mostly")
    args_keys: ClassVar[tuple[str, ...]] = ("column", "min_value", "strict_min")


class JumpsMatchedByVolume(ColumnPairMapMetricProvider):
    condition_metric_name = "column_pair_values.arena_jump_matched_by_volume"
    condition_domain_keys = ("batch_id", "table", "column_A", "column_B", "row_condition",
                             "condition_parser", "ignore_row_if")
    condition_value_keys = ("max_sigmas", "min_volume_ratio")

    @column_pair_condition_partial(engine=PandasExecutionEngine)
    def _pandas(cls, column_A: pd.Series, column_B: pd.Series, max_sigmas: float,  # noqa: N803
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


__all__ = ["ExpectColumnValuesToBeFiniteAtLeast", "ExpectJumpsToBeMatchedByVolume"]
