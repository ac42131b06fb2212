"""Each vendor's spelling of the house symbols (``arena/data/providers/symbols.csv``), read only by
the adapters; a universe file of one's own that still carries the vendors' columns keeps them."""

from __future__ import annotations

import csv

import pytest

from arena.core.universe import DEFAULT_UNIVERSE, load_universe
from arena.data.providers.binance import CcxtProvider
from arena.data.providers.symbols import (
    BINANCE,
    BINANCE_PERP,
    SYMBOLS,
    VENDORS,
    YFINANCE,
    vendor_symbol,
)
from arena.data.providers.yahoo import YFinanceProvider

HEADER = "symbol,name,asset_class,sector,tradable,benchmark,calendar"


def test_the_adapters_spell_the_assets_as_the_vendors_do(universe):
    yahoo, binance = YFinanceProvider(), CcxtProvider()
    spelt = {(v, s): vendor_symbol(v, universe[s]) for v in VENDORS
             for s in ("BRK.B", "AAPL", "SPY", "ETH", "BTC", "DOGE")}
    assert spelt == {
        (YFINANCE, "BRK.B"): "BRK-B", (YFINANCE, "AAPL"): "AAPL", (YFINANCE, "SPY"): "SPY",
        (YFINANCE, "ETH"): None, (YFINANCE, "BTC"): None, (YFINANCE, "DOGE"): None,
        (BINANCE, "BRK.B"): None, (BINANCE, "AAPL"): None, (BINANCE, "SPY"): None,
        (BINANCE, "ETH"): "ETH/USDT", (BINANCE, "BTC"): "BTC/USDT",
        (BINANCE, "DOGE"): "DOGE/USDT",
        (BINANCE_PERP, "BRK.B"): None, (BINANCE_PERP, "AAPL"): None, (BINANCE_PERP, "SPY"): None,
        (BINANCE_PERP, "ETH"): "ETH/USDT:USDT", (BINANCE_PERP, "BTC"): "BTC/USDT:USDT",
        (BINANCE_PERP, "DOGE"): "DOGE/USDT:USDT",
    }
    for a in universe:
        assert yahoo.supports(a) == (not a.is_crypto)
        assert binance.supports(a) == a.is_crypto
        assert (vendor_symbol(BINANCE_PERP, a) is not None) == a.is_crypto
    with pytest.raises(ValueError, match="unknown vendor"):
        vendor_symbol("ccxt", universe["ETH"])


def test_the_spellings_are_the_seeds_provider_columns():
    """dbt keeps the provider columns in the warehouse's ``universe`` table: the seed and
    ``symbols.csv`` give every asset the same spelling."""
    with DEFAULT_UNIVERSE.open(newline="", encoding="utf-8") as fh:
        seed = {(v, r["symbol"]): r[f"{v}_symbol"] for r in csv.DictReader(fh) for v in VENDORS
                if r[f"{v}_symbol"]}
    with SYMBOLS.open(newline="", encoding="utf-8") as fh:
        rows = [(r["vendor"], r["symbol"], r["vendor_symbol"]) for r in csv.DictReader(fh)]
    assert len({(v, s) for v, s, _ in rows}) == len(rows)
    assert {(v, s): spelt for v, s, spelt in rows} == seed
    assert {(v, a.symbol): vendor_symbol(v, a) for a in load_universe() for v in VENDORS
            if vendor_symbol(v, a)} == seed


def test_a_universe_of_ones_own_keeps_its_vendor_columns(tmp_path, monkeypatch):
    own = tmp_path / "universe.csv"
    own.write_text(f"{HEADER},yfinance_symbol,binance_symbol,binance_perp_symbol\n"
                   "PLTR,Palantir,stock,Information Technology,true,false,XNYS,PLTR,,\n"
                   "AAPL,Apple,stock,Information Technology,true,false,XNYS,,,\n"
                   "ETH,Ethereum,crypto,smart-contract platform,true,false,24/7,,ETH/USDT,\n")
    monkeypatch.setenv("ARENA_UNIVERSE", str(own))
    universe = load_universe()
    assert universe.symbols == ["PLTR", "AAPL", "ETH"]
    yahoo, binance = YFinanceProvider(), CcxtProvider()
    assert vendor_symbol(YFINANCE, universe["PLTR"]) == "PLTR" and yahoo.supports(universe["PLTR"])
    assert vendor_symbol(YFINANCE, universe["AAPL"]) is None  # its file serves it from no vendor
    assert not yahoo.supports(universe["AAPL"])
    assert vendor_symbol(BINANCE, universe["ETH"]) == "ETH/USDT" and binance.supports(universe["ETH"])
    assert vendor_symbol(BINANCE_PERP, universe["ETH"]) is None


def test_a_universe_of_ones_own_without_a_vendor_column_takes_the_shipped_spellings(
        tmp_path, monkeypatch):
    own = tmp_path / "universe.csv"
    own.write_text(f"{HEADER},yfinance_symbol\n"
                   "BRK.B,Berkshire Hathaway Class B,stock,Financials,true,false,XNYS,BRK-B\n"
                   "ETH,Ethereum,crypto,smart-contract platform,true,false,24/7,\n")
    monkeypatch.setenv("ARENA_UNIVERSE", str(own))
    universe = load_universe()
    assert vendor_symbol(YFINANCE, universe["BRK.B"]) == "BRK-B"
    assert vendor_symbol(BINANCE, universe["ETH"]) == "ETH/USDT"
    assert vendor_symbol(BINANCE_PERP, universe["ETH"]) == "ETH/USDT:USDT"
    bare = tmp_path / "bare.csv"
    bare.write_text(f"{HEADER}\nBRK.B,Berkshire Hathaway Class B,stock,Financials,true,false,"
                    "XNYS\n")
    monkeypatch.setenv("ARENA_UNIVERSE", str(bare))
    assert vendor_symbol(YFINANCE, load_universe()["BRK.B"]) == "BRK-B"
