"""The verdict on skill: a contestant's luck percentiles over several seasons, combined into one
test of "no skill" - pure functions on the standard library.

Each season places a contestant among the arena's zero-skill players (the leaderboard's
``zero_skill_percentile``, a fraction: the share of the players whose return is below its own,
ties counted half). Without skill, the contestant is one more zero-skill player, so its
percentile is a uniform draw, season after season. The verdict asks whether the draws a
contestant (or a model, across its replicated instances) made are too high for that:

* **The percentile of one season**, on the mid-rank convention (:func:`mid_rank`): among its
  ``n`` players, a contestant with ``b`` of them below it (ties half; ``b = percentile * n``)
  stands at ``(b + 0.5) / (n + 1)`` among the ``n + 1`` - the middle of its rank's bin. A
  contestant that beat every player is at ``(n + 0.5) / (n + 1)``, never at 1 (which would be an
  infinite z); 50% stays exactly 50% (the convention is symmetric, ``u(1 - p) = 1 - u(p)``).
* **Stouffer's Z, the primary test** (:func:`stouffer`): ``z_i = Phi^-1(u_i)`` per season,
  ``Z = sum z_i / sqrt(k)``, one-sided p-value ``1 - Phi(Z)``. A good season and a bad one
  cancel, as they should for a claim of consistent skill.
* **Fisher's method, the second** (:func:`fisher`), shown beside it, never deciding:
  ``X = -2 sum ln(1 - u_i)`` against chi-squared with ``2k`` degrees of freedom. It answers to
  one extreme season and is never pulled down by bad ones, so it flags a contestant with one
  great season among poor ones: too lenient a reading of "skill".
* **Holm-Bonferroni** (:func:`holm`) across the contestants tested together (the family: those
  with at least :data:`MIN_SEASONS` seasons), so that, without skill anywhere, the chance of
  flagging anyone at all stays at most :data:`ALPHA` (the family-wise error rate), whatever the
  number of contestants.
* **The verdict in words** (:func:`verdicts`): :data:`EVIDENCE` when the Holm-adjusted p-value is
  at most :data:`ALPHA`, :data:`NOT_DISTINGUISHABLE` otherwise, :data:`TOO_FEW` with fewer than
  :data:`MIN_SEASONS` seasons (then the contestant is not in the family).

A model's replicated instances each count: every (instance, season) percentile is one draw of
the sum. That assumes the instances are independent draws under "no skill" (their own seeds
and temperatures, as the replicates record); the seasons the verdict rests on are counted apart
(``seasons``), and the minimum is a number of seasons, not of draws, since the instances of one
season share its market.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

ALPHA = 0.05  # the family-wise error rate of the verdict
MIN_SEASONS = 2  # fewer seasons: "too few seasons", not tested
EVIDENCE = f"evidence of skill at {ALPHA:.0%} after correction"
NOT_DISTINGUISHABLE = "not distinguishable from luck"
TOO_FEW = "too few seasons"
VERDICTS = (EVIDENCE, NOT_DISTINGUISHABLE, TOO_FEW)
METHOD = ("Stouffer's Z over the per-season luck percentiles (mid-rank among the season's "
          "zero-skill players), one-sided; Holm-Bonferroni across the {family} tested; "
          "evidence when the adjusted p-value is at most {alpha:.0%}; Fisher's method shown "
          "beside it; at least {minimum} seasons")

_NORMAL = NormalDist()


class VerdictInputError(ValueError):
    """A percentile, a player count or a p-value the verdict cannot use (named)."""


def mid_rank(percentile: float, players: int) -> float:
    """The percentile of one season on the mid-rank convention: ``(percentile * players + 0.5)
    / (players + 1)``, strictly inside (0, 1) (see the module docstring). ``percentile`` is the
    leaderboard's fraction in [0, 1], ``players`` the zero-skill players it was placed among."""
    if not (isinstance(players, int) or float(players).is_integer()) or players < 1:
        raise VerdictInputError(f"players must be a whole number of at least 1, not {players}")
    if not (math.isfinite(percentile) and 0.0 <= percentile <= 1.0):
        raise VerdictInputError(f"percentile {percentile} is not a fraction in [0, 1]")
    return (percentile * players + 0.5) / (players + 1)


def _inside(percentiles: Iterable[float]) -> list[float]:
    values = [float(u) for u in percentiles]
    if not values:
        raise VerdictInputError("no percentile to combine")
    for u in values:
        if not (math.isfinite(u) and 0.0 < u < 1.0):
            raise VerdictInputError(
                f"percentile {u} is not strictly inside (0, 1): place it among its players "
                "with mid_rank first")
    return values


def stouffer(percentiles: Iterable[float]) -> tuple[float, float]:
    """Stouffer's Z of percentiles strictly inside (0, 1), and its one-sided p-value
    ``1 - Phi(Z)`` (computed as ``Phi(-Z)``, exact far in the tail)."""
    values = _inside(percentiles)
    z = sum(_NORMAL.inv_cdf(u) for u in values) / math.sqrt(len(values))
    return z, _NORMAL.cdf(-z)


