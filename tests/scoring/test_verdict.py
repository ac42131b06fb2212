"""The verdict on skill (arena/scoring/verdict.py), pinned by closed forms and a simulation.

Closed forms: a contestant in the middle of the zero-skill players every season has Z = 0 and
p = 1/2; one at the 99th percentile in every one of k seasons has Z = k Phi^-1(0.99) / sqrt(k),
p = 1 - Phi(Z), and is flagged after Holm's correction among n contestants exactly when n p is
at most 5% (k and n chosen on both sides); Fisher's statistic and its chi-squared p-value by
hand. The simulation: leagues of zero-skill contestants over 20 seasons, each season's percentile
the rank of one more zero-skill player among the season's players, flag a contestant at most at
the stated family-wise rate (5%), within a binomial tolerance.
"""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest

from arena.scoring.verdict import (
    ALPHA,
    EVIDENCE,
    MIN_SEASONS,
    NOT_DISTINGUISHABLE,
    TOO_FEW,
    Sample,
    VerdictInputError,
    chi2_sf_even,
    fisher,
    holm,
    mid_rank,
    stouffer,
    verdicts,
)

PHI = NormalDist()
Z99 = PHI.inv_cdf(0.99)


def _seasons(percentile: float, k: int, players: int | None = None) -> list[Sample]:
    return [Sample(f"s{i}", percentile, players) for i in range(k)]


def test_the_50th_percentile_every_season_is_z_zero_and_p_one_half():
    for k in (1, 2, 5, 20):
        z, p = stouffer([0.5] * k)
        assert z == 0.0 and p == 0.5
    [v] = verdicts({"middling": _seasons(0.5, 6)})
    assert (v.z, v.p_value, v.seasons, v.draws) == (0.0, 0.5, 6, 6)
    assert v.verdict == NOT_DISTINGUISHABLE and v.adjusted_p_value == 0.5 and v.family == 1


def test_the_99th_percentile_every_season_in_closed_form():
    for k in (2, 3, 10):
        z, p = stouffer([0.99] * k)
        assert z == pytest.approx(k * Z99 / math.sqrt(k), rel=1e-12)
        assert z == pytest.approx(math.sqrt(k) * Z99, rel=1e-12)
        assert p == pytest.approx(1 - PHI.cdf(math.sqrt(k) * Z99), rel=1e-9)


@pytest.mark.parametrize(("k", "n"), [(2, 99), (2, 100), (3, 5_000), (3, 6_000)])
def test_the_99th_percentile_is_evidence_exactly_when_holm_allows_it(k, n):
    """One contestant at the 99th percentile every season among n - 1 in the middle: Holm's
    first step compares its p-value times n with 5% (the others' p = 1/2 never pass). With two
    seasons p = 1 - Phi(3.29) = 0.000501, so 99 contestants flag it and 100 do not; with three,
    p = 1 - Phi(4.03) = 0.0000280: 5,000 flag it, 6,000 do not."""
    _, p = stouffer([0.99] * k)
    samples = {"skilled": _seasons(0.99, k)} | {f"m{i}": _seasons(0.5, k) for i in range(n - 1)}
    found = {v.name: v for v in verdicts(samples)}
    skilled = found["skilled"]
    assert skilled.family == n and skilled.adjusted_p_value == pytest.approx(min(1.0, n * p))
    expected = EVIDENCE if n * p <= ALPHA else NOT_DISTINGUISHABLE
    assert skilled.verdict == expected
    assert (skilled.verdict == EVIDENCE) == (n < ALPHA / p)  # the threshold sits between the two
    assert {v.verdict for name, v in found.items() if name != "skilled"} == {NOT_DISTINGUISHABLE}


def test_one_season_is_too_few_whatever_its_percentile():
    assert MIN_SEASONS == 2
    found = {v.name: v for v in verdicts({"lucky": _seasons(0.999, 1),
                                          "steady": _seasons(0.99, 2)})}
    assert found["lucky"].verdict == TOO_FEW and found["lucky"].adjusted_p_value is None
    assert found["lucky"].family == 0 and not found["lucky"].tested
    # the untested one is not counted in the family: the other is corrected for itself alone
    assert found["steady"].family == 1
    assert found["steady"].adjusted_p_value == pytest.approx(found["steady"].p_value)
    assert found["steady"].verdict == EVIDENCE
    # two instances of one season are still one season
    [twins] = verdicts({"twins": [Sample("s1", 0.99), Sample("s1", 0.98)]})
    assert (twins.seasons, twins.draws, twins.verdict) == (1, 2, TOO_FEW)


def test_fisher_in_closed_form():
    # 50th percentile, k seasons: X = 2k ln 2; P(chi2_2k > X) = 2^-k sum_{j<k} (k ln 2)^j / j!
    for k in (1, 2, 4, 10):
        x, p = fisher([0.5] * k)
        assert x == pytest.approx(2 * k * math.log(2), rel=1e-12)
        by_hand = 2.0 ** -k * sum((k * math.log(2)) ** j / math.factorial(j) for j in range(k))
        assert p == pytest.approx(by_hand, rel=1e-12)
    # 99th percentile, two seasons: X = -4 ln 0.01, p = 0.01^2 (1 + 2 ln 100)
    x, p = fisher([0.99, 0.99])
    assert x == pytest.approx(-4 * math.log(0.01), rel=1e-9)
    assert p == pytest.approx(1e-4 * (1 + 2 * math.log(100)), rel=1e-9)
    # one season: chi2 with 2 degrees of freedom is exponential, its p-value the season's own
    assert fisher([0.7])[1] == pytest.approx(0.3, rel=1e-12)
    assert chi2_sf_even(0.0, 4) == 1.0


