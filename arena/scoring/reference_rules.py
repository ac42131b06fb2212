"""Reference rules and baselines (SPEC §5): the textbook signals every result is read against.

Each rule is a pure function ``rule(bars, *, periods_per_year) -> pd.Series``.

Conventions:

* ``bars`` has the columns ``timestamp`` (bar open time, UTC, strictly increasing), ``open``,
  ``high``, ``low``, ``close``, ``volume``, one row per bar on the asset's own clock. Rules read
  ``close`` and, where the textbook says so, ``high``/``low``. Missing or non-positive closes and
  unsorted timestamps raise ``ValueError``.
* The result is a float Series indexed like ``bars`` (same length and order) with values in
  [-1, +1]. Row t is the position **decided at the close of bar t from bars 0..t only**; the scorer
  applies it from bar t+1 on ("signals shifted by one bar"). Removing bars after t never changes
  row t (tested for every rule).
* **Warm-up**: while an indicator is not yet defined the position is 0.0 (flat).
  :func:`warmup_bars` gives the number of such leading rows for each rule, :func:`longest_warmup`
  the most of them; a rule with fewer bars of history before the scored window than its warm-up
  (:func:`has_history`) has no result there (``insufficient_history`` in the rules table).
* Indicators use the whole history passed in; the caller trims the display to the season.
* **Lookbacks** are stated in days, as the textbooks do. On daily (or coarser) data a day is one bar
  (200-day MA = 200 bars: 200 calendar days of crypto, 200 sessions of a stock). On intraday data a
  day is :func:`bars_per_day` bars, ``periods_per_year / 365`` (crypto hourly: 24), so every
  lookback, EMA span and smoothing length is multiplied by it and the rule keeps its daily
  horizon. Exceptions: the 12-month lookback is ``periods_per_year`` bars, and the RSI rule
  measures changes over one day (see :func:`rsi_14_reversion`). Thresholds (RSI 30/70,
  stochastic 20/80, 2 standard deviations) do not scale. The random baseline draws once a day.
* Indicator definitions: SMA(n) is the mean of the last n closes (undefined before n bars);
  EMA(n) has ``alpha = 2 / (n + 1)`` and is seeded with the SMA of its first n inputs (the
  StockCharts / TA-Lib convention); Wilder smoothing is the same with ``alpha = 1 / n``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import pandas as pd

from arena.core.indicators import ema, midrange, rsi_wilder, seeded_ewm, sma

Rule = Callable[..., "pd.Series"]

SESSIONS_PER_YEAR = 252.0  # an exchange clock: a "day" is a session
DAYS_PER_YEAR = 365.0  # a day on an intraday clock is periods_per_year / DAYS_PER_YEAR bars
DAILY_MAX_PERIODS = 366.0  # periods_per_year at or below this: daily (or coarser) bars, 1 bar = 1 day
RISKMETRICS_LAMBDA = 0.94  # daily decay of the RiskMetrics EWMA variance
VOL_WARMUP_DAYS = 20  # squared returns averaged to seed the EWMA variance
DEFAULT_TARGET_VOL = 0.20  # annualised


# ------------------------------------------------------------------------------------- clocks
def bars_per_day(periods_per_year: float) -> float:
    """Bars in one day of the textbook lookbacks on a clock with ``periods_per_year`` bars a year.

    Daily or coarser data (``periods_per_year <= 366``: 365 crypto days, 252 stock sessions): 1,
    so a 200-day MA is 200 bars. Intraday data on an exchange clock (a multiple of 252 sessions a
    year, e.g. 252 x 7 hourly stock bars): bars per session, so "200 days" is 200 sessions on
    hourly bars as on daily ones. Other intraday data: ``periods_per_year / 365`` (crypto hourly
    8760 -> 24).
    """
    if not periods_per_year > 0:
        raise ValueError(f"periods_per_year must be positive, got {periods_per_year}")
    if periods_per_year <= DAILY_MAX_PERIODS:
        return 1.0
    if periods_per_year % SESSIONS_PER_YEAR == 0:
        return periods_per_year / SESSIONS_PER_YEAR
    return periods_per_year / DAYS_PER_YEAR


def lookback(days: float, periods_per_year: float) -> int:
    """A day-based lookback in bars of the given clock (rounded half up, at least 1)."""
    return max(1, math.floor(days * bars_per_day(periods_per_year) + 0.5))


# --------------------------------------------------------------------------------- indicators
_CHECKED: ContextVar[tuple[pd.DataFrame, tuple[pd.Series, pd.Series, pd.Series]] | None] = \
    ContextVar("checked_bars", default=None)


@contextmanager
def checked_once(bars: pd.DataFrame) -> Iterator[None]:
    """Inside, every rule given this very frame reads the close, high and low of one check of
    it (:func:`_prices`), not one check per rule: a table of rules scores a dozen on one frame.
    The rules never change their inputs, so sharing them changes no position."""
    token = _CHECKED.set((bars, _checked_prices(bars)))
    try:
        yield
    finally:
        _CHECKED.reset(token)


def _prices(bars: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    """close, high, low as floats on ``bars.index``, after the input checks (done once per
    frame inside :func:`checked_once`)."""
    held = _CHECKED.get()
    if held is not None and held[0] is bars:
        return held[1]
    return _checked_prices(bars)


def _checked_prices(bars: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    missing = {"timestamp", "high", "low", "close"} - set(bars.columns)
    if missing:
        raise ValueError(f"bars lack the column(s) {sorted(missing)}")
    ts = pd.DatetimeIndex(bars["timestamp"])
    if not (ts.is_monotonic_increasing and ts.is_unique):
        raise ValueError("bars must be sorted by timestamp, one row per bar")
    close, high, low = (bars[c].astype(float) for c in ("close", "high", "low"))
    if close.isna().any() or (close <= 0).any() or high.isna().any() or low.isna().any():
        raise ValueError("bars have missing or non-positive prices")
    return close, high, low


def _positions(bars: pd.DataFrame, name: str, long: object, short: object = False,
               defined: object = True) -> pd.Series:
    """+1 where ``long``, -1 where ``short``, else 0; 0 where not ``defined`` (warm-up)."""
    values = np.where(np.asarray(short, bool), -1.0, np.where(np.asarray(long, bool), 1.0, 0.0))
    values = np.where(np.asarray(defined, bool), values, 0.0)
    return pd.Series(np.broadcast_to(values, (len(bars),)).copy(), index=bars.index, name=name)


# -------------------------------------------------------------------------------------- rules
def buy_and_hold(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """+1 on every bar (no warm-up)."""
    _prices(bars)
    return _positions(bars, "buy_and_hold", True)


def above_ma200(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """+1 when close > SMA(200) of closes, else 0. Warm-up: the first 200 - 1 bars."""
    close, _, _ = _prices(bars)
    return _positions(bars, "above_ma200", close > sma(close, lookback(200, periods_per_year)))


def golden_cross(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """+1 when SMA(50) > SMA(200), else 0 (long only). Warm-up: 200 - 1 bars."""
    close, _, _ = _prices(bars)
    fast, slow = (sma(close, lookback(d, periods_per_year)) for d in (50, 200))
    return _positions(bars, "golden_cross", fast > slow)


def sma_crossover_20_50(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """+1 when SMA(20) > SMA(50), else -1 (ties -1). Warm-up: 50 - 1 bars."""
    close, _, _ = _prices(bars)
    fast, slow = (sma(close, lookback(d, periods_per_year)) for d in (20, 50))
    up = fast > slow
    return _positions(bars, "sma_crossover_20_50", up, ~up, slow.notna())


def macd_12_26_9(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """MACD line = EMA(12) - EMA(26) of closes, signal = EMA(9) of the MACD line (SMA-seeded
    EMAs): +1 when line > signal, else -1 (ties -1). Warm-up: (26 - 1) + (9 - 1) = 33 bars."""
    close, _, _ = _prices(bars)
    fast, slow, smooth = (lookback(d, periods_per_year) for d in (12, 26, 9))
    line = ema(close, fast) - ema(close, slow)
    signal = ema(line, smooth)
    up = line > signal
    return _positions(bars, "macd_12_26_9", up, ~up, signal.notna())


def ichimoku(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """Ichimoku 9/26/52 on high/low. Tenkan = midrange(9), Kijun = midrange(26), Senkou A =
    (Tenkan + Kijun) / 2, Senkou B = midrange(52), both plotted 26 bars ahead: the cloud at bar t
    is computed from bars up to t - 26 (midrange(n) = (highest high + lowest low) / 2 over n bars).
    +1 when close > the cloud top (max of A, B), -1 when close < its bottom, 0 inside or on an
    edge. Warm-up: (52 - 1) + 26 = 77 bars."""
    close, high, low = _prices(bars)
    n9, n26, n52 = (lookback(d, periods_per_year) for d in (9, 26, 52))
    span_a = ((midrange(high, low, n9) + midrange(high, low, n26)) / 2.0).shift(n26)
    span_b = midrange(high, low, n52).shift(n26)
    top, bottom = np.maximum(span_a, span_b), np.minimum(span_a, span_b)
    return _positions(bars, "ichimoku", close > top, close < bottom)


def momentum_60(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """Sign of the 60-day return ``close_t / close_(t-60) - 1``: +1, -1, or 0 when exactly 0.
    Warm-up: 60 bars."""
    close, _, _ = _prices(bars)
    past = close.shift(lookback(60, periods_per_year))
    return _positions(bars, "momentum_60", close > past, close < past)


def absolute_momentum_12m(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """+1 when the 12-month return is > 0, else 0 (long only); 12 months = ``periods_per_year``
    bars (365 crypto days, 252 stock sessions, 8760 crypto hours). Warm-up: that many bars."""
    close, _, _ = _prices(bars)
    past = close.shift(max(1, math.floor(periods_per_year + 0.5)))
    return _positions(bars, "absolute_momentum_12m", close > past)


def donchian_20(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """Donchian breakout: +1 on a close above the highest high of the 20 previous bars (current
    bar excluded), -1 on a close below their lowest low, otherwise the previous position (flat
    until the first breakout). Warm-up: 20 bars."""
    close, high, low = _prices(bars)
    n = lookback(20, periods_per_year)
    upper = high.shift(1).rolling(n, min_periods=n).max()
    lower = low.shift(1).rolling(n, min_periods=n).min()
    event = np.where(close > upper, 1.0, np.where(close < lower, -1.0, np.nan))
    held = pd.Series(event, index=bars.index).ffill().fillna(0.0).to_numpy()
    return _positions(bars, "donchian_20", held > 0, held < 0)


def rsi_14_reversion(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """Wilder RSI(14) (:func:`rsi_wilder`): +1 when RSI < 30, -1 when RSI > 70, else 0.
    Warm-up: 14 bars. Intraday, the RSI is that of DAILY changes (``close_t - close_(t - 1 day)``)
    Wilder-smoothed over 14 days of bars, i.e. the daily RSI evaluated at every bar (warm-up
    1 + 14 days of bars, minus one): an RSI of 14 x 24 hourly changes would sit near 50, because
    the sum of hourly moves grows with their number while the net move does not."""
    close, _, _ = _prices(bars)
    rsi = rsi_wilder(close, lookback(14, periods_per_year), step=lookback(1, periods_per_year))
    return _positions(bars, "rsi_14_reversion", rsi < 30.0, rsi > 70.0)


def stochastic_14_3(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """Slow-signal stochastic: %K = 100 x (close - lowest low) / (highest high - lowest low) over
    the last 14 bars, current included (50 when the range is 0); %D = SMA(3) of %K. +1 when
    %D < 20, -1 when %D > 80, else 0. Warm-up: (14 - 1) + (3 - 1) = 15 bars."""
    close, high, low = _prices(bars)
    n, m = lookback(14, periods_per_year), lookback(3, periods_per_year)
    hh, ll = high.rolling(n, min_periods=n).max(), low.rolling(n, min_periods=n).min()
    width = hh - ll
    k = (100.0 * (close - ll) / width.where(width > 0)).where(~(width == 0), 50.0)
    d = sma(k, m)
    return _positions(bars, "stochastic_14_3", d < 20.0, d > 80.0)


def bollinger_20_reversion(bars: pd.DataFrame, *, periods_per_year: float) -> pd.Series:
    """Bands SMA(20) +/- 2 x the POPULATION standard deviation (ddof=0, Bollinger's own) of the
    same 20 closes: +1 when close < lower band, -1 when close > upper band, else 0.
    Warm-up: 20 - 1 bars."""
    close, _, _ = _prices(bars)
    n = lookback(20, periods_per_year)
    mid, sd = sma(close, n), close.rolling(n, min_periods=n).std(ddof=0)
    return _positions(bars, "bollinger_20_reversion", close < mid - 2.0 * sd,
                      close > mid + 2.0 * sd)


def volatility_targeting(bars: pd.DataFrame, *, periods_per_year: float,
                         target_vol: float = DEFAULT_TARGET_VOL,
                         decay: float = RISKMETRICS_LAMBDA) -> pd.Series:
    """Long only, weight ``min(1, target_vol / realised_vol)``. Realised vol is the RiskMetrics
    EWMA of squared log returns (no demeaning), ``var_t = decay x var_(t-1) + (1 - decay) x r_t^2``
    with ``decay = 0.94`` a day (``0.94 ** (1 / bars_per_day)`` a bar intraday), seeded with the
    mean of the first 20 days of squared returns and annualised as ``sqrt(var x periods_per_year)``;
    zero variance gives weight 1. Warm-up: 20 bars (the first return is at bar 1)."""
    close, _, _ = _prices(bars)
    r2 = np.log(close).diff() ** 2
    per_bar = decay ** (1.0 / bars_per_day(periods_per_year))
    var = seeded_ewm(r2, lookback(VOL_WARMUP_DAYS, periods_per_year), 1.0 - per_bar)
    vol = np.sqrt(var.to_numpy() * periods_per_year)
    with np.errstate(divide="ignore"):
        weight = np.where(vol > 0, np.minimum(1.0, target_vol / vol), 1.0)
    weight = np.where(var.notna(), weight, 0.0)
    return pd.Series(weight, index=bars.index, name="volatility_targeting")


def random_positions(bars: pd.DataFrame, *, periods_per_year: float, seed: int = 0) -> pd.Series:
    """-1, 0 or +1 with equal probability, a fresh draw every day (every bar on daily data, every
    ``bars_per_day`` bars intraday, counted from the first bar), from ``numpy.random.default_rng(
    seed)``. Deterministic for a seed; a prefix of the bars gets a prefix of the draws."""
    _prices(bars)
    step = lookback(1, periods_per_year)
    draws = np.floor(np.random.default_rng(seed).random(-(-len(bars) // step)) * 3.0) - 1.0
    return pd.Series(np.repeat(draws, step)[:len(bars)], index=bars.index, name="random")


RULES: dict[str, Rule] = {
    "buy_and_hold": buy_and_hold,
    "above_ma200": above_ma200,
    "golden_cross": golden_cross,
    "sma_crossover_20_50": sma_crossover_20_50,
    "macd_12_26_9": macd_12_26_9,
    "ichimoku": ichimoku,
    "momentum_60": momentum_60,
    "absolute_momentum_12m": absolute_momentum_12m,
    "donchian_20": donchian_20,
    "rsi_14_reversion": rsi_14_reversion,
    "stochastic_14_3": stochastic_14_3,
    "bollinger_20_reversion": bollinger_20_reversion,
    "volatility_targeting": volatility_targeting,
}

BASELINES: dict[str, Rule] = {
    "buy_and_hold": buy_and_hold,
    "volatility_targeting": volatility_targeting,
    "random": random_positions,
}

_WARMUP: dict[str, Callable[[float], int]] = {
    "buy_and_hold": lambda p: 0,
    "above_ma200": lambda p: lookback(200, p) - 1,
    "golden_cross": lambda p: lookback(200, p) - 1,
    "sma_crossover_20_50": lambda p: lookback(50, p) - 1,
    "macd_12_26_9": lambda p: lookback(26, p) - 1 + lookback(9, p) - 1,
    "ichimoku": lambda p: lookback(52, p) - 1 + lookback(26, p),
    "momentum_60": lambda p: lookback(60, p),
    "absolute_momentum_12m": lambda p: max(1, math.floor(p + 0.5)),
    "donchian_20": lambda p: lookback(20, p),
    "rsi_14_reversion": lambda p: lookback(1, p) + lookback(14, p) - 1,
    "stochastic_14_3": lambda p: lookback(14, p) - 1 + lookback(3, p) - 1,
    "bollinger_20_reversion": lambda p: lookback(20, p) - 1,
    "volatility_targeting": lambda p: lookback(VOL_WARMUP_DAYS, p),
    "random": lambda p: 0,
}


def warmup_bars(name: str, *, periods_per_year: float) -> int:
    """Leading bars on which rule or baseline ``name`` is flat for lack of history: its first
    defined position is at row ``warmup_bars(...)``. Load at least that many bars before the
    season start for the rule to be live from the first bar of the season."""
    return _WARMUP[name](periods_per_year)


def longest_warmup(periods_per_year: float) -> int:
    """The most bars any rule or baseline needs before its first defined position (on daily
    bars the 12-month momentum's 365 days or 252 sessions): the history a season's market must
    hold before its first cycle for every rule to be live from it."""
    return max(_WARMUP[name](periods_per_year) for name in _WARMUP)


def has_history(name: str, history_bars: int, *, periods_per_year: float) -> bool:
    """Whether ``history_bars`` bars before the first scored one cover rule ``name``'s window
    (:func:`warmup_bars`): without them the rule sits flat for want of data, and its result is
    not a result of the rule."""
    return history_bars >= warmup_bars(name, periods_per_year=periods_per_year)
