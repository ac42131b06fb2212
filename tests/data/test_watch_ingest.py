"""Watch runs and stand-ins: Yahoo's 15-minute stock bars fetched on their own beside the hourly
series the lake is built from, and a files drop folder filling a blocked vendor's partitions."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from arena.core.universe import Universe
from arena.data.ingest import base_interval, plan_ingest, run_ingest
from arena.data.lake import Lake, PartitionKey
from arena.data.providers import make_provider
from arena.data.providers.files import FilesProvider
from arena.data.providers.yahoo import YFinanceProvider
from arena.market.asof import price_interval, price_intervals
from arena.pipeline.season_config import default_providers, make_season
from arena.pipeline.season_ingest import season_ingest, watched_by_base
from tests.conftest import ts
from tests.data.test_yahoo import fresh_yfinance  # noqa: F401 - yfinance state reset
from tests.vendors import Market, SeriesYahoo, session_with

NOW = ts("2026-03-04 16:00")


@pytest.fixture
def stocks(universe: Universe) -> Universe:
    return universe.select(["SPY", "AAPL"])


@pytest.fixture
def yahoo(stocks: Universe) -> tuple[YFinanceProvider, Market]:
    market = Market(stocks)
    return YFinanceProvider(session=session_with(SeriesYahoo(market))), market


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_yahoo_serves_15m_bars_labelled_by_their_open(yahoo, stocks) -> None:
    provider, _ = yahoo
    bars = provider.fetch_bars(stocks["AAPL"], "15m", ts("2026-03-03"), ts("2026-03-04"))
    # one regular session, 9:30 to 16:00 New York (14:30 to 21:00 UTC before US DST)
    assert len(bars) == 26
    assert bars["timestamp"].iloc[0] == ts("2026-03-03 14:30")
    assert bars["timestamp"].iloc[-1] == ts("2026-03-03 20:45")
    assert base_interval(provider) == "1h"  # the lake's series stay hourly


def test_a_watch_run_publishes_its_interval_alone(tmp_path, yahoo, stocks) -> None:
    provider, market = yahoo
    lake = Lake(tmp_path / "lake")
    run_ingest(provider, stocks, start=ts("2026-02-20"), end=NOW, lake=lake, now=NOW)
    hourly = lake.path(PartitionKey("yfinance", "1h", "AAPL"))
    before = _digest(hourly)
    assert not lake.path(PartitionKey("yfinance", "15m", "AAPL")).exists()

    result = run_ingest(provider, stocks.select(["AAPL"]), start=ts("2026-03-03"), end=NOW,
                        lake=lake, now=NOW, interval="15m")
    assert result.manifest["asked"]["watch"] is True
    assert result.manifest["asked"]["intervals"] == ["15m"]
    assert list(result.manifest["partitions"]) == ["yfinance/15m/AAPL"]
    assert _digest(hourly) == before  # nothing derived from the 15-minute bars
    watched = lake.read_bars(PartitionKey("yfinance", "15m", "AAPL"))
    assert watched["timestamp"].iloc[0] == ts("2026-03-03 14:30")
    assert watched["timestamp"].iloc[-1] == ts("2026-03-04 15:45")  # closed by 16:00 UTC
    # a watch run fetches the bars only: no earnings page, no corporate-action request
    assert [c for c in market.calls if c[2] == "15m"] == [("yahoo", "AAPL", "15m")]
    # prices still come from the hourly series: a cycle's price never depends on whether (and
    # when) a watch run fetched the stock's 15-minute bars
    assert price_interval(lake, "yfinance", "AAPL") == "1h"
    assert price_intervals(lake, "yfinance") == {"AAPL": "1h", "SPY": "1h"}


def test_a_watch_window_starts_inside_the_vendors_reach(yahoo, stocks) -> None:
    provider, _ = yahoo
    plan = plan_ingest(provider, stocks, start=NOW - pd.Timedelta(days=90), end=NOW, now=NOW,
                       interval="15m")
    assert plan.watch and plan.start == (NOW - pd.Timedelta(days=60)).ceil("1D")
    base = plan_ingest(provider, stocks, start=NOW - pd.Timedelta(days=90), end=NOW, now=NOW)
    assert not base.watch and base.start == NOW - pd.Timedelta(days=90)


def test_a_run_interval_the_provider_cannot_serve_is_refused(yahoo, stocks) -> None:
    provider, _ = yahoo
    with pytest.raises(ValueError, match="1d bars are derived from yfinance's 1h bars"):
        plan_ingest(provider, stocks, start=NOW - pd.Timedelta(days=5), end=NOW, now=NOW,
                    interval="1d")
    with pytest.raises(ValueError, match="does not serve 4h bars"):
        plan_ingest(provider, stocks, start=NOW - pd.Timedelta(days=5), end=NOW, now=NOW,
                    interval="4h")


def test_a_drop_folder_stands_in_for_a_blocked_vendor(tmp_path, stocks) -> None:
    market = Market(stocks)
    drop = tmp_path / "drop"
    for interval in ("15m", "1h"):
        (drop / interval).mkdir(parents=True)
        for symbol in stocks.symbols:
            market.source.fetch_bars(stocks[symbol], interval, ts("2026-02-20"), NOW).to_csv(
                drop / interval / f"{symbol}.csv", index=False)
    provider = make_provider("files", drop=drop, drop_interval="15m", instead_of="yfinance")
    assert isinstance(provider, FilesProvider)
    assert (provider.name, base_interval(provider)) == ("yfinance", "1h")
    lake = Lake(tmp_path / "lake")
    result = run_ingest(provider, stocks, start=ts("2026-02-20"), end=NOW, lake=lake, now=NOW)
    assert result.manifest["stand_in"] == "files"
    assert result.manifest["provider"] == "yfinance"
    assert sorted(result.manifest["partitions"]) == sorted(
        f"yfinance/{i}/{s}" for s in stocks.symbols for i in ("1h", "4h", "1d", "1w"))
    watch = run_ingest(provider, stocks.select(["AAPL"]), start=ts("2026-03-03"), end=NOW,
                       lake=lake, now=NOW, interval="15m")
    assert list(watch.manifest["partitions"]) == ["yfinance/15m/AAPL"]
    with pytest.raises(ValueError, match="only the files source stands in"):
        make_provider("ccxt", instead_of="yfinance")


def test_a_season_says_which_source_fills_which_partitions(universe: Universe) -> None:
    season = make_season("2026-03-02", 3, ("BTC", "ETH", "SPY", "AAPL"),
                         providers=default_providers(crypto="ccxt", stocks="yfinance"))
    taken = season_ingest(season, universe, "files", None, explicit=False, instead_of="yfinance")
    assert (taken.source, taken.provider, taken.universe.symbols) == (
        "files", "yfinance", ["AAPL", "SPY"])
    with pytest.raises(ValueError, match="--source files --instead-of VENDOR"):
        season_ingest(season, universe, "files", None, explicit=False)
    with pytest.raises(ValueError, match="only a files drop folder stands in"):
        season_ingest(season, universe, "ccxt", None, explicit=False, instead_of="yfinance")
    with pytest.raises(ValueError, match="name one with --source"):
        season_ingest(season, universe, None, None, explicit=False)
    # the held stocks need a watch run after Yahoo's ingest; Binance's series are 15-minute
    assert watched_by_base(season, "yfinance", ["AAPL", "ETH"]) == ["AAPL"]
    assert watched_by_base(season, "ccxt", ["AAPL", "ETH"]) == []
