"""The stale-price rule (:func:`arena.market.asof.is_stale`): a price is stale when more than one
bar the calendar expects after it has closed by the cycle; the calendar decides, so a stock over
a weekend, a holiday or the night is never stale. A lake ingested up to the cycle has nothing
stale, so its screen is unchanged."""

from __future__ import annotations

import pytest

from arena.market.asof import MAX_MISSING_BARS, is_stale, stale_prices
from arena.market.briefing import build_market
from arena.market.types import stale_marker
from tests.conftest import ts
from tests.market_lakes import FRI, PROVIDER, SAT, THANKSGIVING, market_lakes

FRI_CLOSE = ts("2025-11-21 21:00")  # NYSE close (16:00 New York), the last 15m/1h bar's close
WED_CLOSE = ts("2025-11-26 21:00")  # the session before Thanksgiving
MON = ts("2025-11-24 16:00")  # NYSE opened at 14:30 UTC


@pytest.mark.parametrize("calendar, interval, printed, at, stale", [
    # stocks: only the bars of sessions count
    ("XNYS", "15m", FRI_CLOSE, SAT, False),  # a Saturday: Friday's close is current
    ("XNYS", "1h", FRI_CLOSE, ts("2025-11-24 14:00"), False),  # Monday, before the open
    ("XNYS", "15m", FRI_CLOSE, ts("2025-11-24 14:45"), False),  # one bar of Monday missing
    ("XNYS", "15m", FRI_CLOSE, ts("2025-11-24 15:00"), True),  # two: the vendor stopped
    ("XNYS", "15m", FRI_CLOSE, MON, True),
    ("XNYS", "1h", FRI_CLOSE, ts("2025-11-24 15:30"), False),  # Monday's first hour just closed
    ("XNYS", "15m", WED_CLOSE, THANKSGIVING, False),  # a holiday
    ("XNYS", "15m", ts("2025-11-21 15:45"), FRI, False),  # intraday, the last bar in
    ("XNYS", "1d", ts("2025-11-20 21:00"), FRI, False),  # Friday's session has not closed
    # crypto: every bar of every day counts
    ("24/7", "1h", ts("2025-11-22 11:00"), SAT, True),  # five hours old: five bars missing
    ("24/7", "1h", ts("2025-11-22 15:00"), SAT, False),  # one bar late: tolerated
    ("24/7", "1h", SAT, SAT, False),
    ("24/7", "15m", ts("2025-11-22 15:30"), SAT, True),  # two 15-minute bars missing
    ("24/7", "15m", ts("2025-11-22 15:45"), SAT, False),
    ("24/7", "1d", ts("2025-11-22 00:00"), SAT, False),  # today's daily bar is still open
    ("24/7", "1d", ts("2025-11-21 00:00"), SAT, False),  # yesterday's missing: one bar
    ("24/7", "1d", ts("2025-11-20 00:00"), SAT, True),
])
def test_the_rule(calendar, interval, printed, at, stale):
    assert is_stale(calendar, interval, printed, at) is stale


def test_one_missing_bar_is_the_tolerance():
    assert MAX_MISSING_BARS == 1


def test_stale_prices_keeps_the_stale_ones_with_when_they_printed(universe):
    old = ts("2025-11-22 11:00")
    got = stale_prices([(universe["ETH"], "1h", old), (universe["SOL"], "1h", SAT),
                        (universe["AAPL"], "15m", FRI_CLOSE)], SAT)
    assert got == {"ETH": old}
    assert stale_marker(old) == "stale: last price 2025-11-22 11:00 UTC"
    assert stale_marker(old.isoformat()) == stale_marker(old)


@pytest.mark.parametrize("at", [FRI, SAT, THANKSGIVING])
def test_a_lake_ingested_up_to_the_cycle_has_nothing_stale(tmp_path_factory, universe, at):
    lake = market_lakes(tmp_path_factory, universe).full
    market = build_market(lake, PROVIDER, universe, at)
    assert market.stale == {}
    assert market.as_dict()["stale"] == {}
    assert all(s.rank is not None for s in market.screen.scores if s.selected)
