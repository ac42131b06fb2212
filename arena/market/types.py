"""The market of one cycle as every contestant sees it: the universe table, the assets shown in
full (candles, indicators), the benchmarks and the screen. Built by
:func:`arena.market.briefing.build_market`, rendered by :mod:`arena.market.sections`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, NamedTuple

import pandas as pd

from arena.data.providers import is_synthetic
from arena.market.screener import ScreenResult

DEPTH = {"1w": 26, "1d": 30, "4h": 24}  # candles shown per interval (SPEC §1)


def clean(x: float | None) -> float | None:
    """A JSON-safe number: ``None`` for missing or non-finite values."""
    return None if x is None or not math.isfinite(x) else float(x)


def stale_marker(since: str | pd.Timestamp) -> str:
    """The flag a stale price carries wherever it is shown (briefing, reports):
    ``stale: last price 2025-11-20 21:00 UTC`` (``since``: when that price printed, UTC)."""
    return f"stale: last price {pd.Timestamp(since).tz_convert('UTC'):%Y-%m-%d %H:%M} UTC"


class Candle(NamedTuple):
    """One bar, labelled by its open time (ISO-8601 UTC); prices USD, volume in asset units."""

    open_time: str
    open: float
    high: float
    low: float
    close: float
    volume: float


@dataclass(frozen=True)
class UniverseRow:
    """One row of the universe table: exactly the 13 columns of SPEC §2 step 4."""

    symbol: str
    asset_class: str
    sector: str
    tradeable_today: bool
    price: float | None
    return_1d: float | None
    return_10d: float | None
    return_30d: float | None
    volatility_30d: float | None
    rsi_14d: float | None
    distance_from_30d_high: float | None
    adv_usd: float | None
    days_to_earnings: int | None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


TABLE_COLUMNS = tuple(f.name for f in fields(UniverseRow))


@dataclass(frozen=True)
class AssetDetail:
    """Full depth for one screened, held or benchmark asset."""

    symbol: str
    asset_class: str
    sector: str
    price: float | None
    price_time: str | None  # when the price printed (close time of its bar, ISO UTC)
    rsi_4h: float | None
    rsi_1d: float | None
    rsi_1w: float | None
    funding_rate: float | None  # fraction per funding period (8h on Binance); crypto only
    funding_time: str | None
    weekly: tuple[Candle, ...]
    daily: tuple[Candle, ...]
    four_hour: tuple[Candle, ...]

    def candles(self, interval: str) -> tuple[Candle, ...]:
        return {"1w": self.weekly, "1d": self.daily, "4h": self.four_hour}[interval]

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("weekly", "daily", "four_hour")}
        out["candles"] = {iv: {"columns": list(Candle._fields), "rows": [list(c) for c in
                                                                        self.candles(iv)]}
                          for iv in DEPTH}
        return out


@dataclass(frozen=True)
class MarketData:
    """Everything market-side a cycle shows, identical for every contestant.

    ``stale`` maps each asset whose price is stale at ``at`` (:func:`arena.market.asof.is_stale`:
    its ingest failed and its bars stopped early) to when its last price printed (ISO UTC). It is
    computed once, when the market is built: the screen leaves those assets out, the engine
    refuses to trade them (``stale_price``), a held one is valued at its last price and flagged
    in the briefing and the daily report.

    ``damaged`` maps each asset whose bars the cycle could not use to what is wrong, naming the
    partition (missing from the lake, unreadable, or holding bars no validated series has:
    :func:`arena.market.asof.scan_closed_bars`). Such an asset is treated as stale, never as
    blank: the screen leaves it out, the engine refuses to trade it, the briefing and the
    daily report name it.
    """

    at: pd.Timestamp
    provider: str
    nyse_trading_day: bool
    table: tuple[UniverseRow, ...]  # the 60 tradable assets, in universe order
    assets: tuple[AssetDetail, ...]  # screened (best first), then held-only assets
    benchmarks: tuple[AssetDetail, ...]  # BTC, SPY
    screen: ScreenResult
    held: tuple[str, ...] = ()
    stale: Mapping[str, str] = field(default_factory=dict)
    damaged: Mapping[str, str] = field(default_factory=dict)
    blind: bool = False  # shown under a season's blinding (arena.market.blind)

    @property
    def untradeable(self) -> frozenset[str]:
        """The assets nothing trades at this cycle: stale or damaged."""
        return frozenset(self.stale) | frozenset(self.damaged)

    @property
    def synthetic(self) -> bool:
        return is_synthetic(self.provider)

    @property
    def prices(self) -> dict[str, float]:
        """The cycle price of every tradable asset and benchmark that has one."""
        out = {r.symbol: r.price for r in self.table if r.price is not None}
        out.update({b.symbol: b.price for b in self.benchmarks if b.price is not None})
        return out

    def detail(self, symbol: str) -> AssetDetail:
        for d in (*self.assets, *self.benchmarks):
            if d.symbol == symbol:
                return d
        raise KeyError(f"{symbol} has no full-depth data in this briefing (neither screened, "
                       "held nor a benchmark)")

    def for_holdings(self, held: Iterable[str]) -> MarketData:
        """The market one contestant sees: screened assets plus its own ``held`` (which must have
        been passed to :func:`arena.market.briefing.build_market`)."""
        held = tuple(sorted(set(held)))
        missing = [s for s in held if s not in {d.symbol for d in self.assets}]
        if missing:
            raise KeyError(f"no candles for held {', '.join(missing)}: pass them to build_market")
        keep = set(self.screen.selected) | set(held)
        return replace(self, assets=tuple(d for d in self.assets if d.symbol in keep), held=held)

    def as_dict(self) -> dict[str, Any]:
        return {"at": self.at.isoformat(), "provider": self.provider, "synthetic": self.synthetic,
                "nyse_trading_day": self.nyse_trading_day, "table_columns": list(TABLE_COLUMNS),
                "table": [r.as_dict() for r in self.table],
                "assets": [d.as_dict() for d in self.assets],
                "benchmarks": [d.as_dict() for d in self.benchmarks],
                "screen": self.screen.as_dict(), "held": list(self.held), "stale": dict(self.stale),
                "damaged": dict(self.damaged), "blind": self.blind}
