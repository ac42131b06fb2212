"""Reference rules and baselines on paths where the signal is known in closed form, against plain
loop re-implementations on a random walk, and without lookahead."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.scoring.reference_rules import (
    BASELINES,
    RULES,
    bars_per_day,
    checked_once,
    lookback,
    random_positions,
    rsi_wilder,
    volatility_targeting,
    warmup_bars,
)

DAILY = 365.0
HOURLY = 8760.0
ALL = {**RULES, **BASELINES}


def make_bars(closes, freq: str = "D", start: str = "2022-01-03",
              wicks: bool = False) -> pd.DataFrame:
    """Bars whose open is the previous close (the first opens at its close); high/low span the
    body (on a rising bar high = close, low = previous close), plus random wicks of up to 2% if
    asked (so that rules reading high/low differ from rules reading closes)."""
    close = np.asarray(closes, dtype=float)
    open_ = np.r_[close[0], close[:-1]]
    up, down = (np.random.default_rng(11).uniform(0.0, 0.02, (2, len(close))) if wicks
                else np.zeros((2, len(close))))
    return pd.DataFrame({
        "timestamp": pd.date_range(start, periods=len(close), freq=freq, tz="UTC"),
        "open": open_, "high": np.maximum(open_, close) * (1.0 + up),
        "low": np.minimum(open_, close) * (1.0 - down), "close": close, "volume": 1_000.0})


def run(name: str, closes, periods_per_year: float = DAILY) -> np.ndarray:
    return ALL[name](make_bars(closes), periods_per_year=periods_per_year).to_numpy()


def first_nonzero(values: np.ndarray) -> int:
    return int(np.flatnonzero(values != 0)[0])


N_TREND = 400
UP = 100.0 * 1.005 ** np.arange(N_TREND)  # convex rise: every trend indicator says up
DOWN = 1_000.0 - UP  # its mirror image (an accelerating fall, still positive)
# A random walk on a slow cycle (period 400 bars, +-40% in log): every rule changes its mind.
WALK = 100.0 * np.exp(np.cumsum(np.random.default_rng(4).normal(0.0, 0.03, 700))
                      + 0.4 * np.sin(np.arange(700) * 2 * np.pi / 400))
TRIANGLE = 90.0 + np.abs((np.arange(400) + 20) % 40 - 20.0)  # troughs at t = 0 mod 40, peaks at 20


# ------------------------------------------------------------------------------- conventions
def test_registry_names_and_order() -> None:
    assert list(RULES) == [
        "buy_and_hold", "above_ma200", "golden_cross", "sma_crossover_20_50", "macd_12_26_9",
        "ichimoku", "momentum_60", "absolute_momentum_12m", "donchian_20", "rsi_14_reversion",
        "stochastic_14_3", "bollinger_20_reversion", "volatility_targeting"]
    assert list(BASELINES) == ["buy_and_hold", "volatility_targeting", "random"]
    assert BASELINES["buy_and_hold"] is RULES["buy_and_hold"]
    assert BASELINES["volatility_targeting"] is RULES["volatility_targeting"]


def test_bars_per_day_and_lookbacks() -> None:
    assert bars_per_day(365) == bars_per_day(252) == 1.0  # daily data: a day is a bar
    assert bars_per_day(8760) == 24.0
    assert bars_per_day(252 * 7) == 7.0  # hourly stocks: a day is a session of 7 bars
    assert lookback(200, 365) == lookback(200, 252) == 200
    assert lookback(200, 8760) == 4800
    assert lookback(1, 8760) == 24
    with pytest.raises(ValueError):
        bars_per_day(0)


@pytest.mark.parametrize("name", list(ALL))
@pytest.mark.parametrize("ppy", [DAILY, HOURLY])
def test_shape_bounds_and_index(name: str, ppy: float) -> None:
    bars = make_bars(WALK, freq="D" if ppy == DAILY else "h")
    bars.index = pd.RangeIndex(100, 100 + len(bars))  # any index is kept as is
    out = ALL[name](bars, periods_per_year=ppy)
    assert out.index.equals(bars.index)
    assert out.dtype == np.float64
    assert np.isfinite(out).all() and (out.abs() <= 1.0).all()


@pytest.mark.parametrize("name", list(RULES))
def test_warmup_is_flat_and_first_signal_comes_right_after(name: str) -> None:
    warm = warmup_bars(name, periods_per_year=DAILY)
    up, down = run(name, UP), run(name, DOWN)
    assert not up[:warm].any() and not down[:warm].any()
    if name == "bollinger_20_reversion":  # bands never touched on a smooth trend: use a spike
        spike = np.full(60, 100.0)
        spike[warm] = 110.0
        up = run(name, spike)
    assert first_nonzero(up) == warm


def test_warmups_in_bars() -> None:
    expected = {"buy_and_hold": 0, "above_ma200": 199, "golden_cross": 199,
                "sma_crossover_20_50": 49, "macd_12_26_9": 33, "ichimoku": 77, "momentum_60": 60,
                "absolute_momentum_12m": 365, "donchian_20": 20, "rsi_14_reversion": 14,
                "stochastic_14_3": 15, "bollinger_20_reversion": 19, "volatility_targeting": 20,
                "random": 0}
    assert {k: warmup_bars(k, periods_per_year=DAILY) for k in ALL} == expected
    assert warmup_bars("absolute_momentum_12m", periods_per_year=252) == 252
    assert warmup_bars("momentum_60", periods_per_year=HOURLY) == 60 * 24
    assert warmup_bars("macd_12_26_9", periods_per_year=HOURLY) == 26 * 24 - 1 + 9 * 24 - 1
    assert warmup_bars("rsi_14_reversion", periods_per_year=HOURLY) == 24 + 14 * 24 - 1


def test_hourly_lookbacks_are_days() -> None:
    """On hourly bars 60 days are 1,440 bars: the first momentum signal comes at bar 1,440."""
    rising = 100.0 * 1.0002 ** np.arange(2_000)
    out = RULES["momentum_60"](make_bars(rising, freq="h"), periods_per_year=HOURLY).to_numpy()
    assert first_nonzero(out) == 1_440 and (out[1_440:] == 1.0).all()


@pytest.mark.parametrize("name", list(ALL))
def test_no_bars_no_positions(name: str) -> None:
    assert ALL[name](make_bars([1.0]).iloc[:0], periods_per_year=DAILY).empty


def test_bad_input_is_refused() -> None:
    bars = make_bars(UP[:30])
    with pytest.raises(ValueError, match="column"):
        RULES["above_ma200"](bars.drop(columns="high"), periods_per_year=DAILY)
    with pytest.raises(ValueError, match="sorted"):
        RULES["above_ma200"](bars.iloc[::-1], periods_per_year=DAILY)
    nan = bars.copy()
    nan.loc[5, "close"] = np.nan
    with pytest.raises(ValueError, match="prices"):
        RULES["rsi_14_reversion"](nan, periods_per_year=DAILY)


@pytest.mark.parametrize("ppy", [DAILY, HOURLY])
def test_rules_read_one_check_of_a_frame_and_give_the_same_positions(ppy) -> None:
    """Inside ``checked_once`` the rules share one check of the frame (what the rules table
    does); every position is the one the rule gives on its own, and another frame (a bad one)
    is still checked."""
    bars = make_bars(WALK, wicks=True)
    alone = {name: rule(bars, periods_per_year=ppy) for name, rule in ALL.items()}
    with checked_once(bars):
        for name, rule in ALL.items():
            pd.testing.assert_series_equal(rule(bars, periods_per_year=ppy), alone[name],
                                           check_exact=True)
        nan = bars.copy()
        nan.loc[5, "close"] = np.nan
        with pytest.raises(ValueError, match="prices"):
            RULES["rsi_14_reversion"](nan, periods_per_year=ppy)
    with pytest.raises(ValueError, match="sorted"), checked_once(bars.iloc[::-1]):
        pass


# ------------------------------------------------------------------------------ no lookahead
# The same kind of walk on hourly bars, long enough (9,500 bars) for every hourly warm-up to end.
HOURLY_WALK = 100.0 * np.exp(
    np.cumsum(np.random.default_rng(3).normal(0.0, 0.03 / math.sqrt(24), 9_500))
    + 0.4 * np.sin(np.arange(9_500) * 2 * np.pi / (400 * 24)))
CUTS = {DAILY: (0, 1, 13, 14, 15, 19, 20, 33, 60, 77, 150, 199, 200, 364, 365, 500, 699),
        HOURLY: (0, 23, 335, 336, 480, 1_440, 1_871, 1_872, 4_799, 4_800, 8_760, 9_000, 9_499)}


@pytest.mark.parametrize("ppy", [DAILY, HOURLY])
@pytest.mark.parametrize("name", list(ALL))
def test_no_lookahead(name: str, ppy: float) -> None:
    """Rows up to k are the same on the full frame, on the frame cut after bar k, and on a frame
    whose bars after k were replaced by another path."""
    walk, freq = (WALK, "D") if ppy == DAILY else (HOURLY_WALK, "h")
    full = ALL[name](make_bars(walk, freq), periods_per_year=ppy).to_numpy()
    k = len(walk) // 2
    other = make_bars(np.r_[walk[:k + 1], walk[k + 1:][::-1] * 1.7], freq)
    np.testing.assert_array_equal(ALL[name](other, periods_per_year=ppy).to_numpy()[:k + 1],
                                  full[:k + 1])
    for k in CUTS[ppy]:
        cut = ALL[name](make_bars(walk[:k + 1], freq), periods_per_year=ppy).to_numpy()
        np.testing.assert_array_equal(cut, full[:k + 1], err_msg=f"{name} cut after bar {k}")


@pytest.mark.parametrize("ppy", [DAILY, HOURLY])
@pytest.mark.parametrize("name", list(ALL))
def test_walks_exercise_every_rule(name: str, ppy: float) -> None:
    """The lookahead test above is not vacuous: every rule changes its mind on both walks."""
    walk, freq = (WALK, "D") if ppy == DAILY else (HOURLY_WALK, "h")
    out = ALL[name](make_bars(walk, freq), periods_per_year=ppy).to_numpy()
    live = out[warmup_bars(name, periods_per_year=ppy):]
    assert len(np.unique(live)) >= (1 if name == "buy_and_hold" else 2)


# ------------------------------------------------------------------------ trends and a V shape
def test_rising_and_falling_paths() -> None:
    long_short = ["sma_crossover_20_50", "macd_12_26_9", "ichimoku", "momentum_60", "donchian_20"]
    for name in ["buy_and_hold", "above_ma200", "golden_cross", "absolute_momentum_12m",
                 *long_short]:
        warm = warmup_bars(name, periods_per_year=DAILY)
        assert (run(name, UP)[warm:] == 1.0).all(), name
    for name in long_short:
        warm = warmup_bars(name, periods_per_year=DAILY)
        assert (run(name, DOWN)[warm:] == -1.0).all(), name
    for name in ["above_ma200", "golden_cross", "absolute_momentum_12m"]:  # long only: flat
        assert not run(name, DOWN).any(), name
    assert (run("buy_and_hold", DOWN) == 1.0).all()
    # Reversion rules lean against the trend: RSI = 100 and %K = 100 all the way up.
    for name in ["rsi_14_reversion", "stochastic_14_3"]:
        warm = warmup_bars(name, periods_per_year=DAILY)
        assert (run(name, UP)[warm:] == -1.0).all() and (run(name, DOWN)[warm:] == 1.0).all()
    # A straight line stays inside its Bollinger bands: the last of 20 evenly spaced closes is
    # 9.5 steps above their mean and 2 x sqrt((20^2 - 1) / 12) = 11.5 steps is the band.
    assert not run("bollinger_20_reversion", np.linspace(100, 300, 200)).any()


def test_flat_path_is_flat_for_every_rule_but_the_long_only_holders() -> None:
    flat = np.full(400, 100.0)
    for name in RULES:
        out = run(name, flat)
        if name in ("buy_and_hold", "volatility_targeting"):  # zero volatility: full weight
            warm = warmup_bars(name, periods_per_year=DAILY)
            assert (out[warm:] == 1.0).all(), name
        elif name in ("sma_crossover_20_50", "macd_12_26_9"):  # "else -1": a tie is short
            warm = warmup_bars(name, periods_per_year=DAILY)
            assert (out[warm:] == -1.0).all(), name
        else:
            assert not out.any(), name


V = 100.0 + np.abs(np.arange(220) - 100.0)  # falls 200 -> 100 at bar 100, then rises 1 a bar


def test_sma_crossover_flips_at_the_computed_bar() -> None:
    """d = t - 100 bars after the bottom (20 <= d <= 49): SMA20 - 100 = d - 9.5, and the 30 older
    closes of the SMA50 window sum to (49-d)(50-d)/2 + (d-20)(d-19)/2 above 100, so SMA20 > SMA50
    iff d - 9.5 exceeds that sum / 30. d = 22: 12.5 < 381/30 = 12.7; d = 23: 13.5 > 357/30 = 11.9."""
    out = run("sma_crossover_20_50", V)
    assert not out[:49].any()
    assert (out[49:123] == -1.0).all() and (out[123:] == 1.0).all()


def test_momentum_is_zero_exactly_when_the_60_day_return_is() -> None:
    """|d| vs |d - 60| with d = t - 100: the 60-day return is 0 at d = 30 (t = 130)."""
    out = run("momentum_60", V)
    assert not out[:60].any()
    assert (out[60:130] == -1.0).all() and out[130] == 0.0 and (out[131:] == 1.0).all()


def test_absolute_momentum_uses_a_year_of_bars() -> None:
    """Same path, two clocks: a year is 365 bars of crypto, 252 sessions of a stock."""
    path = np.r_[np.full(100, 50.0), np.full(200, 150.0), np.full(200, 100.0)]
    crypto, stock = run("absolute_momentum_12m", path), run("absolute_momentum_12m", path, 252)
    # close_t > close_(t-365): 100 vs 50 for t in [365, 465), then 100 vs 150.
    assert (crypto[365:465] == 1.0).all() and not crypto[:365].any() and not crypto[465:].any()
    # close_t > close_(t-252): 150 or 100 vs 50 for t in [252, 352), then 100 vs 150.
    assert (stock[252:352] == 1.0).all() and not stock[:252].any() and not stock[352:].any()


# -------------------------------------------------------------------------------- breakouts
def test_donchian_breakout_bar_and_hold() -> None:
    path = np.r_[np.full(50, 100.0), np.full(30, 110.0), np.full(40, 105.0)]
    out = run("donchian_20", path)
    # Flat 100: never strictly above the prior high nor below the prior low -> flat.
    assert not out[:50].any()
    # Bar 50 closes 110 above the prior 20-bar high of 100; later 110s are not above 110: hold.
    assert (out[50:80] == 1.0).all()
    # Bar 80 closes 105 below the prior 20-bar low (bars 60-79: all 110) -> short, then hold.
    assert (out[80:] == -1.0).all()


def test_donchian_on_a_triangle_wave() -> None:
    """Rising j bars after a trough the close is 90 + j and the oldest of the 20 prior bars
    (falling, high = its open) has the window's top, 111 - j: breakout iff j >= 11. Mirror for
    the fall. So long for t mod 40 in [11, 30], short otherwise, after the 20-bar warm-up (bar 20
    is a peak above every earlier high)."""
    out = run("donchian_20", TRIANGLE)
    phase = np.arange(len(TRIANGLE)) % 40
    expected = np.where((phase >= 11) & (phase <= 30), 1.0, -1.0)
    assert not out[:20].any()
    np.testing.assert_array_equal(out[20:], expected[20:])


# -------------------------------------------------------------------------------- oscillators
def test_rsi_wilder_by_hand() -> None:
    """n = 3 on closes 10, 11, 10.5, 12, 11, 11.5: changes +1, -0.5, +1.5, -1, +0.5.
    Row 3: avg gain (1 + 0 + 1.5)/3 = 5/6, avg loss 0.5/3 = 1/6 -> RSI = 100 x 5/6 = 83.33.
    Row 4 (change -1): gain (5/6 x 2 + 0)/3 = 5/9, loss (1/6 x 2 + 1)/3 = 4/9 -> RSI 55.56.
    Row 5 (change +0.5): gain (10/9 + 1/2)/3 = 29/54, loss (8/9)/3 = 16/54 -> RSI 100 x 29/45."""
    rsi = rsi_wilder(pd.Series([10, 11, 10.5, 12, 11, 11.5]), n=3)
    assert rsi.iloc[:3].isna().all()
    np.testing.assert_allclose(rsi.iloc[3:], [250 / 3, 500 / 9, 2900 / 45], rtol=1e-12)


def test_rsi_wilder_of_changes_over_two_bars_by_hand() -> None:
    """n = 3, step = 2 on closes 10, 11, 10.5, 12, 10, 11.5, 13: two-bar changes from row 2 on
    are +0.5, +1, -0.5, -0.5, +3. Row 4: gain 1.5/3 = 1/2, loss 0.5/3 = 1/6 -> RSI 100 x 3/4.
    Row 5 (-0.5): gain 1/3, loss (1/3 + 1/2)/3 = 5/18 -> 100 x 6/11. Row 6 (+3): gain
    (2/3 + 3)/3 = 11/9, loss (5/9)/3 = 5/27 -> 100 x 33/38."""
    rsi = rsi_wilder(pd.Series([10, 11, 10.5, 12, 10, 11.5, 13]), n=3, step=2)
    assert rsi.iloc[:4].isna().all()
    np.testing.assert_allclose(rsi.iloc[4:], [75, 600 / 11, 3300 / 38], rtol=1e-12)


def test_rsi_edge_values() -> None:
    assert (rsi_wilder(pd.Series(UP[:60])).iloc[14:] == 100.0).all()  # no losses
    assert (rsi_wilder(pd.Series(DOWN[:60])).iloc[14:] == 0.0).all()  # no gains
    assert (rsi_wilder(pd.Series(np.full(30, 7.0))).iloc[14:] == 50.0).all()  # no change at all
    rsi = rsi_wilder(pd.Series(WALK))
    assert rsi.iloc[:14].isna().all() and rsi.iloc[14:].between(0, 100).all()


def test_rsi_on_a_triangle_wave_in_closed_form() -> None:
    """Every change is +-1, so avg gain + avg loss = 1 from the seed on and RSI = 100 x avg gain.
    Gains decay by q = 13/14 a bar on the fall and approach 1 on the rise; at steady state
    G_peak = 1 - (1 - G_trough) q^20 with G_trough = G_peak q^20, so G_peak = 1 / (1 + q^20):
    RSI 81.49 at peaks, 18.51 at troughs; 10 bars into the rise 100 x (1 - (1 - G_trough) q^10)
    = 61.16 (neutral)."""
    q = 13 / 14
    peak = 1 / (1 + q**20)
    trough = peak * q**20
    rsi = rsi_wilder(pd.Series(TRIANGLE)).to_numpy()
    t = np.arange(len(TRIANGLE))
    late = t >= 200  # the seed's transient has decayed by q^186 < 1e-5
    np.testing.assert_allclose(rsi[late & (t % 40 == 20)], 100 * peak, atol=1e-4)
    np.testing.assert_allclose(rsi[late & (t % 40 == 0)], 100 * trough, atol=1e-4)
    np.testing.assert_allclose(rsi[late & (t % 40 == 10)], 100 * (1 - (1 - trough) * q**10),
                               atol=1e-4)
    out = run("rsi_14_reversion", TRIANGLE)
    assert (out[late & (t % 40 == 20)] == -1).all() and (out[late & (t % 40 == 0)] == 1).all()
    assert (out[late & (t % 40 == 10)] == 0).all() and (out[late & (t % 40 == 30)] == 0).all()


def test_stochastic_on_a_triangle_wave() -> None:
    """At a peak and the two bars before it the close is the top of the 14-bar range (%K = 100),
    so %D = 100: short. At a trough %D = 0: long."""
    out = run("stochastic_14_3", TRIANGLE)
    t = np.arange(len(TRIANGLE))
    assert (out[(t >= 20) & (t % 40 == 20)] == -1.0).all()
    assert (out[(t >= 40) & (t % 40 == 0)] == 1.0).all()


def test_bollinger_spikes() -> None:
    """One outlier J among 20 closes: it sits (19/20) J above the mean and the population standard
    deviation is J sqrt(19)/20, a z-score of sqrt(19) = 4.36 > 2 whatever J."""
    path = np.full(120, 100.0)
    path[40], path[80] = 110.0, 93.0
    out = run("bollinger_20_reversion", path)
    assert out[40] == -1.0 and out[80] == 1.0
    assert np.count_nonzero(out) == 2  # the bar after a spike is back within the bands


def test_bollinger_uses_the_population_standard_deviation() -> None:
    """16 closes of 100, three of 110, then 110.2: mean 102.01, z = 2.037 with ddof=0 (outside)
    and 1.986 with ddof=1 (inside)."""
    path = np.r_[np.full(16, 100.0), np.full(3, 110.0), 110.2]
    assert run("bollinger_20_reversion", path)[-1] == -1.0


# ----------------------------------------------------------------------------- vol targeting
def alternating(x: float, n: int) -> np.ndarray:
    """Log returns +x, -x, +x, ...: every squared return is x^2."""
    return 100.0 * np.exp(x * (np.arange(n) % 2))


@pytest.mark.parametrize(("x", "ppy"), [(0.02, DAILY), (0.015, 252.0), (0.004, HOURLY)])
def test_vol_targeting_on_constant_volatility(x: float, ppy: float) -> None:
    """Realised vol is x sqrt(periods_per_year) exactly, so the weight is 0.20 / that."""
    out = run("volatility_targeting", alternating(x, 600), ppy)
    warm = warmup_bars("volatility_targeting", periods_per_year=ppy)
    assert not out[:warm].any()
    np.testing.assert_allclose(out[warm:], 0.20 / (x * math.sqrt(ppy)), rtol=1e-9)
    calm = run("volatility_targeting", alternating(0.001, 100))  # 1.9% a year: capped at 1
    assert (calm[20:] == 1.0).all()


@pytest.mark.parametrize(("ppy", "bars_a_day"), [(DAILY, 1), (HOURLY, 24)])
def test_vol_targeting_decays_at_riskmetrics_lambda(ppy: float, bars_a_day: int) -> None:
    """Log returns of +-a on bars 1..T, then +-b: the variance is a^2 at bar T and m days later
    b^2 + (a^2 - b^2) 0.94^m, whatever the bar length (0.94^(1/24) a bar on hourly data)."""
    a, b, step = 0.03, 0.01, 100 * bars_a_day
    logret = np.r_[a * (-1.0) ** np.arange(step), b * (-1.0) ** np.arange(300)]
    path = 100.0 * np.exp(np.r_[0.0, np.cumsum(logret)])  # bar t's return is logret[t - 1]
    out = volatility_targeting(make_bars(path, freq="D" if ppy == DAILY else "h"),
                               periods_per_year=ppy, target_vol=0.01).to_numpy()
    assert out[step] == pytest.approx(0.01 / (a * math.sqrt(ppy)), rel=1e-9)
    for days in (1, 5, 10):
        var = b**2 + (a**2 - b**2) * 0.94**days
        expected = 0.01 / math.sqrt(var * ppy)
        assert expected < 1.0
        assert out[step + days * bars_a_day] == pytest.approx(expected, rel=1e-9)


# ------------------------------------------------------------------------------------ random
def test_random_baseline_is_seeded_and_uniform() -> None:
    bars = make_bars(WALK)
    a = random_positions(bars, periods_per_year=DAILY)
    assert a.equals(random_positions(bars, periods_per_year=DAILY, seed=0))
    assert a.equals(BASELINES["random"](bars, periods_per_year=DAILY))
    assert not a.equals(random_positions(bars, periods_per_year=DAILY, seed=1))
    assert set(a.unique()) == {-1.0, 0.0, 1.0}
    big = random_positions(make_bars(np.full(30_000, 1.0)), periods_per_year=DAILY, seed=3)
    shares = big.value_counts(normalize=True)
    assert np.allclose(shares.to_numpy(), 1 / 3, atol=0.01)


def test_random_baseline_draws_daily_on_hourly_bars() -> None:
    out = random_positions(make_bars(np.full(24 * 50 + 5, 1.0), freq="h"),
                           periods_per_year=HOURLY, seed=5).to_numpy()
    days = out[:24 * 50].reshape(50, 24)
    assert (days == days[:, :1]).all()  # constant within each day
    assert len(np.unique(days[:, 0])) == 3
    assert (out[24 * 50:] == out[24 * 50]).all()


# -------------------------------------------------- plain loops on a random walk, bar by bar
def loop_sma(x: list[float], t: int, n: int) -> float:
    return sum(x[t - n + 1:t + 1]) / n


def loop_ema(x: list[float], n: int) -> list[float | None]:
    """SMA-seeded EMA, skipping leading Nones."""
    out: list[float | None] = [None] * len(x)
    first = next(i for i, v in enumerate(x) if v is not None)
    a = 2 / (n + 1)
    for t in range(first + n - 1, len(x)):
        if t == first + n - 1:
            out[t] = sum(x[first:t + 1]) / n
        else:
            out[t] = a * x[t] + (1 - a) * out[t - 1]
    return out


def test_rules_match_plain_loops_on_a_random_walk() -> None:
    bars = make_bars(WALK, wicks=True)
    c, h, lo = (bars[k].tolist() for k in ("close", "high", "low"))
    n = len(c)
    got = {k: RULES[k](bars, periods_per_year=DAILY).to_numpy() for k in RULES}

    def mid(t: int, w: int) -> float:
        return (max(h[t - w + 1:t + 1]) + min(lo[t - w + 1:t + 1])) / 2

    fast, slow = loop_ema(c, 12), loop_ema(c, 26)
    line = [None if s is None else f - s for f, s in zip(fast, slow, strict=True)]
    signal = loop_ema(line, 9)
    held = 0.0
    for t in range(n):
        exp: dict[str, float] = {}
        exp["above_ma200"] = float(t >= 199 and c[t] > loop_sma(c, t, 200))
        exp["golden_cross"] = float(t >= 199 and loop_sma(c, t, 50) > loop_sma(c, t, 200))
        exp["sma_crossover_20_50"] = 0.0 if t < 49 else (
            1.0 if loop_sma(c, t, 20) > loop_sma(c, t, 50) else -1.0)
        exp["macd_12_26_9"] = 0.0 if signal[t] is None else (1.0 if line[t] > signal[t] else -1.0)
        if t >= 77:
            a, b = (mid(t - 26, 9) + mid(t - 26, 26)) / 2, mid(t - 26, 52)
            exp["ichimoku"] = 1.0 if c[t] > max(a, b) else (-1.0 if c[t] < min(a, b) else 0.0)
        else:
            exp["ichimoku"] = 0.0
        exp["momentum_60"] = 0.0 if t < 60 else float(np.sign(c[t] - c[t - 60]))
        exp["absolute_momentum_12m"] = float(t >= 365 and c[t] > c[t - 365])
        if t >= 20:
            if c[t] > max(h[t - 20:t]):
                held = 1.0
            elif c[t] < min(lo[t - 20:t]):
                held = -1.0
        exp["donchian_20"] = held
        if t >= 15:
            k = [100 * (c[s] - min(lo[s - 13:s + 1])) / (max(h[s - 13:s + 1]) - min(lo[s - 13:s + 1]))
                 for s in (t - 2, t - 1, t)]
            d = sum(k) / 3
            exp["stochastic_14_3"] = 1.0 if d < 20 else (-1.0 if d > 80 else 0.0)
        else:
            exp["stochastic_14_3"] = 0.0
        if t >= 19:
            w = c[t - 19:t + 1]
            m = sum(w) / 20
            sd = math.sqrt(sum((v - m) ** 2 for v in w) / 20)
            exp["bollinger_20_reversion"] = (1.0 if c[t] < m - 2 * sd
                                             else -1.0 if c[t] > m + 2 * sd else 0.0)
        else:
            exp["bollinger_20_reversion"] = 0.0
        for name, value in exp.items():
            assert got[name][t] == value, f"{name} at bar {t}"


def test_rsi_and_vol_targeting_match_plain_loops() -> None:
    c = WALK.tolist()
    gains = [max(c[t] - c[t - 1], 0.0) for t in range(1, len(c))]
    losses = [max(c[t - 1] - c[t], 0.0) for t in range(1, len(c))]
    g, lo = sum(gains[:14]) / 14, sum(losses[:14]) / 14
    expected = [100 - 100 / (1 + g / lo)]
    for t in range(14, len(gains)):
        g, lo = (g * 13 + gains[t]) / 14, (lo * 13 + losses[t]) / 14
        expected.append(100 - 100 / (1 + g / lo))
    np.testing.assert_allclose(rsi_wilder(pd.Series(WALK)).iloc[14:], expected, rtol=1e-9)

    r2 = [math.log(c[t] / c[t - 1]) ** 2 for t in range(1, len(c))]
    var = sum(r2[:20]) / 20
    weights = [min(1.0, 0.2 / math.sqrt(var * 365))]
    for t in range(20, len(r2)):
        var = 0.94 * var + 0.06 * r2[t]
        weights.append(min(1.0, 0.2 / math.sqrt(var * 365)))
    out = volatility_targeting(make_bars(WALK), periods_per_year=DAILY).to_numpy()
    assert not out[:20].any()
    np.testing.assert_allclose(out[20:], weights, rtol=1e-9)


@pytest.mark.parametrize("n", [2, 3, 14])
def test_wilder_averages_are_pandas_bit_for_bit_either_way(n: int) -> None:
    """The Python loop of a short series and pandas' of a long one give the same bits: the
    RSI of a long series (rules over a season of hourly bars) does not depend on the switch."""
    from arena.core import indicators

    rng = np.random.default_rng(7)
    values = rng.normal(0.0, 1.0, 3 * indicators.LOOP_MAX)
    values[:5] = np.nan  # a leading block
    values[100:103] = np.nan  # and a gap inside
    values[200:210] = values[199]  # a run equal to the average's input
    loop = indicators._wilder_averages(values[:indicators.LOOP_MAX], n)
    long = indicators._wilder_averages(values, n)
    reference = indicators.seeded_ewm(pd.Series(values), n, 1.0 / n).to_numpy()
    np.testing.assert_array_equal(long, reference)
    np.testing.assert_array_equal(loop, reference[:indicators.LOOP_MAX])
