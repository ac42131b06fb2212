"""One read of the market for a run of cycles: a lake that keeps the partitions it read
(:mod:`arena.data.bar_cache`) answers each cycle's monitor window, market, damage check and
prices exactly as reading every file again does, whatever order the cycles come in (a later
cycle's read lends nothing to an earlier one), and opens each file once."""

from __future__ import annotations

import pandas as pd
import pytest

from arena.data.lake import Lake, PartitionKey
from arena.engine.monitor import check_invalidations
from arena.market.asof import cycle_prices
from arena.market.briefing import build_market, market_damage
from tests.market_lakes import FRI, PROVIDER, SAT, THANKSGIVING, book_state, market_lakes

HELD = ("DOT", "KO", "JPM", "ETH", "AAPL")
MONDAY = FRI + pd.Timedelta(days=3)
DAY = pd.Timedelta(days=1)


@pytest.fixture(scope="module")
def lakes(tmp_path_factory, universe):
    return market_lakes(tmp_path_factory, universe)


def _cycle(lake: Lake, universe, at: pd.Timestamp, book):
    """What a season day reads, in its order: the monitor window of ``book`` (its 15-minute
    bars since the day before), the cycle's market, the daily report's damage check and
    prices."""
    window = {s: lake.read_bars(PartitionKey(PROVIDER, "15m", s), at - DAY, at) for s in HELD}
    watched = check_invalidations(book, window, universe, at - DAY, at)
    market = build_market(lake, PROVIDER, universe, at, held=HELD)
    damaged = market_damage(lake, PROVIDER, universe, at)
    report = cycle_prices(lake, PROVIDER, universe, [at - DAY, at], damage=dict(damaged))
    return window, watched, market, damaged, report


@pytest.mark.parametrize("order", [[FRI, SAT, MONDAY, THANKSGIVING],
                                   [THANKSGIVING, MONDAY, SAT, FRI]], ids=["forward", "backward"])
def test_a_lake_read_once_answers_every_cycle_as_reading_each_file_again(lakes, universe, order):
    kept = Lake(lakes.full.root)
    opened_again = 0  # files the lakes that keep nothing opened
    for at in order:
        uncached = Lake(lakes.full.root, bar_cache_bytes=0)
        prices = cycle_prices(uncached, PROVIDER, universe, [at - DAY])
        book = book_state(dict(zip(prices["symbol"], prices["price"], strict=True)), HELD,
                          at - DAY).portfolio  # levels 10% away, opened days before
        before = uncached.bar_cache.stats.files_read
        window, watched, market, damaged, report = _cycle(kept, universe, at, book)
        w_window, w_watched, w_market, w_damaged, w_report = _cycle(uncached, universe, at, book)
        for s in HELD:
            pd.testing.assert_frame_equal(window[s], w_window[s], check_exact=True)
        assert watched == w_watched
        assert market == w_market and market.as_dict() == w_market.as_dict()
        assert damaged == w_damaged == {}
        pd.testing.assert_frame_equal(report, w_report, check_exact=True)
        opened_again += uncached.bar_cache.stats.files_read - before
    # every file the cycles read was opened once, whatever the number of cycles and reads (a
    # file first read for its last price only would be opened once more for its other columns)
    assert kept.bar_cache.stats.files_read == len(kept.bar_cache)
    assert len(kept.bar_cache) <= len(kept.partitions(PROVIDER))
    assert kept.bar_cache.stats.files_read + kept.bar_cache.stats.hits == opened_again
    assert opened_again > 7 * kept.bar_cache.stats.files_read
