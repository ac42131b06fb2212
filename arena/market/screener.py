"""The daily screen (SPEC §2 step 1): deterministic, the same for every contestant.

For every tradable asset, from its **daily bars closed by the cycle time**::

    score = average daily dollar volume x (1 + |10-day return|)

* *average daily dollar volume* (ADV, USD): the mean of ``close x volume`` over the last 30 daily
  bars (UTC days for crypto, NYSE sessions for stocks);
* *10-day return* (fraction): ``close[-1] / close[-11] - 1`` over the last 11 daily closes.

An asset with fewer bars than that has no score and is never screened (no guessing), nor is an
asset whose price is stale at the cycle (:func:`arena.market.asof.is_stale`: its data stopped
arriving, so it cannot be traded this cycle). The top 5 crypto assets are screened every day,
the top 5 stocks only on NYSE trading days (the New York date of the cycle); ties are broken by
symbol. The screen decides candle depth in the prompt, never what may be traded.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.core.sessions import is_trading_day
from arena.core.universe import Universe
from arena.data.lake import Lake
from arena.market.asof import NY, closed_bars

ADV_DAYS = 30
MOMENTUM_DAYS = 10
TOP_N = 5


@dataclass(frozen=True)
class ScreenScore:
    """One asset's screen line. ``rank`` is 1-based within its asset class (``None``: unscored)."""

    symbol: str
    asset_class: str
    adv_usd: float | None
    return_10d: float | None
    score: float | None
    rank: int | None
    selected: bool

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ScreenResult:
    """The screen of one cycle: the selected symbols (best first) and every asset's score."""

    at: pd.Timestamp
    nyse_trading_day: bool
    crypto: tuple[str, ...]
    stocks: tuple[str, ...]
    scores: tuple[ScreenScore, ...]  # every tradable asset, ranked within class, then unscored

    @property
    def selected(self) -> tuple[str, ...]:
        return self.crypto + self.stocks

    def as_dict(self) -> dict[str, object]:
        return {"at": self.at.isoformat(), "nyse_trading_day": self.nyse_trading_day,
                "crypto": list(self.crypto), "stocks": list(self.stocks),
                "scores": [s.as_dict() for s in self.scores]}


def average_dollar_volume(daily: pd.DataFrame, days: int = ADV_DAYS) -> float | None:
    """Mean of ``close x volume`` (USD) over the last ``days`` daily bars; ``None`` if fewer."""
    if len(daily) < days:
        return None
    return float(np.mean(daily["close"].to_numpy()[-days:] * daily["volume"].to_numpy()[-days:]))


def period_return(close: pd.Series | np.ndarray, days: int) -> float | None:
    """``close[-1] / close[-1 - days] - 1`` (fraction); ``None`` without ``days + 1`` closes.
    ``close``: a series or the array of its values (the same number either way)."""
    if len(close) < days + 1:
        return None
    values = close.to_numpy() if isinstance(close, pd.Series) else close
    return float(values[-1] / values[-1 - days] - 1.0)


def screen_score(daily: pd.DataFrame) -> tuple[float | None, float | None, float | None]:
    """``(adv_usd, return_10d, score)`` of one asset's closed daily bars."""
    adv = average_dollar_volume(daily)
    ret = period_return(daily["close"].to_numpy(), MOMENTUM_DAYS)
    if adv is None or ret is None or not math.isfinite(adv * ret):
        return adv, ret, None
    return adv, ret, adv * (1.0 + abs(ret))


def screen_daily(daily: Mapping[str, pd.DataFrame], universe: Universe,
                 at: pd.Timestamp, stale: Collection[str] = ()) -> ScreenResult:
    """The screen from each tradable asset's closed daily bars (``daily[symbol]``). The
    ``stale`` symbols are left out: listed with their ADV and return, but no score or rank."""
    trading_day = is_trading_day(at.tz_convert(NY).date())
    lines: list[ScreenScore] = []
    chosen: dict[str, tuple[str, ...]] = {}
    no_bars = pd.DataFrame(columns=["close", "volume"])
    for asset_class in ("crypto", "stock"):
        assets = [a for a in universe.tradable if a.asset_class == asset_class]
        scored = []
        for a in assets:
            bars = daily.get(a.symbol)
            adv, ret, score = screen_score(no_bars if bars is None else bars)
            scored.append((a.symbol, adv, ret, None if a.symbol in stale else score))
        ranked = sorted((s for s in scored if s[3] is not None), key=lambda s: (-s[3], s[0]))
        eligible = asset_class == "crypto" or trading_day
        top = tuple(s[0] for s in ranked[:TOP_N]) if eligible else ()
        chosen[asset_class] = top
        for rank, (sym, adv, ret, score) in enumerate(ranked, start=1):
            lines.append(ScreenScore(sym, asset_class, adv, ret, score, rank, sym in top))
        for sym, adv, ret, _ in sorted(s for s in scored if s[3] is None):
            lines.append(ScreenScore(sym, asset_class, adv, ret, None, None, False))
    return ScreenResult(at, trading_day, chosen["crypto"], chosen["stock"], tuple(lines))


def screen(lake: Lake, provider: str, universe: Universe, at: pd.Timestamp) -> ScreenResult:
    """Read every tradable asset's daily bars closed by ``at`` from the lake, then screen."""
    daily = {a.symbol: closed_bars(lake, provider, a, "1d", at, limit=ADV_DAYS + 1)
             for a in universe.tradable}
    return screen_daily(daily, universe, at)
