"""Blind seasons: the market every contestant sees under neutral names, on a relabelled calendar
and at rescaled price levels, so that a model cannot recognise the period or the assets it
trades and answer from memory instead of judgement.

A season played blind (``arena season init --blind``) draws one :class:`Blinding` when it is
created and keeps it sealed in its lake (``season/blind.json``:
:func:`arena.pipeline.season_config.season_blinding`) until it ends. It maps:

* **names**: each asset of the season's universe to a neutral name, stable for the season, that
  keeps its asset class (``CRY07``, ``STK12``, ``ETF02``; a benchmark ``BENCH1``), numbered in a
  secret random order; its company name goes too, and its sector unless the season keeps sectors
  (``--blind-sectors``: a sector such as "meme" or "store of value" can name a coin alone);
* **time**: every time shown moves forward by a secret whole number of weeks (40 to 80 years),
  so no real date appears while every weekday, session and gap between bars is kept;
* **price levels**: each asset's prices are multiplied by a secret factor ``2**k`` (``k`` one of
  :data:`EXPONENTS`: a level 4 to 64 times away from the real one) and its volumes divided by
  it, so returns, RSIs, volatilities, dollar volumes and every other ratio are unchanged.

The factors are powers of two on purpose: multiplying or dividing a binary float by one is
exact, so the engine can judge a contestant's answer in the blind world (its rejections and
repair text speak the contestant's language: its symbols, its price levels) and the fills come
back to real terms **bit for bit** what the engine would have executed on the real prices
(:meth:`Blinding.real_fill`): a blind season's books are those of the same answers played open.

What stays real: the cycle's instant as the engine knows it (so the NYSE calendar and the
invalidation monitor are the real ones), amounts in USD (cash, equity, notional, dollar volume),
the ledger's fills, levels and equity, and every mart. What is blind: everything a contestant
reads (the prompt, the researcher's tool answers, the debate's prompts, a repair follow-up) and
what it writes. The ledger keeps the prompts as they were sent; its decisions, fills, levels and
rejections carry real symbols and price levels (:meth:`Blinding.real_decision`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import pandas as pd

from arena.core.errors import ArenaError, UnusableInput
from arena.core.types import Charts
from arena.core.universe import Asset, Universe
from arena.engine.broker import LevelMove
from arena.engine.portfolio import Fill, Portfolio, Position
from arena.engine.rules import CycleState, Rejection
from arena.market.screener import ScreenResult
from arena.market.types import AssetDetail, Candle, MarketData, UniverseRow

EXPONENTS = (-6, -5, -4, -3, -2, 2, 3, 4, 5, 6)  # a price factor is 2**k: 1/64..1/4, 4..64
SHIFT_YEARS = (40, 80)  # the calendar moves forward by a whole number of weeks in this range
PREFIX = {"crypto": "CRY", "stock": "STK", "etf": "ETF"}
BENCHMARK = "BENCH"
HIDDEN_SECTOR = "undisclosed"
DAMAGED = "its market data cannot be used this cycle"
RECORDED = "recorded"  # a blind market's provider label: the vendor's name is not shown
FORMAT = 1


class BlindingError(UnusableInput, ValueError):
    """A blinding that cannot be used: malformed, or not covering the season's universe."""


def shift_range() -> tuple[int, int]:
    """The whole numbers of weeks a blinding may move the calendar by (:data:`SHIFT_YEARS`)."""
    lo, hi = (round(y * 365.2425 / 7) for y in SHIFT_YEARS)
    return lo, hi


