import math

import numpy as np
import pandas as pd
import pytest

from arena.core.sessions import expected_bars
from arena.core.universe import load_universe
from arena.data.errors import UnsupportedError
from arena.data.providers.synthetic import SyntheticProvider
from tests.conftest import ts


@pytest.mark.parametrize("symbol", ["ETH", "AAPL", "SPY", "BTC"])
def test_day_by_day_equals_the_whole_range(synthetic, universe, symbol):
    asset = universe[symbol]
    whole = synthetic.fetch_bars(asset, "15m", ts("2025-03-03"), ts("2025-03-17"))
    days = [d for d in pd.date_range("2025-03-03", "2025-03-16", tz="UTC")
            if len(expected_bars(asset.calendar, "15m", d, d + pd.Timedelta(days=1)))]
    fresh = SyntheticProvider()  # no cache shared with the whole-range fetch
    pieces = pd.concat([fresh.fetch_bars(asset, "15m", d, d + pd.Timedelta(days=1)) for d in days],
                       ignore_index=True)
    pd.testing.assert_frame_equal(whole, pieces)


@pytest.mark.parametrize("symbol", ["ETH", "AAPL"])
def test_days_kept_from_earlier_requests_are_the_days_made_afresh(universe, symbol):
    """An ingest asks for every interval of an asset in turn: the days one request made serve
    the next, and give the bars a provider that never saw them makes, across a rebuild of
    the daily levels (a later year) and past the symbols it keeps."""
    asset, kept = universe[symbol], SyntheticProvider()
    for interval in ("15m", "1h", "1w"):
        kept.fetch_bars(asset, interval, ts("2025-02-03"), ts("2025-03-17"))
    for other in [a for a in universe if a.symbol != symbol][:20]:  # more than it keeps
        kept.fetch_bars(other, "15m", ts("2025-03-03"), ts("2025-03-04"))
    for interval, start, end in (("15m", "2025-03-03", "2025-03-10"),
                                 ("4h", "2025-01-20", "2025-03-17"),
                                 ("1d", "2026-12-20", "2027-01-10")):  # levels grow to 2027
        pd.testing.assert_frame_equal(
            kept.fetch_bars(asset, interval, ts(start), ts(end)),
            SyntheticProvider().fetch_bars(asset, interval, ts(start), ts(end)))
    pd.testing.assert_frame_equal(  # days made before the rebuild are not served after it
        kept.fetch_bars(asset, "15m", ts("2025-02-03"), ts("2025-02-05")),
        SyntheticProvider().fetch_bars(asset, "15m", ts("2025-02-03"), ts("2025-02-05")))


def test_coarse_bars_do_not_depend_on_the_window(synthetic, universe):
    asset = universe["MSFT"]
    short = synthetic.fetch_bars(asset, "1d", ts("2025-06-02"), ts("2025-06-07"))
    long_ = SyntheticProvider().fetch_bars(asset, "1d", ts("2025-01-01"), ts("2025-12-01"))
    pd.testing.assert_frame_equal(short, long_[long_.timestamp.isin(short.timestamp)].reset_index(drop=True))


def test_seed_changes_the_market(universe):
    a = SyntheticProvider(1).fetch_bars(universe["ETH"], "1d", ts("2025-01-01"), ts("2025-02-01"))
    b = SyntheticProvider(2).fetch_bars(universe["ETH"], "1d", ts("2025-01-01"), ts("2025-02-01"))
    assert not np.allclose(a.close, b.close)


def test_clocks_follow_the_calendars(synthetic, universe):
    stock = synthetic.fetch_bars(universe["AAPL"], "15m", ts("2025-11-24"), ts("2025-12-01"))
    assert list(stock.timestamp) == list(expected_bars("XNYS", "15m", ts("2025-11-24"), ts("2025-12-01")))
    crypto = synthetic.fetch_bars(universe["SOL"], "1h", ts("2025-11-24"), ts("2025-12-01"))
    assert len(crypto) == 7 * 24


def test_bars_are_sane_and_only_closed_bars_come_back(synthetic, universe):
    bars = synthetic.fetch_bars(universe["DOGE"], "1h", ts("2025-05-01"), ts("2025-05-03 10:30"))
    assert bars.timestamp.iloc[-1] == ts("2025-05-03 09:00")  # 10:00-11:00 has not closed
    assert (bars.low <= bars[["open", "close"]].min(axis=1)).all()
    assert (bars.high >= bars[["open", "close"]].max(axis=1)).all()
    assert (bars.volume > 0).all() and (bars.low > 0).all()


