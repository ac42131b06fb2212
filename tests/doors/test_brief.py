"""The terminal brief: every indicator against values worked out by hand on small series."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from arena.doors.brief import BriefError, Series, bb_zone, brief, render

EXPECTED_KEYS = [
    "bars", "close",
    "ma_5", "ma_10", "ma_20", "ma_50", "ma_100", "ma_200",
    "above_ma_20", "above_ma_50", "above_ma_200",
    "ema_9", "ema_21", "ema_55",
    "rsi_7", "rsi_14", "rsi_21",
    "stoch_k_14", "stoch_d_14",
    "atr_14", "atr_21",
    "std_10", "std_20",
    "bb_mid_20", "bb_upper_20", "bb_lower_20", "bb_position_20", "bb_zone_20",
    "momentum_5", "momentum_10", "momentum_20",
    "candle_body", "candle_upper_wick", "candle_lower_wick", "candle_direction",
    "volume_ratio_20",
]

# the bars each key needs, written out from the definitions (not read from the module)
NEEDED = {
    "ma_5": 5, "ma_10": 10, "ma_20": 20, "ma_50": 50, "ma_100": 100, "ma_200": 200,
    "above_ma_20": 20, "above_ma_50": 50, "above_ma_200": 200,
    "ema_9": 9, "ema_21": 21, "ema_55": 55,
    "rsi_7": 8, "rsi_14": 15, "rsi_21": 22,
    "stoch_k_14": 14, "stoch_d_14": 16,
    "atr_14": 15, "atr_21": 22,
    "std_10": 10, "std_20": 20,
    "bb_mid_20": 20, "bb_upper_20": 20, "bb_lower_20": 20, "bb_position_20": 20,
    "bb_zone_20": 20,
    "momentum_5": 6, "momentum_10": 11, "momentum_20": 21,
    "candle_body": 2, "candle_upper_wick": 2, "candle_lower_wick": 2, "candle_direction": 2,
    "volume_ratio_20": 20,
}


def of(closes, highs=None, lows=None, volumes=None) -> dict:
    return brief(Series.of(closes, highs, lows, volumes))


def wavy(bars: int) -> Series:
    """A full series (highs, lows, volumes) that goes up and down."""
    i = np.arange(bars, dtype=float)
    closes = 100.0 + 10.0 * np.sin(i / 3.0) + 0.1 * i
    return Series.of(closes, closes + 1.0 + 0.5 * np.cos(i), closes - 1.5, 1000.0 + 10.0 * i)


def plain_wilder_rsi(closes: list[float], n: int) -> float:
    """Wilder's RSI at the last close, as a plain loop."""
    changes = [b - a for a, b in itertools.pairwise(closes)]
    gains = [max(d, 0.0) for d in changes]
    losses = [max(-d, 0.0) for d in changes]
    avg_gain, avg_loss = sum(gains[:n]) / n, sum(losses[:n]) / n
    for g, loss in zip(gains[n:], losses[n:], strict=True):
        avg_gain = (avg_gain * (n - 1) + g) / n
        avg_loss = (avg_loss * (n - 1) + loss) / n
    return 100.0 * avg_gain / (avg_gain + avg_loss)


# ----------------------------------------------------------------------------- shape


def test_keys_are_exactly_the_documented_ones_in_order():
    b = brief(wavy(250))
    assert list(b) == EXPECTED_KEYS
    assert all(v is not None for v in b.values())


def test_values_are_plain_python_types():
    b = brief(wavy(250))
    assert type(b["bars"]) is int and b["bars"] == 250
    assert type(b["candle_direction"]) is int
    for k in ("above_ma_20", "above_ma_50", "above_ma_200"):
        assert type(b[k]) is bool
    assert type(b["bb_zone_20"]) is str
    for k, v in b.items():
        if k not in ("bars", "candle_direction", "bb_zone_20") and not k.startswith("above_"):
            assert type(v) is float, k


def test_one_bar():
    b = of([42.5])
    assert b["bars"] == 1 and b["close"] == 42.5
    assert all(b[k] is None for k in EXPECTED_KEYS[2:])


@pytest.mark.parametrize("key", sorted(NEEDED))
def test_missing_exactly_below_what_each_key_needs(key):
    need = NEEDED[key]
    full = wavy(need)
    short = Series.of(full.closes[1:], full.highs[1:], full.lows[1:], full.volumes[1:])
    assert brief(short)[key] is None
    assert brief(full)[key] is not None


