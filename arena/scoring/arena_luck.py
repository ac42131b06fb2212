"""Portfolio-level luck for the arena (SPEC §5): zero-skill contestants that play the arena's rules.

Each random player starts with ``rules.start_cash`` and, at every cycle of the season, writes a
random but *valid* :class:`~arena.engine.contract.Answer` that goes through the real
:func:`~arena.engine.broker.execute_answer` - the same validator, broker, sizing and fees as any
contestant. Between cycles the real invalidation monitor
(:func:`~arena.engine.monitor.check_invalidations`) closes the positions whose level the price
reached, when 15-minute bars are given. The final returns of the players form the distribution an
arena contestant's return is placed in (:meth:`ArenaLuck.place`: percentile and rank score through
:mod:`arena.scoring.scorer`).

What a zero-skill player does at a cycle (:class:`RandomProfile` holds the probabilities):

* for each held position whose asset trades today and has a price this cycle: close it with
  probability ``close_prob`` (a partial close of a random 1-100% with probability
  ``partial_prob``, else a full close); otherwise, if it is in profit, add 10-100% of equity with
  probability ``add_prob`` (0 by default: no adds); otherwise hold (no decision is sent);
* with probability ``open_prob``: one new position in a random asset that trades today, has a
  price this cycle, is not held and was not closed this cycle; long or short 50/50; size uniform in
  the rules' equity range (10-100%); confidence uniform in [min confidence, 1]; an invalidation
  level on the losing side at ``entry x (1 -/+ u)``, ``u ~ U[level_min, level_max]``. The open is
  skipped (not sent) when the player already holds the maximum number of positions or when the free
  cash after this cycle's closes and adds would cap it below the minimum size: a zero-skill player
  stays inside the rules. Rejections are still counted from the broker's results (they must be 0).

Prices. ``cycle_prices`` has one row per cycle (UTC times) and one column per tradable house
symbol; NaN means "no execution price this cycle" (a stock on a weekend). Nothing is traded
without a price of its own cycle; positions are marked (equity, sizing, the final return) at the
last known price of each symbol. The final return is the equity at the last cycle's marks divided
by the start cash, minus 1 (open positions are not liquidated, as for contestants).

Invalidation monitor. With ``bars`` (house symbol -> 15-minute bar frame), each player's portfolio
goes through ``check_invalidations`` over ``(previous cycle, this cycle]`` before the cycle's
answer, exactly as a contestant's would. Without ``bars`` there is no monitor: levels are set but
never enforced (use this only when no intraday bars exist; it understates the churn of tight
levels). For speed the monitor is given, for each held level, only the bars of the window whose
open or close reach that level (none: no call at all): each bar is observed on its own, at its
close or a session's opening print, so the first observation that reaches a level comes from such
a bar and the fills are the same. The tests prove it against the monitor over every bar.

Determinism: player ``i`` draws from ``np.random.default_rng([seed, i])`` and nothing else, so its
return does not depend on how many players run.

Books. Between two cycles a player is its :class:`PlayerBook`: the portfolio, the state of its
generator (the draws it makes next) and the rejections so far. :func:`advance_zero_skill` plays
:class:`ZeroSkillBooks` on from the cycle after the last one they played, through the same
engine with the same draws, so advancing N times k cycles equals one simulation of the N x k
cycles from scratch, bit for bit (tested): a season's publication advances its players by the
new cycles instead of replaying the season.

One policy: :func:`zero_skill_answer` is a player's decision at one cycle, from plain values (the
rng, the portfolio, the cycle's prices and marks, the symbols that trade now). The house ``random``
contestant (:mod:`arena.agents.house`) answers with it too, from its briefing, so the arena's
random contestant is a sample of the zero-skill players it is compared with.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from arena.core.sessions import interval_delta, utc
from arena.core.universe import Universe
from arena.engine.broker import execute_answer
from arena.engine.contract import Answer, Decision
from arena.engine.monitor import check_invalidations
from arena.engine.portfolio import LONG, SHORT, Fill, Portfolio, fee
from arena.engine.rules import ARENA_RULES, CycleState, Rejection, Rules, tradeable_today
from arena.scoring.asset_luck import Distribution

RANDOM_TEXT = "random"  # thesis / invalidation / reasoning of every random decision
_SIZE_MARGIN = 1e-9  # relative safety margin so float rounding never turns a skip into a rejection
MONITOR_INTERVAL = "15m"  # the bars the monitor reads (its default interval)


# ----------------------------------------------------------------------------- profile
@dataclass(frozen=True)
class RandomProfile:
    """How often a zero-skill player acts, per cycle (probabilities in [0, 1]).

    The defaults trade about as often as the medium-term investor the arena's prompt asks for
    (positions held for weeks, reviewed once a day): ``open_prob=0.3`` is a new position about
    every three days (eight or nine a 28-day season); ``close_prob=0.1`` holds a position about ten
    cycles on average (geometric); so about three positions are open at a time when cash allows.
    A quarter of the closes are partial (``partial_prob``). No adds by default (``add_prob=0``):
    adding is a choice about winners a random player has no reason to make; set it to explore.
    Levels 5-30% away from the entry are ordinary stop distances for weeks-long positions.
    """

    open_prob: float = 0.3
    close_prob: float = 0.1
    partial_prob: float = 0.25
    add_prob: float = 0.0
    level_min: float = 0.05
    level_max: float = 0.30

    def __post_init__(self) -> None:
        for name in ("open_prob", "close_prob", "partial_prob", "add_prob"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name}={value} is not a probability in [0, 1]")
        if not 0.0 < self.level_min <= self.level_max < 1.0:
            raise ValueError(f"level range {self.level_min}-{self.level_max} must satisfy "
                             "0 < level_min <= level_max < 1")


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ArenaLuck(Distribution):
    """The distribution of zero-skill arena players' final returns (fractions)."""

    returns: np.ndarray
    seed: int
    cycles: int
    rejections: int  # total rejections the random players got: 0 when they play inside the rules
    equity: np.ndarray | None = None  # players x cycles: equity after each cycle (``curves=True``)

    def band(self, quantiles: tuple[float, ...] = (0.05, 0.5, 0.95)) -> np.ndarray:
        """Quantiles of the players' equity after each cycle: ``len(quantiles)`` x cycles."""
        if self.equity is None:
            raise ValueError("no equity curves: play with curves=True")
        return np.quantile(self.equity, quantiles, axis=0)

    def as_dict(self) -> dict[str, object]:
        return {"players": self.players, "seed": self.seed, "cycles": self.cycles,
                "rejections": self.rejections, **self.summary()}


