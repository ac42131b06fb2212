"""The candle suite as data, and its evaluation with NumPy.

Every expectation of the suite is declared once here (:func:`candle_expectations`): its Great
Expectations type and arguments, the report row it feeds (``check``), a few words for the
message (``problem``) and the sentence Data Docs show (``description``).
``expectations/candles.py`` builds the Great Expectations suite from these declarations, and
:func:`evaluate` checks the same expectations over the prepared frame with NumPy, with Great
Expectations' semantics: a column's null values are left out of its expectation (they are
"missing", never unexpected), a multicolumn expectation keeps every row (``ignore_row_if``
"never") but for the uniqueness check's default ("all_values_are_missing"), and
``bars_only`` is the row condition ``is_bar == True`` (an empty series' placeholder row is not
a bar). ``tests/data/test_validation_engines.py`` runs Great Expectations itself over the same
frames and requires the same unexpected rows, expectation by expectation.

Why: a validation run of Great Expectations costs ~75 ms per frame plus ~12 ms per expectation,
and importing it 5-6 s; the incremental ingest of one hour validates a few hundred bars a few
dozen times a day. The NumPy evaluation of the whole suite costs a few milliseconds and imports
nothing; Great Expectations renders the results as Data Docs
(:func:`arena.data.validation.docs.build_data_docs`) and checks the evaluation in the tests.
This module imports no Great Expectations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from arena.data.validation import stats as cs
from arena.data.validation.config import ValidationConfig

SUITE_NAME = "candles"
PARTIAL_UNEXPECTED = 20  # unexpected values a result lists (Great Expectations' default)

BETWEEN = "expect_column_values_to_be_between"
UNIQUE = "expect_compound_columns_to_be_unique"
SANE = "expect_candles_to_be_sane"
EXPLAINED = "expect_jumps_to_be_explained"


@dataclass(frozen=True)
class Expectation:
    """One expectation of the candle suite. ``kwargs`` are its Great Expectations arguments
    (``column`` or ``column_list`` and the thresholds); ``bars_only``: judged on bar rows only
    (the row condition ``is_bar == True``)."""

    type: str
    kwargs: Mapping[str, Any] = field(hash=False)
    check: str
    problem: str
    description: str
    bars_only: bool = False

    @property
    def columns(self) -> list[str]:
        return [self.kwargs["column"]] if "column" in self.kwargs else list(
            self.kwargs["column_list"])

    @property
    def meta(self) -> dict[str, str]:
        return {"check": self.check, "problem": self.problem}


@lru_cache(maxsize=8)
def candle_expectations(config: ValidationConfig) -> tuple[Expectation, ...]:
    """The suite for one set of thresholds (cached: the config is frozen)."""
    k, m = config.splice_sigmas, config.splice_volume_multiple
    return (
        Expectation(BETWEEN, {"column": cs.SERIES_BARS, "min_value": 1}, cs.BAR_COUNT,
                    "zero bars", "Every requested series has at least one bar."),
        Expectation(BETWEEN, {"column": cs.SERIES_MISSING_SHARE,
                              "max_value": config.max_missing_share}, cs.BAR_COUNT,
                    "missing bars", f"At most {config.max_missing_share:.1%} of the bars the "
                    "calendar expects are missing in each series."),
        Expectation(BETWEEN, {"column": cs.SERIES_OFF_CALENDAR,
                              "max_value": config.max_off_calendar_bars}, cs.OFF_CALENDAR,
                    "bars where the calendar expects none",
                    f"At most {config.max_off_calendar_bars} bars per series where the "
                    "calendar (or the requested window) expects none."),
        Expectation(BETWEEN, {"column": cs.SERIES_STALE, "max_value": config.max_stale_bars},
                    cs.STALENESS, "stale",
                    f"At most {config.max_stale_bars} calendar bars completed after each "
                    "series' last bar by as_of."),
        Expectation(BETWEEN, {"column": cs.SERIES_INCOMPLETE,
                              "max_value": config.max_incomplete_bars}, cs.INCOMPLETE,
                    "bars not closed at as_of",
                    f"At most {config.max_incomplete_bars} bars still open at as_of."),
        Expectation(UNIQUE, {"column_list": ("symbol", "interval", cs.BAR_TIME)}, cs.UNIQUE,
                    "duplicate", "Bar times are unique per (symbol, interval)."),
        Expectation(BETWEEN, {"column": cs.STEP_SECONDS, "min_value": 0, "strict_min": True},
                    cs.INCREASING, "not after the previous bar",
                    "Bar times strictly increase within each series."),
        Expectation(BETWEEN, {"column": cs.GRID_OFFSET, "min_value": 0, "max_value": 0},
                    cs.ALIGNED, "off the interval grid",
                    "Bar times sit on the interval grid of their calendar."),
        Expectation(SANE, {"column_list": cs.OHLC_COLUMNS}, cs.OHLC, "OHLC sanity",
                    "Every bar has a time, finite prices above zero, a volume not below zero, "
                    "a low at most its open and close, and a high at least both.",
                    bars_only=True),
        Expectation(
            EXPLAINED,
            {"column_list": (cs.JUMP_SIGMAS, cs.VOLUME_RATIO, cs.JUMP_REVERTED,
                             cs.ABS_LOG_RETURN, cs.JUMP_FOLLOWED, cs.JUMP_TRADED),
             "max_sigmas": k, "min_volume_ratio": m,
             "max_log_move": math.log(config.max_explained_factor),
             "min_follow_sigmas": config.follow_sigmas, "min_follow_share": config.follow_share,
             "min_traded_share": config.traded_share},
            cs.SPLICE, "level shift without market, volume, trading, reversion or volatility "
                       "after it",
            f"No close-to-close move beyond {k:g} local sigmas (trailing "
            f"{config.local_window} returns; net of the market's move when smaller) unless "
            f"the bar's volume is at least {m:g}x its trailing median, "
            f"{config.traded_share:.0%} of the move is made within the bar, the move reverts "
            f"within {config.revert_bars} bars or the {config.follow_bars} returns after it "
            f"move {config.follow_sigmas:g} of its local sigmas and "
            f"{config.follow_share:.0%} of the move on average (a splice otherwise); a move by "
            f"a factor of {config.max_explained_factor:g} or more is never excused.",
            bars_only=True),
    )


@dataclass(frozen=True)
class Outcome:
    """One expectation evaluated over a frame: ``unexpected`` holds the positions (rows of the
    frame) it rejects; ``elements`` the rows in its domain, ``missing`` those of them left out
    as null (a column expectation's nulls)."""

    expectation: Expectation
    elements: int
    missing: int
    unexpected: np.ndarray = field(hash=False, compare=False)

    @property
    def success(self) -> bool:
        return not len(self.unexpected)


def evaluate(frame: pd.DataFrame, expectations: tuple[Expectation, ...]) -> list[Outcome]:
    """Every expectation over the prepared frame (see the module docstring)."""
    bars = frame[cs.IS_BAR].to_numpy(dtype=bool) if len(frame) else np.zeros(0, dtype=bool)
    return [_evaluate(frame, e, bars) for e in expectations]


def _evaluate(frame: pd.DataFrame, e: Expectation, is_bar: np.ndarray) -> Outcome:
    domain = np.flatnonzero(is_bar) if e.bars_only else np.arange(len(frame))
    if e.type == BETWEEN:
        values = frame[e.kwargs["column"]].to_numpy(dtype="float64")[domain]
        present = ~np.isnan(values)
        rows, values = domain[present], values[present]
        ok = np.ones(len(values), dtype=bool)
        low, high = e.kwargs.get("min_value"), e.kwargs.get("max_value")
        if low is not None:
            ok &= values > low if e.kwargs.get("strict_min") else values >= low
        if high is not None:
            ok &= values < high if e.kwargs.get("strict_max") else values <= high
        return Outcome(e, len(domain), len(domain) - len(rows), rows[~ok])
    if e.type == UNIQUE:
        columns = frame[e.columns].iloc[domain]
        kept = ~columns.isna().all(axis=1).to_numpy()  # ignore_row_if all_values_are_missing
        rows = domain[kept]
        duplicated = columns[kept].duplicated(keep=False).to_numpy()
        return Outcome(e, len(domain), len(domain) - len(rows), rows[duplicated])
    columns = frame[e.columns].iloc[domain]
    if e.type == SANE:
        bad = cs.ohlc_problems(columns).any(axis=1).to_numpy()
    elif e.type == EXPLAINED:
        bad = ~cs.jumps_explained(*(columns[c].to_numpy(dtype="float64") for c in e.columns),
                                  **{k: v for k, v in e.kwargs.items() if k != "column_list"})
    else:
        raise ValueError(f"no NumPy evaluation for {e.type}")
    return Outcome(e, len(domain), 0, domain[bad])


__all__ = ["SUITE_NAME", "Expectation", "Outcome", "candle_expectations", "evaluate"]
