"""The verdict on skill: a contestant's places among its matched players over several seasons,
combined into one test of "no skill" - pure functions on the standard library and NumPy.

**The null hypothesis.** The contestant (or a replicated model, its instances together) chose its
assets no better than a random relabelling of them: every season, its book is one draw among its
matched players (:mod:`arena.scoring.matched`: the same positions, sides, sizes, timing, holding
periods and fees, on assets relabelled at random). Market direction and exposure are held fixed,
so a contestant that is merely long in a rising market is not "skilled"; what is tested is the
choice of what to hold, and when it held it as it did.

* **A season's place** (:func:`matched_ranks`): the unit's return and its ``N`` players' returns
  ranked together, ties sharing their mean rank ``r`` (1 the lowest), each at ``(r - 0.5) /
  (N + 1)``: the mid-rank convention, strictly inside (0, 1). For the unit itself this is
  :func:`mid_rank` of its percentile (the share of players below it, ties half).
* **Stouffer's Z** over the seasons, ``Z = sum Phi^-1(u_s) / sqrt(k)``, the statistic; a good
  season and a bad one cancel, as they should for a claim of consistent skill.
* **Its p-value comes from the matched players themselves** (:func:`matched_stouffer`): player
  ``d`` relabels the same way in every season, so its own Z over the same seasons is a draw of
  the unit's Z under the null - including whatever ties its seasons together (an asset that beats
  the others year after year, held by a contestant that never changes it). The p-value is the
  share of the ``N + 1`` (the players and the unit) whose Z is at least the unit's: at least
  ``1 / (N + 1)``. The normal p-value ``1 - Phi(Z)`` is shown beside it (:func:`stouffer`), which
  assumes independent seasons.
* **Fisher's method** (:func:`fisher`) beside it, never deciding: it answers to one extreme season.
* **Holm-Bonferroni** (:func:`holm`) across the units tested together (the family: those with at
  least :data:`MIN_SEASONS` seasons with a place), so that, without skill anywhere, the chance of
  flagging anyone stays at most :data:`ALPHA`. Beside it, Benjamini-Hochberg's adjusted p-values
  (:func:`benjamini_hochberg`: the false discovery rate across the family) and Storey's estimate of
  the share of the family with skill (:func:`skill_share`, as Barras, Scaillet and Wermers read
  fund managers: noisy with few contestants, an estimate, never a verdict).
* **The verdict in words** (:func:`verdicts`): :data:`EVIDENCE` when the Holm-adjusted p-value is
  at most :data:`ALPHA`, :data:`NOT_DISTINGUISHABLE` otherwise, :data:`TOO_FEW` with fewer than
  :data:`MIN_SEASONS` seasons.
* **Power in words** (:func:`power`, :func:`detectable`, :func:`power_words`): how large an edge
  the unit's seasons could have detected, for an edge that puts it at a given percentile in a
  typical season (its per-season z normal around ``Phi^-1(percentile)``), against Holm's first
  threshold ``alpha / family`` (a lower bound of Holm's power).

A replicated model is **one draw per season**: the mean return of its instances, placed among the
means of matched players that relabel all its instances together (instances that agree hold the
same asset in the player too), so the verdict holds whatever the correlation between its instances.
A season in which a unit traded nothing has no place: it is left out of the unit's seasons.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

ALPHA = 0.05  # the family-wise error rate of the verdict
MIN_SEASONS = 2  # fewer seasons: "too few seasons", not tested
EVIDENCE = f"evidence of skill at {ALPHA:.0%} after correction"
NOT_DISTINGUISHABLE = "not distinguishable from luck"
TOO_FEW = "too few seasons"
VERDICTS = (EVIDENCE, NOT_DISTINGUISHABLE, TOO_FEW)
NULL = ("no skill: each season its book is one draw among its matched players - the same "
        "positions, sides, sizes, timing, holding periods and fees on assets relabelled at "
        "random - so market direction and exposure are held fixed and what is tested is the "
        "choice of assets")
METHOD = ("Stouffer's Z over the per-season skill percentiles (mid-rank among the season's "
          "matched players), its one-sided p-value the share of the matched players whose own Z "
          "over the same seasons is as high (each relabels the same way every season); "
          "Holm-Bonferroni across the {family} tested; evidence when the adjusted p-value is at "
          "most {alpha:.0%}; Benjamini-Hochberg, the normal p-value and Fisher's method shown "
          "beside it; at least {minimum} seasons")
TYPICAL = 0.90  # the edge the power sentence speaks of: the 90th percentile in a typical season
STOREY_LAMBDA = 0.5
SHARE_FAMILY = 10  # fewer tested units: no estimate of the share with skill (too noisy)

_NORMAL = NormalDist()


class VerdictInputError(ValueError):
    """A percentile, a player count, a season or a p-value the verdict cannot use (named)."""


# --------------------------------------------------------------------------------- one season
def mid_rank(percentile: float, players: int) -> float:
    """The percentile of one season on the mid-rank convention: ``(percentile * players + 0.5)
    / (players + 1)``, strictly inside (0, 1). ``percentile`` is the leaderboard's fraction in
    [0, 1] (players below, ties half), ``players`` the players it was placed among."""
    if not (isinstance(players, int) or float(players).is_integer()) or players < 1:
        raise VerdictInputError(f"players must be a whole number of at least 1, not {players}")
    if not (math.isfinite(percentile) and 0.0 <= percentile <= 1.0):
        raise VerdictInputError(f"percentile {percentile} is not a fraction in [0, 1]")
    return (percentile * players + 0.5) / (players + 1)


# returns are compared at 10 decimals ($0.000001 on $10,000): a matched player on the unit's own
# asset computes the same return in another order of sums, a last bit apart - a tie, not a place
TIE_DECIMALS = 10


def _mean_ranks(values: np.ndarray) -> np.ndarray:
    """The rank of each value (1 the lowest), ties - values equal at :data:`TIE_DECIMALS`
    decimals - sharing their mean rank."""
    _, inverse, counts = np.unique(np.round(values, TIE_DECIMALS), return_inverse=True,
                                   return_counts=True)
    below = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (below + (counts + 1) / 2.0)[inverse]


def matched_ranks(value: float, players: Sequence[float]) -> np.ndarray:
    """The places of ``[value, *players]`` among each other: ``(r - 0.5) / (N + 1)`` with ``r``
    the mean rank of ties (1 the lowest). The first is the unit's, equal to
    ``mid_rank(share of players below value, ties half, N)``."""
    values = np.concatenate([[float(value)], np.asarray(players, dtype="float64")])
    if values.size < 2:
        raise VerdictInputError("a season needs at least one matched player")
    if not np.isfinite(values).all():
        raise VerdictInputError("a return that is not a number cannot be placed")
    return (_mean_ranks(values) - 0.5) / values.size


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
    """Stouffer's Z of percentiles strictly inside (0, 1), and its normal one-sided p-value
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