def test_the_chi2_tail_agrees_with_scipy():
    from scipy.stats import chi2

    for x in (0.1, 3.0, 17.5, 80.0, 400.0):
        for dof in (2, 4, 10, 40, 200):
            assert chi2_sf_even(x, dof) == pytest.approx(chi2.sf(x, dof), rel=1e-9, abs=1e-300)


def test_fisher_and_stouffer_read_one_great_season_differently():
    """Stouffer is primary: one great season among poor ones does not make skill, while
    Fisher's method answers to the great one."""
    seasons = [0.9999, 0.2, 0.2, 0.2, 0.2]
    assert stouffer(seasons)[1] > 0.3
    assert fisher(seasons)[1] < 0.05


def test_holm_adjusts_step_down():
    # Bonferroni would keep only the first (0.02, 0.08); Holm's second step compares 0.04 * 1
    assert holm([0.01, 0.04]) == pytest.approx([0.02, 0.04])
    assert holm([0.04, 0.01]) == pytest.approx([0.04, 0.02])  # in the order given
    # monotone: a larger p-value never gets a smaller adjusted one; capped at 1
    assert holm([0.03, 0.02, 0.5, 0.9]) == pytest.approx([0.09, 0.08, 1.0, 1.0])
    assert holm([]) == []
    with pytest.raises(VerdictInputError):
        holm([1.5])


def test_the_mid_rank_convention_keeps_the_extremes_finite():
    n = 200
    assert mid_rank(0.0, n) == pytest.approx(0.5 / 201)
    assert mid_rank(1.0, n) == pytest.approx(200.5 / 201)
    assert mid_rank(0.5, n) == 0.5  # the middle stays the middle
    for p in (0.0, 0.013, 0.25, 0.8, 1.0):
        assert mid_rank(1 - p, n) == pytest.approx(1 - mid_rank(p, n))  # symmetric
    # beating every player in every season: a finite Z, the largest n players allow
    z, p = stouffer([mid_rank(1.0, n)] * 4)
    assert z == pytest.approx(2 * PHI.inv_cdf(200.5 / 201)) and 0 < p < 1e-6
    [best] = verdicts({"best": _seasons(1.0, 4, n)})
    assert best.z == pytest.approx(z) and best.verdict == EVIDENCE
    [worst] = verdicts({"worst": _seasons(0.0, 4, n)})
    assert worst.z == pytest.approx(-z) and worst.verdict == NOT_DISTINGUISHABLE
    # an extreme without its player count cannot be placed: it is refused, never infinite
    for extreme in (0.0, 1.0):
        with pytest.raises(VerdictInputError, match="mid_rank"):
            stouffer([extreme, 0.5])
    with pytest.raises(VerdictInputError):
        mid_rank(1.2, n)
    with pytest.raises(VerdictInputError):
        mid_rank(0.5, 0)


def test_every_name_needs_a_season():
    with pytest.raises(VerdictInputError, match="no season"):
        verdicts({"ghost": []})
    assert verdicts({}) == []


def _zero_skill_percentile(rng: random.Random, players: int) -> float:
    """A zero-skill contestant's leaderboard percentile: one more player's rank among the
    season's ``players`` (continuous returns: no ties), as the leaderboard writes it."""
    return rng.randrange(players + 1) / players


def test_zero_skill_contestants_are_flagged_at_most_at_the_stated_rate():
    """2,000 simulated leagues of 10 zero-skill contestants over 20 seasons (200 players a
    season): Holm keeps the chance of flagging anyone in a league at 5% or less, so at most
    100 + 3 binomial standard deviations (130) of the leagues flag someone. Uncorrected, each
    contestant's p-value is about uniform: about 5% of them under 0.05 (and not far fewer,
    which would make the bound above vacuous); Fisher's too."""
    rng = random.Random(20_261_001)
    leagues, contestants, seasons, players = 2_000, 10, 20, 200
    flagged_leagues = below = fisher_below = 0
    for _ in range(leagues):
        samples = {f"c{c}": [Sample(f"s{s}", _zero_skill_percentile(rng, players), players)
                             for s in range(seasons)] for c in range(contestants)}
        found = verdicts(samples)
        assert all(v.seasons == seasons and v.family == contestants for v in found)
        flagged_leagues += any(v.verdict == EVIDENCE for v in found)
        below += sum(v.p_value <= ALPHA for v in found)
        fisher_below += sum(v.fisher_p_value <= ALPHA for v in found)
    sd = math.sqrt(leagues * ALPHA * (1 - ALPHA))
    assert flagged_leagues <= leagues * ALPHA + 3 * sd
    draws = leagues * contestants
    sd_draws = math.sqrt(draws * ALPHA * (1 - ALPHA))
    for count in (below, fisher_below):
        assert abs(count - draws * ALPHA) <= 4 * sd_draws, count


def test_a_skilled_contestant_among_zero_skill_ones_is_found():
    """Power, for scale: a contestant at the 80th percentile on average over 20 seasons
    (Beta(4, 1)-like draws) among nine zero-skill ones is flagged in most leagues."""
    rng = random.Random(7)
    found_count = 0
    for _ in range(200):
        samples = {f"c{c}": [Sample(f"s{s}", _zero_skill_percentile(rng, 200), 200)
                             for s in range(20)] for c in range(9)}
        samples["skilled"] = [Sample(f"s{s}", rng.betavariate(4, 1), 200) for s in range(20)]
        found = {v.name: v for v in verdicts(samples)}
        found_count += found["skilled"].verdict == EVIDENCE
    assert found_count >= 190
