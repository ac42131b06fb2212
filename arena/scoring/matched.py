"""Matched players: zero-skill players that keep a contestant's book and redraw only its assets.

The arena's zero-skill players (:mod:`arena.scoring.arena_luck`) are long or short 50/50, so their
average exposure to the market is zero: a contestant that is simply long in a rising market sits
high among them without choosing anything well. The skill percentile asks a narrower question -
did the contestant choose *which assets* to hold better than chance? - by comparing it with
players that copy everything about its book except that choice.

**The null hypothesis** ("no skill"): the contestant's choice of assets is no better than a
random relabelling of them. Under it, the contestant's book is one draw among its relabellings,
and its place among them is a uniform draw.

**A matched player** replays the contestant's recorded fills (:func:`book_from_fills`), position
by position, cycle by cycle:

* when the contestant opens a position, the player opens one at the same cycle, on the same side
  (long or short), sized at the same share of its own equity (the contestant's notional over its
  equity at the cycle's marks just before the fill), capped by its free cash as the broker caps
  any open, and refused, as the rules refuse it, below the minimum size;
* an add goes to the player's position of that lot, at the same share of its equity, when the
  rules would take it: that position in profit ("adds go only to winners") and its asset
  trading at that cycle;
* a close closes the same fraction of the player's position at the same cycle, at its asset's
  mark - on a day that asset's market is shut too, at its last price, so that the holding period
  stays the contestant's; a position the invalidation monitor closed between two cycles is closed
  at the next cycle's mark (a player keeps no invalidation level of its own);
* fees are the rules' on every fill, and the money is the engine's (:mod:`arena.engine.portfolio`:
  a short locks its notional as collateral), so the number of positions, their sides, sizes,
  timing, holding periods, turnover and fees are the contestant's.

What differs is the asset. Player ``d`` relabels the assets with a random permutation of its own:
every symbol gets a key ``key_d(symbol)`` (uniform, from the seed and the symbol's name, so the
same player relabels the same way in every season of a league), and at a cycle whose tradable
assets are ``T`` the asset at name-rank ``r`` in ``T`` maps to the asset at key-rank ``r`` in
``T``. The image must be one the rules let the player open then: tradable at that cycle (a price
of its own cycle, a trading day for a stock), not held by it, not closed by it earlier in the same
cycle; a model's instances (:func:`matched_players` with several books) share the relabelling, so
instances that hold one asset together hold one image together, and an asset an instance already
holds keeps its image for the others. When the image is not one the player may open (the tradable
set changed since another asset took it), the player draws uniformly among those it may open
(a *fallback*, counted). With a fixed set of tradable assets no fallback ever happens, and the
matched players are exactly the contestant's book under uniformly random permutations of the
asset names: a contestant whose choices ignore the future - any mix of long, short, cash,
concentrated, high turnover - is then exchangeable with its matched players, and its percentile
is uniform.

**What it controls for**: market direction and exposure (long, short, gross and net, over time),
position count and sizes, timing of entries and exits, holding periods, turnover and fees - each
the contestant's own. **What it cannot**: an asset's persistent difference from the others is
credited as selection (a contestant that only ever holds BTC is compared with players holding one
random asset each); an asset class chosen for its class (crypto rather than stocks) is a choice it
tests too; the exit of a position that the monitor stopped is mirrored at the next cycle, not at
the stop's own price; a book whose every position is in every asset (an equal-weight basket of the
whole universe) has no choice to test and sits at exactly the middle.

Determinism: the keys of player ``d`` come from ``np.random.default_rng([seed, symbol key])``'s
``d``-th draw; a fallback draws the ``d``-th number of a generator of ``(seed, unit name, event
number)``. So adding players or cycles never changes the
players already drawn, and a season published after every cycle keeps each player's past.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.core.sessions import utc
from arena.core.universe import Universe
from arena.engine.portfolio import ADD, CLOSE, LONG, OPEN, SHORT, Fill, Portfolio
from arena.engine.rules import ARENA_RULES, Rules, tradeable_today
from arena.scoring.verdict import TIE_DECIMALS

MATCHED_PLAYERS = 1000  # the default number of matched players per contestant
_FULL = 1.0 - 1e-12  # a close of at least this share of a position closes it (as the engine)


class MatchedInputError(ValueError):
    """Fills, prices or books the matched players cannot be built from (named)."""


# ----------------------------------------------------------------------------- the market
@dataclass(frozen=True)
class MatchedMarket:
    """The season as the matched players see it: the cycle times, the tradable symbols, each
    symbol's mark at each cycle (its last known price: NaN before its first) and whether it can be
    opened at that cycle (a price of that cycle, and a trading day for its market)."""

    cycles: pd.DatetimeIndex
    symbols: tuple[str, ...]
    marks: np.ndarray  # cycles x symbols
    tradable: np.ndarray  # cycles x symbols, bool

    @classmethod
    def from_prices(cls, cycle_prices: pd.DataFrame, universe: Universe) -> MatchedMarket:
        """From the arena luck's wide cycle prices (index: cycle times, timezone-aware and
        increasing; columns: tradable symbols; NaN where a symbol has no price of that cycle),
        the same frame :func:`arena.scoring.arena_luck.arena_zero_skill` reads."""
        index = cycle_prices.index
        if not isinstance(index, pd.DatetimeIndex) or index.tz is None:
            raise MatchedInputError("cycle prices need a timezone-aware DatetimeIndex of cycles")
        if len(index) == 0:
            raise MatchedInputError("cycle prices hold no cycle")
        if not index.is_monotonic_increasing or not index.is_unique:
            raise MatchedInputError("cycle times must be unique and increasing")
        symbols = tuple(sorted(str(s) for s in cycle_prices.columns))
        values = cycle_prices[list(symbols)].to_numpy(dtype="float64", na_value=np.nan)
        fresh = np.isfinite(values) & (values > 0)
        marks = pd.DataFrame(np.where(fresh, values, np.nan)).ffill().to_numpy()
        open_today = np.array([[tradeable_today(s, universe, utc(at)) for s in symbols]
                               for at in index], dtype=bool).reshape(len(index), len(symbols))
        return cls(pd.DatetimeIndex(index), symbols, marks, fresh & open_today)

    def column(self, symbol: str) -> int:
        try:
            return self.symbols.index(symbol)
        except ValueError:
            raise MatchedInputError(f"{symbol} has no cycle prices in the season") from None


# ----------------------------------------------------------------------------- a book
@dataclass(frozen=True)
class BookEvent:
    """One fill of a contestant, as a matched player mirrors it: at cycle index ``cycle``, on
    position ``lot`` of the book (numbered in opening order), ``kind`` open/add/close, the
    contestant's ``symbol`` and ``side``; ``share``: an open's or add's notional over the
    contestant's equity just before it, a close's quantity over the position's quantity."""

    cycle: int
    lot: int
    kind: str
    symbol: str
    side: str
    share: float
    automatic: bool = False


