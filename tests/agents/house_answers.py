"""The house agents' answers on a fixed set of briefings, for the byte-for-byte pin of their
default behaviour (``house_answers.json``, read by ``tests/agents/test_house_params.py``).

For each strategy: a week of cycles played from an empty book through the real turn (the book
carried from cycle to cycle), and at each of those cycles a book of four longs bought three days
earlier (a different four each cycle, so the exit rules meet many rows), answered in full. Every
answer's text and the label of its call record are kept. The file was written by
:func:`write` from the house agents as they were before their strategies took parameters; a
roster entry without parameters must still answer exactly so.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pandas as pd

from arena.agents.house import HouseContestant
from arena.engine.portfolio import LONG, Portfolio, Position
from arena.engine.rules import CycleState
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.pipeline.turn import take_turn
from tests.conftest import ts
from tests.market_lakes import PROVIDER

RECORDED = Path(__file__).with_name("house_answers.json")
CYCLES = [ts("2025-11-24 16:00") + pd.Timedelta(days=i) for i in range(8)]  # Mon..Mon
STRATEGIES = ("momentum", "mean_reversion", "trend_following", "equal_weight", "random")


def markets(lake, universe) -> dict[pd.Timestamp, object]:
    """One market per cycle, with full depth for every asset (any book may hold any)."""
    every = tuple(a.symbol for a in universe.tradable)
    return {at: build_market(lake, PROVIDER, universe, at, held=every) for at in CYCLES}


def four_longs(market, index: int) -> Portfolio:
    """Four longs of $1,500 (entered 3% below today's price, levels 10% below), $4,000 cash: the
    priced rows ``4 * index`` to ``4 * index + 3`` of the universe table."""
    rows = [r for r in market.table if r.price is not None]
    chosen = [rows[(4 * index + k) % len(rows)] for k in range(4)]
    opened = market.at - pd.Timedelta(days=3)
    positions = {r.symbol: Position(r.symbol, LONG, 1_500 / (r.price * 0.97), r.price * 0.97,
                                    opened, r.price * 0.9, "held", "level") for r in chosen}
    return Portfolio(4_000.0, MappingProxyType(positions))


def answers(agent: HouseContestant, by_cycle, universe) -> list[dict[str, str]]:
    """Every answer of ``agent`` on the fixed briefings: ``{"at", "book", "text", "model"}``."""
    out: list[dict[str, str]] = []
    carried = Portfolio()
    for index, at in enumerate(CYCLES):
        market = by_cycle[at]
        state = CycleState(carried, at)
        briefing = build_briefing(market, agent.name, portfolio_snapshot(state, market.prices))
        reply = agent.answer(briefing)
        out.append({"at": at.isoformat(), "book": "week", "text": reply.text,
                    "model": reply.calls[0].model})
        outcome = take_turn(agent, briefing, state, market.prices, universe)
        carried = outcome.state.portfolio
        held = CycleState(four_longs(market, index), at)
        briefing = build_briefing(market, agent.name, portfolio_snapshot(held, market.prices))
        reply = agent.answer(briefing)
        out.append({"at": at.isoformat(), "book": "four_longs", "text": reply.text,
                    "model": reply.calls[0].model})
    return out


def write(lake, universe) -> None:
    """Record the answers of every strategy's default agent into :data:`RECORDED`."""
    by_cycle = markets(lake, universe)
    recorded = {s: answers(HouseContestant(f"house-{s}", s), by_cycle, universe)
                for s in STRATEGIES}
    RECORDED.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