def chi2_sf_even(x: float, dof: int) -> float:
    """The survival function of chi-squared with an even number of degrees of freedom ``dof``
    at ``x``: ``exp(-x/2) * sum_{j<dof/2} (x/2)^j / j!`` (a closed form)."""
    if dof < 2 or dof % 2:
        raise VerdictInputError(f"degrees of freedom must be even and positive, not {dof}")
    if x <= 0.0:
        return 1.0
    half = x / 2.0
    term, total = 1.0, 1.0
    for j in range(1, dof // 2):
        term *= half / j
        total += term
    # exp(-half) * total, in logs: both may leave the range of a float on their own
    return min(1.0, math.exp(math.log(total) - half))


def fisher(percentiles: Iterable[float]) -> tuple[float, float]:
    """Fisher's statistic ``-2 sum ln(1 - u_i)`` of percentiles strictly inside (0, 1) (each
    season's own p-value of "no skill" is ``1 - u_i``) and its p-value, chi-squared with
    ``2k`` degrees of freedom."""
    values = _inside(percentiles)
    statistic = -2.0 * sum(math.log1p(-u) for u in values)
    return statistic, chi2_sf_even(statistic, 2 * len(values))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given: sorted ascending, the i-th
    smallest (from 0) is ``max_{j <= i} min(1, (m - j) * p_(j))``; a hypothesis is rejected at
    level alpha exactly when its adjusted p-value is at most alpha (Holm's step-down)."""
    m = len(p_values)
    for p in p_values:
        if not (math.isfinite(p) and 0.0 <= p <= 1.0):
            raise VerdictInputError(f"p-value {p} is not in [0, 1]")
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Sample:
    """One season's place of one contestant: its season, the leaderboard's percentile (a
    fraction in [0, 1]) and the zero-skill players it was placed among (None: the percentile is
    already strictly inside (0, 1), taken as it is)."""

    season: str
    percentile: float
    players: int | None = None

    @property
    def placed(self) -> float:
        """The percentile on the mid-rank convention (:func:`mid_rank`)."""
        if self.players is None:
            return self.percentile
        return mid_rank(self.percentile, self.players)


@dataclass(frozen=True)
class Verdict:
    """The verdict of one contestant (or model): the seasons and draws it rests on, Stouffer's
    Z and p-value (primary), Fisher's statistic and p-value (second), the Holm-adjusted p-value
    and the family's size (None, 0 when it was not tested: too few seasons), and the words."""

    name: str
    seasons: int
    draws: int
    z: float
    p_value: float
    fisher_statistic: float
    fisher_p_value: float
    adjusted_p_value: float | None
    family: int
    verdict: str

    @property
    def tested(self) -> bool:
        return self.adjusted_p_value is not None


def verdicts(samples: Mapping[str, Sequence[Sample]], *, alpha: float = ALPHA,
             min_seasons: int = MIN_SEASONS) -> list[Verdict]:
    """The verdict of each name of ``samples`` (its seasons' places, each instance's of a
    replicated model), as one family for Holm-Bonferroni: the names with at least
    ``min_seasons`` distinct seasons. In the order of ``samples``; a name without any sample is
    refused (it has no verdict, not "too few seasons")."""
    if not 0.0 < alpha < 1.0:
        raise VerdictInputError(f"alpha must be inside (0, 1), not {alpha}")
    if min_seasons < 1:
        raise VerdictInputError(f"the minimum of seasons must be at least 1, not {min_seasons}")
    combined = {}
    for name, drawn in samples.items():
        if not drawn:
            raise VerdictInputError(f"{name}: no season to combine")
        placed = [s.placed for s in drawn]
        combined[name] = (len({s.season for s in drawn}), len(placed), *stouffer(placed),
                          *fisher(placed))
    tested = [n for n, c in combined.items() if c[0] >= min_seasons]
    adjusted = dict(zip(tested, holm([combined[n][3] for n in tested]), strict=True))
    evidence = EVIDENCE if alpha == ALPHA else f"evidence of skill at {alpha:.0%} after correction"
    out = []
    for name, (seasons, draws, z, p, chi2, fisher_p) in combined.items():
        adj = adjusted.get(name)
        words = TOO_FEW if adj is None else evidence if adj <= alpha else NOT_DISTINGUISHABLE
        out.append(Verdict(name, seasons, draws, z, p, chi2, fisher_p, adj,
                           len(tested) if adj is not None else 0, words))
    return out


def method(family: str, *, alpha: float = ALPHA, min_seasons: int = MIN_SEASONS) -> str:
    """How a verdict was computed, in one sentence (``family``: what was tested together, e.g.
    "12 contestants")."""
    return METHOD.format(family=family, alpha=alpha, minimum=min_seasons)
