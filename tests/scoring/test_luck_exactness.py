"""The fast zero-skill simulation equals the plain per-bar scorer, player by player, to 1e-12 of
the final equity; its draws are the block draws; its series' truncation stays within its bound."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.scoring.asset_luck import (
    BLOCK,
    TOLERANCE,
    _series_coefficients,
    _split_bars,
    decision_steps,
    player_positions,
    score_player,
    shared_players,
    zero_skill_returns,
)
from tests.conftest import ts

GOOG = Path(__file__).resolve().parents[1] / "fixtures" / "prices" / "GOOG.csv"
PLAYERS = (0, 1, 7, 500, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 17, 2999)


def _self_check_paths() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The price paths of arena.scoring.self_check, with steps of five bars (as its zero-skill
    case) and of one bar."""
    rng = np.random.default_rng(7)
    c = 100.0 * np.cumprod(1.0 + rng.normal(0.0, 0.02, 250))
    saw = 100.0 * np.cumprod(np.r_[1.0, np.tile([1.1, 1 / 1.1], 20)])
    paths = {"random": c, "sawtooth": saw, "up": 100.0 * 1.01 ** np.arange(101),
             "down": 100.0 * 0.99 ** np.arange(101), "jump": np.array([100.0, 100.0, 200.0, 200.0]),
             "flat": np.full(50, 50.0),
             # a short position loses more than everything on a bar that gains 150%
             "overshoot": np.array([100.0, 101.0, 252.5, 250.0, 251.0, 249.0])}
    out = {}
    for name, prices in paths.items():
        out[f"{name}/5"] = (prices, np.arange(prices.size) // 5)
        out[f"{name}/1"] = (prices, np.arange(prices.size))
    return out


def _goog() -> np.ndarray:
    return pd.read_csv(GOOG)["close"].to_numpy()


def _assert_exact(closes, steps, *, seed, cost_rate, draw, players=PLAYERS):
    fast = zero_skill_returns(closes, steps, players=max(players) + 1, seed=seed,
                              cost_rate=cost_rate, draw=draw)
    for p in players:
        ref = score_player(closes, steps, p, seed=seed, cost_rate=cost_rate, draw=draw)
        # relative to the final equity (1 + return), at least 1
        assert abs(fast[p] - ref) <= 1e-12 * max(1.0, abs(1.0 + ref)), (p, fast[p], ref)


@pytest.mark.parametrize("draw", ["uniform", "sign"])
@pytest.mark.parametrize("path", sorted(_self_check_paths()))
def test_equal_to_the_plain_scorer_on_the_self_check_paths(path, draw):
    closes, steps = _self_check_paths()[path]
    for cost_rate in (0.0, 0.0006, 0.01):
        _assert_exact(closes, steps, seed=1, cost_rate=cost_rate, draw=draw)


@pytest.mark.parametrize("draw", ["uniform", "sign"])
@pytest.mark.parametrize("every", [1, 5, 21, 250])
def test_equal_to_the_plain_scorer_on_real_daily_prices(every, draw):
    """GOOG daily closes 2004-2013 (real data), decisions every bar, week, month and year."""
    closes = _goog()
    steps = np.arange(closes.size) // every
    _assert_exact(closes, steps, seed=5, cost_rate=0.0002, draw=draw)


def test_equal_to_the_plain_scorer_through_decision_steps():
    goog = pd.read_csv(GOOG, parse_dates=["timestamp"])
    index = pd.DatetimeIndex(goog["timestamp"]).tz_localize("UTC")
    steps = decision_steps(index, "1d", "XNYS")
    _assert_exact(goog["close"].to_numpy(), steps, seed=0, cost_rate=0.0002, draw="uniform")


def test_hourly_path_every_player_of_a_block(synthetic, universe):
    bars = synthetic.fetch_bars(universe["BTC"], "1h", ts("2025-06-01"), ts("2025-08-01"))
    closes = bars["close"].to_numpy()
    steps = decision_steps(pd.DatetimeIndex(bars["timestamp"]), "1d")
    fast = zero_skill_returns(closes, steps, players=BLOCK, seed=2, cost_rate=0.0006)
    ref = np.array([score_player(closes, steps, p, seed=2, cost_rate=0.0006) for p in range(BLOCK)])
    assert np.max(np.abs(fast - ref) / (1.0 + ref)) <= 1e-12


@pytest.mark.parametrize("limit", [256 << 20, 3 << 20, 0])
def test_players_shared_by_assets_give_the_numbers_computed_apart(limit):
    """Within shared_players, assets with the same steps draw their players once and share their
    costs and powers: every return equals the one computed apart, bit for bit, whatever the
    assets' order, cost rates, series lengths (the powers a later asset asks beyond the kept
    ones) and draws, and however little may be kept (``limit``)."""
    rng = np.random.default_rng(3)
    steps = np.repeat(np.arange(60), 24)  # 60 days of hourly bars
    calm = 100.0 * np.cumprod(1.0 + rng.normal(0.0, 0.002, steps.size))  # few series terms
    wild = 100.0 * np.cumprod(1.0 + rng.normal(0.0, 0.03, steps.size))  # more terms, exact bars
    gappy = np.r_[calm[:700], calm[700:] * 1.4]  # one bar multiplied exactly
    short = (calm[:200], np.arange(200) // 7)  # other steps, not all of them with series bars
    daily = np.arange(101)
    jumpy = 100.0 * 1.6 ** (daily % 2)  # +60%, -37.5%: every bar exact, no series at all
    cases = [(calm, steps, 0.0006, "uniform"), (wild, steps, 0.0006, "uniform"),
             (gappy, steps, 0.0, "uniform"), (calm, steps, 0.01, "uniform"),
             (wild, steps, 0.0006, "sign"), (*short, 0.0006, "uniform"),
             (jumpy, daily, 0.0006, "uniform"), (calm[:101], daily, 0.0006, "uniform"),
             (calm, steps, 0.0006, "uniform")]
    apart = [zero_skill_returns(c, s, players=BLOCK + 300, seed=4, cost_rate=rate, draw=draw)
             for c, s, rate, draw in cases]
    with shared_players(limit):
        shared = [zero_skill_returns(c, s, players=BLOCK + 300, seed=4, cost_rate=rate, draw=draw)
                  for c, s, rate, draw in cases]
    for a, b in zip(apart, shared, strict=True):
        assert np.array_equal(a, b)
    assert not np.array_equal(apart[0], apart[1])  # the cases are not one case


def test_positions_are_the_block_draws():
    steps = np.repeat(np.arange(40), 3)
    for player in (0, 5, BLOCK + 3):
        block, row = divmod(player, BLOCK)
        rng = np.random.default_rng([9, block])
        expected = rng.uniform(-1.0, 1.0, size=(BLOCK, 40))[row, steps]
        assert np.array_equal(player_positions(steps, player, seed=9), expected)
        signs = np.random.default_rng([9, block]).integers(-1, 2, size=(BLOCK, 40))[row, steps]
        assert np.array_equal(player_positions(steps, player, seed=9, draw="sign"), signs)


@pytest.mark.parametrize("scale", [0.002, 0.01, 0.05])
def test_series_truncation_within_its_bound(scale):
    """The kept series, evaluated on a grid of positions, against log1p bar by bar."""
    rng = np.random.default_rng(3)
    r = rng.standard_t(4, 24 * 60) * scale
    steps = np.arange(r.size) // 24
    series, terms = _split_bars(r, steps)
    cols = np.unique(steps[series])
    constant, coef = _series_coefficients(r[series], np.searchsorted(cols, steps[series]),
                                          cols.size, terms)
    for w in np.linspace(-1.0, 1.0, 41):
        power_coef = np.r_[[np.zeros(cols.size)], coef]  # w^0 (its constant is summed apart) .. w^K
        poly = constant + float(np.sum(np.polynomial.polynomial.polyval(w, power_coef)))
        exact = float(np.sum(np.log1p(w * r[series])))
        assert abs(poly - exact) <= TOLERANCE + 1e-15


def _split_by_sorting(r, bar_steps):
    """The split as first written: a stable sort of the bounds for every number of terms (the
    oracle of the one-sort split)."""
    a = np.abs(r)
    with np.errstate(invalid="ignore"):
        rho = np.where(a < 1.0, a / (1.0 + np.sqrt(np.maximum(1.0 - a * a, 0.0))), np.inf)
    best = None
    for terms in range(1, 17):
        with np.errstate(over="ignore", invalid="ignore"):
            bound = np.where(rho < 1.0, 2.0 * rho ** (terms + 1) / ((terms + 1) * (1.0 - rho)),
                             np.inf)
        order = np.argsort(bound, kind="stable")
        n_series = int(np.searchsorted(np.cumsum(bound[order]), TOLERANCE, side="right"))
        series = np.zeros(a.size, dtype=bool)
        series[order[:n_series]] = True
        work = 2.0 * terms * np.unique(bar_steps[series]).size + 4.0 * (a.size - n_series)
        if best is None or work < best[0]:
            best = (work, series, terms)
    return best[1], best[2]


def _split_paths():
    rng = np.random.default_rng(11)
    for scale in (1e-5, 0.002, 0.01, 0.05, 0.3):
        r = rng.standard_t(4, 24 * 90) * scale
        yield f"t4 x {scale}", r, np.arange(r.size) // 24
    r = np.round(rng.normal(0.0, 0.01, 3000), 4)  # ticks: many equal returns, ties in the bounds
    yield "ticks", r, np.arange(r.size) // 24
    r = np.where(rng.random(3000) < 0.3, 0.0, rng.normal(0.0, 0.003, 3000))  # flat hours
    yield "flat hours", r, np.arange(r.size) // 7
    r = np.r_[rng.normal(0.0, 0.01, 500), [1.5, -0.6, 2.0], rng.normal(0.0, 0.01, 500)]
    yield "jumps past 100%", r, np.arange(r.size) // 24
    r = rng.normal(0.0, 0.004, 2000)
    yield "unordered steps", r, rng.integers(0, 60, r.size)
    for name, (prices, steps) in _self_check_paths().items():
        yield name, prices[1:] / prices[:-1] - 1.0, steps[:-1]


@pytest.mark.parametrize("name,r,steps", list(_split_paths()), ids=lambda v: v if isinstance(v, str) else "")
def test_the_one_sort_split_takes_the_bars_a_sort_per_term_takes(name, r, steps):
    series, terms = _split_bars(r, steps)
    expected, expected_terms = _split_by_sorting(r, steps)
    assert terms == expected_terms
    np.testing.assert_array_equal(series, expected)