# --------------------------------------------------------------------------------- the seasons
@dataclass(frozen=True)
class SeasonPlace:
    """One season of one unit: the season, the unit's return (its instances' mean for a
    replicated model) and its matched players' returns (player ``d`` the same relabelling in
    every season of the league)."""

    season: str
    value: float
    players: Sequence[float] = field(repr=False)


@dataclass(frozen=True)
class MatchedTest:
    """Stouffer's Z of a unit over its seasons and its p-value among its matched players' own
    Zs (:func:`matched_stouffer`); the unit's per-season places; the normal and Fisher p-values
    beside them; the players it rests on (the fewest of any season)."""

    z: float
    p_value: float
    normal_p_value: float
    fisher_statistic: float
    fisher_p_value: float
    places: tuple[float, ...]
    players: int


def matched_stouffer(seasons: Sequence[SeasonPlace]) -> MatchedTest:
    """The unit's Stouffer's Z over ``seasons`` and its p-value: the share of the unit and its
    players (the first ``N`` of every season, ``N`` the fewest) whose own Z over the same
    seasons - each placed among the ``N`` others of the season - is at least the unit's."""
    if not seasons:
        raise VerdictInputError("no season to combine")
    n = min(len(s.players) for s in seasons)
    if n < 1:
        raise VerdictInputError(f"season {seasons[0].season}: no matched player")
    # every mean rank ties can give is a half-integer 1, 1.5, .. n + 1: their z, computed once
    z_of = np.array([_NORMAL.inv_cdf((h / 2.0 - 0.5) / (n + 1)) for h in range(2, 2 * n + 3)])
    total = np.zeros(n + 1)
    places = []
    for season in seasons:
        values = np.concatenate([[float(season.value)],
                                 np.asarray(season.players, dtype="float64")[:n]])
        if not np.isfinite(values).all():
            raise VerdictInputError(f"season {season.season}: a return that is not a number")
        doubled = np.rint(_mean_ranks(values) * 2).astype(np.int64)
        places.append(float((doubled[0] / 2.0 - 0.5) / (n + 1)))
        total += z_of[doubled - 2]
    z_all = total / math.sqrt(len(seasons))
    unit = float(z_all[0])
    at_least = int(np.count_nonzero(z_all[1:] >= unit - 1e-12)) + 1
    statistic, fisher_p = fisher(places)
    return MatchedTest(unit, at_least / (n + 1), _NORMAL.cdf(-unit), statistic, fisher_p,
                       tuple(places), n)


