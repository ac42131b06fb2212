"""The cycle's one-scan market read (``build_market``) equals a per-symbol read of every series
(``tests.market.reference``) on the shared synthetic lakes: weekday, weekend and holiday cycles,
a lake with missing intervals, a short lake, a price gap longer than the lookback, and assets
read from two providers."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from arena.data.lake import Lake, PartitionKey, TableKey, write_bars_file
from arena.market.asof import BarRead, closed_bars, scan_closed_bars
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.market.types import MarketData
from tests.data.published import publish_frames, remove_partitions
from tests.market.reference import build_market_per_symbol
from tests.market_lakes import FRI, PROVIDER, SAT, THANKSGIVING, book_state, market_lakes

HELD = ("DOT", "KO", "JPM", "ETH", "AAPL")
MONDAY = FRI + pd.Timedelta(days=3)
CYCLES = {"friday": FRI, "saturday": SAT, "monday": MONDAY, "thanksgiving": THANKSGIVING}


@pytest.fixture(scope="module")
def lakes(tmp_path_factory, universe):
    return market_lakes(tmp_path_factory, universe)


def _prompt(market: MarketData) -> str:
    snapshot = portfolio_snapshot(book_state(market.prices, HELD, market.at), market.prices)
    return build_briefing(market.for_holdings(HELD), "tester", snapshot).prompt_text


def _same(lake: Lake, provider, universe, at: pd.Timestamp) -> MarketData:
    scanned = build_market(lake, provider, universe, at, held=HELD)
    reference = build_market_per_symbol(lake, provider, universe, at, held=HELD)
    assert scanned.as_dict() == reference.as_dict()
    assert scanned == reference
    assert _prompt(scanned) == _prompt(reference)
    return scanned


@pytest.mark.parametrize("cycle", list(CYCLES))
def test_scan_equals_per_symbol_reads(cycle, lakes, universe):
    market = _same(lakes.full, PROVIDER, universe, CYCLES[cycle])
    assert market.nyse_trading_day is (cycle in ("friday", "monday"))


@pytest.fixture(scope="module")
def holey(lakes, tmp_path_factory) -> Lake:
    """The full lake with intervals it never held: no 15m bars of ETH (its price comes from
    1h), no 4h bars of AAPL, no daily bars of SOL (never screened), no weekly bars of BTC (a
    benchmark), and KO's 15m bars published stopping 20 days before Friday (a gap longer than
    the price lookback)."""
    lake = Lake(tmp_path_factory.mktemp("holey") / "lake")
    shutil.copytree(lakes.full.root, lake.root)
    remove_partitions(lake, (PartitionKey(PROVIDER, "15m", "ETH"),
                             PartitionKey(PROVIDER, "4h", "AAPL"),
                             PartitionKey(PROVIDER, "1d", "SOL"),
                             PartitionKey(PROVIDER, "1w", "BTC")))
    ko = PartitionKey(PROVIDER, "15m", "KO")
    publish_frames(lake, {ko: lake.read_bars(ko, end=FRI - pd.Timedelta(days=20))})
    return lake


@pytest.mark.parametrize("cycle", ["friday", "saturday", "thanksgiving"])
def test_scan_on_a_lake_missing_intervals(cycle, holey, universe):
    market = _same(holey, PROVIDER, universe, CYCLES[cycle])
    assert market.detail("BTC").weekly == () and market.detail("BTC").rsi_1w is None
    assert "SOL" not in market.screen.selected
    ko = next(r for r in market.table if r.symbol == "KO")
    assert ko.price is not None  # read beyond the lookback
    assert list(market.stale) == ["KO"]  # its bars stopped 20 days ago: stale, not screened
    assert "KO" not in market.screen.selected
    # a series the cycle reads that the lake does not hold is named, never a blank row
    assert market.damaged["SOL"] == f"the lake holds no {PROVIDER}/1d/SOL bars"
    assert market.damaged["BTC"] == f"the lake holds no {PROVIDER}/1w/BTC bars"
    assert "ETH" not in market.damaged  # its price comes from 1h: nothing the cycle reads is gone
    assert {"SOL", "BTC", "KO"} <= market.untradeable


@pytest.fixture(scope="module")
def short(lakes, tmp_path_factory, universe) -> Lake:
    """The last 60 days of the full lake: fewer daily and weekly bars than the RSI reads, so the
    scan's first window leaves them short and they are read again whole."""
    lake = Lake(tmp_path_factory.mktemp("short") / "lake")
    start = FRI - pd.Timedelta(days=60)
    for key in lakes.full.partitions(PROVIDER):
        write_bars_file(lakes.full.read_bars(key, start=start), lake.path(key))
    for key in [TableKey("earnings", PROVIDER),
                *(TableKey("funding", PROVIDER, a.symbol) for a in universe if a.is_crypto)]:
        if lakes.full.path(key).is_file():
            lake.path(key).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(lakes.full.path(key), lake.path(key))
    return lake