def _whole(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def neutral_names(universe: Universe, rng: random.Random) -> dict[str, str]:
    """Each asset's neutral name (real symbol -> name): numbered within its class (benchmarks
    apart) in a random order, so neither the universe's order nor its size within a class can
    be read back from a name."""
    groups: dict[str, list[str]] = {}
    for a in universe:
        groups.setdefault(BENCHMARK if a.benchmark else PREFIX[a.asset_class], []).append(a.symbol)
    names = {}
    for prefix, symbols in sorted(groups.items()):
        order = rng.sample(symbols, len(symbols))
        width = 1 if prefix == BENCHMARK else 2
        names.update({s: f"{prefix}{i:0{width}d}" for i, s in enumerate(order, start=1)})
    return names


@dataclass(frozen=True)
class Blinding:
    """One season's secret (module docstring): ``names`` real symbol -> neutral name,
    ``exponents`` real symbol -> ``k`` of its price factor ``2**k``, ``shift_weeks`` how far
    every shown time moves, ``sectors`` whether sectors are shown."""

    names: Mapping[str, str]
    exponents: Mapping[str, int]
    shift_weeks: int
    sectors: bool = False
    _real: dict[str, str] = field(init=False, repr=False, compare=False)
    shift: pd.Timedelta = field(init=False, repr=False, compare=False)  # shift_weeks as a delta

    def __post_init__(self) -> None:
        if set(self.names) != set(self.exponents):
            raise BlindingError("a blinding needs a name and a price factor for every asset, "
                                "and no more")
        real = {n: s for s, n in self.names.items()}
        if len(real) != len(self.names):
            raise BlindingError("two assets share a neutral name")
        clash = sorted(set(real) & set(self.names))
        if clash:
            raise BlindingError(f"neutral name(s) {', '.join(clash)} are real symbols too")
        bad = sorted(s for s, k in self.exponents.items() if k not in EXPONENTS)
        if bad:
            raise BlindingError(f"price factor exponent out of range for {', '.join(bad)}")
        lo, hi = shift_range()
        if not isinstance(self.shift_weeks, int) or not lo <= self.shift_weeks <= hi:
            raise BlindingError(f"shift_weeks must be a whole number of weeks from {lo} to {hi} "
                                f"({SHIFT_YEARS[0]} to {SHIFT_YEARS[1]} years), not "
                                f"{self.shift_weeks!r}")
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "shift", pd.Timedelta(weeks=self.shift_weeks))

    # ------------------------------------------------------------------------- making one
    @classmethod
    def draw(cls, universe: Universe, seed: int | None = None, *, sectors: bool = False
             ) -> Blinding:
        """A fresh blinding of ``universe`` (``seed``: a reproducible one, for tests; ``None``:
        from the system's randomness, as a season's secret should be)."""
        rng = random.Random(seed) if seed is not None else random.SystemRandom()
        lo, hi = shift_range()
        return cls(neutral_names(universe, rng),
                   {a.symbol: rng.choice(EXPONENTS) for a in universe},
                   rng.randint(lo, hi), sectors)

    def as_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "shift_weeks": self.shift_weeks, "sectors": self.sectors,
                "assets": [{"symbol": s, "neutral": self.names[s],
                            "price_factor_exponent": self.exponents[s]}
                           for s in sorted(self.names)]}

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Blinding:
        try:
            if body.get("format") != FORMAT:
                raise BlindingError(f"blinding format {body.get('format')!r} is not {FORMAT}")
            assets = body["assets"]
            exponents = {a["symbol"]: a["price_factor_exponent"] for a in assets}
            bad = sorted(s for s, k in exponents.items() if not _whole(k))
            if bad or not _whole(body["shift_weeks"]) or not isinstance(body["sectors"], bool):
                raise BlindingError("malformed blinding: exponents and shift_weeks must be whole "
                                    "numbers and sectors true or false")
            return cls({a["symbol"]: str(a["neutral"]) for a in assets}, exponents,
                       body["shift_weeks"], body["sectors"])
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, BlindingError):
                raise
            raise BlindingError(f"malformed blinding ({type(exc).__name__}: {exc})") from None

    def covers(self, universe: Universe) -> None:
        """:class:`BlindingError` unless every asset of ``universe`` has a neutral name."""
        missing = [s for s in universe.symbols if s not in self.names]
        if missing:
            raise BlindingError(f"the season's blinding has no neutral name for "
                                f"{', '.join(missing)}")

    # ------------------------------------------------------------------------ the mapping
    def name(self, symbol: str) -> str:
        return self.names[symbol]

    def real(self, name: str) -> str | None:
        """The real symbol of a neutral ``name`` (``None``: not one of the season's names)."""
        return self._real.get(name)

    def factor(self, symbol: str) -> float:
        """The price factor of the real ``symbol``: a power of two, so scaling is exact."""
        return math.ldexp(1.0, self.exponents[symbol])

    def time(self, at: pd.Timestamp) -> pd.Timestamp:
        return at + self.shift

    def time_text(self, iso: str | None) -> str | None:
        return None if iso is None else self.time(pd.Timestamp(iso)).isoformat()

    def price(self, symbol: str, x: float | None) -> float | None:
        return None if x is None else x * self.factor(symbol)

    def real_price(self, symbol: str, x: float | None) -> float | None:
        return None if x is None else x / self.factor(symbol)

    # --------------------------------------------------------------- what a contestant sees
    def asset(self, a: Asset) -> Asset:
        name = self.names[a.symbol]
        return replace(a, symbol=name, name=name, sector=self._sector(a.sector))

    def universe(self, universe: Universe) -> Universe:
        """``universe`` under neutral names, in their order (the real order is not shown)."""
        return Universe(tuple(sorted((self.asset(a) for a in universe), key=lambda a: a.symbol)))

    def prices(self, prices: Mapping[str, float]) -> dict[str, float]:
        return {self.names[s]: p * self.factor(s) for s, p in prices.items()}

    def _sector(self, sector: str) -> str:
        return sector if self.sectors else HIDDEN_SECTOR

    def _row(self, r: UniverseRow) -> UniverseRow:
        return replace(r, symbol=self.names[r.symbol], sector=self._sector(r.sector),
                       price=self.price(r.symbol, r.price))

    def _candles(self, symbol: str, candles: Iterable[Candle]) -> tuple[Candle, ...]:
        f = self.factor(symbol)
        return tuple(Candle(self.time_text(c.open_time), c.open * f, c.high * f, c.low * f,
                            c.close * f, c.volume / f) for c in candles)

    def _detail(self, d: AssetDetail) -> AssetDetail:
        s = d.symbol
        return replace(d, symbol=self.names[s], sector=self._sector(d.sector),
                       price=self.price(s, d.price), price_time=self.time_text(d.price_time),
                       funding_time=self.time_text(d.funding_time),
                       weekly=self._candles(s, d.weekly), daily=self._candles(s, d.daily),
                       four_hour=self._candles(s, d.four_hour))

    def _screen(self, screen: ScreenResult) -> ScreenResult:
        names = self.names
        scores = [replace(x, symbol=names[x.symbol]) for x in screen.scores]
        ranked = [x for x in scores if x.rank is not None]  # the unscored in the names' order
        return replace(screen, at=self.time(screen.at),
                       crypto=tuple(names[s] for s in screen.crypto),
                       stocks=tuple(names[s] for s in screen.stocks),
                       scores=(*ranked, *sorted((x for x in scores if x.rank is None),
                                                key=lambda x: x.symbol)))

    def _assets(self, market: MarketData) -> tuple[AssetDetail, ...]:
        """The assets shown in full: the screened ones in the screen's order, then the held-only
        ones in the neutral names' order (not the real tickers')."""
        screened = set(market.screen.selected)
        shown = [self._detail(d) for d in market.assets]
        held = sorted((d for d, real in zip(shown, market.assets, strict=True)
                       if real.symbol not in screened), key=lambda d: d.symbol)
        return (*(d for d, real in zip(shown, market.assets, strict=True)
                  if real.symbol in screened), *held)

    def market(self, market: MarketData) -> MarketData:
        """The cycle's market as a blind season shows it: every name, time and price level
        mapped; the damage found named without its partition (which names the asset)."""
        names = self.names
        return replace(
            market, at=self.time(market.at), blind=True,
            provider=market.provider if market.synthetic else RECORDED,
            table=tuple(sorted((self._row(r) for r in market.table), key=lambda r: r.symbol)),
            assets=self._assets(market),
            benchmarks=tuple(sorted((self._detail(b) for b in market.benchmarks),
                                    key=lambda b: b.symbol)),
            screen=self._screen(market.screen), held=tuple(sorted(names[s] for s in market.held)),
            stale={names[s]: self.time_text(t) for s, t in sorted(market.stale.items())},
            damaged={names[s]: DAMAGED for s in sorted(market.damaged)})

    def snapshot(self, snapshot: Mapping[str, Any]) -> dict[str, Any]:
        """A book's snapshot (:func:`arena.market.briefing.portfolio_snapshot`) as a blind
        season shows it: USD amounts and fractions kept, quantities and price levels scaled."""
        positions = []
        for p in snapshot["positions"]:
            s, f = p["symbol"], self.factor(p["symbol"])
            positions.append({**p, "symbol": self.names[s], "quantity": p["quantity"] / f,
                              "entry_price": p["entry_price"] * f,
                              "price": self.price(s, p["price"]),
                              "invalidation_price": self.price(s, p["invalidation_price"]),
                              "opened_at": self.time_text(p["opened_at"]),
                              "stale_since": self.time_text(p.get("stale_since"))})
        return {**snapshot, "at": self.time_text(snapshot["at"]), "positions": positions}

    def decision(self, d: Mapping[str, Any]) -> dict[str, Any]:
        """A decision of the contract (JSON) with its symbol and level as the blind season
        shows them (an executed decision of the ledger, for a contestant that follows)."""
        s = d.get("symbol")
        name = self.names.get(s) if isinstance(s, str) else None
        return _decision_as(d, name, self.factor(s) if name is not None else 1.0)

    def charts(self, charts: Charts) -> BlindCharts:
        return BlindCharts(charts, self)

    # -------------------------------------------------------------------- the engine's view
    def _position(self, p: Position) -> Position:
        return _position_as(p, self.names[p.symbol], self.factor(p.symbol))

    def _real_position(self, p: Position) -> Position:
        s = self._real[p.symbol]
        return _position_as(p, s, 1.0 / self.factor(s))  # a power of two: exact

    def state(self, state: CycleState) -> CycleState:
        """A contestant's cycle state as the engine judges a blind answer: names and levels
        mapped, the instant kept real (the engine's calendar is the real one)."""
        return self._state(state, self.names, self._position)

    def real_state(self, state: CycleState) -> CycleState:
        """The inverse of :meth:`state` (exact: the factors are powers of two)."""
        return self._state(state, self._real, self._real_position)

    @staticmethod
    def _state(state: CycleState, names: Mapping[str, str], position: Any) -> CycleState:
        book = state.portfolio
        moved = {names[s]: position(p) for s, p in book.positions.items()}
        return replace(state, portfolio=Portfolio(book.cash, MappingProxyType(moved),
                                                  book.fees_paid, book.realised_pnl),
                       opened=tuple(names[s] for s in state.opened),
                       closed=tuple(names[s] for s in state.closed),
                       stale=frozenset(names[s] for s in state.stale))

    def real_fill(self, fill: Fill) -> Fill:
        """A fill of the blind engine in real terms (bit for bit the real engine's fill)."""
        s = self._real[fill.symbol]
        f = self.factor(s)
        return replace(fill, symbol=s, quantity=fill.quantity * f, price=fill.price / f,
                       invalidation_price=self.real_price(s, fill.invalidation_price))

    def real_level(self, move: LevelMove) -> LevelMove:
        s = self._real[move.symbol]
        return move._replace(symbol=s, invalidation_price=move.invalidation_price / self.factor(s))

    def real_rejection(self, r: Rejection) -> Rejection:
        """A rejection with its real symbol (its message stays the one the contestant read)."""
        return replace(r, symbol=self._real.get(r.symbol, r.symbol))

    def real_decision(self, d: Mapping[str, Any]) -> dict[str, Any]:
        """A decision as the contestant sent it, with a neutral symbol and its level in real
        terms (a symbol that is not one of the season's names is kept as written)."""
        s = self._real.get(d.get("symbol")) if isinstance(d.get("symbol"), str) else None
        return _decision_as(d, s, 1.0 / self.factor(s) if s is not None else 1.0)


