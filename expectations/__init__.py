"""Great Expectations suites as code, one module per dataset, plus custom expectations.

Importing this package imports Great Expectations (5-6 s): product code imports it lazily, inside
the function that validates (see :mod:`arena.data.validation.checks`).
"""

from arena.data.validation.expectations.candles import SUITE_NAME, candle_suite
from arena.data.validation.expectations.custom import (
           ExpectCandlesToBeSane,
           ExpectJumpsToBeExplained,
)

__all__ = ["SUITE_NAME", "ExpectCandlesToBeSane", "ExpectJumpsToBeExplained",
           "candle_suite"]
