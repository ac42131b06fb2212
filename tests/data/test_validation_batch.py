"""Batch evaluation of the splice statistics: a batch of series gets exactly the numbers each
series gets alone, and the fast medians are numpy's medians."""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.core.sessions import NAT
from arena.data.validation.jumps import _bar_groups, _full_row_medians, batch_jump_statistics

SETTINGS = dict(min_returns=20, volume_lookback=20, local_window=60, fast_window=20,
                revert_bars=5, jump_sigmas=6.0, follow_bars=5)
HOUR_US = 3_600_000_000


def _series(rng: np.random.Generator, n: int, start_us: int, step_us: int, *, messy: bool
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    times = start_us + np.arange(n, dtype=np.int64) * step_us
    close = 100 * np.exp(np.cumsum(rng.standard_t(3, n) * 0.01))
    volume = rng.integers(0, 1000, n).astype("float64")
    if messy:  # a repeated time, an unsorted pair, a missing time, a null close and volume
        times[n // 2] = times[n // 2 - 1]
        times[[n // 3, n // 3 + 1]] = times[[n // 3 + 1, n // 3]]
        times[n // 4] = NAT
        close[n // 5] = np.nan
        volume[n // 6] = np.nan
        close[-3] *= 2.0
    return times, close, volume


def test_a_batch_judges_each_series_as_if_alone() -> None:
    rng = np.random.default_rng(7)
    start = pd.Timestamp("2024-01-01", tz="UTC").value // 1000
    specs = [  # (length, gap sessions, interval seconds, judged from bar, messy)
        (300, False, 3600.0, None, False), (0, False, 3600.0, None, False),
        (1, False, 3600.0, None, False), (25, True, 3600.0, None, True),
        (400, True, 3600.0, 350, True), (150, False, None, 100, False),
        (90, False, 900.0, None, True)]
    parts = [_series(rng, n, start, HOUR_US, messy=messy and n > 10)
             for n, _, _, _, messy in specs]
    days = [(t // (24 * HOUR_US)) * (24 * HOUR_US) for t, _, _ in parts]
    since = [None if k is None else pd.Timestamp(int(parts[i][0][k]), unit="us", tz="UTC")
             for i, (_, _, _, k, _) in enumerate(specs)]
    opens = [c * np.exp(rng.normal(0, 0.005, len(c))) for _, c, _ in parts]  # off the close
    batch = batch_jump_statistics(
        np.concatenate([c for _, c, _ in parts]), np.concatenate([v for _, _, v in parts]),
        np.concatenate([t for t, _, _ in parts]),
        np.split(np.arange(sum(s[0] for s in specs)), np.cumsum([s[0] for s in specs])[:-1]),
        sessions_gap=[s[1] for s in specs], interval_seconds=[s[2] for s in specs],
        judged_from=since, session_days=np.concatenate(days), open_=np.concatenate(opens),
        **SETTINGS)
    offset = 0
    for i, (spec, (times, close, volume)) in enumerate(zip(specs, parts, strict=True)):
        n, gap, seconds = spec[:3]
        alone = batch_jump_statistics(close, volume, times, [np.arange(n)], sessions_gap=[gap],
                                      interval_seconds=[seconds], judged_from=[since[i]],
                                      session_days=days[i], open_=opens[i], **SETTINGS)
        rows = slice(offset, offset + n)
        for name in ("log_return", "simple", "centre", "scale", "local_sigmas", "volume_ratio",
                     "reverted", "followed", "traded", "newest", "overnight"):
            np.testing.assert_array_equal(getattr(batch, name)[rows], getattr(alone, name),
                                          err_msg=f"series {i} {name}")
        assert (batch.returns[i], batch.sigma[i], batch.overnight_sigma[i]) == \
            (alone.returns[0], alone.sigma[0], alone.overnight_sigma[0])
        offset += n


def test_full_row_medians_are_numpy_medians() -> None:
    rng = np.random.default_rng(3)
    for width in (1, 2, 7, 20, 60):
        for rows in (rng.standard_t(2, (500, width)),
                     rng.integers(-2, 3, (500, width)) * 0.01):  # many ties
            np.testing.assert_array_equal(_full_row_medians(rows), np.median(rows, axis=1))


def test_bar_groups_group_as_pandas_does() -> None:
    calendars = np.array(["XNYS", "24/7", "XNYS", "XNYS", "24/7"], dtype=object)
    intervals = pd.Series(["1h", "1h", "1h", "1d", "1h"])
    micros = np.array([5, 5, 5, 5, NAT], dtype=np.int64)
    expected = pd.DataFrame({"c": calendars, "i": intervals, "t": micros}).groupby(
        ["c", "i", "t"], sort=False).ngroup().to_numpy()
    got = _bar_groups(calendars, intervals, micros)
    # the same partition of the rows (the numbering may differ)
    assert len(set(zip(got, expected, strict=True))) == len(set(got)) == len(set(expected))