# ----------------------------------------------------------------------------- moving averages


def test_ma_5_and_momentum_5_on_six_bars():
    closes = [10.0, 11.0, 12.0, 13.0, 14.0, 16.0]
    b = of(closes)
    assert b["ma_5"] == pytest.approx((11 + 12 + 13 + 14 + 16) / 5)  # 13.2
    assert b["ma_5"] == pytest.approx(13.2)
    assert b["momentum_5"] == pytest.approx(16 / 10 - 1)  # 0.6
    five = of(closes[:5])
    assert five["ma_5"] == pytest.approx((10 + 11 + 12 + 13 + 14) / 5)  # 12.0
    assert five["momentum_5"] is None


def test_momentum_10_and_20():
    closes = [float(x) for x in range(1, 22)]  # 1 .. 21
    b = of(closes)
    assert b["momentum_10"] == pytest.approx(21 / 11 - 1)
    assert b["momentum_20"] == pytest.approx(21 / 1 - 1)  # 20.0
    falling = of(closes[::-1])  # 21 .. 1
    assert falling["momentum_20"] == pytest.approx(1 / 21 - 1)


def test_above_ma_is_strictly_above():
    flat = of([10.0] * 20)
    assert flat["ma_20"] == pytest.approx(10.0)
    assert flat["above_ma_20"] is False  # equal is not above
    up = of([10.0] * 19 + [12.0])  # ma 20 = (190 + 12) / 20 = 10.1
    assert up["ma_20"] == pytest.approx(10.1)
    assert up["above_ma_20"] is True
    down = of([10.0] * 19 + [8.0])
    assert down["above_ma_20"] is False
    assert down["above_ma_50"] is None and down["ma_50"] is None


def test_ema_9_seeded_with_the_sma_of_its_first_nine():
    closes = [float(x) for x in range(1, 10)]  # 1 .. 9
    assert of(closes)["ema_9"] == pytest.approx(5.0)  # seed: (1 + ... + 9) / 9
    # alpha = 2 / (9 + 1) = 0.2: 0.2 * 20 + 0.8 * 5 = 8.0
    assert of([*closes, 20.0])["ema_9"] == pytest.approx(8.0)
    # then 0.2 * 3 + 0.8 * 8 = 7.0
    assert of([*closes, 20.0, 3.0])["ema_9"] == pytest.approx(7.0)
    assert of(closes[:8])["ema_9"] is None


def test_ema_21_on_a_plain_loop():
    closes = list(wavy(40).closes)
    alpha = 2 / 22
    value = sum(closes[:21]) / 21
    for x in closes[21:]:
        value = alpha * x + (1 - alpha) * value
    assert of(closes)["ema_21"] == pytest.approx(value, rel=1e-12)


# ----------------------------------------------------------------------------- RSI


def test_rsi_7_step_by_step():
    closes = [44.0, 45.0, 44.5, 46.0, 47.0, 46.0, 48.0, 49.0, 48.5, 50.0]
    # changes: +1, -0.5, +1.5, +1, -1, +2, +1 | -0.5, +1.5
    # first seven: gains 1 + 1.5 + 1 + 2 + 1 = 6.5, losses 0.5 + 1 = 1.5
    avg_gain, avg_loss = 6.5 / 7, 1.5 / 7
    assert of(closes[:8])["rsi_7"] == pytest.approx(100 * avg_gain / (avg_gain + avg_loss))
    assert of(closes[:8])["rsi_7"] == pytest.approx(81.25)  # 100 * 6.5 / 8
    # eighth change -0.5: gain 0, loss 0.5
    avg_gain, avg_loss = (avg_gain * 6 + 0.0) / 7, (avg_loss * 6 + 0.5) / 7
    assert (avg_gain, avg_loss) == pytest.approx((39 / 49, 12.5 / 49))
    assert of(closes[:9])["rsi_7"] == pytest.approx(100 * 39 / 51.5)
    # ninth change +1.5: gain 1.5, loss 0
    avg_gain, avg_loss = (avg_gain * 6 + 1.5) / 7, (avg_loss * 6 + 0.0) / 7
    assert (avg_gain, avg_loss) == pytest.approx((307.5 / 343, 75 / 343))
    assert of(closes)["rsi_7"] == pytest.approx(100 * 307.5 / 382.5)  # 80.39...
    assert of(closes)["rsi_7"] == pytest.approx(plain_wilder_rsi(closes, 7))
    assert of(closes[:7])["rsi_7"] is None


