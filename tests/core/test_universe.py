import pytest

from arena.core.universe import Asset, UniverseError, load_universe, normalise_symbol

CRYPTO = "ETH BNB SOL XRP DOGE ADA TRX AVAX LINK DOT".split()
STOCKS = ("AAPL MSFT NVDA AMZN GOOGL META AVGO TSLA BRK.B JPM LLY V UNH XOM MA JNJ PG HD COST ABBV "
          "WMT NFLX CRM BAC KO ORCL CVX MRK AMD PEP ADBE TMO LIN ACN MCD CSCO ABT WFC DIS INTU QCOM "
          "TXN CAT IBM GE AMGN VZ PFE GS NOW").split()


COMMODITIES = ["GLD", "USO"]  # played only by a season that names them
EVERY = load_universe()  # every row of the file (the fixture may be the default season's only)


def test_universe_has_the_spec_assets():
    universe, default = EVERY, EVERY.select(None)
    assert [a.symbol for a in default.tradable] == CRYPTO + STOCKS
    assert len(default.tradable) == 60
    assert [a.symbol for a in universe.tradable] == CRYPTO + STOCKS + COMMODITIES
    assert [a.symbol for a in universe.benchmarks] == ["BTC", "SPY"] == [
        a.symbol for a in default.benchmarks]
    assert not any(a.tradable for a in universe.benchmarks)


def test_gold_and_crude_oil_are_their_etfs():
    """FINCHAL plays gold and crude oil through the ETFs GLD and USO (not futures): two rows of
    the file, tradable, no benchmark, on the New York clock, outside the default season."""
    gld, uso = EVERY["GLD"], EVERY["USO"]
    assert (gld.name, uso.name) == ("SPDR Gold Shares", "United States Oil Fund")
    for asset in (gld, uso):
        assert (asset.asset_class, asset.sector, asset.calendar) == ("etf", "Commodities", "XNYS")
        assert asset.tradable and not asset.benchmark and not asset.default_season
        assert normalise_symbol(asset.symbol.lower()) == asset.symbol
    assert [a.symbol for a in EVERY if not a.default_season] == COMMODITIES


def test_a_season_naming_no_symbols_plays_the_default_season():
    """``select(None)`` (a season, a replay or an ingest without symbols) gives the 62 assets of
    the default season, in the file's order; naming the ETFs selects them like any row."""
    universe = EVERY
    default = universe.select(None)
    assert default.symbols == ["BTC", *CRYPTO, *STOCKS, "SPY"]
    assert "GLD" not in default and "USO" not in default
    assert universe.default_season() == default and default.select(None) is default
    four = universe.select(["uso", "gld", "NVDA", "btc-usd"])
    assert four.symbols == ["BTC", "NVDA", "GLD", "USO"]
    assert four["GLD"] is universe["GLD"] and four.select(["GLD"]).symbols == ["GLD"]
    assert universe.with_cost_rates({"GLD": 0.0002})["GLD"].default_season is False


def test_an_asset_names_no_vendor(universe):
    """The core knows the house symbols only: no field of an asset names a vendor or a
    vendor's spelling (the adapters keep those, :mod:`arena.data.providers.symbols`)."""
    from dataclasses import fields

    from arena.data.providers import PROVIDERS
    from arena.data.providers.symbols import VENDORS

    vendors = {*VENDORS, *(p.name for p in PROVIDERS if p.vendor), "yahoo"}
    names = [f.name for f in fields(Asset)]
    assert [n for n in names if any(v in n for v in vendors)] == []
    assert names == ["symbol", "name", "asset_class", "sector", "tradable", "benchmark",
                     "calendar", "cost_rate", "default_season"]
    assert universe["BTC"].calendar == "24/7" and universe["SPY"].calendar == "XNYS"


def test_a_universe_file_needs_no_vendor_column(tmp_path, universe):
    own = tmp_path / "u.csv"
    own.write_text("symbol,name,asset_class,sector,tradable,benchmark,calendar\n"
                   "BRK.B,Berkshire Hathaway Class B,stock,Financials,true,false,XNYS\n")
    assert load_universe(own).assets == (universe["BRK.B"],)


def test_a_universe_file_without_default_season_plays_every_row(tmp_path):
    own = tmp_path / "u.csv"
    own.write_text("symbol,name,asset_class,sector,tradable,benchmark,calendar\n"
                   "GLD,SPDR Gold Shares,etf,Commodities,true,false,XNYS\n"
                   "ETH,Ethereum,crypto,smart-contract platform,true,false,24/7\n")
    mine = load_universe(own)
    assert mine.select(None) is mine and mine.symbols == ["GLD", "ETH"]
    assert all(a.default_season for a in mine)


@pytest.mark.parametrize("raw,house", [("brk-b", "BRK.B"), ("BRK.B", "BRK.B"), ("ETH/USDT", "ETH"),
                                       ("ETH/USDT:USDT", "ETH"), ("BTC-USD", "BTC"), (" eth ", "ETH")])
def test_normalise_symbol(raw, house):
    assert normalise_symbol(raw) == house


def test_select_and_unknown_symbols(universe):
    assert universe.select(["brk-b", "ETH"]).symbols == ["ETH", "BRK.B"]
    with pytest.raises(UniverseError, match="FOO"):
        universe.select(["FOO"])
    with pytest.raises(UniverseError, match="unknown symbol 'FOO'"):
        universe["FOO"]


def test_malformed_universe_file_is_named(tmp_path):
    bad = tmp_path / "u.csv"
    bad.write_text("symbol,name\nETH,Ethereum\n")
    with pytest.raises(UniverseError, match="missing column"):
        load_universe(bad)
    src = load_universe().assets[0]
    bad.write_text("symbol,name,asset_class,sector,tradable,benchmark,calendar,yfinance_symbol,"
                   f"binance_symbol,binance_perp_symbol\n{src.symbol},x,crypto,s,maybe,false,24/7,,,\n")
    with pytest.raises(UniverseError, match="tradable='maybe'"):
        load_universe(bad)
    bad.write_text("symbol,name,asset_class,sector,tradable,benchmark,calendar,default_season\n"
                   "GLD,SPDR Gold Shares,etf,Commodities,true,false,XNYS,\n")
    with pytest.raises(UniverseError, match="universe row 2: default_season='' is not a boolean"):
        load_universe(bad)