@dataclass(frozen=True)
class PlayerRun:
    """One random player's season: every fill (automatic closes included), every rejection, the
    answers sent (one per cycle, possibly empty), cash and equity after each cycle, and the end."""

    player: int
    final_return: float
    portfolio: Portfolio
    fills: tuple[Fill, ...]
    rejections: tuple[Rejection, ...]
    answers: tuple[Answer, ...]
    cash: tuple[float, ...]
    equity: tuple[float, ...]


@dataclass(frozen=True)
class PlayerBook:
    """One zero-skill player between two cycles: its portfolio, the state of its generator
    (``numpy``'s ``bit_generator.state`` of its PCG64: the draws it makes next) and the number of
    rejections it got so far."""

    portfolio: Portfolio
    rng_state: Mapping[str, Any]
    rejections: int = 0

    def generator(self) -> np.random.Generator:
        """A generator that continues this player's draws."""
        rng = np.random.Generator(np.random.PCG64(0))
        rng.bit_generator.state = dict(self.rng_state)
        return rng


@dataclass(frozen=True)
class ZeroSkillBooks:
    """Every zero-skill player's book after the season's first ``cycles`` cycles (the last of
    them at ``last_cycle``; ``None`` before the first), players numbered from 0."""

    seed: int
    books: tuple[PlayerBook, ...]
    cycles: int = 0
    last_cycle: pd.Timestamp | None = None

    @property
    def players(self) -> int:
        return len(self.books)

    @property
    def rejections(self) -> int:
        return sum(b.rejections for b in self.books)

    @classmethod
    def start(cls, players: int, seed: int = 0, rules: Rules = ARENA_RULES) -> ZeroSkillBooks:
        """``players`` fresh books before the first cycle: ``rules.start_cash`` each, player
        ``i``'s generator ``np.random.default_rng([seed, i])``."""
        if players < 1:
            raise ValueError(f"players={players}: at least one player is needed")
        return cls(seed, tuple(
            PlayerBook(Portfolio(cash=rules.start_cash),
                       np.random.default_rng([seed, i]).bit_generator.state)
            for i in range(players)))


