"""The rules every contestant plays by (SPEC §3), and the validator that enforces them.

:func:`check` judges one decision against the state of the cycle at the moment it would execute
(after the closes, holds and adds before it) and returns either an :class:`Order` for the broker
or a :class:`Rejection` with a machine-readable code and a sentence a model can act on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from arena.core.sessions import CRYPTO, NY, is_trading_day
from arena.core.universe import Universe
from arena.engine.contract import (
    ACTIONS,
    BAD_FIELD_TYPE,
    MISSING_FIELD,
    AnyDecision,
    Decision,
    MalformedDecision,
)
from arena.engine.portfolio import FEE_RATE, LONG, SHORT, START_CASH, Portfolio, Position, fee

# Every reason code the validator emits (the contract with analysts and dashboards).
UNKNOWN_ACTION = "unknown_action"
UNKNOWN_SYMBOL = "unknown_symbol"
BENCHMARK_SYMBOL = "benchmark_symbol"
NOT_TRADEABLE_TODAY = "not_tradeable_today"
NO_PRICE = "no_price"
STALE_PRICE = "stale_price"
DUPLICATE_SYMBOL = "duplicate_symbol"
LOW_CONFIDENCE = "low_confidence"
CONFIDENCE_OUT_OF_RANGE = "confidence_out_of_range"
PERCENT_OUT_OF_RANGE = "percent_out_of_range"
LEVEL_WRONG_SIDE = "level_wrong_side"
BELOW_MIN_SIZE = "below_min_size"
NO_CASH = "no_cash"
NEW_POSITION_LIMIT = "new_position_limit"
REOPEN_CLOSED_SYMBOL = "reopen_closed_symbol"
MAX_POSITIONS = "max_positions"
ALREADY_HELD = "already_held"
NO_POSITION = "no_position"
ADD_TO_LOSING = "add_to_losing"
REASON_CODES = (UNKNOWN_ACTION, UNKNOWN_SYMBOL, BENCHMARK_SYMBOL, NOT_TRADEABLE_TODAY, NO_PRICE,
                STALE_PRICE, DUPLICATE_SYMBOL, MISSING_FIELD, BAD_FIELD_TYPE, LOW_CONFIDENCE,
                CONFIDENCE_OUT_OF_RANGE, PERCENT_OUT_OF_RANGE, LEVEL_WRONG_SIDE, BELOW_MIN_SIZE,
                NO_CASH, NEW_POSITION_LIMIT, REOPEN_CLOSED_SYMBOL, MAX_POSITIONS, ALREADY_HELD,
                NO_POSITION, ADD_TO_LOSING)

EXECUTION_ORDER = {"close": 0, "hold": 1, "add": 2, "open_long": 3, "open_short": 3}


@dataclass(frozen=True)
class Rules:
    """The arena's constants. Percent fields are percent (10 = 10%); everything else fractions."""

    start_cash: float = START_CASH
    fee_rate: float = FEE_RATE
    min_confidence: float = 0.80
    min_open_share: float = 0.10  # an open must be at least 10% of equity after the cash cap
    max_positions: int = 10
    max_new_per_cycle: int = 1
    equity_percent: tuple[float, float] = (10.0, 100.0)  # an open; an add: (0, max], no minimum
    position_percent: tuple[float, float] = (1.0, 100.0)


ARENA_RULES = Rules()  # the rules of SPEC §3


@dataclass(frozen=True)
class CycleState:
    """A contestant's state inside one cycle: the portfolio, and what this cycle already did
    (the repair round continues from here: one new position per cycle, repair included).

    ``stale``: the symbols whose cycle price is stale (their data stopped arriving; the cycle's
    market decides, :attr:`arena.market.types.MarketData.stale`). Their last price still values
    the book, but no open, add or close executes at it (:data:`STALE_PRICE`).
    """

    portfolio: Portfolio
    at: pd.Timestamp
    opened: tuple[str, ...] = ()
    closed: tuple[str, ...] = ()
    stale: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Rejection:
    decision_index: int
    action: str
    symbol: str
    code: str
    message: str

    def as_dict(self) -> dict[str, object]:
        return {"decision_index": self.decision_index, "action": self.action,
                "symbol": self.symbol, "code": self.code, "message": self.message}


