"""The verdict on skill (arena/scoring/verdict.py), pinned by closed forms and simulations.

Closed forms: seasons whose players are the returns 0, 1, .., N - 1 place a contestant exactly
where its return falls (b players below: (b + 0.5) / (N + 1)); a contestant in the middle every
season has Z = 0; one above every player in every one of k seasons has Z = sqrt(k)
Phi^-1((N + 0.5) / (N + 1)) and p = 1 / (N + 1); players in the same order every season (an
asset that beats the others year after year) make the league's test no stronger than one
season's - the p-value stays the share above it while the normal p-value, which assumes
independent seasons, shrinks. Holm, Benjamini-Hochberg, Storey's share and the power by hand.
The simulations: leagues of zero-skill contestants, each exchangeable with its players, flag
anyone at most at the stated family-wise rate (5%); a skilled one is found; the power formula
matches simulated seasons.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from arena.scoring.verdict import (
    ALPHA,
    EVIDENCE,
    MIN_SEASONS,
    NOT_DISTINGUISHABLE,
    TOO_FEW,
    SeasonPlace,
    VerdictInputError,
    benjamini_hochberg,
    chi2_sf_even,
    detectable,
    family_share,
    fisher,
    holm,
    matched_ranks,
    matched_stouffer,
    mid_rank,
    power,
    power_words,
    skill_share,
    stouffer,
    verdicts,
)

PHI = NormalDist()
N = 200
LADDER = np.arange(N, dtype=float)  # players' returns 0 .. 199, the same order every season


def _seasons(value: float, k: int, players=LADDER) -> list[SeasonPlace]:
    return [SeasonPlace(f"s{i}", value, players) for i in range(k)]


def test_a_season_places_the_unit_among_its_players_on_the_mid_rank_convention():
    for below in (0, 1, 57, 100, 199, 200):
        u = matched_ranks(below - 0.5, LADDER)[0]
        assert u == pytest.approx(mid_rank(below / N, N), abs=1e-15)
        assert u == pytest.approx((below + 0.5) / (N + 1), abs=1e-15)
    # ties count half, and every place agrees with pandas' average ranks
    values = [3.0, 1.0, 3.0, 3.0, 7.0, -2.0, 3.0 + 1e-13]  # the last ties at 10 decimals
    ranks = pd.Series(values).round(10).rank(method="average")
    np.testing.assert_allclose(matched_ranks(values[0], values[1:]),
                               (ranks - 0.5) / len(values), atol=1e-15)
    assert matched_ranks(3.0, values[1:])[0] == pytest.approx(mid_rank((2 + 0.5 * 3) / 6, 6))
    with pytest.raises(VerdictInputError):
        matched_ranks(0.0, [])
    with pytest.raises(VerdictInputError):
        matched_ranks(float("nan"), [1.0])


def test_the_middle_every_season_is_z_zero():
    """Return 99.5 among 0..199: 100 players below and 100 above, every season: Z = 0. The
    players 100..199 are above it every season, so their Zs are positive: p = 101 / 201."""
    for k in (1, 2, 5, 20):
        test = matched_stouffer(_seasons(99.5, k))
        assert test.z == 0.0 and test.places == (0.5,) * k
        assert test.p_value == pytest.approx(101 / 201)
        assert test.normal_p_value == 0.5
    [v] = verdicts({"middling": _seasons(99.5, 6)})
    assert (v.z, v.seasons, v.players, v.median_percentile) == (0.0, 6, N, 0.5)
    assert v.verdict == NOT_DISTINGUISHABLE and v.family == 1


def test_above_every_player_every_season_in_closed_form():
    top = PHI.inv_cdf((N + 0.5) / (N + 1))
    for k in (2, 3, 10):
        test = matched_stouffer(_seasons(1e6, k))
        assert test.z == pytest.approx(math.sqrt(k) * top, rel=1e-12)
        assert test.p_value == pytest.approx(1 / (N + 1))  # no player reaches it
        assert test.normal_p_value == pytest.approx(PHI.cdf(-math.sqrt(k) * top), rel=1e-9)
    [best] = verdicts({"best": _seasons(1e6, 4)})
    assert best.verdict == EVIDENCE and best.adjusted_p_value == pytest.approx(1 / 201)
    [worst] = verdicts({"worst": _seasons(-1.0, 4)})
    assert worst.z == pytest.approx(-2 * top) and worst.verdict == NOT_DISTINGUISHABLE
    assert worst.p_value == 1.0


def test_seasons_tied_together_make_the_test_no_stronger_than_one():
    """Players in the same order every season (each holds the same asset, which beats the
    others every time) and a contestant just below the top 20 every season: whatever the
    number of seasons, exactly the 20 players above it have Zs above its own, so p = 21/201,
    while the normal p-value - independent seasons - falls towards zero."""
    for k in (1, 4, 16):
        test = matched_stouffer(_seasons(179.5, k))
        assert test.p_value == pytest.approx(21 / 201)
        assert test.normal_p_value == pytest.approx(PHI.cdf(-math.sqrt(k) * PHI.inv_cdf(
            180.5 / 201)), rel=1e-9)
    assert matched_stouffer(_seasons(179.5, 16)).normal_p_value < 1e-6
    [v] = verdicts({"lucky asset": _seasons(179.5, 16)})
    assert v.verdict == NOT_DISTINGUISHABLE


def test_players_differ_in_number_the_fewest_are_read():
    seasons = [SeasonPlace("a", 99.5, LADDER), SeasonPlace("b", 49.5, np.arange(100.0))]
    test = matched_stouffer(seasons)
    assert test.players == 100
    # 99.5 above all of the first 100 players; 49.5 above 50 of them
    assert test.places == pytest.approx((100.5 / 101, 50.5 / 101))


def test_one_season_is_too_few_whatever_its_place():
    assert MIN_SEASONS == 2
    found = {v.name: v for v in verdicts({"lucky": _seasons(1e6, 1),
                                          "steady": _seasons(1e6, 2)})}
    assert found["lucky"].verdict == TOO_FEW and found["lucky"].adjusted_p_value is None
    assert found["lucky"].family == 0 and not found["lucky"].tested
    assert found["lucky"].power is None and found["lucky"].power_words == ""
    # the untested one is not counted in the family: the other is corrected for itself alone
    assert found["steady"].family == 1
    assert found["steady"].adjusted_p_value == pytest.approx(found["steady"].p_value)
    assert found["steady"].verdict == EVIDENCE
    # one season given twice is still one season
    [twins] = verdicts({"twins": [SeasonPlace("s1", 1e6, LADDER), SeasonPlace("s1", 1e6, LADDER)]})
    assert (twins.seasons, twins.verdict) == (1, TOO_FEW)


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
    with pytest.raises(VerdictInputError, match="no season"):
        matched_stouffer([])
    assert verdicts({}) == []


def test_benjamini_hochberg_and_storey_by_hand():
    # sorted 0.01, 0.02, 0.03, 0.5: m p / rank = 0.04, 0.04, 0.04, 0.5, then the running minimum
    assert benjamini_hochberg([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.04, 0.04, 0.5, 0.04])
    assert benjamini_hochberg([0.9, 0.8]) == pytest.approx([0.9, 0.9])
    assert benjamini_hochberg([]) == []
    # 2 of 8 p-values above 0.5: pi0 = 2 / (0.5 * 8) = 0.5, so half the family has skill
    assert skill_share([0.01, 0.02, 0.2, 0.3, 0.4, 0.45, 0.6, 0.9]) == pytest.approx(0.5)
    assert skill_share([0.6, 0.7, 0.9, 0.99]) == 0.0  # pi0 capped at 1
    assert skill_share([]) is None
    found = verdicts({"a": _seasons(1e6, 3), "b": _seasons(99.5, 3), "c": _seasons(1e6, 1)})
    assert family_share(found, minimum=2) == skill_share([1 / 201, 101 / 201])
    assert family_share(found) is None  # two tested: too few to estimate a share
    assert [v.bh_p_value for v in found] == pytest.approx([2 / 201, 101 / 201, None])


def test_the_power_in_closed_form_and_in_words():
    z95 = PHI.inv_cdf(0.95)
    assert power(1, 1, 1000, percentile=0.95) == pytest.approx(0.5)
    k, m = 3, 4
    threshold = PHI.inv_cdf(1 - ALPHA / m)
    assert power(k, m, 1000) == pytest.approx(PHI.cdf(math.sqrt(k) * PHI.inv_cdf(0.9) - threshold))
    half = detectable(k, m, 1000)
    assert half == pytest.approx(PHI.cdf(threshold / math.sqrt(k)))
    assert power(k, m, 1000, percentile=half) == pytest.approx(0.5)
    most = detectable(k, m, 1000, chance=0.8)
    assert power(k, m, 1000, percentile=most) == pytest.approx(0.8)
    assert detectable(20, 1, 1000) == pytest.approx(PHI.cdf(z95 / math.sqrt(20)))
    # more seasons find smaller edges; a larger family needs larger ones
    assert detectable(10, 1, 1000) < detectable(3, 1, 1000) < detectable(3, 10, 1000)
    # 60 models at 5%: 0.05 / 60 is below the smallest p-value 300 players allow
    assert power(5, 60, 300) == 0.0 and detectable(5, 60, 300) is None
    assert "no edge can be flagged" in power_words(5, 60, 300)
    words = power_words(3, 4, 1000)
    assert words.startswith("With 3 seasons tested among 4, an edge that places it at "
                            "percentile 90 in a typical season would be flagged ")
    assert f"half the time takes percentile {half * 100:.1f}" in words
    assert "tested alone" in power_words(2, 1, 1000)


def test_the_power_formula_matches_simulated_seasons():
    """Contestants whose per-season z is normal around Phi^-1(0.9): the share flagged alone
    after 3 seasons (normal p-value at 5%) is the formula's, within 4 standard errors."""
    rng = np.random.default_rng(3)
    runs, k = 4000, 3
    z = rng.normal(PHI.inv_cdf(0.9), 1.0, size=(runs, k)).sum(axis=1) / math.sqrt(k)
    flagged = np.mean(z > PHI.inv_cdf(1 - ALPHA))
    expected = power(k, 1, 10_000)
    assert abs(flagged - expected) < 4 * math.sqrt(expected * (1 - expected) / runs)