@dataclass(frozen=True)
class Advance:
    """What :func:`advance_zero_skill` played: the books after the last cycle, the books after
    cycle ``keep`` when asked (else None), every player's equity after each new cycle
    (players x new cycles) and every player's final return (fractions) at the last marks."""

    books: ZeroSkillBooks
    kept: ZeroSkillBooks | None
    equity: np.ndarray
    returns: np.ndarray


# ----------------------------------------------------------------------------- the season
@dataclass
class _Season:
    """Everything every player shares, computed once: cycle times, execution prices, marks, the
    assets open for trading at each cycle, and the monitor's windows."""

    cycles: list[pd.Timestamp]
    universe: Universe
    exec_prices: list[dict[str, float]]  # finite positive prices of this cycle
    marks: list[dict[str, float]]  # last known price of every symbol seen so far
    tradeable: list[tuple[str, ...]]  # tradeable today with a price this cycle, column order
    bars: dict[str, pd.DataFrame] | None  # None: no monitor
    # per symbol: first and end row of each window's bars, and each bar's (low, high) of open/close
    _rows: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    _bounds: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @classmethod
    def build(cls, cycle_prices: pd.DataFrame, universe: Universe,
              bars: Mapping[str, pd.DataFrame] | None, first: int = 0) -> _Season:
        """The season of ``cycle_prices`` from its row ``first`` on (the marks carry the prices
        of the rows before it)."""
        if not isinstance(cycle_prices.index, pd.DatetimeIndex) or cycle_prices.index.tz is None:
            raise ValueError("cycle_prices needs a timezone-aware DatetimeIndex of cycle times")
        if len(cycle_prices) == 0:
            raise ValueError("cycle_prices has no cycles")
        if not cycle_prices.index.is_monotonic_increasing or not cycle_prices.index.is_unique:
            raise ValueError("cycle times must be unique and increasing")
        symbols = [str(s) for s in cycle_prices.columns]
        assets = [universe[s] for s in symbols]  # UniverseError names an unknown symbol
        values = cycle_prices.to_numpy(dtype="float64", na_value=np.nan)
        valid = np.isfinite(values) & (values > 0)
        marked = pd.DataFrame(np.where(valid, values, np.nan)).ffill().to_numpy()
        cycles = [utc(t) for t in cycle_prices.index[first:]]
        exec_prices, marks, tradeable = [], [], []
        for k, at in enumerate(cycles, start=first):
            fresh = {s: float(values[k, j]) for j, s in enumerate(symbols) if valid[k, j]}
            exec_prices.append(fresh)
            marks.append({s: float(marked[k, j]) for j, s in enumerate(symbols)
                          if math.isfinite(marked[k, j])})
            tradeable.append(tuple(a.symbol for a in assets
                                   if a.symbol in fresh and tradeable_today(a.symbol, universe, at)))
        season = cls(cycles, universe, exec_prices, marks, tradeable, None)
        if bars is not None:
            season._prepare_monitor(bars)
        return season

    def _prepare_monitor(self, bars: Mapping[str, pd.DataFrame]) -> None:
        """Index the bars once: for each window (c[k-1], c[k]], the rows of each symbol that can
        hold an observation there (those opening in ``(c[k-1] - 15 minutes, c[k]]``: a bar opening
        earlier closed by ``c[k-1]``), and the lowest and highest of each bar's open and close."""
        self.bars = {}
        edges = pd.DatetimeIndex(self.cycles).as_unit("ns").asi8
        first = edges - interval_delta(MONITOR_INTERVAL).value
        for symbol, frame in bars.items():
            if symbol not in self.universe or frame is None or frame.empty:
                continue
            frame = frame.sort_values("timestamp", kind="stable").reset_index(drop=True)
            stamps = pd.DatetimeIndex(pd.to_datetime(frame["timestamp"], utc=True)).as_unit("ns")
            opens = frame["open"].to_numpy(dtype="float64")
            closes = frame["close"].to_numpy(dtype="float64")
            self.bars[symbol] = frame
            self._rows[symbol] = (np.searchsorted(stamps.asi8, first, side="right"),
                                  np.searchsorted(stamps.asi8, edges, side="right"))
            self._bounds[symbol] = (np.fmin(opens, closes), np.fmax(opens, closes))  # NaN-ignoring

    def _window(self, symbol: str, k: int) -> slice:
        starts, ends = self._rows[symbol]
        return slice(int(starts[k - 1]), int(ends[k]))

    def monitor_bars(self, portfolio: Portfolio, k: int, *, screen: bool = True
                     ) -> dict[str, pd.DataFrame]:
        """The bars to give the monitor for window k.

        Unscreened: every bar of the window of every symbol. Screened: for each held position with
        a level, only the bars whose open or close reach that level, and no entry for a position
        none of whose bars do. The result is the same: the monitor observes each bar at its close
        (and a session's first bar at its open) independently of the other bars, and closes a
        position at the first observation that reaches its level, which can only come from a bar
        whose open or close reaches it.
        """
        assert self.bars is not None, "no bars: no monitor"
        out: dict[str, pd.DataFrame] = {}
        if not screen:
            for symbol, frame in self.bars.items():
                out[symbol] = frame.iloc[self._window(symbol, k)]
            return out
        for symbol, p in portfolio.positions.items():
            level = p.invalidation_price
            if level is None or symbol not in self.bars:
                continue
            rows = self._window(symbol, k)
            lows, highs = self._bounds[symbol]
            reach = lows[rows] <= level if p.side == LONG else highs[rows] >= level
            hits = np.flatnonzero(reach)
            if hits.size:
                out[symbol] = self.bars[symbol].iloc[rows.start + hits]
        return out


