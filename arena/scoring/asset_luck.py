"""Zero-skill players: what luck achieves on the path an asset actually took.

Each player holds a random position, redrawn at every *decision step* (daily by default), on the
asset's real bars, charged the same costs and scored by the conventions of the scorer every
contestant goes through (and equal to it, see below). The distribution of their final returns is
the luck distribution; its 95th percentile is the **luck ceiling**. The method is fixed before a
season; the numbers are rebuilt on the path it took.

Process (parameters): ``draw="uniform"`` - a fresh position uniform on [-1, +1] at each step
(``"sign"`` draws -1/0/+1 instead); ``step`` - the decision step (``"1d"``: one decision per UTC day
for crypto, per session for stocks; ``"bar"``: every bar). Costs: ``|Δw| x cost_rate`` at each
change, as in :mod:`arena.scoring.scorer`.

Which moves a day's position earns: a day's draw is held from the close of the day's first bar
(the scorer's rule: a position decided at close t earns from t to t+1), so the move from the
previous day's last close to that first close - the overnight gap, and over a weekend Friday's
last close to Monday's first close - is earned by the previous day's position. The reason: no
bar of the new day has closed when its gap is printed (a stock's opening auction is its first
bar's open, not a close of the grid), so a player deciding once a day, like an entrant, cannot
move before the gap and carries it with the position it already holds (the source documents
say the same of an earnings day: most of its move is in the opening gap, before anyone can
trade on it). Giving the gap to the new day's draw instead would be a player deciding at the
previous close with the next day's position: no lookahead, but another player (on a season of
SPY it moved a track's percentile from 0.10 to 0.34), so the convention is fixed here, once. A
path that starts at its first bar's open (a single-asset track's window: ``luck(...,
opening=...)``) has no day before it: its first draw is held from that open.

Determinism and memory: players come in blocks of :data:`BLOCK` with their own random stream
keyed by ``(seed, block)`` (:func:`player_positions` gives any player's draws), and are scored one
block at a time, so results do not depend on how many players play (player i is player i) and
memory is about ``BLOCK x steps x 8`` bytes for a block's draws plus a few temporaries of about
1 MB (365 daily steps: ~3 MB; a year of hourly bars stepped by the bar: ~72 MB).
Within :func:`shared_players` (a season's build of every asset's table), assets with the same
steps share their players: each block is drawn once, and its cost products and the positions'
powers are computed once, the numbers bit for bit those computed apart (at most
:data:`SHARED_BYTES` are kept; beyond it, each asset computes its own).

Speed and exactness: within a step the position ``w`` is constant, so the step's log growth is
a short polynomial in ``w`` computed once from the path (see :func:`zero_skill_returns`); the
series is truncated with a proven bound, :data:`TOLERANCE` in a player's log equity, and bars
too large for it are multiplied exactly. The result equals the per-bar scorer to about 1e-14
of the final equity (a test holds it to 1e-12); 100,000 players on a year of hourly bars take
well under a second.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from arena.core.sessions import NY
from arena.scoring.scorer import (
    ScorerInputError,
    check_cost_rate,
    rank_score,
    score_arrays,
    sorted_percentile,
)

BLOCK = 1024
DEFAULT_PLAYERS = 20_000
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
DRAWS = ("uniform", "sign")
TOLERANCE = 1e-14  # bound on the series' truncation error in a player's log equity
MAX_TERMS = 16  # most series terms per step; bars that need more are multiplied exactly
SHARED_BYTES = 256 << 20  # most a build keeps of the players shared by its assets


class Distribution:
    """What every luck distribution answers, from its ``returns`` (fractions): quantiles, the luck
    ceiling (95th percentile) and the place of a result among the players."""

    returns: np.ndarray

    @property
    def players(self) -> int:
        return int(self.returns.size)

    def quantile(self, q: float) -> float:
        return float(np.quantile(self.returns, q))

    @property
    def ceiling(self) -> float:
        """The luck ceiling: the 95th percentile of zero-skill returns."""
        return self.quantile(0.95)

    @cached_property
    def _sorted(self) -> np.ndarray:
        return np.sort(np.asarray(self.returns, dtype="float64"))

    def place(self, value: float) -> tuple[float, float]:
        """(percentile, rank score) of a return among the players (sorted once for all)."""
        p = sorted_percentile(value, self._sorted)
        return p, rank_score(p, self.players)

    def summary(self) -> dict[str, object]:
        return {"quantiles": {f"{q:g}": self.quantile(q) for q in QUANTILES},
                "ceiling": self.ceiling, "mean": float(np.mean(self.returns))}


@dataclass(frozen=True)
class LuckResult(Distribution):
    """The luck distribution of one asset over one window."""

    returns: np.ndarray
    seed: int
    cost_rate: float
    draw: str
    step: str
    bars: int
    steps: int

    def as_dict(self) -> dict[str, object]:
        return {"players": self.players, "seed": self.seed, "cost_rate": self.cost_rate,
                "draw": self.draw, "step": self.step, "bars": self.bars, "steps": self.steps,
                **self.summary()}


def decision_steps(timestamps: pd.DatetimeIndex, step: str, calendar: str = "24/7") -> np.ndarray:
    """Step number of each bar: a new decision at the first bar of each day (or every bar).

    Days are UTC dates for crypto and New York session dates for stocks, read from the bars'
    open times. The position of a bar's step is held from that bar's close, so a day's first
    step holds from its first bar's close and the gap before it belongs to the day before (see
    the module's docstring)."""
    if step == "bar":
        return np.arange(len(timestamps))
    if step != "1d":
        raise ScorerInputError(f"unknown step {step!r}; use '1d' or 'bar'")
    ts = pd.DatetimeIndex(timestamps)
    local = ts.tz_convert(NY) if calendar == "XNYS" else ts.tz_convert("UTC")
    days = local.tz_localize(None).normalize().asi8
    return np.concatenate([[0], np.cumsum(days[1:] != days[:-1])]).astype(np.int64)