@pytest.mark.parametrize("n", [14, 21])
def test_rsi_14_and_21_match_a_plain_wilder_loop(n):
    closes = list(wavy(60).closes)
    assert of(closes)[f"rsi_{n}"] == pytest.approx(plain_wilder_rsi(closes, n), rel=1e-12)


def test_rsi_extremes():
    assert of([float(x) for x in range(1, 16)])["rsi_14"] == pytest.approx(100.0)  # no losses
    assert of([float(x) for x in range(15, 0, -1)])["rsi_14"] == pytest.approx(0.0)  # no gains
    assert of([7.0] * 15)["rsi_14"] == pytest.approx(50.0)  # flat


# ----------------------------------------------------------------------------- stochastic


def test_stochastic_14_uses_the_last_14_highs_and_lows():
    closes = [float(x) for x in range(20, 34)]  # 20 .. 33: 14 bars
    highs = [c + 2 for c in closes]
    lows = [c - 3 for c in closes]
    # lowest low 20 - 3 = 17, highest high 33 + 2 = 35: 100 * (33 - 17) / (35 - 17)
    assert of(closes, highs, lows)["stoch_k_14"] == pytest.approx(100 * 16 / 18)
    # a 15th bar in front with a far lower low is outside the window
    b = of([19.0, *closes], [21.0, *highs], [5.0, *lows])
    assert b["stoch_k_14"] == pytest.approx(100 * 16 / 18)
    assert of(closes[1:], highs[1:], lows[1:])["stoch_k_14"] is None


def test_stochastic_d_is_the_mean_of_the_last_three_k():
    # 16 closes: 10 x 14, then 12, then 11; highs = close + 1, lows = close - 1
    closes = [10.0] * 14 + [12.0, 11.0]
    highs = [c + 1 for c in closes]
    lows = [c - 1 for c in closes]
    # %K at bar 14 (bars 1..14): low 9, high 11, close 10 -> 50
    # %K at bar 15 (bars 2..15): low 9, high 13, close 12 -> 75
    # %K at bar 16 (bars 3..16): low 9, high 13, close 11 -> 50
    b = of(closes, highs, lows)
    assert b["stoch_k_14"] == pytest.approx(50.0)
    assert b["stoch_d_14"] == pytest.approx((50 + 75 + 50) / 3)
    fifteen = of(closes[:15], highs[:15], lows[:15])
    assert fifteen["stoch_k_14"] == pytest.approx(75.0) and fifteen["stoch_d_14"] is None
    text = render(b)
    assert "stochastic (14, 3): %K 50.0, %D 58.3" in text


def test_stochastic_flat_window_is_50():
    b = of([10.0] * 16)
    assert b["stoch_k_14"] == 50.0 and b["stoch_d_14"] == 50.0


# ----------------------------------------------------------------------------- ATR


def test_atr_14_from_hand_true_ranges():
    closes = [100.0] * 15 + [110.0, 104.0]
    highs = [101.0] * 15 + [111.0, 105.0]
    lows = [99.0] * 15 + [108.0, 103.0]
    # bars 1..14: TR = max(101 - 99, |101 - 100|, |99 - 100|) = 2 -> first ATR = 28 / 14 = 2
    assert of(closes[:15], highs[:15], lows[:15])["atr_14"] == pytest.approx(2.0)
    assert of(closes[:14], highs[:14], lows[:14])["atr_14"] is None  # only 13 true ranges
    # gap up: TR = max(111 - 108, |111 - 100|, |108 - 100|) = 11 (the previous close counts)
    atr = (2.0 * 13 + 11.0) / 14
    assert of(closes[:16], highs[:16], lows[:16])["atr_14"] == pytest.approx(37 / 14)
    # gap down: TR = max(105 - 103, |105 - 110|, |103 - 110|) = 7
    atr = (atr * 13 + 7.0) / 14
    assert of(closes, highs, lows)["atr_14"] == pytest.approx(atr)