@dataclass(frozen=True)
class Book:
    """A contestant's book as its matched players copy it, and its own equity at each cycle's
    marks when replayed from its fills (the self-check against its recorded equity)."""

    name: str
    events: tuple[BookEvent, ...]
    equity: np.ndarray  # the contestant's equity after each cycle, at the cycle's marks

    @property
    def lots(self) -> int:
        return 1 + max((e.lot for e in self.events), default=-1)

    @property
    def traded(self) -> bool:
        return self.lots > 0

    def final_return(self, start_cash: float = ARENA_RULES.start_cash) -> float:
        return float(self.equity[-1]) / start_cash - 1.0


def _cycle_of(market: MatchedMarket, fill: Fill) -> int | None:
    """The cycle a fill is mirrored at: its own cycle, or for the monitor's fill between two
    cycles the next one; None after the season's last cycle."""
    at = utc(fill.at).as_unit("ns").value
    k = int(np.searchsorted(market.cycles.as_unit("ns").asi8, at, side="left"))
    if k >= len(market.cycles):
        return None
    if not fill.automatic and market.cycles[k].value != at:
        raise MatchedInputError(f"{fill.kind} of {fill.symbol} at {fill.at} is at no cycle of "
                                "the season")
    return k


def book_from_fills(name: str, fills: Sequence[Fill], market: MatchedMarket, *,
                    rules: Rules = ARENA_RULES) -> Book:
    """The book of the contestant ``name`` from its recorded fills in fold order (the ledger's
    :meth:`~arena.ledger.store.Ledger.fills`), through the season's last cycle: each fill with
    its cycle, position and share (:class:`BookEvent`), and the contestant's equity after each
    cycle at the marks, its fills folded by the engine's own :class:`Portfolio`."""
    marks = market.marks
    state = Portfolio(cash=rules.start_cash)
    lots: dict[str, int] = {}  # held symbol -> its position's number
    opened = 0
    events: list[BookEvent] = []
    equity = np.empty(len(market.cycles))
    k_done = 0

    def marked(k: int) -> dict[str, float]:
        return {s: float(marks[k, market.column(s)]) for s in state.positions}

    def worth(k: int) -> float:
        try:
            return state.equity(marked(k))
        except KeyError:  # a held symbol without a price at that cycle
            raise MatchedInputError(
                f"{name}: {', '.join(state.unmarked(marked(k)))} has no price at "
                f"{market.cycles[k]}: the book cannot be valued there") from None

    def close_cycles(upto: int) -> None:
        nonlocal k_done
        while k_done < upto:
            equity[k_done] = worth(k_done)
            k_done += 1

    for fill in fills:
        k = _cycle_of(market, fill)
        if k is None:
            break
        if k < k_done:
            raise MatchedInputError(f"{name}: fills out of order at {fill.at}")
        close_cycles(k)
        held = state.positions.get(fill.symbol)
        if fill.kind == CLOSE:
            if held is None:
                raise MatchedInputError(f"{name}: a close of {fill.symbol} at {fill.at} without "
                                        "a position")
            share, lot = fill.quantity / held.quantity, lots[fill.symbol]
        else:
            before = worth(k)
            if not before > 0:
                raise MatchedInputError(f"{name}: an {fill.kind} at {fill.at} with equity "
                                        f"{before}")
            share = fill.notional / before
            if fill.kind == OPEN:
                lots[fill.symbol], opened = opened, opened + 1
            lot = lots[fill.symbol]
        events.append(BookEvent(k, lot, fill.kind, fill.symbol, fill.side, float(share),
                                fill.automatic))
        state = state.apply(fill)
        if fill.symbol not in state.positions:
            del lots[fill.symbol]
    close_cycles(len(market.cycles))
    return Book(name, tuple(events), equity)


