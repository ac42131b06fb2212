"""The brief a trading terminal's debate reads, computed from the price series the terminal sends.

A terminal sends ``closes`` (required, oldest first) and, optionally, ``highs``, ``lows`` and
``volumes`` of the same length. :meth:`Series.of` validates them (or raises :class:`BriefError`
naming the problem), :func:`brief` turns them into one flat mapping of :data:`KEYS`, and
:func:`render` writes that mapping as compact text, one indicator family per line.

Conventions (every value is read at the last bar and uses the sent bars only):

* A value is ``None`` exactly when the series is shorter than it needs (:data:`NEEDS`: the
  number of bars each key needs); nothing is extrapolated or guessed. The one other ``None`` is
  ``volume_ratio_20`` when no volumes were sent.
* ``highs`` and ``lows`` default to the closes when not sent, so the stochastic and the ATR are
  then computed from the closes alone (the true range becomes ``|close - previous close|``).
* ``ma_n``: the simple mean of the last n closes (:func:`arena.core.indicators.sma`);
  ``above_ma_n``: the last close strictly above it.
* ``ema_n``: :func:`arena.core.indicators.ema`, ``alpha = 2 / (n + 1)``, **seeded with the SMA of
  the first n closes** (at bar n; the StockCharts / TA-Lib convention), then run over every later
  sent bar. It therefore depends (less and less) on how far back the sent series reaches.
* ``rsi_n``: Wilder's RSI (:func:`arena.core.indicators.rsi_values`) over all sent closes: the
  first average gain/loss is the simple mean of the first n bar-to-bar changes, then Wilder
  smoothing ``avg = (avg x (n - 1) + value) / n``; 100 with no losses, 50 on a flat window. It
  needs n + 1 closes.
* ``stoch_k_14``: the stochastic's %K ``= 100 (close - lowest low) / (highest high - lowest
  low)`` over the last 14 bars, current bar included; **50.0 when that range is 0** (a flat window
  sits in the middle). ``stoch_d_14``: its %D, the simple mean of the last 3 %K values (each over
  its own 14 bars), so it needs 16 bars.
* ``atr_n``: Wilder's average of the true range ``max(high - low, |high - prev close|,
  |low - prev close|)``, which exists from the second bar on; the first ATR (at bar n + 1) is the
  mean of the first n true ranges, then Wilder smoothing
  (:func:`arena.core.indicators.seeded_ewm` with ``alpha = 1 / n``). It needs n + 1 bars.
* ``std_n``: the **population** standard deviation (``ddof = 0``) of the last n closes; the
  Bollinger band is ``ma_20 ± 2 x std_20`` (the same population std, Bollinger's own choice), and
  ``bb_position_20 = (close - lower) / (upper - lower)``, not clipped (below 0 under the lower
  band, above 1 over the upper), **0.5 when the band has zero width**. ``bb_zone_20`` names where
  the close sits: ``"above upper"`` (position above 1), ``"below lower"`` (below 0), else the
  line of the band it is nearest to - ``"upper"`` (position above 0.75), ``"lower"`` (below
  0.25) or ``"middle"`` (0.25 to 0.75, both included).
* ``momentum_n = close / close n bars earlier - 1`` (a fraction); it needs n + 1 bars.
* The candle: terminals send no opens, so **the open is the previous close** (the candle needs 2
  bars). ``candle_body = |close - open|``, ``candle_upper_wick = high - max(open, close)``,
  ``candle_lower_wick = min(open, close) - low``, each **clipped at 0**: after a gap the derived
  open can lie outside the bar's high-low range, and a wick is never negative.
  ``candle_direction`` is +1 (close above open), -1 (below) or 0 (equal).
* ``volume_ratio_20``: the last volume over the mean of the last 20 volumes (the last included);
  **1.0 when those 20 volumes are all zero** (the last equals the mean).

The mapping holds plain Python ``int``/``float``/``bool``/``str``/``None``, ready for JSON.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from arena.core.errors import UnusableInput
from arena.core.indicators import atr, bollinger, ema, rolling_std, rsi_values, sma

MA_PERIODS = (5, 10, 20, 50, 100, 200)
ABOVE_MA_PERIODS = (20, 50, 200)
EMA_PERIODS = (9, 21, 55)
RSI_PERIODS = (7, 14, 21)
STOCH_PERIOD = 14
STOCH_D = 3  # %D: the mean of this many %K values
ATR_PERIODS = (14, 21)
STD_PERIODS = (10, 20)
BB_PERIOD = 20
BB_WIDTH = 2.0
MOMENTUM_PERIODS = (5, 10, 20)
VOLUME_PERIOD = 20

# key -> the number of bars it needs (fewer bars: None)
NEEDS: dict[str, int] = {
    "bars": 1,
    "close": 1,
    **{f"ma_{n}": n for n in MA_PERIODS},
    **{f"above_ma_{n}": n for n in ABOVE_MA_PERIODS},
    **{f"ema_{n}": n for n in EMA_PERIODS},
    **{f"rsi_{n}": n + 1 for n in RSI_PERIODS},
    f"stoch_k_{STOCH_PERIOD}": STOCH_PERIOD,
    f"stoch_d_{STOCH_PERIOD}": STOCH_PERIOD + STOCH_D - 1,
    **{f"atr_{n}": n + 1 for n in ATR_PERIODS},
    **{f"std_{n}": n for n in STD_PERIODS},
    **{f"bb_{part}_{BB_PERIOD}": BB_PERIOD
       for part in ("mid", "upper", "lower", "position", "zone")},
    **{f"momentum_{n}": n + 1 for n in MOMENTUM_PERIODS},
    **{f"candle_{part}": 2 for part in ("body", "upper_wick", "lower_wick", "direction")},
    f"volume_ratio_{VOLUME_PERIOD}": VOLUME_PERIOD,
}
KEYS: tuple[str, ...] = tuple(NEEDS)

Value = float | int | bool | str | None
#: the names of where a close sits against its Bollinger band, from the top
BB_ZONES = ("above upper", "upper", "middle", "lower", "below lower")


class BriefError(UnusableInput, ValueError):
    """The sent series cannot be briefed; the message names the problem."""


def _array(name: str, values: Any) -> np.ndarray:
    """``values`` as a 1-D float array of finite numbers, or :class:`BriefError`."""
    if isinstance(values, (str, bytes)):
        raise BriefError(f"{name} must be a sequence of numbers, not a string")
    try:
        raw = np.asarray(values)
    except Exception as exc:  # ragged nesting and the like
        raise BriefError(f"{name} must be a sequence of numbers ({exc})") from None
    if raw.ndim != 1:
        raise BriefError(f"{name} must be a flat sequence of numbers (got {raw.ndim} dimensions)")
    if raw.dtype.kind == "O":
        for i, v in enumerate(raw.tolist()):
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise BriefError(f"{name}[{i}] is not a number: {v!r}")
    elif raw.dtype.kind not in "iuf":
        bad = next(iter(raw.tolist()), None)
        raise BriefError(f"{name} must hold numbers, not {raw.dtype} values (first: {bad!r})")
    out = raw.astype(float)
    for i in np.flatnonzero(~np.isfinite(out)).tolist()[:1]:
        raise BriefError(f"{name}[{i}] is not finite: {float(out[i])!r}")
    return out


def _positive(name: str, x: np.ndarray) -> None:
    for i in np.flatnonzero(x <= 0).tolist()[:1]:
        raise BriefError(f"{name}[{i}] must be positive, got {float(x[i])!r}")


@dataclass(frozen=True, eq=False)  # numpy fields: identity equality and hash
class Series:
    """The bars a terminal sent, validated (build it with :meth:`Series.of`); arrays read-only."""

    closes: np.ndarray
    highs: np.ndarray
    lows: np.ndarray
    volumes: np.ndarray | None

    @classmethod
    def of(cls, closes: Any, highs: Any = None, lows: Any = None,
           volumes: Any = None) -> Series:
        """Validate and default a sent series.

        Raises :class:`BriefError` unless: there is at least one bar; every value is a finite
        number; closes, highs and lows are positive and volumes non-negative; all sent arrays
        have the closes' length; and on every bar ``high >= low`` and ``low <= close <= high``
        (after ``highs`` and ``lows`` default to the closes).
        """
        c = _array("closes", closes)
        if len(c) == 0:
            raise BriefError("closes is empty: at least one bar is needed")
        _positive("closes", c)
        sent: dict[str, np.ndarray | None] = {}
        for name, values in (("highs", highs), ("lows", lows), ("volumes", volumes)):
            if values is None:
                sent[name] = None
                continue
            arr = _array(name, values)
            if len(arr) != len(c):
                raise BriefError(f"{name} has {len(arr)} values but closes has {len(c)}")
            if name == "volumes":
                for i in np.flatnonzero(arr < 0).tolist()[:1]:
                    raise BriefError(f"volumes[{i}] must not be negative, got {float(arr[i])!r}")
            else:
                _positive(name, arr)
            sent[name] = arr
        h = c.copy() if sent["highs"] is None else sent["highs"]
        lo = c.copy() if sent["lows"] is None else sent["lows"]
        for i in np.flatnonzero(h < lo).tolist()[:1]:
            raise BriefError(f"bar {i}: high {float(h[i])!r} is below low {float(lo[i])!r}")
        for i in np.flatnonzero(c > h).tolist()[:1]:
            raise BriefError(f"bar {i}: close {float(c[i])!r} is above high {float(h[i])!r}")
        for i in np.flatnonzero(c < lo).tolist()[:1]:
            raise BriefError(f"bar {i}: close {float(c[i])!r} is below low {float(lo[i])!r}")
        v = sent["volumes"]
        for arr in (c, h, lo, v):
            if arr is not None:
                arr.setflags(write=False)
        return cls(closes=c, highs=h, lows=lo, volumes=v)


def _last(x: pd.Series) -> float | None:
    value = float(x.iloc[-1])
    return None if math.isnan(value) else value


def _stochastic_k(series: Series, end: int) -> float:
    """%K at the bar before ``end`` (``end`` bars counted from the first), over its last
    :data:`STOCH_PERIOD` bars."""
    n = STOCH_PERIOD
    lowest = float(series.lows[end - n:end].min())
    highest = float(series.highs[end - n:end].max())
    span = highest - lowest
    return 50.0 if span == 0 else 100.0 * (float(series.closes[end - 1]) - lowest) / span


def bb_zone(position: float) -> str:
    """Where a close at ``position`` (0 = lower band, 1 = upper) sits: outside the band, or
    the band's line it is nearest to (a tie goes to the middle); one of :data:`BB_ZONES`."""
    if position > 1:
        return "above upper"
    if position < 0:
        return "below lower"
    if position > 0.75:
        return "upper"
    return "lower" if position < 0.25 else "middle"


