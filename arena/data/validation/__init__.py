"""Candle validation: per-series statistics, the checks and their messages; the Great
Expectations suites live in :mod:`arena.data.validation.expectations`."""