@dataclass(frozen=True)
class Order:
    """An accepted decision, sized: ``notional`` for opens/adds, ``quantity`` for closes."""

    decision_index: int
    decision: Decision
    side: str
    price: float
    notional: float = 0.0
    quantity: float = 0.0
    noop: bool = False  # a hold of a symbol closed earlier this cycle


def tradeable_today(symbol: str, universe: Universe, at: pd.Timestamp) -> bool:
    """Crypto every day; stocks on NYSE trading days (the New York date of the cycle)."""
    asset = universe[symbol]
    if not asset.tradable:
        return False
    return asset.calendar == CRYPTO or is_trading_day(at.tz_convert(NY).date())


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def shorten(text: str, limit: int = 24) -> str:
    """A model's text as a message quotes it: at most ``limit`` characters (a 99,000-character
    "symbol" must not make a 99,000-character repair prompt)."""
    return text if len(text) <= limit else f"{text[:limit]}..."


def claims(d: AnyDecision) -> bool:
    """Whether ``d`` counts as the answer's decision on its symbol (for :data:`DUPLICATE_SYMBOL`):
    a well-formed decision with a known action, accepted or not."""
    return isinstance(d, Decision) and d.action in ACTIONS


def check(index: int, d: AnyDecision, state: CycleState, prices: Mapping[str, float],
          universe: Universe, rules: Rules, earlier: Mapping[str, Sequence[str]]) -> Order | Rejection:
    """Judge decision ``index`` against ``state``; ``earlier`` maps a symbol to the actions of
    the decisions on it judged before this one in the same answer (see :func:`claims`).

    A symbol whose price is stale (``state.stale``) trades nothing: opens and adds, and closes
    too, are :data:`STALE_PRICE`. A close at the last price would fill at a price the market may
    have left long ago (a free option on the outage, for either side), so the position waits,
    valued at its last price, until fresh bars arrive - as a broker halts an instrument without
    a current quote. A hold is accepted (it trades nothing); a new level is judged against the
    last price.
    """
    if isinstance(d, MalformedDecision):
        return Rejection(index, d.action, d.symbol, d.code, d.problem)
    refused = _refuse_decision(d, universe, earlier)
    if refused is not None:
        return Rejection(index, d.action, d.symbol, *refused)
    held = state.portfolio.positions.get(d.symbol)
    price = prices.get(d.symbol)
    if d.action == "hold":
        return _check_hold(index, d, held, price, state)
    refused = _refuse_trade(d, held, price, state, universe)
    if refused is not None:
        return Rejection(index, d.action, d.symbol, *refused)
    if d.action == "close":
        return _check_close(index, d, held, price, rules)
    return _check_risk(index, d, held, price, state, prices, rules)


def _refuse_decision(d: Decision, universe: Universe, earlier: Mapping[str, Sequence[str]]
                     ) -> tuple[str, str] | None:
    """Why any decision is refused before its action is judged (an unknown action or symbol, a
    benchmark, a symbol already decided in this answer): ``(code, message)``, or None."""
    sym, act = d.symbol, d.action
    if act not in ACTIONS:
        return UNKNOWN_ACTION, f"'{shorten(act)}' is not an action; use one of {', '.join(ACTIONS)}"
    if sym not in universe:
        return UNKNOWN_SYMBOL, f"{shorten(sym)} is not in the universe table"
    if universe[sym].benchmark:
        return BENCHMARK_SYMBOL, f"{sym} is a benchmark: shown for context, never traded"
    before = tuple(earlier.get(sym, ()))
    if before and not (act == "hold" and before == ("close",)):
        return DUPLICATE_SYMBOL, (f"{sym} already has a {before[0]} decision in this answer, "
                                  "judged before this one (closes, holds, adds, then opens); a "
                                  "symbol may appear twice only as a close and a hold")
    return None