def brief(series: Series) -> dict[str, Value]:
    """The brief of ``series``: every key of :data:`KEYS`, in that order (module docstring)."""
    c = series.closes
    bars = len(c)
    close = float(c[-1])
    closes = pd.Series(c)
    out: dict[str, Value] = dict.fromkeys(KEYS)
    out["bars"] = bars
    out["close"] = close

    for n in MA_PERIODS:
        if bars >= n:
            out[f"ma_{n}"] = _last(sma(closes, n))
    for n in ABOVE_MA_PERIODS:
        ma = out[f"ma_{n}"]
        if ma is not None:
            out[f"above_ma_{n}"] = bool(close > ma)
    for n in EMA_PERIODS:
        if bars >= n:
            out[f"ema_{n}"] = _last(ema(closes, n))
    for n in RSI_PERIODS:
        if bars >= n + 1:
            out[f"rsi_{n}"] = float(rsi_values(c, n)[-1])

    n = STOCH_PERIOD
    if bars >= n:
        out[f"stoch_k_{n}"] = _stochastic_k(series, bars)
    if bars >= n + STOCH_D - 1:
        ks = [_stochastic_k(series, end) for end in range(bars - STOCH_D + 1, bars + 1)]
        out[f"stoch_d_{n}"] = sum(ks) / STOCH_D

    highs, lows = pd.Series(series.highs), pd.Series(series.lows)
    for n in ATR_PERIODS:
        if bars >= n + 1:
            out[f"atr_{n}"] = _last(atr(highs, lows, closes, n))

    for n in STD_PERIODS:
        if bars >= n:
            out[f"std_{n}"] = _last(rolling_std(closes[-n:].reset_index(drop=True), n))

    n = BB_PERIOD
    if bars >= n:
        bands = bollinger(closes, n, BB_WIDTH)
        position = _last(bands.position)
        assert position is not None
        out[f"bb_mid_{n}"], out[f"bb_upper_{n}"] = _last(bands.middle), _last(bands.upper)
        out[f"bb_lower_{n}"] = _last(bands.lower)
        out[f"bb_position_{n}"], out[f"bb_zone_{n}"] = position, bb_zone(position)

    for n in MOMENTUM_PERIODS:
        if bars >= n + 1:
            out[f"momentum_{n}"] = close / float(c[-1 - n]) - 1.0

    if bars >= 2:
        open_ = float(c[-2])
        high, low = float(series.highs[-1]), float(series.lows[-1])
        out["candle_body"] = abs(close - open_)
        out["candle_upper_wick"] = max(0.0, high - max(open_, close))
        out["candle_lower_wick"] = max(0.0, min(open_, close) - low)
        out["candle_direction"] = (close > open_) - (close < open_)

    n = VOLUME_PERIOD
    if series.volumes is not None and bars >= n:
        mean = float(np.mean(series.volumes[-n:]))
        out[f"volume_ratio_{n}"] = 1.0 if mean == 0 else float(series.volumes[-1]) / mean
    return out