# ----------------------------------------------------------------------------- one player
def zero_skill_answer(rng: np.random.Generator, portfolio: Portfolio,
                      prices: Mapping[str, float], marks: Mapping[str, float],
                      tradeable: Sequence[str], *, rules: Rules = ARENA_RULES,
                      profile: RandomProfile = RandomProfile()) -> Answer:
    """The zero-skill player's answer for one cycle (see the module docstring), one that the
    validator accepts in full. The arena's luck players and the house ``random`` contestant
    (:mod:`arena.agents.house`) both play it.

    ``prices``: this cycle's execution prices (symbol -> price); ``marks``: the prices that value
    the portfolio (equity, sizing), at least every held symbol; ``tradeable``: the symbols that
    trade now (tradeable today *and* priced in ``prices``), in the order a new position is drawn
    from. Draws come from ``rng`` only. When a held symbol has no mark, equity cannot be measured
    and the engine sizes nothing: no add and no open are sent (closes still are).
    """
    open_today = set(tradeable)
    decisions: list[Decision] = []
    sizable = not portfolio.unmarked(marks)  # else the engine sizes nothing this cycle
    equity = portfolio.equity(marks) if sizable else 0.0
    cash = portfolio.cash
    positions_after = len(portfolio.positions)
    closing: set[str] = set()
    adds: list[tuple[str, float, float]] = []  # (symbol, percent of equity, level)
    for symbol in sorted(portfolio.positions):
        if symbol not in open_today:  # no trading today, or no price of this cycle
            continue
        held, price = portfolio.positions[symbol], prices[symbol]
        if rng.random() < profile.close_prob:
            pct = None
            if rng.random() < profile.partial_prob:
                pct = float(rng.uniform(*rules.position_percent))
            decisions.append(Decision(action="close", symbol=symbol, percent_of_position=pct,
                                      rationale=RANDOM_TEXT))
            share = 1.0 if pct is None else pct / 100.0
            part = replace(held, quantity=held.quantity * share)
            close_fee = fee(part.quantity * price, rules.fee_rate)
            cash += part.value(price) - close_fee
            equity -= close_fee
            closing.add(symbol)
            if pct is None or pct >= 100.0:
                positions_after -= 1
        elif profile.add_prob > 0 and held.in_profit(price) and rng.random() < profile.add_prob:
            adds.append((symbol, float(rng.uniform(*rules.equity_percent)),
                         _level(rng, held.side, price, profile)))
    for symbol, pct, level in adds:  # the broker runs adds after every close
        cap = max(cash, 0.0) / (1.0 + rules.fee_rate)
        if not sizable or equity <= 0 or cap <= _SIZE_MARGIN * equity:
            continue  # no measurable equity or no free cash: an add would be refused
        notional = min(pct / 100.0 * equity, cap)
        decisions.append(_entry("add", symbol, pct, level, rng, rules))
        cash -= notional + fee(notional, rules.fee_rate)
        equity -= fee(notional, rules.fee_rate)
    if rng.random() < profile.open_prob and positions_after < rules.max_positions:
        candidates = [s for s in tradeable if s not in portfolio.positions and s not in closing]
        cap = max(cash, 0.0) / (1.0 + rules.fee_rate)
        if (candidates and sizable and equity > 0
                and cap >= rules.min_open_share * equity * (1 + _SIZE_MARGIN)):
            symbol = candidates[int(rng.integers(len(candidates)))]
            side = LONG if rng.random() < 0.5 else SHORT
            pct = float(rng.uniform(*rules.equity_percent))
            level = _level(rng, side, prices[symbol], profile)
            action = "open_long" if side == LONG else "open_short"
            decisions.append(_entry(action, symbol, pct, level, rng, rules))
    return Answer(reasoning=RANDOM_TEXT, decisions=decisions)