def _number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _decision_as(d: Mapping[str, Any], symbol: str | None, f: float) -> dict[str, Any]:
    """A decision (JSON) under ``symbol``, its level times ``f`` (``None``: a symbol of no
    season's mapping, the decision kept as written)."""
    if symbol is None:
        return dict(d)
    level = d.get("invalidation_price")
    return {**d, "symbol": symbol, "invalidation_price": level * f if _number(level) else level}


def _position_as(p: Position, symbol: str, f: float) -> Position:
    """A position under ``symbol``, its price levels times ``f`` and its quantity divided by
    it (its cost, notional and P&L unchanged)."""
    return replace(p, symbol=symbol, quantity=p.quantity / f, entry_price=p.entry_price * f,
                   invalidation_price=None if p.invalidation_price is None
                   else p.invalidation_price * f)


@dataclass(frozen=True)
class BlindCharts:
    """A cycle's charts (:class:`~arena.core.types.Charts`) as a blind season shows them: asked
    by neutral name, answered with shifted times, scaled prices and volumes."""

    charts: Charts
    blinding: Blinding

    def candles(self, symbol: str, interval: str, count: int) -> pd.DataFrame:
        real = self.blinding.real(symbol)
        if real is None:
            raise BlindingError(f"{symbol!r} is not a symbol of this season")
        try:
            bars = self.charts.candles(real, interval, count).copy()
        except ArenaError:  # its words name the real partition: say it without them
            raise BlindingError(f"the bars of {symbol} cannot be used this cycle") from None
        f = self.blinding.factor(real)
        bars["timestamp"] = bars["timestamp"] + self.blinding.shift
        for col in ("open", "high", "low", "close"):
            bars[col] = bars[col].astype(float) * f
        bars["volume"] = bars["volume"].astype(float) / f
        return bars

