"""A straightforward per-symbol ``build_market``: every series read on its own with
:func:`arena.market.asof.closed_bars` and :func:`arena.market.asof.last_price` (how the market was
built before its one-scan read). The reference the scan is checked and benchmarked against."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from arena.core.universe import Universe, UniverseError
from arena.data.lake import Lake, PartitionKey
from arena.market.asof import (
    closed_bars,
    last_price,
    latest_funding,
    next_earnings_days,
    price_interval,
    stale_prices,
)
from arena.market.briefing import (
    RSI_HISTORY,
    Providers,
    _detail,
    _row,
    provider_label,
    provider_of,
)
from arena.market.screener import screen_daily
from arena.market.types import MarketData


def build_market_per_symbol(lake: Lake, provider: Providers, universe: Universe,
                            at: pd.Timestamp, held: Iterable[str] = ()) -> MarketData:
    held_syms = tuple(sorted(set(held)))
    for s in held_syms:
        if not universe[s].tradable:
            raise UniverseError(f"{s} is not tradable, so it cannot be held")
    wanted = [*universe.tradable, *universe.benchmarks]
    source = {a.symbol: provider_of(provider, a) for a in wanted}
    daily = {a.symbol: closed_bars(lake, source[a.symbol], a, "1d", at, limit=RSI_HISTORY)
             for a in wanted}
    prices = {a.symbol: last_price(lake, source[a.symbol], a, at) for a in wanted}
    earnings: dict[str, int] = {}
    for name in sorted({source[a.symbol] for a in wanted if not a.is_crypto}):
        days = next_earnings_days(lake, name, at)
        earnings.update({a.symbol: days[a.symbol] for a in wanted
                         if source[a.symbol] == name and not a.is_crypto and a.symbol in days})
    table = tuple(_row(a, daily[a.symbol], None if prices[a.symbol] is None else
                       prices[a.symbol][0], earnings, universe, at) for a in universe.tradable)
    stale = stale_prices(((a, price_interval(lake, source[a.symbol], a.symbol), prices[a.symbol][1])
                          for a in wanted if prices[a.symbol] is not None), at)
    # a series the cycle reads that the lake does not hold is damage, named (the scan's order:
    # the price, the daily bars, then the 4h and weekly bars of the assets shown in full)
    damage = {a.symbol: f"the lake holds no {source[a.symbol]} price bars of {a.symbol}"
              for a in wanted if price_interval(lake, source[a.symbol], a.symbol) is None}

    def needs(symbol: str, interval: str) -> None:
        key = PartitionKey(source[symbol], interval, symbol)
        if not lake.has(key):
            damage.setdefault(symbol, f"the lake holds no {key} bars")

    for a in wanted:
        needs(a.symbol, "1d")
    result = screen_daily(daily, universe, at, {*stale, *damage})

    def detail(symbol: str):
        a, src = universe[symbol], source[symbol]
        return _detail(a, daily[symbol], prices[symbol],
                       closed_bars(lake, src, a, "4h", at, limit=RSI_HISTORY),
                       closed_bars(lake, src, a, "1w", at, limit=RSI_HISTORY),
                       latest_funding(lake, src, symbol, at) if a.is_crypto else None)

    deep = [*result.selected, *(s for s in held_syms if s not in result.selected)]
    for symbol in (*deep, *(b.symbol for b in universe.benchmarks)):
        needs(symbol, "4h")
        needs(symbol, "1w")
    return MarketData(at, provider_label(provider, wanted), result.nyse_trading_day, table,
                      tuple(detail(s) for s in deep),
                      tuple(detail(b.symbol) for b in universe.benchmarks), result, held_syms,
                      {s: t.isoformat() for s, t in stale.items()}, dict(sorted(damage.items())))
