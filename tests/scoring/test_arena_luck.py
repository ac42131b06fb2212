"""Zero-skill arena players: inside the rules, deterministic, honest about fees, placed by the scorer.

Season: 28 daily cycles at 16:00 UTC from Monday 2025-01-13 (MLK day, Monday 2025-01-20, is an NYSE
holiday; four weekends) on the synthetic market, 10 crypto assets and 10 stocks.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from arena.core.sessions import is_trading_day
from arena.core.universe import UniverseError
from arena.engine.portfolio import CLOSE, LONG, OPEN, Portfolio
from arena.scoring.arena_luck import (
    ArenaLuck,
    RandomProfile,
    ZeroSkillBooks,
    advance_zero_skill,
    arena_zero_skill,
    play_player,
)
from tests.scoring.season28 import BUSY, CYCLES, HOLIDAY, TIGHT


def _is_stock(universe, symbol: str) -> bool:
    return universe[symbol].asset_class == "stock"


def _nyse_day(at: pd.Timestamp) -> bool:
    return is_trading_day(at.tz_convert("America/New_York").date())


def test_the_season_has_weekends_a_holiday_and_stock_gaps(prices, universe):
    assert not _nyse_day(CYCLES[7]) and CYCLES[7].date() == HOLIDAY
    stocks = [s for s in prices.columns if _is_stock(universe, s)]
    closed_days = [not _nyse_day(c) for c in CYCLES]
    assert sum(closed_days) == 9  # 8 weekend days + MLK day
    assert prices.loc[closed_days, stocks].isna().all().all()
    assert prices.loc[[not c for c in closed_days], stocks].notna().all().all()
    assert prices.drop(columns=stocks).notna().all().all()


@pytest.mark.parametrize("profile", [RandomProfile(), BUSY, TIGHT], ids=["default", "busy", "tight"])
def test_random_players_are_never_rejected(prices, universe, bars, profile):
    luck = arena_zero_skill(prices, universe, players=150, seed=3, bars=bars, profile=profile)
    assert luck.rejections == 0
    assert luck.cycles == 28 and len(luck.returns) == 150
    assert np.isfinite(luck.returns).all() and luck.returns.std() > 0


@pytest.mark.parametrize("profile", [RandomProfile(), BUSY], ids=["default", "busy"])
def test_traces_follow_trading_days_one_open_per_cycle_and_never_overdraw(prices, universe,
                                                                          profile):
    opened_stock_on_trading_day = opened_crypto_on_closed_day = False
    for player in range(25):
        run = play_player(prices, universe, player, seed=11, profile=profile)
        assert run.rejections == ()
        assert len(run.answers) == len(run.cash) == len(run.equity) == 28
        for fill in run.fills:
            assert fill.at in CYCLES and not fill.automatic  # no bars: no monitor
            if _is_stock(universe, fill.symbol):
                assert _nyse_day(fill.at), f"{fill.symbol} traded on {fill.at.date()}"
                opened_stock_on_trading_day |= fill.kind == OPEN
            elif fill.kind == OPEN and not _nyse_day(fill.at):
                opened_crypto_on_closed_day = True
        opens = Counter(f.at for f in run.fills if f.kind == OPEN)
        assert max(opens.values(), default=0) <= 1
        assert all(sum(d.action.startswith("open") for d in a.decisions) <= 1 for a in run.answers)
        assert min(run.cash) >= 0.0  # the cap is exact: never a rounding error below zero
        assert all(len(a.decisions) == len({d.symbol for d in a.decisions}) for a in run.answers)
        assert run.equity[-1] == pytest.approx(10_000 * (1 + run.final_return), rel=1e-12)
    assert opened_stock_on_trading_day and opened_crypto_on_closed_day


def test_busy_players_fill_up_to_the_position_limit_and_use_partial_closes(prices, universe):
    runs = [play_player(prices, universe, p, seed=5, profile=BUSY) for p in range(10)]
    assert max(len(r.portfolio.positions) for r in runs) <= 10
    kinds = Counter(f.kind for r in runs for f in r.fills)
    assert kinds["add"] > 0 and kinds[CLOSE] > 0
    partial = 0
    for run in runs:
        state = Portfolio()
        for fill in run.fills:
            state = state.apply(fill)
            partial += fill.kind == CLOSE and fill.symbol in state.positions
        assert state == run.portfolio  # the fills tell the whole story
    assert partial > 0, "some closes are partial and leave the position open"


def test_a_player_is_the_same_whatever_the_number_of_players(prices, universe):
    few = arena_zero_skill(prices, universe, players=10, seed=42)
    many = arena_zero_skill(prices, universe, players=100, seed=42)
    np.testing.assert_array_equal(few.returns, many.returns[:10])
    assert play_player(prices, universe, 7, seed=42).final_return == few.returns[7]
    other = arena_zero_skill(prices, universe, players=10, seed=43)
    assert not np.array_equal(few.returns, other.returns)


def test_a_flat_market_costs_exactly_the_fees(prices, universe):
    flat = prices.copy()
    for i, symbol in enumerate(flat.columns):
        flat[symbol] = flat[symbol].where(flat[symbol].isna(), 50.0 + i)  # NaN stays NaN
    luck = arena_zero_skill(flat, universe, players=200, seed=1)
    assert (luck.returns <= 0).all() and (luck.returns < 0).mean() > 0.9
    for player in (0, 1, 17, 199):
        run = play_player(flat, universe, player, seed=1)
        fees = sum(f.fee for f in run.fills)
        assert fees > 0 and all(f.realised_pnl == pytest.approx(0, abs=1e-9) for f in run.fills)
        assert run.final_return == pytest.approx(-fees / 10_000, abs=1e-12)
        assert luck.returns[player] == run.final_return


def test_place_maps_returns_to_percentile_and_rank_score(prices, universe):
    luck = arena_zero_skill(prices, universe, players=301, seed=2)
    p, score = luck.place(luck.returns.max() + 1.0)
    assert p == 1.0 and score == pytest.approx(math.log10(302))
    p, score = luck.place(float(np.median(luck.returns)))
    assert p == pytest.approx(0.5, abs=0.01) and score == pytest.approx(0.30, abs=0.01)
    assert luck.place(luck.returns.min() - 1.0) == (0.0, 0.0)
    d = luck.as_dict()
    assert d["players"] == 301 and d["rejections"] == 0 and d["cycles"] == 28
    assert set(d["quantiles"]) == {"0.05", "0.25", "0.5", "0.75", "0.95"}
    assert d["ceiling"] == d["quantiles"]["0.95"] == luck.ceiling
    assert d["quantiles"]["0.05"] <= d["quantiles"]["0.5"] <= d["ceiling"]
    assert d["mean"] == pytest.approx(float(luck.returns.mean()))


def test_place_on_a_hand_made_distribution():
    luck = ArenaLuck(np.array([-0.1, 0.0, 0.1, 0.2]), seed=0, cycles=1, rejections=0)
    assert luck.place(0.0)[0] == pytest.approx(0.375)  # one below, one tie (half)
    assert luck.place(1.0) == (1.0, pytest.approx(math.log10(5)))


def test_tight_levels_are_enforced_by_the_monitor(prices, universe, bars):
    automatic = []
    for player in range(12):
        run = play_player(prices, universe, player, seed=8, bars=bars, profile=TIGHT)
        assert run.rejections == ()
        auto = [f for f in run.fills if f.automatic]
        for f in auto:
            level = f.invalidation_price
            assert (f.price <= level) if f.side == LONG else (f.price >= level)
            assert f.at not in CYCLES and CYCLES[0] < f.at < CYCLES[-1]
            if _is_stock(universe, f.symbol):
                assert _nyse_day(f.at)
            # the position was open when its level was hit; the next fill in it is a new open
            later = [g for g in run.fills if g.symbol == f.symbol and g.at > f.at]
            assert not later or later[0].kind == OPEN
        automatic += auto
        same = play_player(prices, universe, player, seed=8, bars=bars, profile=TIGHT,
                           screen_monitor=False)
        assert same.fills == run.fills and same.final_return == run.final_return
    assert len(automatic) >= 10, len(automatic)
    without = play_player(prices, universe, 0, seed=8, profile=TIGHT)
    assert not any(f.automatic for f in without.fills)


def test_the_monitor_changes_returns_only_through_levels(prices, universe, bars):
    luck = arena_zero_skill(prices, universe, players=20, seed=4, bars=bars)
    again = arena_zero_skill(prices, universe, players=20, seed=4, bars=bars)
    np.testing.assert_array_equal(luck.returns, again.returns)
    for player in (0, 5):  # the screen that skips most monitor calls changes nothing
        screened = play_player(prices, universe, player, seed=4, bars=bars)
        assert screened.final_return == luck.returns[player]
        assert play_player(prices, universe, player, seed=4, bars=bars,
                           screen_monitor=False).fills == screened.fills
    far = RandomProfile(level_min=0.9, level_max=0.95)  # never reached in 28 days
    np.testing.assert_array_equal(
        arena_zero_skill(prices, universe, players=20, seed=4, bars=bars, profile=far).returns,
        arena_zero_skill(prices, universe, players=20, seed=4, profile=far).returns)


def test_bad_inputs_are_refused(prices, universe):
    with pytest.raises(ValueError, match="timezone-aware"):
        arena_zero_skill(prices.tz_localize(None), universe, players=1)
    with pytest.raises(UniverseError, match="NOPE"):
        arena_zero_skill(prices.assign(NOPE=1.0), universe, players=1)
    with pytest.raises(ValueError, match="increasing"):
        arena_zero_skill(prices.iloc[::-1], universe, players=1)
    with pytest.raises(ValueError, match="at least one player"):
        arena_zero_skill(prices, universe, players=0)
    with pytest.raises(ValueError, match="probability"):
        RandomProfile(open_prob=1.5)
    with pytest.raises(ValueError, match="level range"):
        RandomProfile(level_min=0.3, level_max=0.1)


def _from(bars: dict[str, pd.DataFrame], since: pd.Timestamp) -> dict[str, pd.DataFrame]:
    """The bars opened at or after ``since``: all the monitor needs after that time."""
    return {s: b[b["timestamp"] >= since].reset_index(drop=True) for s, b in bars.items()}


@pytest.mark.parametrize("profile", [RandomProfile(), BUSY, TIGHT], ids=["default", "busy", "tight"])
@pytest.mark.parametrize("steps", [(1,) * 28, (3, 1, 5, 2, 9, 8), (27, 1)],
                         ids=["one by one", "uneven", "all but one"])
def test_books_advanced_publication_by_publication_equal_one_simulation_from_scratch(
        prices, universe, bars, profile, steps):
    """N advances of k cycles each (each given only the bars from the cycle before its first
    one on) play the same season as one simulation over the 28 cycles: the same returns,
    equity after every cycle, equity band and rejections, bit for bit."""
    whole = arena_zero_skill(prices, universe, players=40, seed=6, bars=bars, profile=profile,
                             curves=True)
    books, equity, automatic = ZeroSkillBooks.start(40, seed=6), [], 0
    for k in steps:
        n = books.cycles + k
        since = CYCLES[max(books.cycles - 1, 0)] - pd.Timedelta(minutes=15)
        played = advance_zero_skill(books, prices.iloc[:n], universe, bars=_from(bars, since),
                                    profile=profile)
        assert played.books.cycles == n and played.books.last_cycle == CYCLES[n - 1]
        books = played.books
        equity.append(played.equity)
    equity = np.hstack(equity)
    np.testing.assert_array_equal(played.returns, whole.returns)
    np.testing.assert_array_equal(equity, whole.equity)
    assert books.rejections == whole.rejections == 0
    band = np.hstack([np.quantile(equity[:, a:b], (0.05, 0.5, 0.95), axis=0)
                      for a, b in ((0, 10), (10, 11), (11, 28))])  # a band appended in parts
    np.testing.assert_array_equal(band, whole.band())
    if profile is TIGHT:  # the monitor closed positions in windows that open at a seam
        seams = np.cumsum(steps)[:-1]
        windows = [(CYCLES[n - 1], CYCLES[n]) for n in seams]
        for player in range(10):
            automatic += sum(f.automatic and any(a < f.at <= b for a, b in windows)
                             for f in play_player(prices, universe, player, seed=6, bars=bars,
                                                  profile=TIGHT).fills)
        assert automatic > 0 or len(seams) < 5


def test_books_kept_after_a_cycle_are_the_books_of_that_cycle(prices, universe, bars):
    start = ZeroSkillBooks.start(10, seed=2)
    played = advance_zero_skill(start, prices.iloc[:20], universe, bars=bars, keep=13)
    upto = advance_zero_skill(start, prices.iloc[:13], universe, bars=bars)
    assert played.kept == upto.books
    again = advance_zero_skill(played.kept, prices.iloc[:20], universe, bars=bars)
    assert again.books == played.books
    np.testing.assert_array_equal(again.returns, played.returns)
    assert advance_zero_skill(upto.books, prices.iloc[:13], universe, keep=13).kept == upto.books


def test_books_refuse_cycles_they_did_not_play(prices, universe):
    books = advance_zero_skill(ZeroSkillBooks.start(3), prices.iloc[:5], universe).books
    with pytest.raises(ValueError, match="is not cycle 5"):
        advance_zero_skill(books, prices.iloc[1:9], universe)
    with pytest.raises(ValueError, match="only 4"):
        advance_zero_skill(books, prices.iloc[:4], universe)
    with pytest.raises(ValueError, match="keep=3 is not between 5 and 9"):
        advance_zero_skill(books, prices.iloc[:9], universe, keep=3)
    with pytest.raises(ValueError, match="at least one player"):
        ZeroSkillBooks.start(0)
