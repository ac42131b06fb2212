"""A reference rule whose window the history before the season does not cover has no result
(``insufficient_history``), never a flat 0% return ranked among the others (issue 27, item 1).

Hand-computed on synthetic bars: a listing with N daily sessions before the start, and a full
history; the warm-ups are the textbook windows (``tests/scoring/test_reference_rules.py`` pins
them bar by bar)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.scoring.reference_rules import (
    BASELINES,
    RULES,
    has_history,
    longest_warmup,
    warmup_bars,
)
from arena.scoring.rules_table import INSUFFICIENT_HISTORY, SCORED, rules_table

SESSIONS = 252.0  # a NYSE stock on daily bars: a "day" is a session
SEASON = 30  # scored sessions


def _bars(history: int, season: int = SEASON) -> tuple[pd.DataFrame, pd.Timestamp]:
    """``history`` sessions before the start, then ``season`` from it: a random walk rising
    0.2% a session on weekday dates (the session grid of a stock, holidays aside)."""
    days = pd.bdate_range("2020-01-01", periods=history + season, tz="UTC")
    steps = np.random.default_rng(7).normal(0.002, 0.01, len(days))
    close = 100.0 * np.exp(np.cumsum(steps))
    bars = pd.DataFrame({"timestamp": days, "open": close, "high": close * 1.01,
                         "low": close * 0.99, "close": close, "volume": 1e6})
    return bars, days[history]


def _table(history: int) -> pd.DataFrame:
    bars, start = _bars(history)
    table, _ = rules_table(bars, cost_rate=0.0002, periods_per_year=SESSIONS, start=start,
                           players=200, calendar="XNYS")
    return table.set_index("rule")


def test_a_listing_with_60_sessions_scores_only_the_rules_its_history_covers():
    """60 sessions before the start: the windows up to 60 sessions are covered (momentum_60
    needs exactly 60 closes before its first signal); Ichimoku (52 + 26 - 1 = 77), the 200-day
    average (199), the golden cross (199) and 12-month momentum (252) are not."""
    table = _table(60)
    short = set(table.index[table["status"] == INSUFFICIENT_HISTORY])
    assert short == {"ichimoku", "above_ma200", "golden_cross", "absolute_momentum_12m"}
    assert table.loc["above_ma200", "needed_bars"] == 199
    assert table.loc["absolute_momentum_12m", "needed_bars"] == 252
    assert (table["history_bars"] == 60).all()
    for column in ("return", "turnover", "fees", "percentile", "rank_score", "rank"):
        assert table.loc[sorted(short), column].isna().all(), column
    scored = table[(table["kind"] == "rule") & (table["status"] == SCORED)]
    assert len(scored) == len(RULES) - 4
    # ranked among the nine scored rules only, 1 = best return
    assert sorted(scored["rank"]) == sorted(scored["return"].rank(ascending=False, method="min"))
    assert scored["rank"].max() <= 9
    assert table.loc["momentum_60", "status"] == SCORED  # 60 >= 60: the boundary is covered


def test_one_session_fewer_leaves_60_day_momentum_without_a_result():
    table = _table(59)
    assert table.loc["momentum_60", "status"] == INSUFFICIENT_HISTORY
    assert np.isnan(table.loc["momentum_60", "return"])
    assert table.loc["sma_crossover_20_50", "status"] == SCORED  # needs 49


def test_a_full_year_of_sessions_scores_every_rule_and_baseline():
    table = _table(252)
    assert (table["status"] == SCORED).all()
    assert table[["return", "percentile", "rank_score"]].notna().all().all()
    assert sorted(table.loc[table["kind"] == "rule", "rank"].astype(int)) == \
        sorted(pd.Series(table.loc[table["kind"] == "rule", "return"]).rank(
            ascending=False, method="min").astype(int))
    # with the history, 12-month momentum is live from the start: the year rose, so it is long
    # from the first bar (one unit of turnover to enter), not flat
    assert table.loc["absolute_momentum_12m", "turnover"] >= 1.0


def test_without_a_start_the_whole_file_is_scored_as_asked():
    bars, _ = _bars(0, season=300)
    table, _ = rules_table(bars, cost_rate=0.0002, periods_per_year=SESSIONS, players=200,
                           calendar="XNYS")
    assert (table["status"] == SCORED).all()
    assert (table["history_bars"] == 0).all()


@pytest.mark.parametrize("ppy, longest", [(252.0, 252), (365.0, 365), (8760.0, 8760),
                                          (252.0 * 7, 1764)])
def test_the_longest_window_is_twelve_month_momentum(ppy, longest):
    assert longest_warmup(ppy) == longest
    assert longest == max(warmup_bars(n, periods_per_year=ppy) for n in {*RULES, *BASELINES})
    assert has_history("absolute_momentum_12m", longest, periods_per_year=ppy)
    assert not has_history("absolute_momentum_12m", longest - 1, periods_per_year=ppy)