def _refuse_trade(d: Decision, held: Position | None, price: float | None, state: CycleState,
                  universe: Universe) -> tuple[str, str] | None:
    """Why an open, add or close cannot trade its symbol this cycle (the market's day, the price,
    the position held or not): ``(code, message)``, or None."""
    sym, act = d.symbol, d.action
    if not tradeable_today(sym, universe, state.at):
        return NOT_TRADEABLE_TODAY, (f"{sym} does not trade today (NYSE is closed): stock opens, "
                                     "adds and closes are refused on weekends and holidays (a "
                                     "hold is accepted)")
    if not _finite(price) or price <= 0:
        return NO_PRICE, f"there is no execution price for {sym} this cycle"
    if sym in state.stale:
        return STALE_PRICE, (f"the price of {sym} is stale this cycle (its market data stopped "
                             "arriving): no open, add or close executes at an old price; a hold "
                             "is accepted")
    is_open = act in ("open_long", "open_short")
    if is_open and sym in state.closed:
        return REOPEN_CLOSED_SYMBOL, (f"{sym} was closed earlier this cycle; it cannot be "
                                      "reopened before the next cycle")
    if is_open and held is not None:
        return ALREADY_HELD, f"{sym} is already held ({held.side}); use add or close"
    if not is_open and held is None:
        return NO_POSITION, f"there is no open position in {sym} to {act}"
    return None


def _check_close(index: int, d: Decision, held: Position, price: float,
                 rules: Rules) -> Order | Rejection:
    """A close of ``percent_of_position`` (all of it by default) of the position held."""
    pct = 100.0 if d.percent_of_position is None else d.percent_of_position
    lo, hi = rules.position_percent
    if not lo <= pct <= hi:
        return Rejection(index, d.action, d.symbol, PERCENT_OUT_OF_RANGE,
                         f"percent_of_position {pct:g} is outside {lo:g}-{hi:g}")
    return Order(index, d, held.side, price, quantity=held.quantity * pct / 100.0)


def _check_risk(index: int, d: Decision, held: Position | None, price: float, state: CycleState,
                prices: Mapping[str, float], rules: Rules) -> Order | Rejection:
    """An open or an add (a new risk): its fields, its level and the cycle's limits, then its
    size in cash."""
    is_open = d.action in ("open_long", "open_short")
    side = held.side if held is not None else (LONG if d.action == "open_long" else SHORT)
    refused = (_refuse_fields(d, is_open, rules)
               or _refuse_risk(d, held, side, price, is_open, state, rules))
    if refused is not None:
        return Rejection(index, d.action, d.symbol, *refused)
    unmarked = state.portfolio.unmarked(prices)
    if unmarked:
        return Rejection(index, d.action, d.symbol, NO_PRICE,
                         f"equity cannot be measured without a price for held "
                         f"{', '.join(unmarked)}; nothing can be sized this cycle")
    return _size(index, d, side, price, is_open, state.portfolio.equity(prices),
                 state.portfolio.cash, rules)


def _refuse_fields(d: Decision, is_open: bool, rules: Rules) -> tuple[str, str] | None:
    """Why a new risk's fields are refused (missing, a confidence out of range or too low, a
    percent of equity out of range): ``(code, message)``, or None."""
    missing = [f for f in ("percent_of_equity", "confidence", "invalidation_price", "thesis",
                           "invalidation") if getattr(d, f) in (None, "")]
    if missing:
        return MISSING_FIELD, f"{d.action} needs {', '.join(missing)}"
    if d.confidence > 1.0 or d.confidence < 0.0:
        return CONFIDENCE_OUT_OF_RANGE, f"confidence {d.confidence:g} is not between 0 and 1"
    if d.confidence < rules.min_confidence:
        return LOW_CONFIDENCE, (f"confidence {d.confidence:g} is below "
                                f"{rules.min_confidence:.2f}: trade only when sure, else hold")
    lo, hi = rules.equity_percent
    if is_open and not lo <= d.percent_of_equity <= hi:
        return PERCENT_OUT_OF_RANGE, (f"percent_of_equity {d.percent_of_equity:g} is outside "
                                      f"{lo:g}-{hi:g}")
    if not is_open and not 0 < d.percent_of_equity <= hi:
        return PERCENT_OUT_OF_RANGE, (f"percent_of_equity {d.percent_of_equity:g} of an add "
                                      f"must be above 0 and at most {hi:g}")
    return None


