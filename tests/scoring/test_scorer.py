"""The one scorer: exact returns on hand-computed series, its self-check, the rank score."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.scoring import self_check as checks
from arena.scoring.scorer import ScorerInputError, percentile, rank_score, score, score_arrays
from arena.scoring.self_check import ScorerSelfCheckError, self_check

GOOG = Path(__file__).resolve().parents[1] / "fixtures" / "prices" / "GOOG.csv"


def test_self_check_passes_and_names_all_eleven_cases():
    names = self_check()
    assert len(names) == 11 and names[0] == "position 0 returns exactly 0"


def test_a_scorer_with_lookahead_fails_its_self_check(monkeypatch):
    real = checks.score_arrays

    def peeking(closes, positions, cost_rate):  # earns the bar it is set on: the classic bug
        w = np.asarray(positions, dtype=float)
        return real(closes, np.r_[w[1:], w[-1]], cost_rate)

    monkeypatch.setattr(checks, "score_arrays", peeking)
    with pytest.raises(ScorerSelfCheckError, match="no lookahead"):
        self_check()


def test_hand_computed_series():
    # prices 100 -> 110 -> 99 -> 99; positions decided at each close: +1, -1, +0.5, 0; cost 0.1%
    closes = pd.Series([100.0, 110.0, 99.0, 99.0], index=pd.date_range("2025-01-01", periods=4, tz="UTC"))
    positions = pd.Series([1.0, -1.0, 0.5, 0.0], index=closes.index)
    e0 = 1.0 * (1 - 0.001 * 1.0)              # enter +1
    e1 = e0 * 1.10 * (1 - 0.001 * 2.0)        # +10% long, then flip to -1
    e2 = e1 * 1.10 * (1 - 0.001 * 1.5)        # -10% earned short (+10%), then to +0.5
    e3 = e2 * 1.00 * (1 - 0.001 * 0.5)        # flat price, then to 0
    fees = 0.001 * (1.0 * 1.0 + e0 * 1.10 * 2.0 + e1 * 1.10 * 1.5 + e2 * 0.5)
    result = score(closes, positions, 0.001)
    assert math.isclose(result.total_return, e3 - 1, rel_tol=1e-14)
    assert np.allclose(result.equity.to_numpy(), [e0, e1, e2, e3], rtol=1e-14)
    assert result.turnover == 5.0 and math.isclose(result.fees, fees, rel_tol=1e-12)
    assert result.valid_share == 1.0


def test_nan_positions_are_flat_and_not_valid():
    closes = np.array([100.0, 120.0, 60.0])
    equity, turnover, _fees, valid = score_arrays(closes, np.array([np.nan, 1.0, np.nan]), 0.0)
    assert math.isclose(equity[-1], 0.5) and turnover == 2.0 and math.isclose(valid, 1 / 3)


def test_lookahead_on_real_prices():
    """GOOG's biggest daily jump: a position set on that bar does not earn it; one set a bar
    earlier earns exactly it."""
    goog = pd.read_csv(GOOG)
    closes = goog["close"].to_numpy()
    jump = int(np.argmax(closes[1:] / closes[:-1])) + 1  # bar whose close jumped
    late = np.zeros(len(closes))
    late[jump] = 1.0
    early = np.zeros(len(closes))
    early[jump - 1] = 1.0
    late_curve = score_arrays(closes, late, 0.0)[0]
    assert late_curve[jump] == 1.0  # nothing earned through the jump bar
    assert math.isclose(late_curve[-1], closes[jump + 1] / closes[jump], rel_tol=1e-14)
    assert math.isclose(score_arrays(closes, early, 0.0)[0][-1], closes[jump] / closes[jump - 1],
                        rel_tol=1e-14)


def test_rank_score():
    assert math.isclose(rank_score(0.5, 20_000), math.log10(2))
    assert math.isclose(rank_score(0.99, 20_000), 2.0)
    assert math.isclose(rank_score(1.0, 20_000), math.log10(20_001))  # capped, never infinite
    assert percentile(5.0, np.array([1.0, 5.0, 9.0, 10.0])) == 0.375  # one below, one tie (half)
    with pytest.raises(ScorerInputError):
        rank_score(1.5, 10)


@pytest.mark.parametrize("closes,positions,message", [
    ([100.0, -1.0], [0.0, 0.0], "positive"),
    ([100.0, 101.0], [0.0], "2 prices but 1 positions"),
    ([], [], "no bars"),
])
def test_bad_inputs_are_named(closes, positions, message):
    with pytest.raises(ScorerInputError, match=message):
        score_arrays(np.array(closes), np.array(positions), 0.0)


def test_non_finite_returns_are_never_ranked():
    with pytest.raises(ScorerInputError, match="non-finite"):
        percentile(float("nan"), np.array([0.1, 0.2]))
    with pytest.raises(ScorerInputError, match="non-finite"):
        percentile(0.1, np.array([0.1, np.nan]))


@pytest.mark.parametrize("rate", [-0.5, 1.0, float("nan")])
def test_cost_rates_are_fractions(rate):
    with pytest.raises(ScorerInputError, match="fraction"):
        score_arrays(np.array([1.0, 2.0]), np.array([1.0, 1.0]), rate)
