"""The reference the matched players are held to (tests/scoring/test_matched.py) and timed
against (benchmarks/matched.py): one matched player's season replayed through the engine - its
opens and adds as decisions the broker sizes (``execute_answer``: the cash cap, the minimum size,
adds only to winners on a trading day), its closes as fills at the marks (the monitor's way),
its equity at the last marks. Slow and plain on purpose."""

from __future__ import annotations

import math

import numpy as np

from arena.core.universe import Universe
from arena.engine.broker import execute_answer
from arena.engine.contract import Answer, Decision
from arena.engine.portfolio import ADD, CLOSE, LONG, OPEN, Fill, Portfolio, fee
from arena.engine.rules import ARENA_RULES, CycleState
from arena.scoring.matched import Book, MatchedMarket


def _marks(market: MatchedMarket, k: int) -> dict[str, float]:
    return {s: float(market.marks[k, j]) for j, s in enumerate(market.symbols)
            if math.isfinite(market.marks[k, j])}


def engine_replay(book: Book, market: MatchedMarket, assets: np.ndarray,
                  universe: Universe) -> float:
    """The return of the matched player whose asset of each position is ``assets`` (a column
    of ``market.symbols``, -1: not opened)."""
    state = Portfolio()
    for event in book.events:
        if assets[event.lot] < 0:
            continue
        k, symbol = event.cycle, market.symbols[assets[event.lot]]
        marks = _marks(market, k)
        price, held = marks[symbol], state.positions.get(symbol)
        if event.kind == CLOSE:
            if held is not None:
                quantity = (held.quantity if event.share >= 1 - 1e-12
                            else held.quantity * event.share)
                state = state.apply(Fill(market.cycles[k], symbol, held.side, CLOSE, quantity,
                                         price, fee(quantity * price)))
            continue
        side = event.side if held is None else held.side
        action = "add" if event.kind == ADD else "open_long" if side == LONG else "open_short"
        pct = min(100.0, max(10.0, event.share * 100)) if event.kind == OPEN else event.share * 100
        decision = Decision(action=action, symbol=symbol, percent_of_equity=pct,
                            invalidation_price=price * (0.5 if side == LONG else 1.5),
                            confidence=0.9, thesis="t", invalidation="i", rationale="r")
        state = execute_answer(CycleState(state, market.cycles[k]),
                               Answer(reasoning="r", decisions=[decision]), marks, universe,
                               ARENA_RULES).state.portfolio
    return state.equity(_marks(market, len(market.cycles) - 1)) / ARENA_RULES.start_cash - 1