def test_atr_21_on_a_plain_loop():
    s = wavy(40)
    c, h, lo = list(s.closes), list(s.highs), list(s.lows)
    tr = [max(h[i] - lo[i], abs(h[i] - c[i - 1]), abs(lo[i] - c[i - 1])) for i in range(1, 40)]
    atr = sum(tr[:21]) / 21
    for x in tr[21:]:
        atr = (atr * 20 + x) / 21
    assert brief(s)["atr_21"] == pytest.approx(atr, rel=1e-12)


def test_without_highs_and_lows_stochastic_and_atr_come_from_the_closes():
    closes = [10.0, 12.0, 11.0, 13.0, 12.0, 14.0, 13.0, 15.0,
              14.0, 16.0, 15.0, 17.0, 16.0, 18.0, 17.0]
    b = of(closes)
    # |changes|: 2, 1, 2, 1, ... (7 of each) = 21 -> ATR 14 = 21 / 14
    assert b["atr_14"] == pytest.approx(21 / 14)
    # last 14 closes: lowest 11, highest 18 -> 100 * (17 - 11) / (18 - 11)
    assert b["stoch_k_14"] == pytest.approx(600 / 7)
    assert b == of(closes, closes, closes)
    # the last candle has no wicks: high = low = close, open = previous close 18
    assert (b["candle_upper_wick"], b["candle_lower_wick"]) == (0.0, 0.0)


# ----------------------------------------------------------------------------- std, Bollinger


def test_std_10_is_the_population_std():
    closes = [float(x) for x in range(1, 11)]  # 1 .. 10, mean 5.5
    squares = 2 * (0.5**2 + 1.5**2 + 2.5**2 + 3.5**2 + 4.5**2)  # 82.5
    b = of(closes)
    assert b["std_10"] == pytest.approx(math.sqrt(squares / 10))  # sqrt(8.25)
    assert b["std_10"] != pytest.approx(math.sqrt(squares / 9))  # not the sample std
    # only the last 10 count
    assert of([1000.0, *closes])["std_10"] == pytest.approx(math.sqrt(8.25))
    assert of(closes[:9])["std_10"] is None


def test_bollinger_20():
    closes = [10.0] * 10 + [12.0] * 10  # mean 11, every deviation 1 -> population std 1
    b = of(closes)
    assert b["std_20"] == pytest.approx(1.0)
    assert b["bb_mid_20"] == pytest.approx(11.0) == b["ma_20"]
    assert b["bb_upper_20"] == pytest.approx(13.0)  # 11 + 2 * 1
    assert b["bb_lower_20"] == pytest.approx(9.0)  # 11 - 2 * 1
    assert b["bb_position_20"] == pytest.approx((12 - 9) / (13 - 9))  # 0.75


def test_bollinger_position_is_not_clipped():
    # 19 closes of 10 and a last of 30: mean 11, deviations 1 (x19) and 19
    # population variance (19 + 361) / 20 = 19 -> std sqrt(19)
    b = of([10.0] * 19 + [30.0])
    std = math.sqrt(19)
    assert b["std_20"] == pytest.approx(std)
    lower, upper = 11 - 2 * std, 11 + 2 * std
    assert b["bb_position_20"] == pytest.approx((30 - lower) / (upper - lower))
    assert b["bb_position_20"] > 1


def test_bollinger_zero_width_is_middle():
    b = of([10.0] * 20)
    assert b["bb_upper_20"] == b["bb_lower_20"] == pytest.approx(10.0)
    assert b["bb_position_20"] == 0.5 and b["bb_zone_20"] == "middle"


@pytest.mark.parametrize(("position", "zone"), [
    (1.01, "above upper"), (1.0, "upper"), (0.76, "upper"), (0.75, "middle"), (0.5, "middle"),
    (0.25, "middle"), (0.24, "lower"), (0.0, "lower"), (-0.01, "below lower")])
def test_the_band_named_is_the_nearest_line_or_outside(position, zone):
    assert bb_zone(position) == zone


