"""House agents through the real briefing and the real round trip: valid answers, every cycle."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from arena.agents.house import HouseContestant
from arena.engine.contract import parse_answer
from arena.engine.portfolio import Portfolio
from arena.engine.rules import CycleState
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.pipeline.turn import run_contestant_cycle
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
        outcome = run_contestant_cycle(agent, briefing, state, market.prices, universe)
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


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown house strategy"):
        HouseContestant("x", "astrology")