def _block_draws(seed: int, block: int, n_steps: int, draw: str) -> np.ndarray:
    rng = np.random.default_rng([seed, block])
    if draw == "uniform":
        return rng.uniform(-1.0, 1.0, size=(BLOCK, n_steps))
    return rng.integers(-1, 2, size=(BLOCK, n_steps)).astype("float64")


class _Pass:
    """The players of one pass over a block (``w``: steps x players, a column each) and what
    every asset with the same steps computes from them alike: the product of the cost factors
    (per cost rate) and the positions' powers. ``keep`` says whether a power may be kept for
    the next asset (None: nothing is kept beyond this pass)."""

    def __init__(self, w: np.ndarray, keep: Callable[[int], bool] | None) -> None:
        self.w = w
        self.keep = keep
        self._costs: dict[float, np.ndarray] = {}
        self._powers: list[np.ndarray] = []

    def costs(self, cost_rate: float) -> np.ndarray:
        """Each player's product of ``1 - cost_rate |w_s - w_(s-1)|`` over the steps (a new
        array: the caller may multiply into it)."""
        kept = self._costs.get(cost_rate)
        if kept is None:
            dw = np.empty_like(self.w)
            dw[0] = self.w[0]
            np.subtract(self.w[1:], self.w[:-1], out=dw[1:])
            np.abs(dw, out=dw)
            dw *= -cost_rate
            dw += 1.0
            kept = np.prod(dw, axis=0)
            if self.keep is not None and self.keep(kept.nbytes):
                self._costs[cost_rate] = kept
        return kept.copy()

    def powers(self, terms: int) -> Iterator[np.ndarray]:
        """``w^2 .. w^terms``, each the one before times ``w``, computed once for every asset
        that asks."""
        power = self.w
        for k in range(2, terms + 1):
            if k - 2 < len(self._powers):
                power = self._powers[k - 2]
            else:
                power = power * self.w
                if self.keep is not None and self.keep(power.nbytes):
                    self._powers.append(power)
            yield power


def _passes(seed: int, block: int, n_steps: int, draw: str, rows: int,
            keep: Callable[[int], bool] | None) -> Iterator[_Pass]:
    """The block's players, ``rows`` to a pass, each pass made when it is reached (one pass's
    columns beside the block's draws)."""
    draws = _block_draws(seed, block, n_steps, draw)
    for i0 in range(0, BLOCK, rows):
        yield _Pass(np.ascontiguousarray(draws[i0:i0 + rows].T), keep)