def test_the_bollinger_position_names_its_band_beside_the_number():
    closes = [10.0] * 10 + [12.0] * 10  # band 9 .. 13, close 12: position 0.75, middle
    b = of(closes)
    assert (b["bb_position_20"], b["bb_zone_20"]) == (pytest.approx(0.75), "middle")
    assert "position 0.75 (middle; 0 = lower band, 0.5 = middle, 1 = upper)" in render(b)
    spike = of([10.0] * 19 + [30.0])  # std sqrt(19) (test above): position sqrt(19) / 4 + 0.5
    assert spike["bb_position_20"] == pytest.approx(math.sqrt(19) / 4 + 0.5)  # 1.5897
    assert spike["bb_zone_20"] == "above upper"
    assert "position 1.59 (above upper;" in render(spike)
    # mean (100 + 72 + 7.5) / 20 = 8.975; squared deviations 10 x 1.025^2 + 9 x 0.975^2 +
    # 1.475^2 = 21.2375, so std sqrt(21.2375 / 20); the close 7.5 sits 0.14 up the band
    dip = of([10.0] * 10 + [8.0] * 9 + [7.5])
    std = math.sqrt(21.2375 / 20)
    assert dip["bb_position_20"] == pytest.approx((7.5 - (8.975 - 2 * std)) / (4 * std))
    assert dip["bb_position_20"] == pytest.approx(0.1421, abs=1e-4)
    assert dip["bb_zone_20"] == "lower" and "position 0.14 (lower;" in render(dip)
    assert "n/a (needs 20 bars)" in render(of([10.0] * 19)).split("Bollinger")[1]


# ----------------------------------------------------------------------------- candle


def test_candle_anatomy_with_the_previous_close_as_open():
    b = of([10.0, 11.5], [10.0, 12.5], [10.0, 9.0])  # open 10, close 11.5, high 12.5, low 9
    assert b["candle_body"] == pytest.approx(1.5)  # |11.5 - 10|
    assert b["candle_upper_wick"] == pytest.approx(1.0)  # 12.5 - max(10, 11.5)
    assert b["candle_lower_wick"] == pytest.approx(1.0)  # min(10, 11.5) - 9
    assert b["candle_direction"] == 1
    down = of([10.0, 9.0], [10.0, 10.5], [10.0, 8.0])  # open 10, close 9
    assert down["candle_body"] == pytest.approx(1.0)
    assert down["candle_upper_wick"] == pytest.approx(0.5)  # 10.5 - 10
    assert down["candle_lower_wick"] == pytest.approx(1.0)  # 9 - 8
    assert down["candle_direction"] == -1
    flat = of([10.0, 10.0], [10.0, 11.0], [10.0, 9.5])
    assert (flat["candle_body"], flat["candle_direction"]) == (0.0, 0)
    assert flat["candle_upper_wick"] == pytest.approx(1.0)
    assert flat["candle_lower_wick"] == pytest.approx(0.5)


def test_candle_wick_after_a_gap_is_clipped_at_zero():
    # open 110 (previous close) lies above the whole bar 103..105: no upper wick, not -5
    b = of([110.0, 104.0], [110.0, 105.0], [110.0, 103.0])
    assert b["candle_body"] == pytest.approx(6.0)
    assert b["candle_upper_wick"] == 0.0
    assert b["candle_lower_wick"] == pytest.approx(1.0)  # 104 - 103
    assert b["candle_direction"] == -1


# ----------------------------------------------------------------------------- volume