@pytest.mark.parametrize("cycle", ["friday", "saturday"])
def test_scan_on_a_short_lake(cycle, short, universe):
    _same(short, PROVIDER, universe, CYCLES[cycle])


@pytest.mark.parametrize("window_days", [None, 0, 1, 30])
@pytest.mark.parametrize("limit", [0, 1, 100])
def test_scan_closed_bars_equals_closed_bars(window_days, limit, holey, universe):
    window = None if window_days is None else pd.Timedelta(days=window_days)
    reads = [BarRead(universe[s], PROVIDER, iv, limit, window)
             for s in ("BTC", "ETH", "AAPL", "SPY", "KO", "SOL")
             for iv in ("15m", "1h", "4h", "1d", "1w")]
    for at in (FRI, SAT, THANKSGIVING):
        got = scan_closed_bars(holey, reads, at)
        for r, bars in zip(reads, got, strict=True):
            want = closed_bars(holey, r.provider, r.asset, r.interval, at, limit=r.limit)
            pd.testing.assert_frame_equal(bars, want, check_exact=True)


@pytest.fixture(scope="module")
def two_providers(lakes, tmp_path_factory, universe) -> Lake:
    """The full lake's crypto under provider ``alpha``, its stocks and SPY under ``beta``."""
    lake = Lake(tmp_path_factory.mktemp("two") / "lake")
    for key in lakes.full.partitions(PROVIDER):
        name = "alpha" if universe[key.symbol].is_crypto else "beta"
        target = lake.path(PartitionKey(name, key.interval, key.symbol))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(lakes.full.path(key), target)
    tables = [(TableKey("earnings", PROVIDER), TableKey("earnings", "beta")),
              *((TableKey("funding", PROVIDER, a.symbol), TableKey("funding", "alpha", a.symbol))
                for a in universe if a.is_crypto)]
    for src, dst in tables:
        if lakes.full.path(src).is_file():
            lake.path(dst).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(lakes.full.path(src), lake.path(dst))
    return lake


PER_CLASS = {"crypto": "alpha", "stock": "beta", "etf": "beta"}


@pytest.mark.parametrize("cycle", ["friday", "saturday"])
def test_a_provider_per_asset_class(cycle, two_providers, lakes, universe):
    market = _same(two_providers, PER_CLASS, universe, CYCLES[cycle])
    single = build_market(lakes.full, PROVIDER, universe, CYCLES[cycle], held=HELD)
    assert market.provider == "alpha+beta" and not market.synthetic
    assert (market.table, market.assets, market.benchmarks, market.screen) == (
        single.table, single.assets, single.benchmarks, single.screen)
    # one name for every class is the old call
    assert build_market(lakes.full, {"crypto": PROVIDER, "stock": PROVIDER, "etf": PROVIDER},
                        universe, CYCLES[cycle], held=HELD) == single
