"""The deterministic screen: score = ADV x (1 + |10-day return|), top 5 crypto (+ top 5 stocks on
NYSE trading days), from daily bars closed by the cycle time."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from arena.data.lake import PartitionKey
from arena.market.screener import ScreenResult, screen, screen_daily
from tests.conftest import ts
from tests.market_lakes import FRI, PROVIDER, SAT, THANKSGIVING, market_lakes


@pytest.fixture(scope="module")
def lakes(tmp_path_factory, universe):
    return market_lakes(tmp_path_factory, universe)


@pytest.fixture(scope="module")
def friday(lakes, universe) -> ScreenResult:
    return screen(lakes.full, PROVIDER, universe, FRI)


def test_weekday_screens_five_crypto_and_five_stocks(friday, universe):
    assert friday.nyse_trading_day
    assert len(friday.crypto) == 5 and len(friday.stocks) == 5
    assert all(universe[s].asset_class == "crypto" for s in friday.crypto)
    assert all(universe[s].asset_class == "stock" for s in friday.stocks)
    assert friday.selected == friday.crypto + friday.stocks
    assert "BTC" not in friday.selected and "SPY" not in friday.selected  # benchmarks never
    # every tradable asset has a line; the selected ones are the best ranked of their class
    assert {s.symbol for s in friday.scores} == {a.symbol for a in universe.tradable}
    for cls, chosen in (("crypto", friday.crypto), ("stock", friday.stocks)):
        lines = sorted((s for s in friday.scores if s.asset_class == cls), key=lambda s: s.rank)
        assert tuple(s.symbol for s in lines[:5]) == chosen
        assert [s.rank for s in lines] == list(range(1, len(lines) + 1))
        assert all(a.score >= b.score for a, b in itertools.pairwise(lines))


@pytest.mark.parametrize("at", [SAT, THANKSGIVING], ids=["saturday", "thanksgiving"])
def test_closed_nyse_screens_crypto_only(lakes, universe, at):
    result = screen(lakes.full, PROVIDER, universe, at)
    assert not result.nyse_trading_day
    assert len(result.crypto) == 5 and result.stocks == ()
    assert all(s.score is not None for s in result.scores)  # stocks still scored, for the record


def _hand_score(lake, symbol: str, closed) -> float:
    daily = lake.read_bars(PartitionKey(PROVIDER, "1d", symbol))
    daily = daily[closed(daily["timestamp"])]
    last30 = daily.iloc[-30:]
    adv = float(np.mean(last30["close"] * last30["volume"]))
    r10 = daily["close"].iloc[-1] / daily["close"].iloc[-11] - 1
    return adv * (1 + abs(r10))


def test_scores_recomputed_by_hand(lakes, friday):
    lines = {s.symbol: s for s in friday.scores}
    # ETH: UTC daily bars that ended by Friday 16:00, i.e. opened by Thursday 00:00
    eth = _hand_score(lakes.full, "ETH", lambda t: t + pd.Timedelta(days=1) <= FRI)
    # AAPL: Friday's session is still open at 16:00 UTC, so its last bar is Thursday's
    aapl = _hand_score(lakes.full, "AAPL", lambda t: t.dt.date < FRI.date())
    assert lines["ETH"].score == pytest.approx(eth, rel=1e-12)
    assert lines["AAPL"].score == pytest.approx(aapl, rel=1e-12)
    assert lines["AAPL"].score == pytest.approx(
        lines["AAPL"].adv_usd * (1 + abs(lines["AAPL"].return_10d)), rel=1e-12)


def test_screen_ignores_later_bars(lakes, universe):
    assert screen(lakes.full, PROVIDER, universe, FRI) == screen(lakes.cut_fri, PROVIDER, universe,
                                                                  FRI)


def _flat(days: int, close: float, volume: float) -> pd.DataFrame:
    t = pd.date_range("2025-09-01", periods=days, freq="D", tz="UTC")
    return pd.DataFrame({"timestamp": t, "open": close, "high": close, "low": close,
                         "close": close, "volume": volume})


def test_ties_are_broken_by_symbol_and_short_history_is_not_screened(universe):
    crypto = [a.symbol for a in universe.tradable if a.is_crypto]
    daily = {s: _flat(40, 10.0, 1000.0) for s in crypto}  # identical scores
    daily[crypto[0]] = _flat(20, 10.0, 1e9)  # huge volume but too little history
    result = screen_daily(daily, universe, ts("2025-11-22 16:00"))
    expected = tuple(sorted(crypto[1:])[:5])
    assert result.crypto == expected
    line = next(s for s in result.scores if s.symbol == crypto[0])
    assert line.score is None and line.rank is None and not line.selected
    assert line.return_10d == 0.0 and line.adv_usd is None