# ----------------------------------------------------------------------------- relabelling
def _key(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def relabelling_keys(symbols: Sequence[str], players: int, seed: int = 0) -> np.ndarray:
    """``players x symbols``: player ``d``'s key of each symbol, the ``d``-th draw of
    ``default_rng([seed, sha256(symbol)])`` - the same for a symbol in every season."""
    if players < 1:
        raise MatchedInputError(f"players={players}: at least one matched player is needed")
    return np.stack([np.random.default_rng([seed, _key(s)]).random(players) for s in symbols],
                    axis=1) if symbols else np.empty((players, 0))


def relabel(keys: np.ndarray, tradable: np.ndarray, column: int) -> np.ndarray:
    """Each player's image of the symbol in ``column`` among the columns ``tradable`` (a boolean
    row): the tradable symbol at the same rank by key as ``column``'s rank by name; -1 for every
    player when ``column`` itself is not tradable there (no rank to map)."""
    among = np.flatnonzero(tradable)
    rank = int(np.searchsorted(among, column))
    if rank >= len(among) or among[rank] != column:
        return np.full(keys.shape[0], -1, dtype=np.int64)
    order = np.argsort(keys[:, among], axis=1, kind="stable")
    return among[order[:, rank]]


# ----------------------------------------------------------------------------- the players
@dataclass(frozen=True)
class Matched:
    """The matched players of one unit (a contestant, or a replicated model's instances
    together): each player's final return for each instance (players x instances, fractions at
    the last cycle's marks), the unit's own returns, and how often a player drew an image again
    (``fallbacks``) or could not open a position the contestant opened (``skipped``: too little
    free cash for the minimum size, or no asset it may open); ``assets``: per instance, each
    player's asset (a column of the market's symbols) of each position of its book, -1 where the
    player could not open it."""

    name: str
    instances: tuple[str, ...]
    seed: int
    returns: np.ndarray
    own: np.ndarray
    fallbacks: int
    skipped: int
    assets: tuple[np.ndarray, ...] = ()

    @property
    def players(self) -> int:
        return int(self.returns.shape[0])

    @property
    def unit_returns(self) -> np.ndarray:
        """Each player's return of the unit: the mean over its instances."""
        return self.returns.mean(axis=1)

    @property
    def own_return(self) -> float:
        return float(np.mean(self.own))

    def percentile(self, value: float | None = None) -> float:
        """The share of the players whose unit return is below ``value`` (default: the unit's
        own), ties counted half - the leaderboard's convention."""
        return share_below(self.own_return if value is None else value, self.unit_returns)


def share_below(value: float, returns: np.ndarray) -> float:
    """The share of ``returns`` below ``value``, ties counted half (both rounded to
    :data:`TIE_DECIMALS` decimals)."""
    returns = np.round(np.asarray(returns, dtype="float64"), TIE_DECIMALS)
    if returns.size == 0:
        raise MatchedInputError("no players to place a return among")
    value = round(float(value), TIE_DECIMALS)
    return float((np.count_nonzero(returns < value) + 0.5 * np.count_nonzero(returns == value))
                 / returns.size)


class _Instance:
    """One instance's matched players: cash, and per position of its book the asset, quantity
    and entry price of every player (0 quantity: closed, or never opened); ``open``: the
    positions the book holds now (the only ones a player may hold: it closes each with the book),
    so valuing a player costs the book's open positions, not every position of the season."""

    def __init__(self, book: Book, players: int, rules: Rules) -> None:
        lots = book.lots
        self.cash = np.full(players, rules.start_cash)
        self.asset = np.full((players, lots), -1, dtype=np.int64)
        self.qty = np.zeros((players, lots))
        self.entry = np.ones((players, lots))
        self.sign = np.ones(lots)
        self.open: list[int] = []

    def equity(self, marks: np.ndarray) -> np.ndarray:
        """Each player's cash plus its positions marked at ``marks`` (a row of prices)."""
        if not self.open:
            return self.cash.copy()
        lots = np.array(self.open)
        asset, qty, entry = self.asset[:, lots], self.qty[:, lots], self.entry[:, lots]
        price = np.where(asset >= 0, marks[np.maximum(asset, 0)], 1.0)
        values = qty * entry + self.sign[lots] * qty * (price - entry)
        return self.cash + values.sum(axis=1)


def matched_players(books: Sequence[Book], market: MatchedMarket, *,
                    players: int = MATCHED_PLAYERS, seed: int = 0, rules: Rules = ARENA_RULES,
                    name: str | None = None, keys: np.ndarray | None = None) -> Matched:
    """``players`` matched players of ``books`` (one book: a contestant; several: a replicated
    model's instances, relabelled together), on ``market``. ``name``: the unit (default: the
    single book's name; required for several). ``keys``: the relabelling keys when already drawn
    (:func:`relabelling_keys` of ``market.symbols``)."""
    if not books:
        raise MatchedInputError("no book to match")
    if name is None:
        if len(books) > 1:
            raise MatchedInputError("name the unit of several books")
        name = books[0].name
    n_sym = len(market.symbols)
    keys = relabelling_keys(market.symbols, players, seed) if keys is None else keys
    if keys.shape != (players, n_sym):
        raise MatchedInputError(f"keys of shape {keys.shape}, not {(players, n_sym)}")
    unit = _Unit(books, market, rules, keys, seed, _key(name))
    timeline = sorted(((e.cycle, i, j) for i, b in enumerate(books)
                       for j, e in enumerate(b.events)))
    for ordinal, (k, i, j) in enumerate(timeline):
        event = books[i].events[j]
        if event.kind == OPEN:
            unit.open(i, k, event, ordinal)
        elif event.kind == ADD:
            unit.add(i, k, event)
        else:  # CLOSE
            unit.close(i, k, event)
    last = market.marks[-1]
    returns = np.stack([st.equity(last) / rules.start_cash - 1.0 for st in unit.states], axis=1)
    own = np.array([b.final_return(rules.start_cash) for b in books])
    return Matched(name, tuple(b.name for b in books), seed, returns, own, unit.fallbacks,
                   unit.skipped, tuple(st.asset for st in unit.states))


class _Unit:
    """A unit's matched players replaying its books' events: each instance's players
    (:class:`_Instance`) and what the instances share - the relabelling (``keys``), which
    matched asset each instance's player holds (``held``), how many instances hold it
    (``holders``), the contestant asset it stands for, each contestant asset's image while
    held, the assets each instance closed at a cycle (not to be opened again in it) - and the
    counts of fallbacks and skipped opens."""

    def __init__(self, books: Sequence[Book], market: MatchedMarket, rules: Rules,
                 keys: np.ndarray, seed: int, unit_key: int) -> None:
        players, n_sym = keys.shape
        self.market, self.rules, self.keys = market, rules, keys
        self.seed, self.unit_key, self.players = seed, unit_key, players
        self.states = [_Instance(b, players, rules) for b in books]
        self.rows = np.arange(players)
        self.held = np.zeros((len(books), players, n_sym), dtype=bool)  # instance, player, asset
        self.holders = np.zeros((players, n_sym), dtype=np.int64)  # instances holding an asset
        self.stands_for = np.full((players, n_sym), -1, dtype=np.int64)  # the asset it images
        self.image = np.full((players, n_sym), -1, dtype=np.int64)  # asset -> image while held
        self.closed_at: dict[tuple[int, int], np.ndarray] = {}  # (instance, cycle) -> closed
        self.fallbacks = self.skipped = 0

    def open(self, i: int, k: int, event: BookEvent, ordinal: int) -> None:
        """Instance ``i``'s players open the position the contestant opened at cycle ``k``
        (the ``ordinal``-th event of the unit), each in its image of the asset, at the same
        share of its equity, capped by its free cash; skipped below the minimum size."""
        st, market, fee = self.states[i], self.market, self.rules.fee_rate
        marks, lot = market.marks[k], event.lot
        st.sign[lot] = 1.0 if event.side == LONG else -1.0
        st.open.append(lot)
        column = market.column(event.symbol)
        choice = self._images(i, k, column, ordinal)
        equity = st.equity(marks)
        price = np.where(choice >= 0, marks[np.maximum(choice, 0)], np.nan)
        notional = np.minimum(event.share * equity, np.maximum(st.cash, 0.0) / (1.0 + fee))
        opens = ((choice >= 0) & (equity > 0)
                 & (notional >= self.rules.min_open_share * equity * (1 - 1e-12)))
        self.skipped += int(np.count_nonzero(~opens))
        who = np.flatnonzero(opens)
        asset = choice[who]
        quantity = notional[who] / price[who]
        filled = quantity * price[who]
        st.cash[who] = (st.cash[who] - filled * fee) - filled
        st.asset[who, lot], st.qty[who, lot], st.entry[who, lot] = asset, quantity, price[who]
        self.held[i, who, asset] = True
        self.holders[who, asset] += 1
        self.stands_for[who, asset] = column
        self.image[who, column] = asset

    def _images(self, i: int, k: int, column: int, ordinal: int) -> np.ndarray:
        """The asset each player of instance ``i`` opens for the contestant's ``column`` at
        cycle ``k``: the image ``column`` has while another instance holds it, else its
        relabelling; where the player may not open that one, a uniform draw among those it may
        (a fallback; the ``ordinal``-th event's numbers), -1 when there is none."""
        players, market = self.players, self.market
        closed = self.closed_at.get((i, k), np.zeros((players, len(market.symbols)), dtype=bool))
        allowed = (market.tradable[k][None, :] & ~self.held[i] & ~closed
                   & ((self.stands_for < 0) | (self.stands_for == column)))
        first = np.where(self.image[:, column] >= 0, self.image[:, column],
                         relabel(self.keys, market.tradable[k], column))
        ok = (first >= 0) & allowed[self.rows, np.maximum(first, 0)]
        u = np.random.default_rng([self.seed, self.unit_key, ordinal]).random(players)
        choice = first.copy()
        redraw = np.flatnonzero(~ok)
        if redraw.size:
            counts = allowed[redraw].sum(axis=1)
            pick = np.minimum((u[redraw] * counts).astype(np.int64), np.maximum(counts - 1, 0))
            cum = np.cumsum(allowed[redraw], axis=1)
            drawn = np.argmax(cum > pick[:, None], axis=1)
            choice[redraw] = np.where(counts > 0, drawn, -1)
            self.fallbacks += int(np.count_nonzero(counts > 0))
        return choice

    def add(self, i: int, k: int, event: BookEvent) -> None:
        """Instance ``i``'s players add to their position of the lot at cycle ``k``, at the
        same share of their equity, where the rules take it: the position open and in profit,
        its asset tradable, the notional capped by the free cash."""
        st, fee, lot = self.states[i], self.rules.fee_rate, event.lot
        marks = self.market.marks[k]
        alive = st.qty[:, lot] > 0
        equity = st.equity(marks)
        asset = np.maximum(st.asset[:, lot], 0)
        price = marks[asset]
        winning = st.sign[lot] * (price - st.entry[:, lot]) > 0
        notional = np.minimum(event.share * equity, np.maximum(st.cash, 0.0) / (1.0 + fee))
        adds = (alive & winning & self.market.tradable[k, asset] & (equity > 0)
                & (notional > 0))
        who = np.flatnonzero(adds)
        quantity = notional[who] / price[who]
        filled = quantity * price[who]
        cost = st.qty[who, lot] * st.entry[who, lot] + filled
        st.qty[who, lot] += quantity
        st.entry[who, lot] = cost / st.qty[who, lot]
        st.cash[who] = (st.cash[who] - filled * fee) - filled

    def close(self, i: int, k: int, event: BookEvent) -> None:
        """Instance ``i``'s players close the same fraction of their position of the lot at
        cycle ``k``'s marks. A full close frees the asset (and its image, once no instance
        holds it); made at the cycle (not the monitor's, between cycles), it keeps the asset
        from being opened again at that cycle."""
        st, lot = self.states[i], event.lot
        who = np.flatnonzero(st.qty[:, lot] > 0)
        asset = st.asset[who, lot]
        price = self.market.marks[k][asset]
        full = event.share >= _FULL
        part = st.qty[who, lot] if full else st.qty[who, lot] * event.share
        entry = st.entry[who, lot]
        value = part * entry + st.sign[lot] * part * (price - entry)
        st.cash[who] = (st.cash[who] - part * price * self.rules.fee_rate) + value
        if not full:
            st.qty[who, lot] -= part
            return
        st.open.remove(lot)
        st.qty[who, lot] = 0.0
        self.held[i, who, asset] = False
        self.holders[who, asset] -= 1
        gone = who[self.holders[who, asset] == 0]
        gone_asset = st.asset[gone, lot]
        self.image[gone, self.stands_for[gone, gone_asset]] = -1
        self.stands_for[gone, gone_asset] = -1
        if not event.automatic:  # the monitor's closes came before the cycle
            closed = self.closed_at.setdefault(
                (i, k), np.zeros((self.players, len(self.market.symbols)), dtype=bool))
            closed[who, asset] = True


__all__ = [
    "LONG",
    "MATCHED_PLAYERS",
    "SHORT",
    "Book",
    "BookEvent",
    "Matched",
    "MatchedInputError",
    "MatchedMarket",
    "book_from_fills",
    "matched_players",
    "relabel",
    "relabelling_keys",
    "share_below",
]