def _level(rng: np.random.Generator, side: str, price: float, profile: RandomProfile) -> float:
    u = float(rng.uniform(profile.level_min, profile.level_max))
    return price * (1.0 - u) if side == LONG else price * (1.0 + u)


def _entry(action: str, symbol: str, pct: float, level: float, rng: np.random.Generator,
           rules: Rules) -> Decision:
    return Decision(action=action, symbol=symbol, percent_of_equity=pct, invalidation_price=level,
                    confidence=float(rng.uniform(rules.min_confidence, 1.0)), thesis=RANDOM_TEXT,
                    invalidation=RANDOM_TEXT, rationale=RANDOM_TEXT)


@dataclass
class _Played:
    """One player's cycles of a season: its state at the end (and after cycle ``keep``), its
    equity after each cycle played, and (``trace``) every fill, rejection, answer and cash."""

    portfolio: Portfolio
    rejections: int
    equity: list[float]
    kept: PlayerBook | None = None
    fills: list[Fill] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    cash: list[float] = field(default_factory=list)


def _play(season: _Season, rng: np.random.Generator, portfolio: Portfolio, rules: Rules,
          profile: RandomProfile, *, first: int = 0, rejections: int = 0, trace: bool = False,
          screen_monitor: bool = True, curve: bool = False, keep: int | None = None) -> _Played:
    """Play the season's cycles from index ``first`` on (the cycle before it, when there is one,
    opens the monitor's first window), from ``portfolio`` and ``rng`` as they are."""
    out = _Played(portfolio, rejections, [])
    for k in range(first, len(season.cycles)):
        at = season.cycles[k]
        if k > 0 and season.bars is not None and portfolio.positions:
            window = season.monitor_bars(portfolio, k, screen=screen_monitor)
            if window:
                checked = check_invalidations(portfolio, window, season.universe,
                                              season.cycles[k - 1], at, fee_rate=rules.fee_rate)
                portfolio = checked.portfolio
                if trace:
                    out.fills.extend(checked.fills)
        answer = zero_skill_answer(rng, portfolio, season.exec_prices[k], season.marks[k],
                                   season.tradeable[k], rules=rules, profile=profile)
        if answer.decisions:
            result = execute_answer(CycleState(portfolio, at), answer, season.marks[k],
                                    season.universe, rules)
            portfolio = result.state.portfolio
            out.rejections += len(result.rejections)
            if trace:
                out.fills.extend(result.fills)
                out.rejected.extend(result.rejections)
        if trace:
            out.answers.append(answer)
            out.cash.append(portfolio.cash)
        if trace or curve:
            out.equity.append(portfolio.equity(season.marks[k]))
        if k == keep:
            out.kept = PlayerBook(portfolio, rng.bit_generator.state, out.rejections)
    out.portfolio = portfolio
    return out


# ----------------------------------------------------------------------------- public API
def play_player(cycle_prices: pd.DataFrame, universe: Universe, player: int, *, seed: int = 0,
                rules: Rules = ARENA_RULES, bars: Mapping[str, pd.DataFrame] | None = None,
                profile: RandomProfile = RandomProfile(),
                screen_monitor: bool = True) -> PlayerRun:
    """The full trace of player ``player`` of :func:`arena_zero_skill` (same draws, same return).

    ``screen_monitor=False`` gives the monitor every bar of every window instead of only the bars
    that can reach a held level (slower, same result: the tests compare both)."""
    season = _Season.build(cycle_prices, universe, bars)
    run = _play(season, np.random.default_rng([seed, player]), Portfolio(cash=rules.start_cash),
                rules, profile, trace=True, screen_monitor=screen_monitor)
    final = run.portfolio.equity(season.marks[-1]) / rules.start_cash - 1.0
    return PlayerRun(player, final, run.portfolio, tuple(run.fills), tuple(run.rejected),
                     tuple(run.answers), tuple(run.cash), tuple(run.equity))


