"""Zero-skill players: what luck achieves on the path an asset actually took.

Each player holds a random position, redrawn at every *decision step* (daily by default), on the
asset's real bars, charged the same costs and scored by the same scorer as every contestant. The
distribution of their final returns is the luck distribution; its 95th percentile is the **luck
ceiling**. The method is fixed before a season; the numbers are rebuilt on the path it took.

Process (parameters): ``draw="uniform"`` - a fresh position uniform on [-1, +1] at each step
(``"sign"`` draws -1/0/+1 instead); ``step`` - the decision step (``"1d"``: one decision per UTC day
for crypto, per session for stocks; ``"bar"``: every bar). Costs: ``|Δw| x cost_rate`` at each
change, as in :mod:`arena.scoring.scorer`.

Determinism and memory: players come in blocks of :data:`BLOCK` with their own random stream
keyed by ``(seed, block)``, so results do not depend on ``chunk_players`` (a multiple of BLOCK),
which only bounds memory: about ``3 x chunk_players x bars x 8`` bytes (4,096 players x 2,928
hourly bars: ~290 MB).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.core.sessions import NY
from arena.scoring.scorer import (
    ScorerInputError,
    check_cost_rate,
    percentile,
    rank_score,
    score_arrays,
)

BLOCK = 1024
DEFAULT_PLAYERS = 20_000
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
DRAWS = ("uniform", "sign")


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

    def place(self, value: float) -> tuple[float, float]:
        """(percentile, rank score) of a return among the players."""
        p = percentile(value, self.returns)
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

    Days are UTC dates for crypto and New York session dates for stocks."""
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


def zero_skill_returns(closes: np.ndarray, steps: np.ndarray, *, players: int = DEFAULT_PLAYERS,
                       seed: int = 0, cost_rate: float = 0.0, draw: str = "uniform",
                       chunk_players: int = 4 * BLOCK) -> np.ndarray:
    """Final returns of ``players`` zero-skill players on ``closes`` (one decision per step)."""
    c = np.asarray(closes, dtype="float64")
    steps = np.asarray(steps, dtype=np.int64)
    if draw not in DRAWS:
        raise ScorerInputError(f"unknown draw {draw!r}; use one of {', '.join(DRAWS)}")
    if c.size < 2 or steps.shape != c.shape:
        raise ScorerInputError("need at least two bars and one step number per bar")
    if not np.all(np.isfinite(c)) or np.any(c <= 0):
        raise ScorerInputError("prices must be positive and finite")
    if players < 1:
        raise ScorerInputError("need at least one player")
    check_cost_rate(cost_rate)
    n_steps = int(steps.max()) + 1
    r_next = c[1:] / c[:-1] - 1.0  # earned by the position held at the previous close
    blocks = -(-players // BLOCK)
    per_chunk = max(1, chunk_players // BLOCK)
    out = np.empty(blocks * BLOCK)
    for b0 in range(0, blocks, per_chunk):
        b1 = min(blocks, b0 + per_chunk)
        draws = np.vstack([_block_draws(seed, b, n_steps, draw) for b in range(b0, b1)])
        # costs: paid at the first bar of each step on the change from the previous step
        change = np.abs(np.diff(draws, axis=1, prepend=0.0))
        growth = np.prod(1.0 - cost_rate * change, axis=1)
        held = draws[:, steps[:-1]]  # position at each close that earns the next bar
        held *= r_next
        held += 1.0
        growth *= np.prod(held, axis=1)
        out[b0 * BLOCK:b1 * BLOCK] = growth - 1.0
        del held, draws, change
    return out[:players]


def luck(closes: pd.Series, *, players: int = DEFAULT_PLAYERS, seed: int = 0,
         cost_rate: float = 0.0, draw: str = "uniform", step: str = "1d",
         calendar: str = "24/7", chunk_players: int = 4 * BLOCK) -> LuckResult:
    """The luck distribution on ``closes`` (a Series indexed by bar open times, UTC). Callers
    run :func:`arena.scoring.self_check.ensure_self_checked` first."""
    steps = decision_steps(pd.DatetimeIndex(closes.index), step, calendar)
    returns = zero_skill_returns(closes.to_numpy(), steps, players=players, seed=seed,
                                 cost_rate=cost_rate, draw=draw, chunk_players=chunk_players)
    return LuckResult(returns, seed, cost_rate, draw, step, len(closes), int(steps.max()) + 1)


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