def test_volume_ratio_20():
    closes = [10.0] * 21
    volumes = [50.0] + [100.0] * 19 + [300.0]
    # last 20: 19 x 100 + 300 = 2200, mean 110 (the 50 in front is outside)
    assert of(closes, volumes=volumes)["volume_ratio_20"] == pytest.approx(300 / 110)
    assert of(closes[1:], volumes=volumes[1:])["volume_ratio_20"] == pytest.approx(300 / 110)
    assert of(closes[2:], volumes=volumes[2:])["volume_ratio_20"] is None
    assert of(closes)["volume_ratio_20"] is None  # no volumes sent
    assert of(closes[1:], volumes=[0.0] * 20)["volume_ratio_20"] == 1.0


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"closes": []}, "empty"),
    ({"closes": [1.0, float("nan"), 2.0]}, r"closes\[1\] is not finite"),
    ({"closes": [1.0, float("inf")]}, r"closes\[1\] is not finite"),
    ({"closes": [1.0, -2.0]}, r"closes\[1\] must be positive"),
    ({"closes": [0.0]}, r"closes\[0\] must be positive"),
    ({"closes": [1.0, "a"]}, "numbers"),
    ({"closes": [1.0, None]}, r"closes\[1\] is not a number"),
    ({"closes": [True, False]}, "numbers, not bool"),
    ({"closes": [1.0, {}]}, r"closes\[1\] is not a number"),
    ({"closes": "1.0"}, "string"),
    ({"closes": [[1.0, 2.0]]}, "flat"),
    ({"closes": [1.0, 2.0], "highs": [1.0]}, "highs has 1 values but closes has 2"),
    ({"closes": [1.0, 2.0], "lows": [1.0, 1.0, 1.0]}, "lows has 3 values but closes has 2"),
    ({"closes": [1.0, 2.0], "volumes": [5.0]}, "volumes has 1 values but closes has 2"),
    ({"closes": [1.0, 2.0], "highs": [1.0, float("nan")]}, r"highs\[1\] is not finite"),
    ({"closes": [10.0], "highs": [9.0], "lows": [11.0]}, "bar 0: high 9.0 is below low 11.0"),
    ({"closes": [10.0, 10.0], "highs": [11.0, 9.5], "lows": [9.0, 9.0]},
     "bar 1: close 10.0 is above high 9.5"),
    ({"closes": [10.0, 10.0], "highs": [11.0, 9.5]}, "bar 1: high 9.5 is below low 10.0"),
    ({"closes": [10.0, 10.0], "highs": [11.0, 11.0], "lows": [10.5, 9.0]},
     "bar 0: close 10.0 is below low 10.5"),
    ({"closes": [1.0], "volumes": [-1.0]}, r"volumes\[0\] must not be negative"),
    ({"closes": [1.0], "lows": [-1.0]}, r"lows\[0\] must be positive"),
])
def test_bad_series_raise_brief_error(kwargs, match):
    with pytest.raises(BriefError, match=match):
        Series.of(**kwargs)


def test_brief_error_is_a_value_error():
    assert issubclass(BriefError, ValueError)


def test_series_defaults_and_accepts_arrays_and_pandas():
    s = Series.of([1, 2, 3])
    assert s.closes.dtype == float
    np.testing.assert_array_equal(s.highs, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(s.lows, [1.0, 2.0, 3.0])
    assert s.volumes is None
    p = Series.of(pd.Series([1.0, 2.0]), np.array([1.5, 2.5]), volumes=(0, 7))
    np.testing.assert_array_equal(p.volumes, [0.0, 7.0])
    np.testing.assert_array_equal(p.lows, [1.0, 2.0])


def test_series_is_a_read_only_copy():
    sent = np.array([1.0, 2.0, 3.0])
    s = Series.of(sent)
    sent[0] = 99.0  # the caller's array stays the caller's
    assert s.closes[0] == 1.0
    with pytest.raises(ValueError):
        s.closes[0] = 5.0
    with pytest.raises(AttributeError):
        s.closes = sent  # type: ignore[misc]


# ----------------------------------------------------------------------------- render


def test_render_shows_n_a_with_the_bars_needed():
    text = render(of([10.0, 11.0, 12.0, 13.0, 14.0, 16.0]))
    assert "n/a (needs 200 bars)" in text  # ma_200, above_ma_200
    assert "n/a (needs 8 bars)" in text  # rsi_7
    assert "n/a (needs 15 bars)" in text  # rsi_14, atr_14
    assert "n/a (needs 20 bars)" in text  # Bollinger, volume ratio
    assert "None" not in text
    assert "13.2" in text  # ma_5
    assert "+60.00%" in text  # momentum_5
    lines = text.splitlines()
    ma_line = next(line for line in lines if line.startswith("SMA"))
    assert "5 13.2," in ma_line and "10 n/a (needs 10 bars)" in ma_line
    assert len(lines) == len(set(lines))


def test_render_full_brief_has_no_n_a_and_one_line_per_family():
    text = render(brief(wavy(250)))
    assert "n/a" not in text
    lines = text.splitlines()
    assert len(lines) == 12
    assert lines[0].startswith("bars: 250, last close ")
    assert any(line.startswith("RSI (Wilder): 7 ") for line in lines)
    assert any(line.startswith("close above SMA: 20 ") for line in lines)


def test_render_says_when_volumes_were_not_sent():
    text = render(of([10.0] * 25))
    assert "n/a (no volumes sent)" in text
    short = render(of([10.0] * 5))
    assert "ratio n/a (needs 20 bars)" in short


def test_render_reads_the_direction_and_flags_as_words():
    text = render(of([10.0] * 19 + [9.0]))
    assert "direction down" in text
    assert "20 no" in text
    assert "direction up" in render(of([10.0, 11.0]))