def advance_zero_skill(books: ZeroSkillBooks, cycle_prices: pd.DataFrame, universe: Universe, *,
                       rules: Rules = ARENA_RULES, bars: Mapping[str, pd.DataFrame] | None = None,
                       profile: RandomProfile = RandomProfile(), keep: int | None = None
                       ) -> Advance:
    """Play ``books`` on through the cycles of ``cycle_prices`` they have not played yet.

    ``cycle_prices``: the season so far, every cycle from the first (as for
    :func:`arena_zero_skill`); its first ``books.cycles`` rows are the cycles the books played
    (the last of them must be ``books.last_cycle``), and they give the marks. ``bars``: the
    monitor's 15-minute bars, needed only for the windows after ``books.last_cycle``.
    ``keep``: also return the books after that many cycles (between ``books.cycles`` and the
    last). The draws are each player's own stream where it stopped, so the result equals one
    :func:`arena_zero_skill` over all the cycles, bit for bit."""
    done, total = books.cycles, len(cycle_prices)
    if done > total:
        raise ValueError(f"the books played {done} cycles; cycle_prices has only {total}")
    if done and (books.last_cycle is None
                 or utc(cycle_prices.index[done - 1]) != utc(books.last_cycle)):
        raise ValueError(f"the books' last cycle {books.last_cycle} is not cycle {done} of "
                         f"cycle_prices ({cycle_prices.index[done - 1]})")
    if keep is not None and not done <= keep <= total:
        raise ValueError(f"keep={keep} is not between {done} and {total} cycles")
    first = max(done - 1, 0)  # the cycle before the first new one opens the monitor's window
    season = _Season.build(cycle_prices, universe, bars, first=first)
    local_keep = None if keep is None else keep - 1 - first
    equity = np.empty((books.players, total - done))
    returns = np.empty(books.players)
    after, kept = [], []
    rng = np.random.Generator(np.random.PCG64(0))  # one generator, set to each player's state
    for i, book in enumerate(books.books):
        rng.bit_generator.state = dict(book.rng_state)
        run = _play(season, rng, book.portfolio, rules, profile, first=done - first,
                    rejections=book.rejections, curve=True, keep=local_keep)
        equity[i] = run.equity
        returns[i] = run.portfolio.equity(season.marks[-1]) / rules.start_cash - 1.0
        after.append(PlayerBook(run.portfolio, rng.bit_generator.state, run.rejections))
        if keep is not None:
            kept.append(run.kept if keep > done else book)
    last = utc(cycle_prices.index[-1]) if total else None
    kept_books = None
    if keep is not None:
        kept_books = ZeroSkillBooks(books.seed, tuple(kept), keep,
                                    utc(cycle_prices.index[keep - 1]) if keep else None)
    return Advance(ZeroSkillBooks(books.seed, tuple(after), total, last), kept_books, equity,
                   returns)


def arena_zero_skill(cycle_prices: pd.DataFrame, universe: Universe, *, players: int = 1000,
                     seed: int = 0, rules: Rules = ARENA_RULES,
                     bars: Mapping[str, pd.DataFrame] | None = None,
                     profile: RandomProfile = RandomProfile(), curves: bool = False,
                     ) -> ArenaLuck:
    """Play ``players`` zero-skill contestants through the season of ``cycle_prices``.

    ``cycle_prices``: index = cycle times (timezone-aware, increasing), columns = house symbols,
    NaN where an asset has no price that cycle. ``bars``: house symbol -> 15-minute bars
    (``timestamp`` = bar open UTC, ``open``/``close``) for the invalidation monitor, or None for no
    monitor. Returns the final returns, and the total number of rejections (0 expected);
    with ``curves`` also every player's equity after each cycle (for the zero-skill band).
    """
    played = advance_zero_skill(ZeroSkillBooks.start(players, seed, rules), cycle_prices,
                                universe, rules=rules, bars=bars, profile=profile)
    return ArenaLuck(played.returns, seed, len(cycle_prices), played.books.rejections,
                     played.equity if curves else None)
