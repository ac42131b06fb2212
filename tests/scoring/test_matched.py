"""Matched players (arena.scoring.matched): a contestant's book with its assets relabelled at
random - pinned on hand-made seasons whose players can be listed by hand, replayed through the
engine's own broker and portfolio, and shown to hold the null it states (a contestant that
chooses at random is exchangeable with its players; one that reads the next bar is not)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.engine.portfolio import ADD, CLOSE, LONG, OPEN, SHORT, Fill, Portfolio, fee
from arena.scoring.arena_luck import RandomProfile, play_player
from arena.scoring.matched import (
    Book,
    MatchedInputError,
    MatchedMarket,
    book_from_fills,
    matched_players,
    relabel,
    relabelling_keys,
    share_below,
)
from tests.scoring.reference_matched import engine_replay
from tests.scoring.season28 import BUSY

CRYPTO = ("ADA", "ETH", "SOL")
DAYS = pd.date_range("2025-03-01 16:00", periods=3, freq="1D", tz="UTC")  # Saturday on


def _market(universe, rows: list[list[float]], symbols=CRYPTO, times=DAYS) -> MatchedMarket:
    frame = pd.DataFrame(rows, index=times[:len(rows)], columns=list(symbols))
    return MatchedMarket.from_prices(frame, universe)


def _fill(at, symbol, side, kind, quantity, price, automatic=False) -> Fill:
    return Fill(at, symbol, side, kind, quantity, price, fee(quantity * price), automatic=automatic)


# ------------------------------------------------------------------------- hand-made seasons
def test_one_position_season_lists_its_players_by_hand(universe):
    """ETH bought with half the equity at 100 and sold at 110 the next day; SOL fell to 90 and
    ADA stayed at 100. Every matched player bought one of the three at the same size and sold it
    the same day: three possible returns, each from a third of the players."""
    market = _market(universe, [[100.0, 100.0, 100.0], [100.0, 110.0, 90.0]])
    fills = [_fill(DAYS[0], "ETH", LONG, OPEN, 50.0, 100.0),
             _fill(DAYS[1], "ETH", LONG, CLOSE, 50.0, 110.0)]
    book = book_from_fills("solo", fills, market)
    assert [(e.kind, e.lot, e.share) for e in book.events] == [(OPEN, 0, 0.5), (CLOSE, 0, 1.0)]
    # cash 10,000 - 5,000 - 5 fee, then + 5,500 - 5.50 fee
    assert book.final_return() == pytest.approx(0.04895, abs=1e-12)
    matched = matched_players([book], market, players=3000, seed=7)
    by_hand = {"ETH": (10_000 - 5_000 - 5 + 5_500 - 5.5) / 10_000 - 1,
               "SOL": (10_000 - 5_000 - 5 + 4_500 - 4.5) / 10_000 - 1,
               "ADA": (10_000 - 5_000 - 5 + 5_000 - 5.0) / 10_000 - 1}
    assets = np.array(market.symbols)[matched.assets[0][:, 0]]
    for symbol, value in by_hand.items():
        mine = matched.returns[assets == symbol, 0]
        assert abs(len(mine) / 3000 - 1 / 3) < 0.03
        np.testing.assert_allclose(mine, value, rtol=0, atol=1e-12)
    below = np.count_nonzero(assets != "ETH") + 0.5 * np.count_nonzero(assets == "ETH")
    assert matched.percentile() == pytest.approx(below / 3000, abs=1e-15)
    assert matched.fallbacks == 0 and matched.skipped == 0


def test_a_short_is_mirrored_as_a_short_with_its_collateral(universe):
    market = _market(universe, [[100.0, 100.0, 100.0], [100.0, 110.0, 90.0]])
    fills = [_fill(DAYS[0], "SOL", SHORT, OPEN, 20.0, 100.0)]  # 20% of equity, held to the end
    book = book_from_fills("bear", fills, market)
    matched = matched_players([book], market, players=600, seed=1)
    assets = np.array(market.symbols)[matched.assets[0][:, 0]]
    cash = 10_000 - 2_000 - 2
    for symbol, last in (("ADA", 100.0), ("ETH", 110.0), ("SOL", 90.0)):
        value = 20.0 * 100.0 - 20.0 * (last - 100.0)  # collateral plus the short's P&L
        np.testing.assert_allclose(matched.returns[assets == symbol, 0],
                                   (cash + value) / 10_000 - 1, atol=1e-12)
    assert book.final_return() == pytest.approx((cash + 2_200) / 10_000 - 1, abs=1e-12)


def test_a_long_only_book_in_a_market_that_rose_the_same_everywhere_sits_at_the_middle(universe):
    """Every asset rose 10% then 5%: whatever the book held, its players held the same moves,
    so they all tie with it - 50%, not the high luck percentile a rising market gives it."""
    market = _market(universe, [[100.0, 200.0, 50.0], [110.0, 220.0, 55.0],
                                [115.5, 231.0, 57.75]])
    fills = [_fill(DAYS[0], "ADA", LONG, OPEN, 30.0, 100.0),
             _fill(DAYS[1], "SOL", LONG, OPEN, 50.0, 55.0),
             _fill(DAYS[2], "ADA", LONG, CLOSE, 15.0, 115.5)]
    book = book_from_fills("bull", fills, market)
    matched = matched_players([book], market, players=500, seed=3)
    np.testing.assert_allclose(matched.returns[:, 0], book.final_return(), rtol=0, atol=1e-12)
    assert matched.percentile(book.final_return()) == 0.5
    assert book.final_return() > 0.02


def test_a_book_without_a_fill_has_nothing_to_match(universe):
    market = _market(universe, [[100.0, 100.0, 100.0], [101.0, 99.0, 100.0]])
    book = book_from_fills("cash", [], market)
    assert not book.traded and book.final_return() == 0.0
    np.testing.assert_array_equal(book.equity, [10_000.0, 10_000.0])


def test_fills_after_the_last_cycle_are_left_out_and_a_stray_decision_is_refused(universe):
    market = _market(universe, [[100.0, 100.0, 100.0], [100.0, 110.0, 90.0]])
    late = DAYS[1] + pd.Timedelta(hours=3)
    book = book_from_fills("x", [_fill(DAYS[0], "ETH", LONG, OPEN, 10.0, 100.0),
                                 _fill(late, "ETH", LONG, CLOSE, 10.0, 95.0, automatic=True)],
                           market)
    assert [e.kind for e in book.events] == [OPEN]
    with pytest.raises(MatchedInputError, match="at no cycle"):
        book_from_fills("x", [_fill(DAYS[0] + pd.Timedelta(hours=3), "ETH", LONG, OPEN, 10.0,
                                    100.0)], market)


def test_a_monitor_close_between_cycles_is_mirrored_at_the_next_cycle(universe):
    market = _market(universe, [[100.0, 100.0, 100.0], [100.0, 80.0, 120.0],
                                [100.0, 70.0, 130.0]])
    stop = DAYS[0] + pd.Timedelta(hours=9)  # the monitor closed ETH at 95 overnight
    fills = [_fill(DAYS[0], "ETH", LONG, OPEN, 40.0, 100.0),
             _fill(stop, "ETH", LONG, CLOSE, 40.0, 95.0, automatic=True)]
    book = book_from_fills("stopped", fills, market)
    assert [(e.cycle, e.automatic) for e in book.events] == [(0, False), (1, True)]
    matched = matched_players([book], market, players=900, seed=2)
    assets = np.array(market.symbols)[matched.assets[0][:, 0]]
    for symbol, mark in (("ADA", 100.0), ("ETH", 80.0), ("SOL", 120.0)):  # day 1's marks
        value = (10_000 - 4_000 - 4 + 40 * mark - fee(40 * mark)) / 10_000 - 1
        np.testing.assert_allclose(matched.returns[assets == symbol, 0], value, atol=1e-12)
    assert book.final_return() == pytest.approx((10_000 - 4_004 + 3_800 - 3.8) / 10_000 - 1)


# ------------------------------------------------------------------------- the relabelling
def test_a_player_relabels_with_one_permutation_while_the_tradable_set_stands(universe):
    keys = relabelling_keys(("A", "B", "C", "D"), 400, seed=5)
    tradable = np.array([True, True, True, True])
    images = np.stack([relabel(keys, tradable, c) for c in range(4)], axis=1)
    assert (np.sort(images, axis=1) == np.arange(4)).all()  # a permutation per player
    counts = np.bincount(images[:, 0], minlength=4)
    assert counts.min() > 60  # uniform: about 100 each
    np.testing.assert_array_equal(relabelling_keys(("A", "B", "C", "D"), 100, seed=5),
                                  keys[:100])  # more players never change the first ones
    np.testing.assert_array_equal(relabelling_keys(("C", "A"), 400, seed=5),
                                  keys[:, [2, 0]])  # a symbol's keys are its own
    assert (relabel(keys, np.array([True, False, True, True]), 1) == -1).all()


def test_the_players_copy_a_random_players_book_through_the_engine(prices, universe, bars):
    """A busy zero-skill player's book with tight levels (opens, adds, partial closes, monitor
    closes): each matched player's return equals its book replayed through the engine's broker
    (opens and adds sized by execute_answer) and portfolio (closes at the marks), to 1e-9."""
    market = MatchedMarket.from_prices(prices, universe)
    profile = RandomProfile(open_prob=0.9, close_prob=0.1, partial_prob=0.5, add_prob=0.5,
                            level_min=0.01, level_max=0.03)
    run = play_player(prices, universe, 4, seed=9, bars=bars, profile=profile)
    kinds = {(f.kind, f.automatic) for f in run.fills}
    assert {(OPEN, False), (ADD, False), (CLOSE, False), (CLOSE, True)} <= kinds
    book = book_from_fills("busy", run.fills, market)
    np.testing.assert_allclose(book.equity, run.equity, rtol=1e-12)
    matched = matched_players([book], market, players=40, seed=2)
    for player in range(40):
        replayed = engine_replay(book, market, matched.assets[0][player], universe)
        assert matched.returns[player, 0] == pytest.approx(replayed, rel=0, abs=1e-9)
    assert np.unique(np.round(matched.returns[:, 0], 9)).size > 30


def test_instances_that_agree_count_as_one_and_never_share_an_asset_they_did_not(
        prices, universe):
    market = MatchedMarket.from_prices(prices, universe)
    one = book_from_fills("m-r1", play_player(prices, universe, 1, seed=4).fills, market)
    other = book_from_fills("m-r2", play_player(prices, universe, 2, seed=4).fills, market)
    copy = Book("m-r3", one.events, one.equity)
    agreeing = matched_players([one, copy], market, players=300, seed=0, name="m")
    np.testing.assert_array_equal(agreeing.returns[:, 0], agreeing.returns[:, 1])
    alone = matched_players([one], market, players=300, seed=0, name="m")
    np.testing.assert_allclose(agreeing.unit_returns, alone.unit_returns, atol=1e-15)
    assert agreeing.percentile() == alone.percentile()

    apart = matched_players([one, other], market, players=300, seed=0, name="m")
    for player in range(300):
        for k in range(len(market.cycles)):
            mine = _held(one, apart.assets[0][player], k)
            theirs = _held(other, apart.assets[1][player], k)
            shared_symbols = set(_held_symbols(one, k)) & set(_held_symbols(other, k))
            assert len(set(mine) & set(theirs)) <= len(shared_symbols)


def _held_symbols(book: Book, k: int) -> list[str]:
    held: dict[int, str] = {}
    for e in book.events:
        if e.cycle > k:
            break
        if e.kind == OPEN:
            held[e.lot] = e.symbol
        elif e.kind == CLOSE and e.share >= 1 - 1e-12:
            held.pop(e.lot, None)
    return list(held.values())


def _held(book: Book, assets: np.ndarray, k: int) -> list[int]:
    held: dict[int, int] = {}
    for e in book.events:
        if e.cycle > k:
            break
        if e.kind == OPEN and assets[e.lot] >= 0:
            held[e.lot] = int(assets[e.lot])
        elif e.kind == CLOSE and e.share >= 1 - 1e-12:
            held.pop(e.lot, None)
    return list(held.values())


def test_a_longer_season_or_more_players_never_redraw_the_players_already_drawn(prices,
                                                                                universe):
    run = play_player(prices, universe, 6, seed=8, profile=BUSY)
    full = MatchedMarket.from_prices(prices, universe)
    early = MatchedMarket.from_prices(prices.iloc[:14], universe)
    whole = matched_players([book_from_fills("x", run.fills, full)], full, players=200)
    half_book = book_from_fills("x", run.fills, early)
    half = matched_players([half_book], early, players=120)
    lots = half_book.lots
    np.testing.assert_array_equal(half.assets[0], whole.assets[0][:120, :lots])


# ------------------------------------------------------------------------- the null it states
def test_a_contestant_that_chooses_at_random_is_a_uniform_draw_among_its_players(prices,
                                                                                 universe):
    """150 random players' books, each placed among its own 200 matched players: the
    percentiles spread evenly (the zero-skill player is exchangeable with its relabellings)."""
    market = MatchedMarket.from_prices(prices, universe)
    keys = relabelling_keys(market.symbols, 200, seed=1)
    places = []
    for player in range(150):
        book = book_from_fills(f"p{player}", play_player(prices, universe, player,
                                                         seed=21).fills, market)
        if book.traded:
            places.append(matched_players([book], market, players=200, seed=1,
                                          keys=keys).percentile())
    places = np.array(places)
    assert len(places) > 140
    assert abs(places.mean() - 0.5) < 0.06
    assert 0.15 < np.mean(places < 0.25) < 0.35 and 0.15 < np.mean(places > 0.75) < 0.35


def test_a_contestant_that_reads_the_next_bar_is_far_above_its_players(prices, universe):
    """Each day it buys the asset that rises most by the next cycle and sells it then."""
    market = MatchedMarket.from_prices(prices, universe)
    state, fills = Portfolio(), []
    for k in range(len(market.cycles) - 1):
        at, marks = market.cycles[k], market.marks[k]
        for symbol, held in list(state.positions.items()):
            price = marks[market.symbols.index(symbol)]
            fill = _fill(at, symbol, held.side, CLOSE, held.quantity, price)
            state, fills = state.apply(fill), [*fills, fill]
        ahead = np.where(market.tradable[k], market.marks[k + 1] / marks, -np.inf)
        best = int(np.argmax(ahead))
        quantity = 0.5 * state.cash / marks[best]
        fill = _fill(at, market.symbols[best], LONG, OPEN, quantity, marks[best])
        state, fills = state.apply(fill), [*fills, fill]
    book = book_from_fills("oracle", fills, market)
    assert matched_players([book], market, players=300).percentile() > 0.99


def test_share_below_counts_ties_half():
    assert share_below(1.0, np.array([0.0, 1.0, 1.0, 2.0])) == 0.5
    with pytest.raises(MatchedInputError):
        share_below(0.0, np.array([]))
