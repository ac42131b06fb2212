"""Portfolio state as a fold over fills.

Money conventions (all amounts in USD, quantities in units of the asset):

* A **long** buys spot: cash pays ``notional + fee``; the position is worth ``quantity x price``.
* A **short** locks cash 1:1 as collateral: cash pays ``notional + fee`` and the position is worth
  ``quantity x entry + quantity x (entry - price)`` - the collateral plus its P&L,
  ``notional x (entry - price) / entry``. A short can lose more than its collateral; the excess is
  then paid from cash when it is closed.
* Every fill pays a fee of ``fee_rate x notional at the fill price`` from cash.
* Adds re-weight the entry price by quantity (volume-weighted); partial closes keep it.

Nothing else moves money, so ``equity = initial cash + realised P&L + unrealised P&L - fees``
holds after every fill (tested as a property).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import pandas as pd

START_CASH = 10_000.0
FEE_RATE = 0.001  # 0.1% of notional on every fill
LONG, SHORT = "long", "short"
OPEN, ADD, CLOSE = "open", "add", "close"


class PortfolioError(ValueError):
    """A fill that cannot apply to the state (closing more than is held, a second open...)."""


@dataclass(frozen=True, slots=True)
class Position:
    """An open position. ``entry_price`` is volume-weighted over the opens and adds."""

    symbol: str
    side: str
    quantity: float
    entry_price: float
    opened_at: pd.Timestamp
    invalidation_price: float | None = None
    thesis: str = ""
    invalidation: str = ""

    @property
    def cost(self) -> float:
        """Quantity x entry: what the position cost (long) or the collateral it locks (short)."""
        return self.quantity * self.entry_price

    def unrealised(self, price: float) -> float:
        sign = 1.0 if self.side == LONG else -1.0
        return sign * self.quantity * (price - self.entry_price)

    def value(self, price: float) -> float:
        """What the position adds to equity at ``price``."""
        return self.cost + self.unrealised(price)

    def in_profit(self, price: float) -> bool:
        return self.unrealised(price) > 0


@dataclass(frozen=True, slots=True)
class Fill:
    """One execution. ``kind`` is open/add/close; ``automatic`` marks invalidation-monitor closes.

    ``realised_pnl`` is the price P&L of the closed quantity (before fees); ``fee`` is charged
    on ``notional = quantity x price``.
    """

    at: pd.Timestamp
    symbol: str
    side: str
    kind: str
    quantity: float
    price: float
    fee: float
    realised_pnl: float = 0.0
    decision_index: int | None = None
    automatic: bool = False
    invalidation_price: float | None = None
    thesis: str = ""
    invalidation: str = ""

    @property
    def notional(self) -> float:
        return self.quantity * self.price

    def as_dict(self) -> dict[str, object]:
        return {"at": self.at.isoformat(), "symbol": self.symbol, "side": self.side,
                "kind": self.kind, "quantity": self.quantity, "price": self.price,
                "notional": self.notional, "fee": self.fee, "realised_pnl": self.realised_pnl,
                "decision_index": self.decision_index, "automatic": self.automatic,
                "invalidation_price": self.invalidation_price}


@dataclass(frozen=True)
class Portfolio:
    """Cash, open positions (by symbol), fees paid and realised P&L. Immutable: ``apply`` returns
    a new state."""

    cash: float = START_CASH
    positions: Mapping[str, Position] = field(default_factory=lambda: MappingProxyType({}))
    fees_paid: float = 0.0
    realised_pnl: float = 0.0

    @property
    def locked(self) -> float:
        """Cash locked as short collateral."""
        return sum(p.cost for p in self.positions.values() if p.side == SHORT)

    def unmarked(self, prices: Mapping[str, float]) -> list[str]:
        """Held symbols without a usable (finite, positive) price in ``prices``."""
        return sorted(s for s in self.positions
                      if not (isinstance(prices.get(s), int | float) and math.isfinite(prices[s])
                              and prices[s] > 0))

    def equity(self, prices: Mapping[str, float]) -> float:
        """Cash plus every position marked at ``prices`` (KeyError names a missing price)."""
        missing = self.unmarked(prices)
        if missing:
            raise KeyError(f"no usable price for held symbol(s) {', '.join(missing)}")
        return self.cash + sum(p.value(prices[s]) for s, p in self.positions.items())

    def apply(self, fill: Fill) -> Portfolio:
        """The state after ``fill``."""
        if not (math.isfinite(fill.quantity) and math.isfinite(fill.price)
                and math.isfinite(fill.fee) and fill.quantity > 0 and fill.price > 0
                and fill.fee >= 0):
            raise PortfolioError(f"fill with quantity {fill.quantity}, price {fill.price}, "
                                 f"fee {fill.fee}: all must be positive")
        held = self.positions.get(fill.symbol)
        positions = dict(self.positions)
        cash = self.cash - fill.fee
        realised = 0.0
        if fill.kind == OPEN:
            if held is not None:
                raise PortfolioError(f"{fill.symbol} is already held")
            positions[fill.symbol] = Position(fill.symbol, fill.side, fill.quantity, fill.price,
                                              fill.at, fill.invalidation_price, fill.thesis,
                                              fill.invalidation)
            cash -= fill.notional
        elif fill.kind == ADD:
            if held is None or held.side != fill.side:
                raise PortfolioError(f"no {fill.side} position in {fill.symbol} to add to")
            quantity = held.quantity + fill.quantity
            entry = (held.cost + fill.notional) / quantity
            positions[fill.symbol] = replace(
                held, quantity=quantity, entry_price=entry,
                invalidation_price=fill.invalidation_price,
                thesis=fill.thesis or held.thesis, invalidation=fill.invalidation or held.invalidation)
            cash -= fill.notional
        elif fill.kind == CLOSE:
            if held is None or held.side != fill.side:
                raise PortfolioError(f"no {fill.side} position in {fill.symbol} to close")
            if fill.quantity > held.quantity * (1 + 1e-12):
                raise PortfolioError(f"closing {fill.quantity} of {held.quantity} {fill.symbol}")
            closing = min(fill.quantity, held.quantity)
            part = replace(held, quantity=closing)
            realised = part.unrealised(fill.price)
            cash += part.cost + realised  # cost of a long, or a short's collateral, plus its P&L
            rest = held.quantity - closing
            if rest <= held.quantity * 1e-12:
                del positions[fill.symbol]
            else:
                positions[fill.symbol] = replace(held, quantity=rest)
        else:
            raise PortfolioError(f"unknown fill kind {fill.kind!r}")
        return Portfolio(cash, MappingProxyType(positions), self.fees_paid + fill.fee,
                         self.realised_pnl + realised)

    def with_level(self, symbol: str, level: float | None) -> Portfolio:
        """The state with ``symbol``'s invalidation level moved (a hold that moves the level)."""
        positions = dict(self.positions)
        positions[symbol] = replace(positions[symbol], invalidation_price=level)
        return replace(self, positions=MappingProxyType(positions))


def fold(fills: Iterable[Fill], start: Portfolio | None = None) -> Portfolio:
    """The portfolio after applying ``fills`` in order to ``start`` (default: $10,000 cash)."""
    state = start or Portfolio()
    for fill in fills:
        state = state.apply(fill)
    return state


def fee(notional: float, rate: float = FEE_RATE) -> float:
    return abs(notional) * rate