# --------------------------------------------------------------------------------- the family
def _check_p(p_values: Sequence[float]) -> None:
    for p in p_values:
        if not (math.isfinite(p) and 0.0 <= p <= 1.0):
            raise VerdictInputError(f"p-value {p} is not in [0, 1]")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given: sorted ascending, the i-th
    smallest (from 0) is ``max_{j <= i} min(1, (m - j) * p_(j))``; a hypothesis is rejected at
    level alpha exactly when its adjusted p-value is at most alpha (Holm's step-down)."""
    _check_p(p_values)
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values, in the order given: sorted ascending, the i-th
    smallest (from 1) is ``min_{j >= i} min(1, m * p_(j) / j)``; rejecting those at most q keeps
    the expected share of false discoveries among the rejected at most q."""
    _check_p(p_values)
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, running = [0.0] * m, 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, min(1.0, m * p_values[i] / (rank + 1)))
        adjusted[i] = running
    return adjusted


def skill_share(p_values: Sequence[float], lam: float = STOREY_LAMBDA) -> float | None:
    """Storey's estimate of the share of a family with skill, ``1 - pi0`` with ``pi0 =
    #{p > lam} / ((1 - lam) m)`` capped at 1 (p-values of units without skill spread evenly, so
    those above ``lam`` stand for ``(1 - lam)`` of them); None for an empty family."""
    _check_p(p_values)
    if not p_values:
        return None
    if not 0.0 < lam < 1.0:
        raise VerdictInputError(f"lambda must be inside (0, 1), not {lam}")
    pi0 = sum(p > lam for p in p_values) / ((1.0 - lam) * len(p_values))
    return max(0.0, 1.0 - min(1.0, pi0))


# --------------------------------------------------------------------------------- power
def _threshold(family: int, players: int, alpha: float) -> float | None:
    """Holm's first threshold as a z (``Phi^-1(1 - alpha / family)``); None when no p-value of
    ``players`` matched players can reach ``alpha / family`` (the smallest is ``1/(players+1)``)."""
    if family < 1 or players < 1:
        raise VerdictInputError(f"family {family} and players {players} must be at least 1")
    level = alpha / family
    if level < 1.0 / (players + 1):
        return None
    return _NORMAL.inv_cdf(1.0 - level)


def power(seasons: int, family: int, players: int, *, percentile: float = TYPICAL,
          alpha: float = ALPHA) -> float:
    """The chance that a unit whose typical season places it at ``percentile`` (its per-season
    z normal with mean ``Phi^-1(percentile)``, variance 1) is flagged after ``seasons`` seasons
    in a family of ``family``: ``Phi(sqrt(k) Phi^-1(percentile) - Phi^-1(1 - alpha/family))``,
    Holm's first step (so at least this); 0 when ``alpha / family`` is below the smallest
    p-value ``players`` matched players can give."""
    z = _threshold(family, players, alpha)
    if z is None or seasons < 1:
        return 0.0
    return _NORMAL.cdf(math.sqrt(seasons) * _NORMAL.inv_cdf(percentile) - z)


def detectable(seasons: int, family: int, players: int, *, chance: float = 0.5,
               alpha: float = ALPHA) -> float | None:
    """The typical-season percentile at which a unit is flagged with probability ``chance``
    after ``seasons`` seasons (the inverse of :func:`power`); None when it cannot be flagged."""
    z = _threshold(family, players, alpha)
    if z is None or seasons < 1:
        return None
    return _NORMAL.cdf((z + _NORMAL.inv_cdf(chance)) / math.sqrt(seasons))


def power_words(seasons: int, family: int, players: int, *, alpha: float = ALPHA) -> str:
    """What the unit's seasons could detect, in one sentence."""
    them = f"{seasons} season{'' if seasons == 1 else 's'}"
    among = f"tested among {family}" if family > 1 else "tested alone"
    half = detectable(seasons, family, players, alpha=alpha)
    if half is None:
        return (f"With {them} {among}, no edge can be flagged: {players:,} matched players give "
                f"p-values of at least {1 / (players + 1):.4f}, above {alpha:.0%}/{family}.")
    most = detectable(seasons, family, players, chance=0.8, alpha=alpha)
    assert most is not None
    chance = power(seasons, family, players, alpha=alpha)
    return (f"With {them} {among}, an edge that places it at percentile {_pct(TYPICAL)} in a "
            f"typical season would be flagged {chance:.0%} of the time; being flagged half the "
            f"time takes percentile {_pct(half)}, 80% of the time percentile {_pct(most)}.")


