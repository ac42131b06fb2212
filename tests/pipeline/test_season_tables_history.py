"""How far back a season's market reaches, and the season tables of a new listing (issue 27,
item 1): the history is derived from the reference rules' longest window on each calendar, and a
rule the stored history before the first cycle does not cover is ``insufficient_history``."""

from __future__ import annotations

import exchange_calendars as xcals
import pandas as pd
import pytest

from arena.core.sessions import expected_bars
from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.pipeline.day import history_start as day_history_start
from arena.pipeline.season_ingest import BRIEFING_HISTORY_DAYS, history_bars, history_start
from arena.pipeline.season_tables import asset_tables
from arena.scoring.reference_rules import RULES
from arena.scoring.rules_table import INSUFFICIENT_HISTORY, SCORED
from tests.conftest import ts

FIRST = ts("2026-10-01 16:00")  # the demo's first cycle


def test_the_history_needed_is_the_twelve_month_momentum_on_each_grid():
    assert history_bars("24/7", "1h") == 8760
    assert history_bars("24/7", "1d") == 365
    assert history_bars("XNYS", "1d") == 252
    assert history_bars("XNYS", "1h") == 252 * 7


def test_crypto_needs_365_days_before_the_first_cycle():
    assert history_start(FIRST, ("24/7",)) == ts("2025-10-01")


def test_a_year_of_nyse_sessions_counted_on_the_exchange_calendar():
    """252 sessions (and 1764 hourly bars, early closes having 4) before the first cycle: the
    oracle is exchange-calendars itself, counting back from the cycle day's session."""
    start = history_start(FIRST, ("XNYS",))
    sessions = xcals.get_calendar("XNYS").sessions_in_range("2025-01-01", "2026-10-01")
    assert start.tz_localize(None) <= sessions[-252]  # 252 sessions, the cycle day's included
    for grid in ("1d", "1h"):
        assert len(expected_bars("XNYS", grid, start, FIRST)) >= history_bars("XNYS", grid)
    # and no earlier than it must: one day later, a grid falls short
    later = start + pd.Timedelta(days=1)
    assert any(len(expected_bars("XNYS", g, later, FIRST)) < history_bars("XNYS", g)
               for g in ("1d", "1h"))
    assert history_start(FIRST) == min(start, history_start(FIRST, ("24/7",)))


def test_the_season_market_reaches_back_a_year_not_220_days():
    start = day_history_start(FIRST)
    assert start == history_start(FIRST)
    assert (FIRST.normalize() - start).days >= 365 > BRIEFING_HISTORY_DAYS


SEASON = [ts("2026-03-02 16:00"), ts("2026-03-04 16:00")]  # Monday to Wednesday


def _lake(tmp_path, symbol: str, since: pd.Timestamp) -> tuple[Lake, object]:
    from arena.core.universe import load_universe

    universe = load_universe().select([symbol])
    lake = Lake(tmp_path / "lake")
    run_ingest(SyntheticProvider(), universe, start=since, end=SEASON[-1], lake=lake,
               now=SEASON[-1])
    return lake, universe[symbol]


@pytest.fixture(scope="module")
def listing(tmp_path_factory):
    """AAPL stored from Monday 2026-02-02 only: 19 sessions before the first cycle (February
    without Presidents' Day, 16 Feb), 7 hourly bars each, plus the cycle day's 14:30 and 15:30
    bars: 19 x 7 + 2 = 135 hourly bars of history."""
    lake, asset = _lake(tmp_path_factory.mktemp("listing"), "AAPL", ts("2026-02-02"))
    _, table = asset_tables(lake, "synthetic", asset, SEASON[0], SEASON[-1], players=200,
                            seed=0)
    return table.set_index("rule")


def test_a_new_listing_marks_the_rules_its_history_does_not_cover(listing):
    """On XNYS hourly bars a day is 7 bars: RSI-14 needs 7 + 98 - 1 = 104, the stochastic
    98 - 1 + 21 - 1 = 117 (both covered by 135); Bollinger 20 x 7 - 1 = 139, Donchian and the
    volatility target 140, MACD 243, ... are not."""
    table = listing
    assert (table["history_bars"] == 135).all()
    scored = set(table.index[table["status"] == SCORED])
    assert scored == {"buy_and_hold", "rsi_14_reversion", "stochastic_14_3", "random"}
    short = table[table["status"] == INSUFFICIENT_HISTORY]
    assert short[["return", "percentile", "rank_score", "rank"]].isna().all().all()
    assert table.loc["bollinger_20_reversion", "needed_bars"] == 139
    assert table.loc["absolute_momentum_12m", "needed_bars"] == 1764
    ranked = table[(table["kind"] == "rule") & table["rank"].notna()]
    assert set(ranked.index) == {"buy_and_hold", "rsi_14_reversion", "stochastic_14_3"}
    assert ranked["rank"].tolist() == ranked["return"].rank(ascending=False,
                                                            method="min").tolist()


def test_a_full_history_scores_every_rule(tmp_path):
    lake, asset = _lake(tmp_path, "AAPL", history_start(SEASON[0], ("XNYS",)))
    _, table = asset_tables(lake, "synthetic", asset, SEASON[0], SEASON[-1], players=200, seed=0)
    assert (table["status"] == SCORED).all()
    assert (table["history_bars"] >= 1764).all()
    assert table.loc[table["kind"] == "rule", "rank"].notna().sum() == len(RULES)
