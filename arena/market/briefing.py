"""The market briefing of one cycle (SPEC §2 steps 2-6): the data every contestant sees.

:func:`build_market` reads the lake **as of** the cycle time (only bars closed by ``at``, see
:mod:`arena.market.asof`) into a frozen, JSON-serialisable :class:`MarketData`: the 13-column universe
table for every tradable asset, candles and RSI for the screened and held assets, both
benchmarks, funding rates and the screen. :func:`portfolio_snapshot` describes one contestant's
book, and :func:`build_briefing` renders both into the prompt messages from the template files.

Conventions of the universe table (fractions in the data, percent only in the rendered prompt):

* ``price``: the last completed price at ``at`` (USD), the cycle's execution price; it comes from
  the finest interval in the lake, so a stock on a weekend shows Friday's close; a **stale**
  price (an asset whose data stopped arriving: :func:`arena.market.asof.is_stale`) is still its
  last price, which values a held position, but nothing trades at it and it is flagged;
* every other number comes from **completed daily bars** (UTC days for crypto, sessions for
  stocks): ``return_Nd = close[-1] / close[-1-N] - 1``; ``volatility_30d`` is the sample standard
  deviation of the last 30 daily log returns, annualised with sqrt(365) for crypto and sqrt(252)
  for stocks; ``rsi_14d`` is Wilder's RSI(14) of the daily closes; ``distance_from_30d_high`` is
  ``close[-1] / max(high over the last 30 daily bars) - 1``; ``adv_usd`` the mean of
  ``close x volume`` over the last 30 daily bars; ``days_to_earnings`` the calendar days from the
  cycle's New York date to the next earnings date (stocks; ``None`` for crypto or unknown).
* RSIs (``rsi_4h``, ``rsi_1d``, ``rsi_1w``; ``rsi_14d`` is ``rsi_1d``) are computed on the last
  :data:`RSI_HISTORY` (100) closed bars of their interval, seeded at the first of them: with at
  least 100 bars in the lake the value does not depend on how far back the lake reaches. With
  fewer, it is computed on all the bars there are, seeded at the lake's first bar, so it changes
  when the lake reaches further back. The default 200-day lake (``arena ingest``) holds, at the
  16:00 UTC cycle, 1204 4h, 200 daily and 27-28 weekly bars of a crypto asset, and 267-280 4h,
  134-140 daily and 28-29 weekly bars of a NYSE stock (a season's lake reaches back the
  reference rules' longest window, a year of the asset's calendar and a few days:
  :func:`arena.pipeline.season_ingest.history_start`, 52-54 weekly bars). So ``rsi_4h`` and
  ``rsi_1d`` do not depend on the lake's depth, and ``rsi_1w`` does (until the lake holds 100
  weeks, about 700 days). Fewer than ``RSI_PERIOD + 1`` (15) bars give ``None``, which the
  prompt shows as the indicator's name and ``NA`` (a new listing), never a number.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena.core.indicators import rsi_values
from arena.core.sessions import utc
from arena.core.types import Briefing, Message
from arena.core.universe import Asset, Universe, UniverseError
from arena.data.lake import Lake
from arena.engine.rules import ARENA_RULES, CycleState, Rules, tradeable_today
from arena.market.asof import (
    LAST_PRINT,
    PRICE_LOOKBACK,
    BarRead,
    Providers,
    latest_funding,
    next_earnings_days,
    price_intervals,
    prices_of,
    provider_label,
    provider_of,
    scan_closed_bars,
    stale_prices,
)
from arena.market.prompts import Prompts
from arena.market.screener import (
    ADV_DAYS,
    average_dollar_volume,
    period_return,
    screen_daily,
)
from arena.market.sections import DEFAULT_LAYOUT, sections
from arena.market.types import DEPTH, AssetDetail, Candle, MarketData, UniverseRow, clean

RSI_PERIOD = 14
# closed bars each RSI is computed on at most (Wilder's seed weighs < 0.2% after 100); a series
# with fewer (the weekly one of a 200-day lake: 27-29) is seeded at the lake's first bar
RSI_HISTORY = 100
VOL_DAYS = 30
HIGH_DAYS = 30
# how far back the cycle's scan first reads a series for its last RSI_HISTORY closed bars: 100
# sessions of a NYSE stock span about 146 days, 100 of its 4h bars 50 sessions; a series with
# fewer bars in its window is read again whole (the answer never depends on the window)
SCAN_WINDOW = {"1d": dt.timedelta(days=200), "4h": dt.timedelta(days=120)}


def _rsi(bars: pd.DataFrame) -> float | None:
    if len(bars) < RSI_PERIOD + 1:
        return None
    return clean(float(rsi_values(bars["close"].to_numpy(dtype=float)[-RSI_HISTORY:],
                                   RSI_PERIOD)[-1]))


def _candles(bars: pd.DataFrame, depth: int) -> tuple[Candle, ...]:
    tail = bars.iloc[-depth:]
    return tuple(Candle(t.isoformat(), o, h, lo, c, v)
                 for t, o, h, lo, c, v in zip(tail["timestamp"], *(
                     tail[col].to_numpy(dtype=float).tolist()
                     for col in ("open", "high", "low", "close", "volume")), strict=True))


def _row(asset: Asset, daily: pd.DataFrame, price: float | None, earnings: Mapping[str, int],
         universe: Universe, at: pd.Timestamp) -> UniverseRow:
    close = daily["close"].to_numpy()  # the figures below read values, never the index
    vol = None
    if len(close) > VOL_DAYS:
        log_ret = np.diff(np.log(close[-VOL_DAYS - 1:]))
        vol = float(np.std(log_ret, ddof=1) * math.sqrt(365.0 if asset.is_crypto else 252.0))
    dist = None
    if len(daily) >= HIGH_DAYS:
        dist = float(close[-1] / daily["high"].iloc[-HIGH_DAYS:].max() - 1.0)
    return UniverseRow(
        asset.symbol, asset.asset_class, asset.sector, tradeable_today(asset.symbol, universe, at),
        clean(price), clean(period_return(close, 1)), clean(period_return(close, 10)),
        clean(period_return(close, 30)), clean(vol), _rsi(daily), clean(dist),
        clean(average_dollar_volume(daily, ADV_DAYS)),
        None if asset.is_crypto else earnings.get(asset.symbol))


def _detail(asset: Asset, daily: pd.DataFrame, price: tuple[float, pd.Timestamp] | None,
            four_hour: pd.DataFrame, weekly: pd.DataFrame,
            funding: tuple[float, pd.Timestamp] | None) -> AssetDetail:
    return AssetDetail(
        asset.symbol, asset.asset_class, asset.sector,
        None if price is None else price[0], None if price is None else price[1].isoformat(),
        _rsi(four_hour), _rsi(daily), _rsi(weekly),
        None if funding is None else clean(funding[0]),
        None if funding is None else funding[1].isoformat(),
        _candles(weekly, DEPTH["1w"]), _candles(daily, DEPTH["1d"]),
        _candles(four_hour, DEPTH["4h"]))


def _first_scan(lake: Lake, provider: Providers, universe: Universe, at: pd.Timestamp):
    """The cycle's first scan: every asset's daily bars, then the last price of those priced;
    with each asset's provider, the priced assets and their interval, and the damage found
    (symbol -> what is wrong: :func:`arena.market.asof.scan_closed_bars`)."""
    wanted = [*universe.tradable, *universe.benchmarks]
    source = {a.symbol: provider_of(provider, a) for a in wanted}
    finest = {p: price_intervals(lake, p) for p in sorted(set(source.values()))}
    priced = [(a, finest[source[a.symbol]][a.symbol]) for a in wanted
              if a.symbol in finest[source[a.symbol]]]
    damage = {a.symbol: f"the lake holds no {source[a.symbol]} price bars of {a.symbol}"
              for a in wanted if a.symbol not in finest[source[a.symbol]]}
    got = scan_closed_bars(lake, [
        *(BarRead(a, source[a.symbol], "1d", RSI_HISTORY, SCAN_WINDOW["1d"]) for a in wanted),
        *(BarRead(a, source[a.symbol], iv, 1, PRICE_LOOKBACK, LAST_PRINT) for a, iv in priced)],
        at, damage=damage)
    return wanted, source, priced, got, damage


def market_damage(lake: Lake, provider: Providers, universe: Universe, at: pd.Timestamp
                  ) -> dict[str, str]:
    """The assets whose daily bars or price the cycle at ``at`` could not use, each with what is
    wrong (what :func:`build_market` marks :attr:`MarketData.damaged`, short of the 4h and
    weekly bars of the assets shown in full): for the daily report."""
    return dict(sorted(_first_scan(lake, provider, universe, at)[4].items()))


def build_market(lake: Lake, provider: Providers, universe: Universe, at: pd.Timestamp,
                 held: Iterable[str] = ()) -> MarketData:
    """The cycle's market data at ``at`` from ``provider``'s partitions of ``lake`` (one name, or
    a mapping asset class -> provider: each asset is read from its own provider's partitions).

    ``held``: symbols some contestant holds (full depth even when not screened). Pass the union
    over all contestants once, then narrow per contestant with :meth:`MarketData.for_holdings`.

    The bars are read in one scan (:func:`arena.market.asof.scan_closed_bars`: every asset's
    daily bars and last price), then one more for the 4h and weekly bars of the assets shown in
    full; each series is exactly what :func:`arena.market.asof.closed_bars` reads.

    The assets whose last price is stale at ``at`` (:func:`arena.market.asof.is_stale`, judged on
    the interval the price comes from) are found here, once: the screen leaves them out and the
    market carries them (:attr:`MarketData.stale`) for the engine, the briefing and the reports.
    So are the assets whose bars cannot be used - a partition the cycle reads missing from the
    lake, unreadable, or holding bars no validated series has (:attr:`MarketData.damaged`): they
    are treated as stale and named, never shown as blank rows.
    """
    held_syms = tuple(sorted(set(held)))
    for s in held_syms:
        if not universe[s].tradable:
            raise UniverseError(f"{s} is not tradable, so it cannot be held")
    wanted, source, priced, got, damage = _first_scan(lake, provider, universe, at)
    daily = {a.symbol: bars for a, bars in zip(wanted, got, strict=False)}
    prices: dict[str, tuple[float, pd.Timestamp] | None] = dict.fromkeys(daily)
    last = prices_of([(a, iv, bars) for (a, iv), bars in zip(priced, got[len(wanted):],
                                                               strict=True)])
    prices.update({a.symbol: p for (a, _), p in zip(priced, last, strict=True)})
    stale = stale_prices(((a, iv, p[1]) for (a, iv), p in zip(priced, last, strict=True)
                          if p is not None), at)
    listed = [a for a in wanted if not a.is_crypto]  # each from its provider's earnings table
    calendars = {p: next_earnings_days(lake, p, at) for p in sorted({source[a.symbol]
                                                                     for a in listed})}
    earnings = {a.symbol: calendars[source[a.symbol]][a.symbol] for a in listed
                if a.symbol in calendars[source[a.symbol]]}
    table = tuple(_row(a, daily[a.symbol], None if prices[a.symbol] is None else
                       prices[a.symbol][0], earnings, universe, at) for a in universe.tradable)
    result = screen_daily(daily, universe, at, {*stale, *damage})
    deep = [universe[s] for s in (*result.selected,
                                  *(s for s in held_syms if s not in result.selected))]
    shown = [*deep, *universe.benchmarks]
    more = scan_closed_bars(lake, [
        BarRead(a, source[a.symbol], iv, RSI_HISTORY, SCAN_WINDOW.get(iv))
        for a in shown for iv in ("4h", "1w")], at, damage=damage)

    def detail(i: int, a: Asset) -> AssetDetail:
        funding = latest_funding(lake, source[a.symbol], a.symbol, at) if a.is_crypto else None
        return _detail(a, daily[a.symbol], prices[a.symbol], more[2 * i], more[2 * i + 1],
                       funding)

    details = tuple(detail(i, a) for i, a in enumerate(deep))
    benchmarks = tuple(detail(len(deep) + i, b) for i, b in enumerate(universe.benchmarks))
    return MarketData(at, provider_label(provider, wanted), result.nyse_trading_day, table,
                      details, benchmarks, result, held_syms,
                      {s: t.isoformat() for s, t in stale.items()}, dict(sorted(damage.items())))


def portfolio_snapshot(state: CycleState, prices: Mapping[str, float],
                       rules: Rules = ARENA_RULES, *,
                       stale: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One contestant's book at the cycle prices (SPEC §2 step 5), JSON-serialisable.

    Amounts in USD; ``unrealised_pct`` and ``percent_of_equity`` are fractions. ``notional`` is
    the position's size at the cycle price (``quantity x price``), ``cost`` at entry.
    ``stale``: the market's stale prices (:attr:`MarketData.stale`); a position in one is valued
    at its last price and carries ``stale_since``, when that price printed (else ``None``).
    """
    stale = stale or {}
    book = state.portfolio
    # a held symbol without a cycle price cannot be valued: equity is unknown (the engine then
    # refuses to size anything this cycle) but the book is still shown
    unmarked = set(book.unmarked(prices))
    equity = None if unmarked else book.equity(prices)
    positions = []
    for sym in sorted(book.positions):
        p = book.positions[sym]
        price = None if sym in unmarked else float(prices[sym])
        pnl = None if price is None else p.unrealised(price)
        positions.append({
            "symbol": sym, "side": p.side, "quantity": p.quantity, "entry_price": p.entry_price,
            "price": price, "notional": None if price is None else p.quantity * price,
            "cost": p.cost, "unrealised_pnl": pnl,
            "unrealised_pct": None if pnl is None else (pnl / p.cost if p.cost else 0.0),
            "percent_of_equity": (p.value(price) / equity
                                  if price is not None and equity else None),
            "invalidation_price": p.invalidation_price, "thesis": p.thesis,
            "invalidation": p.invalidation, "opened_at": utc(p.opened_at).isoformat(),
            "stale_since": stale.get(sym)})
    return {"at": state.at.isoformat(), "cash": book.cash, "equity": equity,
            "fees_paid": book.fees_paid, "realised_pnl": book.realised_pnl,
            "locked_collateral": book.locked, "open_positions": len(positions),
            "max_positions": rules.max_positions,
            "new_positions_left": max(0, min(rules.max_new_per_cycle - len(state.opened),
                                             rules.max_positions - len(positions))),
            "positions": positions}


def build_briefing(market: MarketData, contestant: str, snapshot: Mapping[str, Any], *,
                   templates: Prompts | str | Path | None = None,
                   rules: Rules = ARENA_RULES, candles: str = DEFAULT_LAYOUT) -> Briefing:
    """The contestant's briefing: its market view (screened + its own holdings) and the prompt
    (system + investor messages) rendered from the template files, its candles in the season's
    layout ``candles`` (:data:`~arena.market.sections.CANDLE_LAYOUTS`)."""
    prompts = templates if isinstance(templates, Prompts) else Prompts(templates)
    held = [p["symbol"] for p in snapshot.get("positions", ())]
    view = market.for_holdings(held)
    parts = sections(view, snapshot, rules, prompts, candles)
    messages = (Message("system", prompts.render("system", **parts)),
                Message("user", prompts.render("investor", **parts)))
    return Briefing(view.at, contestant, {"market": view.as_dict(), "sections": parts}, messages,
                    dict(snapshot))


def repair_prompt(repair_context: str, *, templates: Prompts | str | Path | None = None) -> str:
    """The repair follow-up (the ``repair`` template) around the engine's repair context text
    (:meth:`arena.engine.repair.RepairContext.render`)."""
    prompts = templates if isinstance(templates, Prompts) else Prompts(templates)
    return prompts.render("repair", repair_context=repair_context)
