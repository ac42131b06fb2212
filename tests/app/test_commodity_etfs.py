"""Gold and crude oil (the ETFs GLD and USO, FINCHAL's) are in the universe but outside the
default season: the commands that name no symbols keep today's assets, and naming the ETFs
takes them like any other asset."""

from __future__ import annotations

import json

from arena.cli import main
from arena.core.universe import load_universe, normalise_symbol
from arena.data.providers.binance import CcxtProvider
from arena.data.providers.symbols import BINANCE, BINANCE_PERP, YFINANCE, vendor_symbol
from arena.data.providers.yahoo import YFinanceProvider

ETFS = ("GLD", "USO")


def test_gld_and_uso_are_spelt_for_yahoo_only():
    every = load_universe()
    for typed in ("gld", " USO "):
        etf = every[normalise_symbol(typed)]
        assert vendor_symbol(YFINANCE, etf) == etf.symbol
        assert vendor_symbol(BINANCE, etf) is None and vendor_symbol(BINANCE_PERP, etf) is None
        assert YFinanceProvider().supports(etf) and not CcxtProvider().supports(etf)


def test_a_season_naming_no_symbols_leaves_the_etfs_out(tmp_path, capsys):
    default = load_universe().select(None).symbols
    assert main(["season", "init", "--start", "2025-11-24", "--days", "1",
                 "--lake", str(tmp_path / "default"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["symbols"] == default
    assert not set(ETFS) & set(default) and len(default) == 62
    assert main(["season", "init", "--start", "2025-11-24", "--days", "1", "--symbols",
                 "uso,NVDA,gld,BTC", "--lake", str(tmp_path / "four"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["symbols"] == ["BTC", "NVDA", "GLD", "USO"]


def test_an_ingest_naming_no_symbols_leaves_the_etfs_out(tmp_path, capsys):
    """A Saturday: the crypto publish, the New York assets are asked and find the market
    closed; GLD and USO are neither."""
    assert main(["ingest", "--source", "synthetic", "--start", "2025-11-22", "--end",
                 "2025-11-23", "--lake", str(tmp_path / "lake"), "--json"]) == 0
    asked = json.loads(capsys.readouterr().out)["asked"]
    assert sorted(asked["symbols"] + asked["market_closed"]) == sorted(
        load_universe().select(None).symbols)
    assert main(["ingest", "--source", "synthetic", "--symbols", "GLD,USO", "--start",
                 "2025-11-20", "--end", "2025-11-22", "--lake", str(tmp_path / "etfs"),
                 "--json"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert manifest["status"] == "published" and sorted(manifest["published"]) == list(ETFS)