def _pct(share: float) -> str:
    return f"{share * 100:.1f}".removesuffix(".0")


# --------------------------------------------------------------------------------- the verdict
@dataclass(frozen=True)
class Verdict:
    """The verdict of one unit: the seasons it rests on and its players, Stouffer's Z and its
    p-value among the matched players (deciding), the normal and Fisher p-values (beside), the
    Holm- and Benjamini-Hochberg-adjusted p-values and the family's size (None, 0 when it was not
    tested: too few seasons), the words, and the power sentence."""

    name: str
    seasons: int
    players: int
    z: float
    p_value: float
    normal_p_value: float
    fisher_statistic: float
    fisher_p_value: float
    adjusted_p_value: float | None
    bh_p_value: float | None
    family: int
    verdict: str
    median_percentile: float
    power: float | None = None
    detectable_half: float | None = None
    detectable_most: float | None = None
    power_words: str = ""

    @property
    def tested(self) -> bool:
        return self.adjusted_p_value is not None


def verdicts(samples: Mapping[str, Sequence[SeasonPlace]], *, alpha: float = ALPHA,
             min_seasons: int = MIN_SEASONS) -> list[Verdict]:
    """The verdict of each unit of ``samples`` (its seasons with a place), as one family for
    Holm-Bonferroni and Benjamini-Hochberg: the units with at least ``min_seasons`` distinct
    seasons. In the order of ``samples``; a unit without any season is refused (it has no
    verdict, not "too few seasons")."""
    if not 0.0 < alpha < 1.0:
        raise VerdictInputError(f"alpha must be inside (0, 1), not {alpha}")
    if min_seasons < 1:
        raise VerdictInputError(f"the minimum of seasons must be at least 1, not {min_seasons}")
    tests: dict[str, tuple[int, MatchedTest]] = {}
    for name, seasons in samples.items():
        if not seasons:
            raise VerdictInputError(f"{name}: no season to combine")
        tests[name] = (len({s.season for s in seasons}), matched_stouffer(seasons))
    tested = [n for n, (k, _) in tests.items() if k >= min_seasons]
    p_values = [tests[n][1].p_value for n in tested]
    adjusted = dict(zip(tested, holm(p_values), strict=True))
    rates = dict(zip(tested, benjamini_hochberg(p_values), strict=True))
    evidence = EVIDENCE if alpha == ALPHA else f"evidence of skill at {alpha:.0%} after correction"
    out = []
    for name, (k, test) in tests.items():
        adj = adjusted.get(name)
        words = TOO_FEW if adj is None else evidence if adj <= alpha else NOT_DISTINGUISHABLE
        family = len(tested) if adj is not None else 0
        places = sorted(test.places)
        middle = (places[(len(places) - 1) // 2] + places[len(places) // 2]) / 2
        powered = {}
        if adj is not None:
            powered = {"power": power(k, family, test.players, alpha=alpha),
                       "detectable_half": detectable(k, family, test.players, alpha=alpha),
                       "detectable_most": detectable(k, family, test.players, chance=0.8,
                                                     alpha=alpha),
                       "power_words": power_words(k, family, test.players, alpha=alpha)}
        out.append(Verdict(name, k, test.players, test.z, test.p_value, test.normal_p_value,
                           test.fisher_statistic, test.fisher_p_value, adj, rates.get(name),
                           family, words, middle, **powered))
    return out


def family_share(found: Sequence[Verdict], *, minimum: int = SHARE_FAMILY) -> float | None:
    """Storey's estimated share with skill of the tested units of ``found`` (one family); None
    with fewer than ``minimum`` tested - four p-values all below 1/2 would read "100% skilled"."""
    tested = [v.p_value for v in found if v.tested]
    return skill_share(tested) if len(tested) >= minimum else None


def method(family: str, *, alpha: float = ALPHA, min_seasons: int = MIN_SEASONS) -> str:
    """How a verdict was computed, in one sentence (``family``: what was tested together, e.g.
    "12 contestants")."""
    return METHOD.format(family=family, alpha=alpha, minimum=min_seasons)