# ----------------------------------------------------------------------------- rendering


def _price(x: float) -> str:
    """Six significant digits, more for large values (never exponent notation above 1e-4)."""
    if x == 0:
        return "0"
    digits = max(6, math.floor(math.log10(abs(x))) + 3)
    return f"{x:.{digits}g}"


def _missing(b: Mapping[str, Any], key: str) -> str:
    need = NEEDS.get(key)
    bars = b.get("bars")
    if key.startswith("volume_") and isinstance(bars, int) and need is not None and bars >= need:
        return "n/a (no volumes sent)"
    return f"n/a (needs {need} bars)" if need is not None else "n/a"


def _show(b: Mapping[str, Any], key: str, fmt=_price) -> str:
    value = b.get(key)
    return _missing(b, key) if value is None else fmt(value)


def _family(b: Mapping[str, Any], title: str, keys: list[tuple[str, str]], fmt=_price) -> str:
    return f"{title}: " + ", ".join(f"{label} {_show(b, key, fmt)}" for label, key in keys)


def _bb_position(b: Mapping[str, Any]) -> str:
    """The close's place in its Bollinger band: the band's name beside the number."""
    key = f"bb_position_{BB_PERIOD}"
    if b.get(key) is None:
        return _missing(b, key)
    zone = b.get(f"bb_zone_{BB_PERIOD}") or bb_zone(float(b[key]))
    return f"{float(b[key]):.2f} ({zone}; 0 = lower band, 0.5 = middle, 1 = upper)"