def _refuse_risk(d: Decision, held: Position | None, side: str, price: float, is_open: bool,
                 state: CycleState, rules: Rules) -> tuple[str, str] | None:
    """Why a new risk is refused at this price and in this cycle (its level on the wrong side, an
    add to a loser, an open past the cycle's or the book's limit): ``(code, message)``, or None."""
    if not _on_losing_side(d.invalidation_price, side, price):
        return LEVEL_WRONG_SIDE, _side_message(d.invalidation_price, side, price, "entry")
    if d.action == "add" and not held.in_profit(price):
        return ADD_TO_LOSING, (f"{d.symbol} is not in profit at {price:g} (entry "
                               f"{held.entry_price:g}); adds go only to winners")
    if is_open:
        if len(state.opened) >= rules.max_new_per_cycle:
            return NEW_POSITION_LIMIT, (f"a new position ({', '.join(state.opened)}) was "
                                        "already opened this cycle; one per cycle")
        if len(state.portfolio.positions) >= rules.max_positions:
            return MAX_POSITIONS, f"{rules.max_positions} positions are open already"
    return None


def _size(index: int, d: Decision, side: str, price: float, is_open: bool, equity: float,
          cash: float, rules: Rules) -> Order | Rejection:
    """A new risk sized: ``percent_of_equity`` of ``equity``, capped by the free cash (fee
    included); refused below an open's minimum share of equity, or without cash."""
    cash = max(cash, 0.0)
    notional = min(d.percent_of_equity / 100.0 * equity, cash / (1.0 + rules.fee_rate))
    # the cap in the exact arithmetic the fill will use: never spend a rounding error past cash
    while notional > 0 and cash_after_buy(cash, notional, price, rules.fee_rate) < 0:
        notional = math.nextafter(notional, 0.0)
    if is_open and notional < rules.min_open_share * equity * (1 - 1e-12):
        return Rejection(index, d.action, d.symbol, BELOW_MIN_SIZE,
                         f"only ${notional:,.2f} of cash is free; a new position needs "
                         f"at least {rules.min_open_share:.0%} of equity "
                         f"(${rules.min_open_share * equity:,.2f})")
    if notional <= 0:
        return Rejection(index, d.action, d.symbol, NO_CASH, "no free cash to add with")
    return Order(index, d, side, price, notional=notional)


def _check_hold(index: int, d: Decision, held: Position | None, price: float | None,
                state: CycleState) -> Order | Rejection:
    """A hold trades nothing, so it is judged on any day, the NYSE's closed days included. It
    needs a price only to judge a new level. A hold of a symbol fully closed earlier this cycle
    (a close of the same answer, or of the first round) is a no-op."""
    if held is None:
        if d.symbol in state.closed:
            return Order(index, d, "", math.nan, noop=True)
        return Rejection(index, d.action, d.symbol, NO_POSITION,
                         f"there is no open position in {d.symbol} to hold")
    if d.invalidation_price is None:
        return Order(index, d, held.side, price if _finite(price) else math.nan)
    if not _finite(price) or price <= 0:
        return Rejection(index, d.action, d.symbol, NO_PRICE,
                         f"there is no price for {d.symbol} this cycle to judge the new "
                         "invalidation_price against")
    if not _on_losing_side(d.invalidation_price, held.side, price):
        return Rejection(index, d.action, d.symbol, LEVEL_WRONG_SIDE,
                         _side_message(d.invalidation_price, held.side, price, "price"))
    return Order(index, d, held.side, price)


def cash_after_buy(cash: float, notional: float, price: float, fee_rate: float) -> float:
    """Cash left after buying ``notional`` at ``price``, in the exact arithmetic (and order) of
    the broker's fill and :meth:`Portfolio.apply`: quantity x price, its fee, then the notional."""
    filled = (notional / price) * price
    return (cash - fee(filled, fee_rate)) - filled


def _on_losing_side(level: float, side: str, price: float) -> bool:
    if not _finite(level) or level <= 0:
        return False
    return level < price if side == LONG else level > price


def _side_message(level: float, side: str, price: float, what: str) -> str:
    where = "below" if side == LONG else "above"
    return (f"invalidation_price {level:g} must be {where} the {what} {price:g} for a {side} "
            "position (and positive)")