def _exchangeable_league(rng: np.random.Generator, contestants: int, seasons: int, players: int,
                         edge: dict[str, float] | None = None) -> dict[str, list[SeasonPlace]]:
    """Each contestant's seasons: it and its players drawn alike (no skill), or its own return
    shifted up by ``edge`` standard deviations."""
    out = {}
    for c in range(contestants):
        name = f"c{c}"
        places = []
        for s in range(seasons):
            draws = rng.normal(size=players + 1)
            places.append(SeasonPlace(f"s{s}", draws[0] + (edge or {}).get(name, 0.0),
                                      draws[1:]))
        out[name] = places
    return out


def test_zero_skill_contestants_are_flagged_at_most_at_the_stated_rate():
    """600 simulated leagues of 8 zero-skill contestants over 10 seasons (200 players a season,
    each exchangeable with its contestant): Holm keeps the chance of flagging anyone in a league
    at 5% or less, so at most 30 + 3 binomial standard deviations of the leagues flag someone.
    Uncorrected, each contestant's p-value is about uniform: about 5% of them at most 0.05 (and
    not far fewer, which would make the bound above vacuous)."""
    rng = np.random.default_rng(20_261_001)
    leagues, contestants = 600, 8
    flagged_leagues = below = 0
    for _ in range(leagues):
        found = verdicts(_exchangeable_league(rng, contestants, 10, 200))
        assert all(v.seasons == 10 and v.family == contestants for v in found)
        flagged_leagues += any(v.verdict == EVIDENCE for v in found)
        below += sum(v.p_value <= ALPHA for v in found)
    sd = math.sqrt(leagues * ALPHA * (1 - ALPHA))
    assert flagged_leagues <= leagues * ALPHA + 3 * sd
    draws = leagues * contestants
    assert abs(below - draws * ALPHA) <= 4 * math.sqrt(draws * ALPHA * (1 - ALPHA)), below


def test_a_skilled_contestant_among_zero_skill_ones_is_found_as_often_as_the_power_says():
    """A contestant whose return sits one standard deviation above its players' every season
    (a typical season at the 84th percentile) among seven zero-skill ones, 10 seasons: Holm
    flags it at least as often as the power's first-step bound says (0.75), within three
    standard errors; its verdict states that bound."""
    rng = np.random.default_rng(7)
    leagues, found_count = 200, 0
    for _ in range(leagues):
        found = {v.name: v for v in verdicts(_exchangeable_league(rng, 8, 10, 200,
                                                                  {"c0": 1.0}))}
        found_count += found["c0"].verdict == EVIDENCE
    bound = power(10, 8, 200, percentile=PHI.cdf(1.0))
    assert 0.7 < bound < 0.8
    assert found_count / leagues >= bound - 3 * math.sqrt(bound * (1 - bound) / leagues)
    assert found["c0"].power == pytest.approx(power(10, 8, 200))
