"""The broker: executes an answer's accepted decisions at the cycle price.

Order inside an answer: closes, then holds, then adds, then opens (stable within each group).
Each decision is judged by :func:`arena.engine.rules.check` against the state left by the ones
before it, so a close frees the cash an open then uses, a hold after a partial close moves the
level of what is left, and one bad decision never sinks the rest. Sizing:
``percent_of_equity x equity`` capped so that ``notional + fee <= cash``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple

from arena.core.universe import Universe
from arena.engine.contract import Answer
from arena.engine.portfolio import ADD, CLOSE, OPEN, Fill, fee
from arena.engine.rules import (
    ARENA_RULES,
    EXECUTION_ORDER,
    CycleState,
    Order,
    Rejection,
    Rules,
    check,
    claims,
)


class LevelMove(NamedTuple):
    """An accepted hold that moved (or armed) a position's invalidation level: no fill, but state."""

    decision_index: int
    symbol: str
    invalidation_price: float


@dataclass(frozen=True)
class CycleResult:
    """What one answer did: fills, rejections, the holds accepted (level moves among them), and
    the state after it. Applying ``fills`` then ``levels`` to the state before gives ``state``."""

    fills: tuple[Fill, ...]
    rejections: tuple[Rejection, ...]
    holds: tuple[int, ...]
    state: CycleState
    levels: tuple[LevelMove, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"fills": [f.as_dict() for f in self.fills],
                "rejections": [r.as_dict() for r in self.rejections],
                "holds": list(self.holds),
                "levels": [m._asdict() for m in self.levels]}


def execute_answer(state: CycleState, answer: Answer, prices: Mapping[str, float],
                   universe: Universe, rules: Rules = ARENA_RULES) -> CycleResult:
    """Validate and execute every decision of ``answer`` in execution order."""
    order = sorted(range(len(answer.decisions)),
                   key=lambda i: EXECUTION_ORDER.get(answer.decisions[i].action, -1))
    fills: list[Fill] = []
    rejections: list[Rejection] = []
    holds: list[int] = []
    levels: list[LevelMove] = []
    earlier: dict[str, list[str]] = {}
    for i in order:
        decision = answer.decisions[i]
        outcome = check(i, decision, state, prices, universe, rules, earlier)
        if claims(decision):
            earlier.setdefault(decision.symbol, []).append(decision.action)
        if isinstance(outcome, Rejection):
            rejections.append(outcome)
            continue
        state, fill = _execute(state, outcome, rules)
        if fill is not None:
            fills.append(fill)
            continue
        holds.append(i)
        if not outcome.noop and outcome.decision.invalidation_price is not None:
            levels.append(LevelMove(i, outcome.decision.symbol,
                                    outcome.decision.invalidation_price))
    rejections.sort(key=lambda r: r.decision_index)
    return CycleResult(tuple(fills), tuple(rejections), tuple(holds), state, tuple(levels))


def _execute(state: CycleState, order: Order, rules: Rules) -> tuple[CycleState, Fill | None]:
    d, p = order.decision, state.portfolio
    if d.action == "hold":
        if order.noop or d.invalidation_price is None:
            return state, None
        return replace(state, portfolio=p.with_level(d.symbol, d.invalidation_price)), None
    if d.action == "close":
        held = p.positions[d.symbol]
        fill = Fill(state.at, d.symbol, held.side, CLOSE, order.quantity, order.price,
                    fee(order.quantity * order.price, rules.fee_rate),
                    realised_pnl=replace(held, quantity=order.quantity).unrealised(order.price),
                    decision_index=order.decision_index)
        after = p.apply(fill)
        closed = state.closed if d.symbol in after.positions else (*state.closed, d.symbol)
        return replace(state, portfolio=after, closed=closed), fill
    kind = ADD if d.action == "add" else OPEN
    quantity = order.notional / order.price
    fill = Fill(state.at, d.symbol, order.side, kind, quantity, order.price,
                fee(quantity * order.price, rules.fee_rate), decision_index=order.decision_index,
                invalidation_price=d.invalidation_price, thesis=d.thesis or "",
                invalidation=d.invalidation or "")
    opened = (*state.opened, d.symbol) if kind == OPEN else state.opened
    return replace(state, portfolio=p.apply(fill), opened=opened), fill
