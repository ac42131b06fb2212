import pytest

from arena.core.universe import Asset, UniverseError, load_universe, normalise_symbol

CRYPTO = "ETH BNB SOL XRP DOGE ADA TRX AVAX LINK DOT".split()
STOCKS = ("AAPL MSFT NVDA AMZN GOOGL META AVGO TSLA BRK.B JPM LLY V UNH XOM MA JNJ PG HD COST ABBV "
          "WMT NFLX CRM BAC KO ORCL CVX MRK AMD PEP ADBE TMO LIN ACN MCD CSCO ABT WFC DIS INTU QCOM "
          "TXN CAT IBM GE AMGN VZ PFE GS NOW").split()


def test_universe_has_the_spec_assets(universe):
    assert [a.symbol for a in universe.tradable] == CRYPTO + STOCKS
    assert len(universe.tradable) == 60
    assert [a.symbol for a in universe.benchmarks] == ["BTC", "SPY"]
    assert not any(a.tradable for a in universe.benchmarks)


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
                     "calendar"]
    assert universe["BTC"].calendar == "24/7" and universe["SPY"].calendar == "XNYS"


def test_a_universe_file_needs_no_vendor_column(tmp_path, universe):
    own = tmp_path / "u.csv"
    own.write_text("symbol,name,asset_class,sector,tradable,benchmark,calendar\n"
                   "BRK.B,Berkshire Hathaway Class B,stock,Financials,true,false,XNYS\n")
    assert load_universe(own).assets == (universe["BRK.B"],)


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