def test_realistic_statistics(synthetic, universe):
    """Fat tails, plausible volatility, and correlation across assets."""
    def daily(sym):
        d = synthetic.fetch_bars(universe[sym], "1d", ts("2019-01-01"), ts("2025-11-01"))
        return np.log(d.set_index(d.timestamp.dt.normalize()).close).diff().dropna()
    spy, jpm, btc = daily("SPY"), daily("JPM"), daily("BTC")
    assert 0.10 < spy.std() * np.sqrt(252) < 0.25
    assert 0.35 < btc.std() * np.sqrt(365) < 0.90
    assert spy.kurt() > 2 and btc.kurt() > 2  # fatter tails than a Gaussian
    joined = pd.concat([spy, jpm], axis=1, join="inner")
    assert 0.3 < joined.corr().iloc[0, 1] < 0.9


def test_stock_sessions_gap_overnight(synthetic, universe):
    bars = synthetic.fetch_bars(universe["NVDA"], "15m", ts("2025-01-01"), ts("2025-04-01"))
    day = bars.timestamp.dt.normalize()
    first = bars.groupby(day).head(1).set_index(day.loc[bars.groupby(day).head(1).index])
    last = bars.groupby(day).tail(1).set_index(day.loc[bars.groupby(day).tail(1).index])
    gaps = np.abs(np.log(first.open.to_numpy()[1:] / last.close.to_numpy()[:-1]))
    assert (gaps > 0).all()  # opens are not the previous close
    # earnings sessions open with larger gaps and heavier volume than ordinary ones
    earn = synthetic.earnings_dates(universe["NVDA"], ts("2025-01-01"), ts("2025-04-01"))
    assert len(earn) == 1
    e = earn[0].normalize()
    vol = bars.groupby(day).volume.sum()
    assert vol.loc[e] > 2 * vol.drop(e).median()


def test_funding_and_earnings_calendars(synthetic, universe):
    f = synthetic.fetch_funding(universe["ETH"], ts("2025-11-01"), ts("2025-11-04"))
    assert list(f.timestamp.dt.hour[:3]) == [0, 8, 16] and len(f) == 9
    assert f.funding_rate.abs().max() < 0.003
    with pytest.raises(UnsupportedError):
        synthetic.fetch_funding(universe["AAPL"], ts("2025-11-01"), ts("2025-11-04"))
    year = synthetic.earnings_dates(universe["AAPL"], ts("2025-01-01"), ts("2026-01-01"))
    assert len(year) == 4 and all(d.weekday() < 5 for d in year)
    assert synthetic.earnings_dates(universe["SPY"], ts("2025-01-01"), ts("2026-01-01")) == []


def test_refuses_before_the_synthetic_epoch(synthetic, universe):
    with pytest.raises(UnsupportedError, match="starts 2018-01-01"):
        synthetic.fetch_bars(universe["ETH"], "1d", ts("2017-06-01"), ts("2018-02-01"))


def test_funding_uses_no_future_prices(synthetic, universe):
    """Regression: funding at 00:00 once followed that same day's (future) return."""
    eth = universe["ETH"]
    funding = synthetic.fetch_funding(eth, ts("2023-01-01"), ts("2025-01-01")).set_index("timestamp")
    daily = synthetic.fetch_bars(eth, "1d", ts("2022-12-20"), ts("2025-01-02")).set_index("timestamp")
    day_return = np.log(daily.close / daily.open)  # the UTC day that starts at the bar's open
    trailing = np.log(daily.close.shift(1) / daily.close.shift(4))  # closed before that day
    at_midnight = funding[funding.index.hour == 0].funding_rate
    same_day = at_midnight.corr(day_return.reindex(at_midnight.index))
    past = at_midnight.corr(trailing.reindex(at_midnight.index))
    assert abs(same_day) < 0.1 and past > 0.5
    # and a funding rate does not depend on the window it is asked in
    short = synthetic.fetch_funding(eth, ts("2024-06-01"), ts("2024-06-03")).set_index("timestamp")
    pd.testing.assert_series_equal(short.funding_rate, funding.funding_rate.loc[short.index])


# FINCHAL's four assets: the contest refuses a pair whose daily returns correlate above 0.7
CONTEST_FOUR = ("NVDA", "BTC", "GLD", "USO")


