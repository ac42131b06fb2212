"""The briefing's RSI statement (``arena.market.briefing``'s docstring) is true: the bars a default 200-day
lake holds per interval and asset class, and which RSIs therefore depend on the lake's depth.

The shared synthetic lake of ``tests.market_lakes`` (it reaches 220 days before Friday
2025-11-21), read for BTC, SPY (the benchmarks), ETH and AAPL; shallower lakes are cut from it (a
bar opening at or after a lake's start is what an ingest from that start stores: derived bars are
complete and aligned).
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

import arena.market.briefing
from arena.core.indicators import rsi_wilder
from arena.data.ingest import default_window
from arena.data.lake import Lake, TableKey, write_bars_file
from arena.market.asof import closed_bars
from arena.market.briefing import RSI_HISTORY, build_market
from tests.market_lakes import FRI, FULL_END, PROVIDER, START, market_lakes

SYMBOLS = {"crypto asset": ("BTC", "ETH"), "NYSE stock": ("SPY", "AAPL")}
HELD = ("ETH", "AAPL")
CYCLES = [FRI + pd.Timedelta(days=k) for k in range(8)]  # every weekday, Thanksgiving included
INTERVALS = {"4h": "4h", "daily": "1d", "weekly": "1w"}
DOC = " ".join(arena.market.briefing.__doc__.split())


@pytest.fixture(scope="module")
def small(universe):
    return universe.select([s for pair in SYMBOLS.values() for s in pair])


@pytest.fixture(scope="module")
def deep(tmp_path_factory, universe) -> Lake:
    lake = market_lakes(tmp_path_factory, universe).full
    assert lake.read_bars(next(iter(lake.partitions(PROVIDER, "1d"))))["timestamp"].min() >= START
    assert CYCLES[-1] < FULL_END
    return lake


def _cut(deep: Lake, start: pd.Timestamp, root, symbols) -> Lake:
    """``deep`` as if it had been ingested from ``start``: every bar opening before it dropped
    (only ``symbols``, with the funding and earnings tables the briefing reads)."""
    shallow = Lake(root)
    for key in deep.partitions(PROVIDER):
        if key.symbol in symbols:
            write_bars_file(deep.read_bars(key, start=start), shallow.path(key))
    for key in (TableKey("funding", PROVIDER, "BTC"), TableKey("funding", PROVIDER, "ETH"),
                TableKey("earnings", PROVIDER)):
        if deep.path(key).is_file():
            shallow.path(key).parent.mkdir(parents=True)
            shallow.path(key).write_bytes(deep.path(key).read_bytes())
    return shallow


def _stated_bars() -> dict[tuple[str, str], tuple[int, int]]:
    """(asset class, interval) -> the (low, high) bar count the docstring states."""
    number = r"(\d+(?:-\d+)?)"
    found = re.findall(rf"{number} 4h, {number} daily and {number} weekly bars of a "
                       r"(crypto asset|NYSE stock)", DOC)
    stated = {}
    for *counts, kind in found:
        for interval, count in zip(INTERVALS, counts, strict=True):
            low, _, high = count.partition("-")
            stated[kind, INTERVALS[interval]] = (int(low), int(high or low))
    return stated


def _stated_dependence() -> tuple[set[str], set[str]]:
    """The RSIs the docstring says do not depend on the lake's depth, and those that do."""
    claim = re.search(r"So (.*?) do not depend on the lake's depth, and (.*?) does\b", DOC)
    assert claim, "the docstring no longer says which RSIs depend on the lake's depth"
    return tuple(set(re.findall(r"``(rsi_\w+)``", part)) for part in claim.groups())


def test_the_stated_bar_counts_are_those_of_a_default_200_day_lake(deep, small):
    """At every cycle of a week (16:00 UTC), a lake from ``default_window``'s start holds the
    stated number of bars per interval; 4h and daily series reach RSI_HISTORY, weekly ones not."""
    stated = _stated_bars()
    assert set(stated) == {(k, i) for k in SYMBOLS for i in INTERVALS.values()}, stated
    for at in CYCLES:
        start, end = default_window(at)
        assert end == at
        for kind, symbols in SYMBOLS.items():
            for interval in INTERVALS.values():
                low, high = stated[kind, interval]
                for s in symbols:
                    got = len(closed_bars(deep, PROVIDER, small[s], interval, at, since=start))
                    assert low <= got <= high, (at, s, interval, got, (low, high))
    independent, dependent = _stated_dependence()
    for kind in SYMBOLS:
        for name in independent:
            assert stated[kind, name.removeprefix("rsi_")][0] >= RSI_HISTORY
        for name in dependent:
            assert stated[kind, name.removeprefix("rsi_")][1] < RSI_HISTORY


def test_rsi_1w_depends_on_the_lake_depth_rsi_4h_and_1d_do_not(deep, small, tmp_path):
    """The default 200-day lake against one reaching 220 days back: the RSIs of series with at
    least RSI_HISTORY bars are identical; the weekly RSI is Wilder's over the 27-29 weekly bars
    there are, seeded at the lake's first bar, so it differs. And the rule at its edge: 100 daily
    bars give the deep lake's rsi_1d, 99 do not."""
    independent, dependent = _stated_dependence()
    assert independent == {"rsi_4h", "rsi_1d"} and dependent == {"rsi_1w"}
    start = default_window(FRI)[0]
    shallow = _cut(deep, start, tmp_path / "default", small)
    far, near = (build_market(lake, PROVIDER, small, FRI, held=HELD) for lake in (deep, shallow))
    for s in (*HELD, "BTC", "SPY"):
        a, b = far.detail(s), near.detail(s)
        for name in independent:
            assert getattr(a, name) == getattr(b, name) is not None, (s, name)
        for name in dependent:
            assert getattr(a, name) != getattr(b, name), (s, name)
        weekly = closed_bars(shallow, PROVIDER, small[s], "1w", FRI)["close"]
        assert 27 <= len(weekly) <= 29 < RSI_HISTORY
        assert b.rsi_1w == pytest.approx(rsi_wilder(weekly).iloc[-1], rel=1e-12)
    assert [r.rsi_14d for r in far.table] == [r.rsi_14d for r in near.table]

    daily = closed_bars(deep, PROVIDER, small["AAPL"], "1d", FRI)
    assert len(daily) > RSI_HISTORY
    for bars, same in ((RSI_HISTORY, True), (RSI_HISTORY - 1, False)):
        cut = _cut(deep, daily["timestamp"].iloc[-bars], tmp_path / f"daily-{bars}", small)
        edge = build_market(cut, PROVIDER, small, FRI, held=HELD).detail("AAPL")
        assert len(closed_bars(cut, PROVIDER, small["AAPL"], "1d", FRI)) == bars
        assert (edge.rsi_1d == far.detail("AAPL").rsi_1d) is same