class _Shared:
    """The passes of one build, by (seed, block, steps, draw, players per pass), kept while
    their arrays stay within ``limit`` bytes (beyond it, computed and not kept)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.lock = threading.Lock()
        self._passes: dict[tuple[int, int, int, str, int], list[_Pass]] = {}

    def keep(self, nbytes: int) -> bool:
        with self.lock:
            if self.used + nbytes > self.limit:
                return False
            self.used += nbytes
            return True

    def passes(self, seed: int, block: int, n_steps: int, draw: str, rows: int
               ) -> Iterable[_Pass]:
        key = (seed, block, n_steps, draw, rows)
        with self.lock:
            found = self._passes.get(key)
        if found is not None:
            return found
        if not self.keep(BLOCK * n_steps * 8):  # the block's columns: no room, nothing kept
            return _passes(seed, block, n_steps, draw, rows, None)
        made = list(_passes(seed, block, n_steps, draw, rows, self.keep))
        with self.lock:
            return self._passes.setdefault(key, made)


_SHARED: ContextVar[_Shared | None] = ContextVar("arena_shared_players", default=None)


@contextmanager
def shared_players(limit: int = SHARED_BYTES) -> Iterator[None]:
    """Within the block, the zero-skill players of assets with the same decision steps are
    drawn once and their costs and powers computed once (player i is player i on every asset,
    so the numbers are those computed apart, bit for bit); at most ``limit`` bytes are kept."""
    token = _SHARED.set(_Shared(limit))
    try:
        yield
    finally:
        _SHARED.reset(token)


def _split_bars(r: np.ndarray, bar_steps: np.ndarray) -> tuple[np.ndarray, int]:
    """Which bars go into their step's series (a mask) and how many terms it keeps.

    On ``|w| <= 1`` a bar's ``log(1 + w r)`` (``|r| < 1``) has the Chebyshev series
    ``log((1 + q) / 2) + 2 sum_k (-1)^(k+1) rho^k T_k(w) / k``, ``q = sqrt(1 - r^2)``,
    ``rho = r / (1 + q)`` (about ``r / 2``); as ``|T_k(w)| <= 1``, keeping ``K`` terms errs by at
    most ``e_K = 2 |rho|^(K+1) / ((K+1) (1 - |rho|))`` for every player. For each ``K`` the bars
    with the smallest bounds (ties: the earlier bar first) go into the series while the sum of
    their bounds stays within :data:`TOLERANCE`; the others are multiplied exactly. The ``K``
    kept is the one with the least work per player (about ``2K`` operations per step with
    series bars, 4 per exact bar).

    The bound grows with ``|rho|``, so the bars are ordered by ``|rho|`` once, not once per
    ``K``: when the bounds in that order are non-decreasing (checked), they are the sorted
    bounds, their running sums are those of a sort by bound, and the bars taken are those below
    the last bound taken plus the earliest ones equal to it - what a stable sort by bound takes
    (``tests/scoring`` compares both on many paths)."""
    a = np.abs(r)
    with np.errstate(invalid="ignore"):
        rho = np.where(a < 1.0, a / (1.0 + np.sqrt(np.maximum(1.0 - a * a, 0.0))), np.inf)
    by_rho = np.argsort(rho, kind="stable")
    ordered_steps = bool(np.all(bar_steps[1:] >= bar_steps[:-1]))
    best: tuple[float, np.ndarray, int] | None = None
    for terms in range(1, MAX_TERMS + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            bound = np.where(rho < 1.0, 2.0 * rho ** (terms + 1) / ((terms + 1) * (1.0 - rho)),
                             np.inf)
        ranked = bound[by_rho]
        if not np.all(ranked[1:] >= ranked[:-1]):  # rounding broke the order: sort by bound
            ranked = np.sort(bound, kind="stable")
        n_series = int(np.searchsorted(np.cumsum(ranked), TOLERANCE, side="right"))
        series = np.zeros(a.size, dtype=bool)
        if n_series:
            last = ranked[n_series - 1]
            series = bound < last
            ties = np.flatnonzero(bound == last)[:n_series - int(np.count_nonzero(series))]
            series[ties] = True
        taken = bar_steps[series]
        if ordered_steps:
            distinct = int(taken.size > 0) + int(np.count_nonzero(taken[1:] != taken[:-1]))
        else:
            distinct = np.unique(taken).size
        work = 2.0 * terms * distinct + 4.0 * (a.size - n_series)
        if best is None or work < best[0]:
            best = (work, series, terms)
    assert best is not None
    return best[1], best[2]


def _series_coefficients(r: np.ndarray, where: np.ndarray, n_cols: int, terms: int
                         ) -> tuple[float, np.ndarray]:
    """Power-basis coefficients of each step's truncated Chebyshev series of its log growth:
    (the sum of the constant terms over all steps, ``coef[k-1, j]`` of ``w^k`` for step ``j``)."""
    q = np.sqrt(1.0 - r * r)
    rho = r / (1.0 + q)
    cheb = np.empty((terms + 1, n_cols))
    # log((1 + q) / 2) = log1p(-r^2 / (2 (1 + q))), accurate for small r
    cheb[0] = np.bincount(where, weights=np.log1p(-r * r / (2.0 * (1.0 + q))), minlength=n_cols)
    power = np.ones_like(r)
    for k in range(1, terms + 1):
        power = power * rho
        cheb[k] = (2.0 * (-1.0) ** (k + 1) / k) * np.bincount(where, weights=power,
                                                              minlength=n_cols)
    to_power = np.zeros((terms + 1, terms + 1))  # column k: T_k in the power basis
    for k in range(terms + 1):
        to_power[:k + 1, k] = np.polynomial.chebyshev.cheb2poly(np.eye(terms + 1)[k])[:k + 1]
    coef = to_power @ cheb
    return float(coef[0].sum()), coef[1:]


def zero_skill_returns(closes: np.ndarray, steps: np.ndarray, *, players: int = DEFAULT_PLAYERS,
                       seed: int = 0, cost_rate: float = 0.0, draw: str = "uniform",
                       chunk_players: int = 4 * BLOCK) -> np.ndarray:
    """Final returns of ``players`` zero-skill players on ``closes`` (one decision per step).

    Equal to the plain scorer on each player's per-bar positions (:func:`score_player`) within
    :data:`TOLERANCE` plus rounding, relative to the final equity. A player's equity is the
    product of its cost factors ``1 - cost_rate |w_s - w_(s-1)|`` over the steps and of
    ``prod_t (1 + w_s r_t)`` over the bars ``t`` each step's position earns. Within a step
    ``w_s`` is constant, so the step's log growth ``sum_t log(1 + w_s r_t)`` is one short
    polynomial in ``w_s`` whose coefficients (from power sums over the step's bars, see
    :func:`_split_bars` and :func:`_series_coefficients`) are computed once for all players: per
    player a step costs a few operations instead of one product per bar. Bars whose returns are
    too large for a short series are multiplied exactly, per bar. Players are drawn and scored
    one block at a time (within :func:`shared_players`, drawn once for every asset with the same
    steps); ``chunk_players`` is accepted for compatibility and changes nothing."""
    c = np.asarray(closes, dtype="float64")
    steps = np.asarray(steps, dtype=np.int64)
    if draw not in DRAWS:
        raise ScorerInputError(f"unknown draw {draw!r}; use one of {', '.join(DRAWS)}")
    if c.size < 2 or steps.shape != c.shape:
        raise ScorerInputError("need at least two bars and one step number per bar")
    if np.any(steps < 0):
        raise ScorerInputError("step numbers must be non-negative")
    if not np.all(np.isfinite(c)) or np.any(c <= 0):
        raise ScorerInputError("prices must be positive and finite")
    if players < 1:
        raise ScorerInputError("need at least one player")
    check_cost_rate(cost_rate)
    n_steps = int(steps.max()) + 1
    r_next = c[1:] / c[:-1] - 1.0  # earned by the position held at the previous close
    bar_steps = steps[:-1]  # the step whose position earns each of those returns
    series, terms = _split_bars(r_next, bar_steps)
    series_cols = np.unique(bar_steps[series])  # steps with series bars
    constant, coef = _series_coefficients(
        r_next[series], np.searchsorted(series_cols, bar_steps[series]), series_cols.size, terms)
    exact_cols = bar_steps[~series]
    exact_r = r_next[~series][:, None]
    all_cols = series_cols.size == n_steps
    # players per pass: each (steps x players) temporary stays within about 1 MB
    rows = min(BLOCK, max(8, (1 << 17) // max(1, n_steps, exact_cols.size)))
    blocks = -(-players // BLOCK)
    shared = _SHARED.get()
    out = np.empty(blocks * BLOCK)
    for block in range(blocks):
        passes = (shared.passes(seed, block, n_steps, draw, rows) if shared is not None
                  else _passes(seed, block, n_steps, draw, rows, None))
        for i, cols in enumerate(passes):
            w = cols.w  # one column per player: reductions over steps are of whole rows
            # costs: paid at the first bar of each step on the change from the previous step
            growth = cols.costs(cost_rate) if cost_rate else np.ones(w.shape[1])
            if series_cols.size:
                if all_cols:
                    log_growth = coef[0] @ w  # sum over steps of a_k(step) w^k, k = 1 .. K
                    for k, power in enumerate(cols.powers(terms), start=1):
                        log_growth += coef[k] @ power
                else:
                    ws = w[series_cols]
                    log_growth = coef[0] @ ws
                    power = ws
                    for k in range(1, terms):
                        power = power * ws
                        log_growth += coef[k] @ power
                growth = growth * np.exp(log_growth + constant)
            if exact_cols.size:
                held = w[exact_cols]  # position at each close that earns the next bar
                held *= exact_r
                held += 1.0
                growth *= np.prod(held, axis=0)
            start = block * BLOCK + i * rows
            out[start:start + w.shape[1]] = growth - 1.0
    return out[:players]


def luck(closes: pd.Series, *, players: int = DEFAULT_PLAYERS, seed: int = 0,
         cost_rate: float = 0.0, draw: str = "uniform", step: str = "1d",
         calendar: str = "24/7", chunk_players: int = 4 * BLOCK,
         opening: float | None = None) -> LuckResult:
    """The luck distribution on ``closes`` (a Series indexed by bar open times, UTC). Callers
    run :func:`arena.scoring.self_check.ensure_self_checked` first.

    Without ``opening`` the path starts at the first bar's close. With it (the first bar's open
    price, :func:`opening_path`) the path starts at that open, as a single-asset track's window
    does: the first decision is held from the open and earns the first bar's move as well."""
    prices, steps = opening_path(closes, step, calendar, opening)
    returns = zero_skill_returns(prices, steps, players=players, seed=seed,
                                 cost_rate=cost_rate, draw=draw, chunk_players=chunk_players)
    return LuckResult(returns, seed, cost_rate, draw, step, len(closes), int(steps.max()) + 1)


