"""The market briefing: no lookahead, the 13-column universe table checked by hand, candles and
RSIs for screened + held assets and benchmarks, funding, earnings, the portfolio snapshot."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from arena.core.indicators import rsi_wilder
from arena.data.lake import PartitionKey, TableKey
from arena.market.briefing import RSI_HISTORY, build_briefing, build_market, portfolio_snapshot
from arena.market.types import DEPTH, TABLE_COLUMNS, MarketData
from tests.market_lakes import FRI, PROVIDER, SAT, THANKSGIVING, book_state, market_lakes

HELD = ("DOT", "KO", "JPM")  # a mix of screened and unscreened holdings


@pytest.fixture(scope="module")
def lakes(tmp_path_factory, universe):
    return market_lakes(tmp_path_factory, universe)


@pytest.fixture(scope="module")
def friday(lakes, universe) -> MarketData:
    return build_market(lakes.full, PROVIDER, universe, FRI, held=HELD)


@pytest.fixture(scope="module")
def saturday(lakes, universe) -> MarketData:
    return build_market(lakes.full, PROVIDER, universe, SAT, held=HELD)


def _prompt(market: MarketData) -> str:
    snapshot = portfolio_snapshot(book_state(market.prices, HELD, market.at), market.prices)
    return build_briefing(market, "tester", snapshot).prompt_text


@pytest.mark.parametrize("day", ["friday", "saturday"])
def test_no_lookahead(day, request, lakes, universe):
    """Built at t on a lake that also holds later bars == built on a lake ingested up to t."""
    later: MarketData = request.getfixturevalue(day)
    cut_lake = lakes.cut_fri if day == "friday" else lakes.cut_sat
    cut = build_market(cut_lake, PROVIDER, universe, later.at, held=HELD)
    assert cut.as_dict() == later.as_dict()
    assert cut == later
    prompt = _prompt(cut)
    assert prompt == _prompt(later)
    assert ("NYSE is CLOSED today" in prompt) is (day == "saturday")


def test_as_dict_is_plain_json(friday):
    data = friday.as_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["provider"] == "synthetic" and data["synthetic"] is True
    assert data["table_columns"] == list(TABLE_COLUMNS)


def test_universe_table_has_60_rows_of_13_columns(friday, universe):
    assert len(TABLE_COLUMNS) == 13
    assert [r.symbol for r in friday.table] == [a.symbol for a in universe.tradable]
    assert len(friday.table) == 60
    assert all(len(r.as_dict()) == 13 for r in friday.table)
    assert all(v is not None for r in friday.table for k, v in r.as_dict().items()
               if k != "days_to_earnings")


def _closed_daily(lake, symbol: str, closed) -> pd.DataFrame:
    daily = lake.read_bars(PartitionKey(PROVIDER, "1d", symbol))
    return daily[closed(daily["timestamp"])].reset_index(drop=True)


@pytest.mark.parametrize("symbol", ["ETH", "AAPL"])
def test_universe_row_by_hand(symbol, friday, lakes, universe):
    lake = lakes.full
    crypto = universe[symbol].is_crypto
    if crypto:  # UTC days that ended by Friday 16:00
        daily = _closed_daily(lake, symbol, lambda t: t + pd.Timedelta(days=1) <= FRI)
    else:  # Friday's session is open at 16:00 UTC: Thursday's bar is the last one
        daily = _closed_daily(lake, symbol, lambda t: t.dt.date < FRI.date())
    # the cycle price is the last 15-minute bar that closed by 16:00 (15:45-16:00 UTC)
    quarter = lake.read_bars(PartitionKey(PROVIDER, "15m", symbol))
    price = quarter.loc[quarter["timestamp"] == FRI - pd.Timedelta(minutes=15), "close"].item()
    row = next(r for r in friday.table if r.symbol == symbol)
    close = daily["close"]
    assert row.tradeable_today is True
    assert row.asset_class == universe[symbol].asset_class
    assert row.sector == universe[symbol].sector
    assert row.price == price
    assert row.return_1d == pytest.approx(close.iloc[-1] / close.iloc[-2] - 1, rel=1e-12)
    assert row.return_10d == pytest.approx(close.iloc[-1] / close.iloc[-11] - 1, rel=1e-12)
    assert row.return_30d == pytest.approx(close.iloc[-1] / close.iloc[-31] - 1, rel=1e-12)
    rsi = rsi_wilder(close.iloc[-RSI_HISTORY:].reset_index(drop=True), 14).iloc[-1]
    assert row.rsi_14d == pytest.approx(rsi, rel=1e-12)
    high = daily["high"].iloc[-30:].max()
    assert row.distance_from_30d_high == pytest.approx(close.iloc[-1] / high - 1, rel=1e-12)
    adv = (daily["close"] * daily["volume"]).iloc[-30:].mean()
    assert row.adv_usd == pytest.approx(adv, rel=1e-12)
    vol = np.std(np.diff(np.log(close.iloc[-31:])), ddof=1) * math.sqrt(365 if crypto else 252)
    assert row.volatility_30d == pytest.approx(vol, rel=1e-12)
    if crypto:
        assert row.days_to_earnings is None
    else:
        dates = lake.read_table(TableKey("earnings", PROVIDER))
        upcoming = sorted(d.date() for s, d in zip(dates["symbol"], dates["date"], strict=True)
                          if s == symbol and d.date() >= FRI.date())
        assert row.days_to_earnings == (upcoming[0] - FRI.date()).days


def test_weekend_stock_price_is_fridays_close(saturday, lakes):
    daily = lakes.full.read_bars(PartitionKey(PROVIDER, "1d", "AAPL"))
    daily = daily[daily["timestamp"].dt.date <= FRI.date()]
    row = next(r for r in saturday.table if r.symbol == "AAPL")
    assert row.price == daily["close"].iloc[-1]  # Friday's closing print
    assert row.return_1d == pytest.approx(daily["close"].iloc[-1] / daily["close"].iloc[-2] - 1,
                                          rel=1e-12)
    assert row.tradeable_today is False


@pytest.mark.parametrize(("at", "stocks_trade"), [(FRI, True), (SAT, False),
                                                   (THANKSGIVING, False)])
def test_tradeable_today(at, stocks_trade, lakes, universe):
    market = build_market(lakes.full, PROVIDER, universe, at)
    for row in market.table:
        assert row.tradeable_today is (True if row.asset_class == "crypto" else stocks_trade)
    assert market.nyse_trading_day is stocks_trade


def test_screened_held_and_benchmarks_get_full_depth(friday, saturday):
    for market in (friday, saturday):
        shown = [d.symbol for d in market.assets]
        expected = list(market.screen.selected)
        expected += [h for h in sorted(HELD) if h not in expected]
        assert shown == expected
        assert [b.symbol for b in market.benchmarks] == ["BTC", "SPY"]
        for d in (*market.assets, *market.benchmarks):
            assert [len(d.candles(iv)) for iv in DEPTH] == [26, 30, 24], d.symbol
            assert None not in (d.rsi_4h, d.rsi_1d, d.rsi_1w, d.price)
            assert (d.funding_rate is not None) == (d.asset_class == "crypto")
    assert len(friday.screen.selected) == 10 and len(saturday.screen.selected) == 5
    assert "KO" in {d.symbol for d in saturday.assets}  # a held stock stays visible on Saturday
    assert "KO" not in saturday.screen.selected


def _close_time(open_time: str, interval: str, crypto: bool) -> pd.Timestamp:
    from arena.core.sessions import bar_close_times

    return bar_close_times("24/7" if crypto else "XNYS", interval,
                           pd.DatetimeIndex([pd.Timestamp(open_time)]))[0]


def test_only_closed_candles_are_shown(friday, saturday):
    for market in (friday, saturday):
        for d in (*market.assets, *market.benchmarks):
            for iv in DEPTH:
                last = d.candles(iv)[-1]
                assert _close_time(last.open_time, iv, d.asset_class == "crypto") <= market.at
    eth_sat = saturday.detail("ETH")
    assert eth_sat.weekly[-1].open_time.startswith("2025-11-10")  # week of the 17th still forming
    assert saturday.detail("SPY").weekly[-1].open_time.startswith("2025-11-17")  # closed Friday
    assert friday.detail("SPY").weekly[-1].open_time.startswith("2025-11-10")
    assert friday.detail("SPY").daily[-1].open_time.startswith("2025-11-20")  # not Friday's yet
    assert friday.detail("ETH").four_hour[-1].open_time.startswith("2025-11-21T12:00")


def test_rsi_and_funding_of_one_asset(friday, lakes, universe):
    eth = friday.detail("ETH")
    weekly = lakes.full.read_bars(PartitionKey(PROVIDER, "1w", "ETH"))
    weekly = weekly[weekly["timestamp"] + pd.Timedelta(days=7) <= FRI].reset_index(drop=True)
    assert eth.rsi_1w == pytest.approx(rsi_wilder(weekly["close"].iloc[-RSI_HISTORY:]
                                                  .reset_index(drop=True)).iloc[-1], rel=1e-12)
    assert [c.close for c in eth.weekly] == list(weekly["close"].iloc[-26:])
    funding = lakes.full.read_table(TableKey("funding", PROVIDER, "ETH"))
    before = funding[funding["timestamp"] < FRI].iloc[-1]
    assert eth.funding_rate == before["funding_rate"]
    assert pd.Timestamp(eth.funding_time) == before["timestamp"] == FRI - pd.Timedelta(hours=8)


def test_portfolio_snapshot(friday):
    prices = friday.prices
    state = book_state(prices, ("ETH", "AAPL"), FRI)  # ETH long, AAPL short
    snap = portfolio_snapshot(state, prices)
    eth, aapl = state.portfolio.positions["ETH"], state.portfolio.positions["AAPL"]
    assert snap["cash"] == state.portfolio.cash and snap["fees_paid"] == 4.5
    assert snap["equity"] == pytest.approx(
        state.portfolio.cash + eth.quantity * prices["ETH"]
        + aapl.cost + aapl.quantity * (aapl.entry_price - prices["AAPL"]))
    rows = {p["symbol"]: p for p in snap["positions"]}
    assert rows["ETH"]["unrealised_pnl"] == pytest.approx(
        eth.quantity * (prices["ETH"] - eth.entry_price))
    assert rows["AAPL"]["unrealised_pnl"] == pytest.approx(
        aapl.quantity * (aapl.entry_price - prices["AAPL"]))
    assert rows["AAPL"]["notional"] == pytest.approx(aapl.quantity * prices["AAPL"])
    for key in ("entry_price", "quantity", "thesis", "invalidation", "invalidation_price",
                "opened_at", "side"):
        assert rows["ETH"][key] not in (None, "")
    assert snap["new_positions_left"] == 1 and snap["max_positions"] == 10
    assert json.loads(json.dumps(snap)) == snap
    # a held symbol without a cycle price: shown, not valued; equity unknown (nothing is sized)
    blind = portfolio_snapshot(state, {"AAPL": 1.0})
    assert blind["equity"] is None
    assert {p["symbol"]: p["price"] for p in blind["positions"]}["ETH"] is None


def test_briefing_shows_own_holdings_only(friday):
    prices = friday.prices
    snap = portfolio_snapshot(book_state(prices, ("JPM",), FRI), prices)
    briefing = build_briefing(friday, "alice", snap)
    shown = [d["symbol"] for d in briefing.data["market"]["assets"]]
    assert "JPM" in shown and "KO" not in shown  # KO is held by someone else
    assert [m.role for m in briefing.messages] == ["system", "user"]
    assert briefing.portfolio == snap and briefing.contestant == "alice"
    lonely = portfolio_snapshot(book_state(prices, ("NOW",), FRI), prices)
    with pytest.raises(KeyError, match="NOW"):
        build_briefing(friday, "bob", lonely)  # NOW was not passed to build_market as held