def _daily_closes(provider: SyntheticProvider, symbols, start: str, end: str) -> pd.DataFrame:
    every = load_universe()  # GLD and USO are outside the default season
    return pd.DataFrame({s: provider.fetch_bars(every[s], "1d", ts(start), ts(end))
                         .set_index("timestamp").close.rename(lambda t: t.normalize())
                         for s in symbols})


def test_gold_and_crude_oil_are_weakly_correlated_with_the_market_and_each_other(synthetic):
    """Each pair of NVDA, BTC, GLD and USO: the correlation of daily close-to-close returns over
    three years (each asset's returns between its own trading days, on the dates both traded,
    as the contest checks them) stays below 0.3; GLD and USO barely follow SPY."""
    closes = _daily_closes(synthetic, (*CONTEST_FOUR, "SPY"), "2022-12-01", "2025-12-01")
    returns = closes.apply(lambda s: s.dropna().pct_change()).reindex(closes.index)
    corr = returns.corr(min_periods=500)
    pairs = {(a, b): corr.loc[a, b] for i, a in enumerate(CONTEST_FOUR)
             for b in CONTEST_FOUR[i + 1:]}
    assert all(abs(c) < 0.3 for c in pairs.values()), pairs
    assert abs(corr.loc["GLD", "SPY"]) < 0.2 and abs(corr.loc["USO", "SPY"]) < 0.35
    assert corr.loc["NVDA", "SPY"] > 0.5  # the stocks still follow the market


def test_gold_and_crude_oil_trade_at_their_etfs_levels_and_volatility(synthetic):
    """GLD about 15% a year around $190-250 in 2024, USO about 35% around $70-80; on the New
    York clock, with no earnings and no funding."""
    closes = _daily_closes(synthetic, ("GLD", "USO"), "2022-01-01", "2025-01-01")
    vol = np.log(closes).diff().std() * np.sqrt(252)
    assert 0.12 < vol["GLD"] < 0.19 and 0.28 < vol["USO"] < 0.45
    year = closes.loc["2024"].median()
    assert 190 < year["GLD"] < 250 and 70 < year["USO"] < 80
    every = load_universe()
    assert synthetic.earnings_dates(every["GLD"], ts("2024-01-01"), ts("2025-01-01")) == []
    with pytest.raises(UnsupportedError):
        synthetic.fetch_funding(every["USO"], ts("2024-01-01"), ts("2024-01-05"))
    hourly = synthetic.fetch_bars(every["USO"], "1h", ts("2025-11-24"), ts("2025-12-01"))
    assert list(hourly.timestamp) == list(expected_bars("XNYS", "1h", ts("2025-11-24"),
                                                        ts("2025-12-01")))


# Bars made before GLD and USO joined the universe: count, fsum of closes and of volumes, last
# close. Every asset's random streams are its own, so adding assets must change none of them.
BEFORE_THE_ETFS = [
    ("BTC", "1h", "2025-01-01", "2025-02-01", 744, 79011570.31339334, 16064622.519557845,
     105787.51123038206),
    ("SPY", "1d", "2018-01-01", "2026-01-01", 2011, 798279.1436107553, 267696701848.67648,
     664.3384725656033),
    ("NVDA", "15m", "2025-11-03", "2025-11-08", 130, 6241.570820429067, 649048215.6941493,
     45.80895787024118),
    ("XOM", "1d", "2022-01-01", "2025-01-01", 753, 30682.522392088675, 158610559063.83405,
     75.22868119442943),
    ("ETH", "4h", "2024-06-01", "2024-07-01", 180, 124854.87388959875, 668133521.030388,
     648.2680458665627),
    ("AAPL", "1w", "2023-01-02", "2024-01-01", 52, 12688.875652617076, 521895299.8220965,
     223.1116601327599),
]


def test_the_etfs_change_no_other_assets_bars(universe):
    """A provider that made GLD's and USO's bars first (their commodity factor, the shared
    calendars and regimes) gives the other assets the bars they had before the ETFs existed."""
    provider, every = SyntheticProvider(), load_universe()
    for symbol in ("GLD", "USO"):
        provider.fetch_bars(every[symbol], "1h", ts("2018-01-01"), ts("2026-06-01"))
    for symbol, interval, start, end, count, closes, volumes, last in BEFORE_THE_ETFS:
        bars = provider.fetch_bars(universe[symbol], interval, ts(start), ts(end))
        assert len(bars) == count, symbol
        got = (math.fsum(bars.close), math.fsum(bars.volume), bars.close.iloc[-1])
        assert got == pytest.approx((closes, volumes, last), rel=1e-12, abs=0), symbol