def opening_path(closes: pd.Series, step: str = "1d", calendar: str = "24/7",
                 opening: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(prices, decision step of each) of the players' path on ``closes``: the closes and
    their :func:`decision_steps`, led by ``opening`` when one is given. The opening price
    shares the first bar's step (the first day's draw is held from the open; with
    ``step="bar"`` it is a decision of its own, every bar's step moving one on)."""
    steps = decision_steps(pd.DatetimeIndex(closes.index), step, calendar)
    prices = closes.to_numpy(dtype="float64")
    if opening is None:
        return prices, steps
    shift = 1 if step == "bar" else 0
    return (np.concatenate([[float(opening)], prices]),
            np.concatenate([steps[:1], steps + shift]))


def player_positions(n_bars_steps: np.ndarray, player: int, *, seed: int = 0,
                     draw: str = "uniform") -> np.ndarray:
    """The position series (per bar) of one zero-skill player: the same draws as the vectorised
    simulation, for scoring that player with the plain scorer (tests, inspection)."""
    steps = np.asarray(n_bars_steps, dtype=np.int64)
    block, row = divmod(player, BLOCK)
    return _block_draws(seed, block, int(steps.max()) + 1, draw)[row, steps]


def score_player(closes: np.ndarray, steps: np.ndarray, player: int, *, seed: int = 0,
                 cost_rate: float = 0.0, draw: str = "uniform") -> float:
    """One player's return through the plain scorer (the reference the simulation must match)."""
    w = player_positions(steps, player, seed=seed, draw=draw)
    return float(score_arrays(closes, w, cost_rate)[0][-1] - 1.0)
