"""An ingest window that does not touch the stored span fetches the hole between them too.

The lake holds BTC from 2025-10-15 to 11-05; a back-fill of 10-02..10-03 used to publish nothing
("1152 of 3264 expected bars missing"): the series it would make has a twelve-day hole. The run
now fetches the hole, publishes one contiguous series and says so in its manifest; a window that
starts after the stored span does the same on the other side.
"""

from __future__ import annotations

import pandas as pd

from arena.data.ingest import run_ingest
from arena.data.lake import PartitionKey
from arena.data.manifest import FilledHole
from arena.data.providers.synthetic import SyntheticProvider
from tests.conftest import ts

NOW = ts("2026-01-01")
BASE = PartitionKey("synthetic", "15m", "BTC")


def _contiguous(lake, start, end) -> None:
    times = pd.DatetimeIndex(lake.read_bars(BASE).timestamp)
    assert times[0] == start and times[-1] == end - pd.Timedelta(minutes=15)
    assert (times[1:] - times[:-1] == pd.Timedelta(minutes=15)).all()


def test_a_back_fill_before_the_stored_span_fetches_the_hole(lake, universe):
    btc = universe.select(["BTC"])
    run_ingest(SyntheticProvider(), btc, start=ts("2025-10-15"), end=ts("2025-11-05"),
               lake=lake, now=NOW)
    result = run_ingest(SyntheticProvider(), btc, start=ts("2025-10-02"), end=ts("2025-10-03"),
                        lake=lake, now=NOW)
    assert result.published
    _contiguous(lake, ts("2025-10-02"), ts("2025-11-05"))
    hole = FilledHole("BTC", "before", ts("2025-10-03"), ts("2025-10-15"), 12 * 96)
    assert result.summary.filled == (hole,)
    daily = lake.read_bars(PartitionKey("synthetic", "1d", "BTC"))
    assert len(daily) == 34  # 10-02 .. 11-04, every day whole


def test_a_window_after_the_stored_span_fetches_the_hole_and_says_so(lake, universe):
    btc = universe.select(["BTC"])
    run_ingest(SyntheticProvider(), btc, start=ts("2025-10-01"), end=ts("2025-10-04"),
               lake=lake, now=NOW)
    result = run_ingest(SyntheticProvider(), btc, start=ts("2025-10-15"), end=ts("2025-10-16"),
                        lake=lake, now=NOW)
    _contiguous(lake, ts("2025-10-01"), ts("2025-10-16"))
    assert result.summary.filled == (
        FilledHole("BTC", "after", ts("2025-10-04"), ts("2025-10-15"), 11 * 96),)


def test_a_window_that_touches_the_stored_span_fills_nothing(lake, universe):
    btc = universe.select(["BTC"])
    run_ingest(SyntheticProvider(), btc, start=ts("2025-10-02"), end=ts("2025-10-04"),
               lake=lake, now=NOW)
    result = run_ingest(SyntheticProvider(), btc, start=ts("2025-10-04"), end=ts("2025-10-05"),
                        lake=lake, now=NOW)
    assert result.summary.filled == () and result.manifest["filled"] == {}
