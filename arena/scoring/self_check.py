"""The scorer's self-check: closed-form cases of SPEC §4 and synthetic paths with analytic answers.

A scorer bug returns a plausible number, not an exception. :func:`self_check` runs every case once
(the zero-skill cases through the simulation the luck ruler really uses) and raises
:class:`ScorerSelfCheckError` naming the failures; :func:`ensure_self_checked` runs it once per
process, before the first scoring run (``arena score``, ``arena luck``, the rules table).
"""

from __future__ import annotations

import math

import numpy as np

from arena.core.errors import Failed
from arena.scoring.asset_luck import score_player, zero_skill_returns
from arena.scoring.scorer import percentile, rank_score, score_arrays


class ScorerSelfCheckError(Failed, RuntimeError):
    """The scorer failed one of its closed-form cases: no score may be trusted."""


def _cases() -> list[tuple[str, bool]]:
    rng = np.random.default_rng(7)
    c = 100.0 * np.cumprod(1.0 + rng.normal(0.0, 0.02, 250))
    r = c[1:] / c[:-1] - 1.0
    n = len(c)

    def ret(w, rate=0.0, prices=c):
        return score_arrays(prices, np.asarray(w, dtype=float), rate)[0][-1] - 1.0

    jump = np.array([100.0, 100.0, 200.0, 200.0])
    saw = 100.0 * np.cumprod(np.r_[1.0, np.tile([1.1, 1 / 1.1], 20)])  # +10%, back, ...
    saw_r = saw[1:] / saw[:-1] - 1.0
    up = 100.0 * 1.01 ** np.arange(101)
    down = 100.0 * 0.99 ** np.arange(101)
    random_w = rng.uniform(-1, 1, n)
    returns = np.sort(rng.normal(0, 0.1, 1001))
    scores = [rank_score(percentile(x, returns), returns.size) for x in returns]
    steps = np.arange(n) // 5
    ruler = np.sort(zero_skill_returns(c, steps, players=4096, seed=1, cost_rate=0.0006))
    fresh = zero_skill_returns(c, steps, players=1024, seed=2, cost_rate=0.0006)
    below, upto = np.searchsorted(ruler, fresh), np.searchsorted(ruler, fresh, side="right")
    fresh_scores = [rank_score(p, ruler.size) for p in (below + 0.5 * (upto - below)) / ruler.size]
    return [
        ("position 0 returns exactly 0", ret(np.zeros(n), 0.001) == 0.0),
        ("position +1 equals buy-and-hold at zero cost", math.isclose(
            ret(np.ones(n)), c[-1] / c[0] - 1.0, rel_tol=1e-12)),
        ("position -1 compounds inversely bar by bar", math.isclose(
            ret(-np.ones(n)), float(np.prod(1.0 - r) - 1.0), rel_tol=1e-12)
         and not math.isclose(ret(-np.ones(n)), -(c[-1] / c[0] - 1.0), rel_tol=1e-6)),
        ("a position of 2.0 is clipped to 1.0", ret(np.full(n, 2.0)) == ret(np.ones(n))),
        ("no lookahead: a position set on the jump bar does not earn the jump",
         ret([0, 0, 1, 1], prices=jump) == 0.0 and ret([0, 1, 1, 1], prices=jump) == 1.0),
        ("costs reduce the return", ret(random_w, 0.0006) < ret(random_w, 0.0)),
        ("the rank score is monotonic in return", bool(np.all(np.diff(scores) >= 0))),
        ("zero-skill players equal the plain scorer; a median one scores about 0.30", all(
            math.isclose(1.0 + fresh[p], 1.0 + score_player(c, steps, p, seed=2, cost_rate=0.0006),
                         rel_tol=1e-12) for p in (0, 511, 1023)) and math.isclose(
            float(np.median(fresh_scores)), -math.log10(0.5), abs_tol=0.04)),
        ("a flat path returns exactly 0", ret(random_w, prices=np.full(n, 50.0)) == 0.0),
        ("a sawtooth: held long it returns 0 over whole teeth; long up-legs and short "
         "down-legs earn every move", math.isclose(ret(np.ones(len(saw)), prices=saw), 0.0,
                                                   abs_tol=1e-12)
         and math.isclose(ret(np.where(np.arange(len(saw)) % 2 == 0, 1.0, -1.0), prices=saw),
                          float(np.prod(1 + np.abs(saw_r)) - 1), rel_tol=1e-12)),
        ("symmetric trends: long up = short down = 1.01^100 - 1", math.isclose(
            ret(np.ones(101), prices=up), 1.01**100 - 1, rel_tol=1e-12)
         and math.isclose(ret(-np.ones(101), prices=down), 1.01**100 - 1, rel_tol=1e-12)),
    ]


def self_check() -> list[str]:
    """Run every closed-form case; raise :class:`ScorerSelfCheckError` naming the failures."""
    cases = _cases()
    failed = [name for name, ok in cases if not ok]
    if failed:
        raise ScorerSelfCheckError("scorer self-check failed, scoring stopped: " + "; ".join(failed))
    return [name for name, _ in cases]


_CHECKED = False


def ensure_self_checked() -> None:
    """Run :func:`self_check` once per process, before the first scoring run."""
    global _CHECKED
    if not _CHECKED:
        self_check()
        _CHECKED = True
