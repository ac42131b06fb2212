"""Replays of the vendors' history (``--crypto ccxt --stocks yfinance``): a season replayed
from Binance's and Yahoo's history - each asset from its class's vendor, each vendor ingested in
a validated run of its own - blind, with a model; Binance and Yahoo served offline in their own
formats (:mod:`tests.vendors`)."""

from __future__ import annotations

import pandas as pd
import pytest

from arena.cli import main
from arena.data.lake import Lake
from arena.pipeline.season_config import find_season
from tests.vendors import Market, install

SYMBOLS = ["BTC", "ETH", "SPY", "AAPL"]  # the Binance the fake serves lists BTC and ETH


@pytest.mark.slow
def test_a_blind_replay_of_the_vendors_history(tmp_path, monkeypatch, universe, capsys):
    market = Market(universe.select(SYMBOLS))
    install(monkeypatch, market)
    lake = tmp_path / "lake"
    assert main(["replay", "--start", "2026-01-05", "--days", "1", "--symbols",
                 ",".join(SYMBOLS), "--players", "20", "--crypto", "ccxt", "--stocks",
                 "yfinance", "--blind", "--lake", str(lake)]) == 0
    out = capsys.readouterr().out
    assert "crypto from ccxt" in out and "played BLIND" in out and "SYNTHETIC" not in out
    config = find_season(Lake(lake))
    assert config.sources == ["ccxt", "yfinance"] and config.blind and not config.synthetic
    assert {v for v, _, _ in market.calls} == {"binance", "yahoo"}
    assert {s for v, s, _ in market.calls if v == "binance"} == {"BTC", "ETH"}
    partitions = {(k.provider, k.symbol) for k in Lake(lake).partitions()}
    assert {("ccxt", "ETH"), ("yfinance", "AAPL")} <= partitions
    assert not {p for p, s in partitions if s == "ETH" and p != "ccxt"}
    board = pd.read_parquet(lake / "marts" / "leaderboard.parquet")
    assert len(board) and (board["fills"] > 0).any()


@pytest.mark.parametrize(("args", "said"), [
    (["--crypto", "ccxt", "--drop", "{tmp}"], "not both"),
    (["--crypto", "ccxt", "--stocks", "yfinance", "--seed", "3"], "has none"),
    (["--drop-interval", "1d"], "give --drop DIR too"),
    (["--blind-sectors"], "give --blind too"),
])
def test_options_that_do_not_go_together_are_refused(args, said, tmp_path, capsys):
    args = [a.format(tmp=tmp_path) for a in args]
    assert main(["replay", "--start", "2026-01-05", "--days", "2", *args, "--lake",
                 str(tmp_path / "lake")]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "lake").exists()
