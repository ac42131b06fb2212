"""The one position scorer every return in the product goes through, and its self-check.

Conventions (fractions, not percent):

* ``closes`` are bar-aligned close prices; ``positions[t]`` is the position in [-1, +1] decided at
  the close of bar t (values outside are clipped; NaN means "no valid position" and is flat). It
  earns from bar t+1 on: equity is multiplied by ``1 + w[t] * (closes[t+1] / closes[t] - 1)``.
* Each change of position costs ``|w[t] - w[t-1]| * cost_rate`` of equity, paid at the close of
  bar t (the position before the first bar is 0). The final position is not liquidated.
* Equity starts at 1.0; ``equity[t]`` is its value at the close of bar t, after that bar's cost.

A scorer bug returns a plausible number, not an exception, so :mod:`arena.scoring.self_check`
verifies it against closed-form cases before every scoring run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.core.errors import UnusableInput
from arena.core.universe import Asset

COST_RATES = {"crypto": 0.0006, "stock": 0.0002, "etf": 0.0002}  # per unit of |Δw|


def default_cost_rate(calendar: str) -> float:
    """The default cost rate of an asset on ``calendar``: crypto around the clock, else stocks."""
    return COST_RATES["crypto" if calendar == "24/7" else "stock"]


def asset_cost_rate(asset: Asset) -> float:
    """What ``asset``'s track and zero-skill players pay per unit of position change: its
    contest's rate, else :func:`default_cost_rate` of its calendar."""
    return default_cost_rate(asset.calendar) if asset.cost_rate is None else asset.cost_rate


@dataclass(frozen=True)
class ScoreResult:
    """``total_return``: final equity - 1; ``turnover``: sum of |Δw| (the first entry included);
    ``fees``: cost paid, in units of the starting equity; ``valid_share``: share of bars with a
    valid (non-NaN) position; ``equity``: the curve at each bar's close."""

    total_return: float
    equity: pd.Series
    turnover: float
    fees: float
    valid_share: float

    def as_dict(self) -> dict[str, float]:
        return {"return": self.total_return, "turnover": self.turnover, "fees": self.fees,
                "valid_share": self.valid_share, "bars": len(self.equity)}


class ScorerInputError(UnusableInput, ValueError):
    """Prices or positions that cannot be scored (named)."""


def check_cost_rate(cost_rate: float) -> None:
    """A cost per unit of |Δw| is a fraction in [0, 1): 0.0006 is 0.06%."""
    if not (math.isfinite(cost_rate) and 0.0 <= cost_rate < 1.0):
        raise ScorerInputError(f"cost rate {cost_rate} must be a fraction in [0, 1) "
                               "(0.0006 means 0.06%)")


def score_arrays(closes: np.ndarray, positions: np.ndarray, cost_rate: float
                 ) -> tuple[np.ndarray, float, float, float]:
    """Core of :func:`score` on plain arrays: (equity curve, turnover, fees, valid share)."""
    c = np.asarray(closes, dtype="float64")
    w_raw = np.asarray(positions, dtype="float64")
    if c.ndim != 1 or c.shape != w_raw.shape:
        raise ScorerInputError(f"{c.shape[0] if c.ndim else 0} prices but {w_raw.size} positions")
    if c.size == 0:
        raise ScorerInputError("no bars to score")
    if not np.all(np.isfinite(c)) or np.any(c <= 0):
        raise ScorerInputError("prices must be positive and finite")
    check_cost_rate(cost_rate)
    valid = np.isfinite(w_raw)
    w = np.clip(np.where(valid, w_raw, 0.0), -1.0, 1.0)
    dw = np.abs(np.diff(w, prepend=0.0))
    growth = np.ones_like(c)
    growth[1:] = 1.0 + w[:-1] * (c[1:] / c[:-1] - 1.0)
    cost = 1.0 - cost_rate * dw
    equity = np.cumprod(growth * cost)
    before_cost = equity / cost
    fees = float(np.sum(before_cost * cost_rate * dw))
    return equity, float(dw.sum()), fees, float(valid.mean())


def score(closes: pd.Series, positions: pd.Series, cost_rate: float) -> ScoreResult:
    """Score a position series against bar-aligned closes (same index, same length)."""
    if len(closes) != len(positions) or not closes.index.equals(positions.index):
        raise ScorerInputError("closes and positions must share one index (bar-aligned)")
    equity, turnover, fees, valid = score_arrays(closes.to_numpy(), positions.to_numpy(), cost_rate)
    curve = pd.Series(equity, index=closes.index, name="equity")
    return ScoreResult(float(equity[-1] - 1.0), curve, turnover, fees, valid)


# ----------------------------------------------------------------------------- rank score
def percentile(value: float, distribution: np.ndarray) -> float:
    """Share of ``distribution`` below ``value``, ties counted half (mid-rank), in [0, 1]."""
    return sorted_percentile(value, np.sort(np.asarray(distribution, dtype="float64")))


def sorted_percentile(value: float, d: np.ndarray) -> float:
    """:func:`percentile` among ``d``, already sorted (float64): a distribution that places
    many results sorts once."""
    if d.size == 0:
        raise ScorerInputError("empty distribution")
    if not math.isfinite(value) or not np.all(np.isfinite(d)):
        raise ScorerInputError(f"cannot rank a non-finite return ({value}) or among non-finite ones")
    below = np.searchsorted(d, value, side="left")
    at_or_below = np.searchsorted(d, value, side="right")
    return float((below + 0.5 * (at_or_below - below)) / d.size)


def rank_score(p: float, n_players: int) -> float:
    """``-log10(1 - p)``, with ``p`` capped at ``n / (n + 1)``: beating all ``n`` players scores
    ``log10(n + 1)`` (4.3 for 20,000), never infinity. 2.0 = luck reaches you once in a hundred."""
    if not 0.0 <= p <= 1.0:
        raise ScorerInputError(f"percentile {p} is not in [0, 1]")
    capped = min(p, n_players / (n_players + 1.0))
    return float(-math.log10(1.0 - capped))


# ----------------------------------------------------------------------------- self-check
