"""The candle suite for Great Expectations, built in code from its declarations (never loaded
from JSON: custom expectations would be lost).

The expectations themselves - types, thresholds, the report row each feeds (``meta["check"]``),
a few words for the message (``meta["problem"]``) and the ``description`` Data Docs show
instead of the raw kwargs - are declared once, without Great Expectations, in
:func:`arena.data.validation.suite.candle_expectations`; every run checks them with NumPy, and
this suite renders their results as Data Docs and checks that evaluation in the tests. It
validates ONE prepared frame (all symbols and intervals concatenated, with the per-series
statistics already computed as columns by :mod:`arena.data.validation.stats`).
"""

from __future__ import annotations

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
from arena.data.validation.suite import (
    BETWEEN,
    EXPLAINED,
    SANE,
    SUITE_NAME,
    UNIQUE,
    Expectation,
    candle_expectations,
)

CLASSES = {BETWEEN: gxe.ExpectColumnValuesToBeBetween, UNIQUE: gxe.ExpectCompoundColumnsToBeUnique,
           SANE: ExpectCandlesToBeSane, EXPLAINED: ExpectJumpsToBeExplained}


def expectation(e: Expectation) -> gx.expectations.Expectation:
    """The Great Expectations expectation of one declaration."""
    kwargs = {k: list(v) if k == "column_list" else v for k, v in e.kwargs.items()}
    if e.bars_only:
        kwargs["row_condition"] = Column(cs.IS_BAR) == True  # noqa: E712
    return CLASSES[e.type](**kwargs, meta=e.meta, description=e.description)


@lru_cache(maxsize=8)
def candle_suite(config: ValidationConfig) -> gx.ExpectationSuite:
    """The suite for one set of thresholds (cached: the config is frozen)."""
    return gx.ExpectationSuite(name=SUITE_NAME, expectations=[
        expectation(e) for e in candle_expectations(config)])