def render(b: Mapping[str, Any]) -> str:
    """``b`` (a :func:`brief`) as compact text, one indicator family per line; a missing value
    reads ``n/a (needs N bars)`` (``n/a (no volumes sent)`` for the volume ratio of a long enough
    series sent without volumes)."""
    one = "{:.1f}".format
    pct = "{:+.2%}".format

    def yes_no(v: bool) -> str:
        return "yes" if v else "no"

    def direction(v: int) -> str:
        return {1: "up", -1: "down"}.get(int(v), "flat")

    bars = b.get("bars")
    lines = [
        f"bars: {bars if bars is not None else 'n/a'}, last close {_show(b, 'close')}",
        _family(b, "SMA", [(str(n), f"ma_{n}") for n in MA_PERIODS]),
        _family(b, "close above SMA", [(str(n), f"above_ma_{n}") for n in ABOVE_MA_PERIODS],
                yes_no),
        _family(b, "EMA (SMA-seeded)", [(str(n), f"ema_{n}") for n in EMA_PERIODS]),
        _family(b, "RSI (Wilder)", [(str(n), f"rsi_{n}") for n in RSI_PERIODS], one),
        _family(b, f"stochastic ({STOCH_PERIOD}, {STOCH_D})",
                [("%K", f"stoch_k_{STOCH_PERIOD}"), ("%D", f"stoch_d_{STOCH_PERIOD}")], one),
        _family(b, "ATR (Wilder)", [(str(n), f"atr_{n}") for n in ATR_PERIODS]),
        _family(b, "std dev (population)", [(str(n), f"std_{n}") for n in STD_PERIODS]),
        _family(b, f"Bollinger {BB_PERIOD} (±{BB_WIDTH:g} std)",
                [(part, f"bb_{part}_{BB_PERIOD}") for part in ("lower", "mid", "upper")])
        + f", position {_bb_position(b)}",
        _family(b, "momentum", [(str(n), f"momentum_{n}") for n in MOMENTUM_PERIODS], pct),
        _family(b, "last candle (open = previous close)",
                [("body", "candle_body"), ("upper wick", "candle_upper_wick"),
                 ("lower wick", "candle_lower_wick")])
        + f", direction {_show(b, 'candle_direction', direction)}",
        _family(b, "volume vs 20-bar mean", [("ratio", f"volume_ratio_{VOLUME_PERIOD}")],
                "{:.2f}x".format),
    ]
    return "\n".join(lines)
