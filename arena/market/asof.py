"""Reading the lake *as of* a cycle time: only what was known when the cycle ran.

A bar is known at ``at`` once it has **closed** (:func:`arena.core.sessions.bar_close_times`: open +
interval, cut at the session close for stocks), so a weekly bar still forming, or a stock's daily
bar before the session close, is never returned. Funding rates count when stamped strictly before
``at`` (the window convention of an ingest that ends at ``at``: ``[start, end)``), so the answer is
the same whether or not the lake already holds later data.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
import pandas as pd

from arena.core.sessions import INTERVAL_ORDER, NY, TS_UNIT, bar_close_times
from arena.core.universe import Asset, Universe
from arena.data.bars import drop_unclosed
from arena.data.lake import Lake, PartitionKey, TableKey

_PRICE_LOOKBACK = pd.Timedelta(days=14)  # longer than any market closure: a last print exists


def closed_bars(lake: Lake, provider: str, asset: Asset, interval: str, at: pd.Timestamp,
                limit: int | None = None, since: pd.Timestamp | None = None) -> pd.DataFrame:
    """The ``interval`` bars of ``asset`` that closed by ``at`` (the last ``limit`` of them),
    oldest first. ``since`` only narrows the read (open time ``>= since``)."""
    bars = lake.read_bars(PartitionKey(provider, interval, asset.symbol), start=since, end=at)
    bars = drop_unclosed(bars, interval, asset.calendar, at)
    if limit is not None:
        bars = bars.iloc[-limit:] if limit > 0 else bars.iloc[0:0]
    return bars.reset_index(drop=True)


def price_interval(lake: Lake, provider: str, symbol: str) -> str | None:
    """The finest interval the lake holds for ``symbol`` (where the cycle price comes from)."""
    for interval in INTERVAL_ORDER:
        if lake.path(PartitionKey(provider, interval, symbol)).is_file():
            return interval
    return None


def last_price(lake: Lake, provider: str, asset: Asset, at: pd.Timestamp
               ) -> tuple[float, pd.Timestamp] | None:
    """The last completed price at ``at`` and when it printed (the close time of its bar).

    Read from the finest interval the lake holds (15 minutes on the synthetic provider), so a
    stock on a Saturday shows Friday's closing print. ``None`` when the lake has no closed bar.
    """
    interval = price_interval(lake, provider, asset.symbol)
    if interval is None:
        return None
    bars = closed_bars(lake, provider, asset, interval, at, limit=1, since=at - _PRICE_LOOKBACK)
    if bars.empty:  # a long gap: read the whole partition
        bars = closed_bars(lake, provider, asset, interval, at, limit=1)
    if bars.empty:
        return None
    closed = bar_close_times(asset.calendar, interval, pd.DatetimeIndex(bars["timestamp"]))[0]
    return float(bars["close"].iloc[-1]), closed


def latest_funding(lake: Lake, provider: str, symbol: str, at: pd.Timestamp
                   ) -> tuple[float, pd.Timestamp] | None:
    """The latest funding rate (fraction per funding period) stamped before ``at``, and its stamp."""
    table = lake.read_table(TableKey("funding", provider, symbol))
    if table.empty:
        return None
    known = table[table["timestamp"] < at]
    if known.empty:
        return None
    row = known.sort_values("timestamp").iloc[-1]
    return float(row["funding_rate"]), pd.Timestamp(row["timestamp"])


def next_earnings_days(lake: Lake, provider: str, at: pd.Timestamp) -> dict[str, int]:
    """Calendar days from the New York date of ``at`` to each stock's next earnings date on or
    after it (0 = today), for every symbol in the lake's earnings table."""
    table = lake.read_table(TableKey("earnings", provider))
    if table.empty:
        return {}
    today = at.tz_convert(NY).date()
    days: dict[str, int] = {}
    for symbol, date in zip(table["symbol"], table["date"], strict=True):
        d = _date_of(date)
        if d >= today:
            gap = (d - today).days
            days[symbol] = min(gap, days.get(symbol, gap))
    return days


def _date_of(value: object) -> dt.date:
    """A stored earnings date (UTC midnight of the session) as a calendar date."""
    ts = pd.Timestamp(value)  # type: ignore[arg-type]
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC")
    return ts.date()


class NoPrices(RuntimeError):
    """The lake holds no price at any of the asked cycles."""


def cycle_prices(lake: Lake, provider: str, universe: Universe,
                 cycles: Sequence[pd.Timestamp]) -> pd.DataFrame:
    """Long table ``cycle_at, symbol, price, printed_at``: each symbol's last completed price at
    each cycle, read from the finest interval the lake holds, exactly as
    :func:`arena.market.asof.last_price` reads it for the cycle (one partition read per symbol)."""
    cycles = sorted(cycles)
    rows: list[pd.DataFrame] = []
    for asset in universe:
        interval = price_interval(lake, provider, asset.symbol)
        if interval is None:
            continue
        bars = closed_bars(lake, provider, asset, interval, cycles[-1],
                           since=cycles[0] - _PRICE_LOOKBACK)
        closes = bar_close_times(asset.calendar, interval, pd.DatetimeIndex(bars["timestamp"]))
        found = np.searchsorted(closes.asi8, pd.DatetimeIndex(cycles).as_unit(TS_UNIT).asi8,
                                side="right") - 1
        for at, i in zip(cycles, found, strict=True):
            if i >= 0:
                rows.append(pd.DataFrame({"cycle_at": [at], "symbol": [asset.symbol],
                                          "price": [float(bars["close"].iloc[i])],
                                          "printed_at": [closes[i]]}))
            else:  # a gap longer than the lookback: the engine reads the whole partition
                hit = last_price(lake, provider, asset, at)
                if hit is not None:
                    rows.append(pd.DataFrame({"cycle_at": [at], "symbol": [asset.symbol],
                                              "price": [hit[0]], "printed_at": [hit[1]]}))
    if not rows:
        raise NoPrices(f"the lake has no {provider} prices at the season's cycles")
    out = pd.concat(rows, ignore_index=True)
    for col in ("cycle_at", "printed_at"):
        out[col] = pd.DatetimeIndex(out[col]).as_unit(TS_UNIT)
    return out.sort_values(["cycle_at", "symbol"]).reset_index(drop=True)
