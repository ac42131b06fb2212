"""House agents through the real briefing and the real round trip: valid answers, every cycle."""

from __future__ import annotations

import json
import zlib
from collections import Counter
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest

from arena.agents.house import HouseContestant, book_portfolio
from arena.engine.contract import parse_answer
from arena.engine.portfolio import LONG, SHORT, Portfolio, Position
from arena.engine.rules import CycleState
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.pipeline.turn import take_turn
from arena.scoring.arena_luck import zero_skill_answer
from tests.conftest import ts
from tests.market_lakes import PROVIDER, market_lakes

CYCLES = [ts("2025-11-24 16:00") + pd.Timedelta(days=i) for i in range(8)]  # Mon..Mon, Thanksgiving


@pytest.fixture(scope="module")
def lake(tmp_path_factory, universe):
    return market_lakes(tmp_path_factory, universe).full


@pytest.fixture(scope="module")
def markets(lake, universe):
    """One market per cycle, with full depth for every asset (any agent may hold any)."""
    every = tuple(a.symbol for a in universe.tradable)
    return {at: build_market(lake, PROVIDER, universe, at, held=every) for at in CYCLES}


@pytest.mark.parametrize("strategy", ["momentum", "mean_reversion", "trend_following",
                                      "equal_weight", "random"])
def test_house_agents_play_a_week_without_a_rejection(strategy, markets, universe):
    agent = HouseContestant(f"house-{strategy}", strategy)
    state_portfolio = Portfolio()
    opened = 0
    for at in CYCLES:
        market = markets[at]
        state = CycleState(state_portfolio, at)
        briefing = build_briefing(market, agent.name, portfolio_snapshot(state, market.prices))
        outcome = take_turn(agent, briefing, state, market.prices, universe)
        assert not outcome.repaired and outcome.rejections == (), (at, outcome.rejections)
        opened += sum(f.kind == "open" for f in outcome.fills)
        assert sum(f.kind == "open" for f in outcome.fills) <= 1
        state_portfolio = outcome.state.portfolio
    if strategy == "equal_weight":
        assert opened == len(state_portfolio.positions) >= 6  # one a day, stocks only on sessions
        assert all(p.side == "long" for p in state_portfolio.positions.values())


def test_house_answers_are_the_contract_and_deterministic(lake, universe):
    at = CYCLES[0]
    market = build_market(lake, PROVIDER, universe, at)
    state = CycleState(Portfolio(), at)
    briefing = build_briefing(market, "house-random", portfolio_snapshot(state, market.prices))
    first = HouseContestant("house-random", "random").answer(briefing)
    again = HouseContestant("house-random", "random").answer(briefing)
    assert first.text == again.text and parse_answer(first.text).ok
    assert first.calls[0].model == "house/random" and first.calls[0].cost_usd == 0.0
    assert json.loads(first.text)["reasoning"]


def _book(market) -> Portfolio:
    """Two longs and two shorts (two crypto, two stocks) opened a week ago, $4,000 cash."""
    rows = [r for r in market.table if r.price is not None]
    crypto = [r for r in rows if r.asset_class == "crypto"][:2]
    stocks = [r for r in rows if r.asset_class == "stock"][:2]
    opened = ts("2025-11-17 16:00")
    shape = [(LONG, 0.9, 0.7), (SHORT, 0.95, 1.3), (LONG, 1.05, 0.8), (SHORT, 1.1, 1.2)]
    positions = {r.symbol: Position(r.symbol, side, 1_500 / r.price, r.price * move, opened,
                                    r.price * level, "held", "level")
                 for r, (side, move, level) in zip([*crypto, *stocks], shape, strict=True)}
    return Portfolio(4_000.0, MappingProxyType(positions))


def test_the_random_contestant_is_the_arena_zero_skill_player(markets):
    """For the same book, prices and seed, the house answer is arena_luck's zero-skill answer."""
    actions = Counter()
    for at in CYCLES:
        market = markets[at]
        book = _book(market)
        state = CycleState(book, at)
        snapshot = portfolio_snapshot(state, market.prices)
        assert book_portfolio(snapshot) == book  # the snapshot carries the whole book
        prices = {r.symbol: r.price for r in market.table if r.price is not None}
        tradeable = [r.symbol for r in market.table if r.tradeable_today and r.price is not None]
        for name, seed in [("random", 0), ("house-random", 0), ("random", 7)]:
            briefing = build_briefing(market, name, snapshot)
            reply = HouseContestant(name, "random", seed=seed).answer(briefing)
            key = zlib.crc32(f"{name}|{at.isoformat()}".encode())
            rng = np.random.default_rng(seed * 2**32 + key)
            expected = zero_skill_answer(rng, book, prices, market.prices, tradeable)
            parsed = parse_answer(reply.text)
            assert parsed.ok and list(parsed.answer.decisions) == list(expected.decisions)
            assert parsed.answer.reasoning == expected.reasoning
            actions.update(d.action for d in expected.decisions)
    assert actions["close"] and actions["open_long"] + actions["open_short"], actions


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown house strategy"):
        HouseContestant("x", "astrology")
