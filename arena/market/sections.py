"""The text sections the prompt templates take, rendered compactly from a :class:`MarketData`.

Sizes matter, so tables are CSV-like rows with a header once, percentages without the ``%`` sign
(the header says so) and prices with a fixed number of decimals chosen by the asset's price
magnitude (four significant digits, five from 10,000 up: ``94123``, ``3350``, ``251.2``,
``66.43``, ``2.105``, ``0.3212``). Every candle of one asset uses the same decimals.

How candles are shown is the season's candle layout (:data:`CANDLE_LAYOUTS`):

* ``ohlcv`` (the default): each series is a line naming its interval, the open date of its
  first bar, its columns and its volume unit, then one row per bar, oldest first:
  ``open,high,low,close,volume`` - the prices at the asset's decimals, the volume a whole number
  of the unit the line names (thousands, millions, ...: the largest of them in which the
  series' median volume is still at least 10);
* ``close`` (a smaller prompt): each series is one line: the open date of its first bar, the
  highest high and lowest low of the bars shown, then their closes.

How many candles each interval shows is :data:`~arena.market.types.DEPTH` (26 weekly, 30 daily,
24 four-hour), and the prompt states those numbers from it (:func:`candle_depths`). Each
benchmark carries a trend line read from what its block already shows (:func:`trend_line`): its
price against the average of the daily closes shown, and its 4-week change over the weekly
closes shown - no indicator the prompt does not already give.

A bar's prices are the lake's rounded to the asset's decimals; its volume the lake's in the
named unit, rounded to a whole number (``tests/market/test_candle_layouts.py`` reads every row
of a prompt back against the lake).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from arena.engine.rules import Rules
from arena.market.prompts import Prompts
from arena.market.types import DEPTH, AssetDetail, Candle, MarketData, stale_marker

OHLCV, CLOSE = "ohlcv", "close"
CANDLE_LAYOUTS = (OHLCV, CLOSE)  # a season's choice: SeasonConfig.candles
DEFAULT_LAYOUT = OHLCV
CANDLE_INTERVALS = ("1w", "1d", "4h")
NA = "NA"
# a volume unit of the ohlcv layout: its size and the word its series line uses
VOLUME_UNITS = ((1e12, "trillions"), (1e9, "billions"), (1e6, "millions"), (1e3, "thousands"),
                (1.0, "units"))
INTERVAL_WORDS = {"1w": "weekly", "1d": "daily", "4h": "four-hour"}
TREND_WEEKS = 4  # a benchmark's trend: the change over this many weekly closes
UP, DOWN, MIXED = "up", "down", "mixed"


def check_layout(layout: str) -> str:
    """``layout`` if it is a candle layout (else a ``ValueError`` naming the ones there are)."""
    if layout not in CANDLE_LAYOUTS:
        raise ValueError(f"unknown candle layout {layout!r} (expected one of "
                         f"{', '.join(CANDLE_LAYOUTS)})")
    return layout


class _Rendered:
    """Texts rendered from one object (an asset's detail, the universe's table), kept while
    that very object is the one asked for: every contestant of a cycle is shown the same parts
    of the cycle's market, so each is rendered once per cycle, not once per contestant. Bounded
    (a few cycles' parts); one dict operation per look-up, so threads share it as it is."""

    def __init__(self, size: int = 512) -> None:
        self._texts: dict[tuple[int, Hashable], tuple[object, str]] = {}
        self._size = size

    def get(self, source: object, how: Hashable, render: Callable[[], str]) -> str:
        key = (id(source), how)
        hit = self._texts.get(key)
        if hit is not None and hit[0] is source:
            return hit[1]
        text = render()
        if len(self._texts) >= self._size:
            self._texts.clear()
        self._texts[key] = (source, text)
        return text


_rendered = _Rendered()


def price_decimals(price: float | None) -> int:
    """Decimals that show four significant digits (none from 1,000 up, at most 8)."""
    if price is None or not math.isfinite(price) or price <= 0:
        return 2
    return int(min(8, max(0, 3 - math.floor(math.log10(price)))))


def fmt_price(x: float | None, decimals: int) -> str:
    return NA if x is None else f"{x:.{decimals}f}"


def fmt_pct(x: float | None, decimals: int = 1, sign: bool = True) -> str:
    """A fraction as percent, without the ``%`` character: 0.0123 -> ``+1.2``."""
    if x is None:
        return NA
    text = f"{100 * x:+.{decimals}f}" if sign else f"{100 * x:.{decimals}f}"
    if text[0] in "+-" and not text[1:].strip("0."):  # zero after rounding: no "-0.0"
        return text[1:]
    return text


def fmt_compact(x: float | None) -> str:
    """A large amount with 3 significant digits and a K/M/B/T suffix: 1.234e9 -> ``1.23B``."""
    if x is None:
        return NA
    x = float(f"{x:.3g}")  # round first, so 999.7M shows as 1.00B
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(x) >= div:
            v = x / div
            return f"{v:.{max(0, 2 - math.floor(math.log10(abs(v))))}f}{suffix}"
    return f"{x:.3g}"


def fmt_num(x: float | None, decimals: int = 1) -> str:
    return NA if x is None else f"{x:.{decimals}f}"


def _money(x: float | None) -> str:
    return NA if x is None else f"${x:,.2f}"


# --------------------------------------------------------------------------------- sections
def header(market: MarketData) -> str:
    at = market.at
    lines = [f"Cycle time: {at:%Y-%m-%d %H:%M} UTC ({at.tz_convert('America/New_York'):%A} in "
             "New York)."]
    if market.nyse_trading_day:
        lines.append("NYSE trades today: stocks and crypto may both be traded.")
    else:
        # the engine's rule (engine.rules.check): a hold trades nothing, so it is accepted on
        # any day; the rules template says the same (tests/market/test_closed_day_prompt.py)
        lines.append("NYSE is CLOSED today (weekend or holiday): only crypto can be traded; "
                     "stock opens, adds and closes are rejected, while a hold of a held stock "
                     "is accepted (it trades nothing and may move the stock's level). Stock "
                     "prices are the last close.")
    if market.blind:
        lines.append("The market is shown BLIND: assets go by neutral names, dates are "
                     "relabelled (weekdays, sessions and the time between bars are kept) and "
                     "each asset's prices are rescaled by a factor of its own (returns, RSIs, "
                     "volatility, dollar volumes and every other ratio are exact). Trade the "
                     "names shown; no other name is in this market.")
    if market.synthetic:
        lines.append("Data source: SYNTHETIC - prices come from the arena's seeded market "
                     "simulator, not from a real exchange. Treat them as a realistic but "
                     "invented market.")
    elif market.blind:
        lines.append("Data source: recorded market data (real prices, shown blind).")
    else:
        lines.append(f"Data source: {market.provider} (real market data).")
    if market.stale:
        flagged = ", ".join(f"{sym} ({stale_marker(since)})"
                            for sym, since in sorted(market.stale.items()))
        lines.append(f"STALE prices (no fresh market data arrived): {flagged}. These are left "
                     "out of the screen and cannot be opened, added to or closed this cycle (a "
                     "hold is accepted); a held one is valued at its last price.")
    if market.damaged:
        flagged = "; ".join(f"{sym} ({why})" for sym, why in sorted(market.damaged.items()))
        lines.append(f"UNUSABLE market data (treated as stale): {flagged}. These are left out "
                     "of the screen and cannot be opened, added to or closed this cycle (a hold "
                     "is accepted); their missing figures are NA, not zero.")
    return "\n".join(lines)


def universe_table(market: MarketData) -> str:
    return _rendered.get(market.table, "universe", lambda: _universe_table(market))


def _universe_table(market: MarketData) -> str:
    cols = ("symbol,class,sector,tradeable_today,price,ret_1d,ret_10d,ret_30d,vol_30d,rsi_14d,"
            "off_30d_high,adv_usd,earnings_in_days")
    rows = [cols]
    for r in market.table:
        rows.append(",".join((
            r.symbol, r.asset_class, r.sector, "Y" if r.tradeable_today else "N",
            fmt_price(r.price, price_decimals(r.price)), fmt_pct(r.return_1d),
            fmt_pct(r.return_10d), fmt_pct(r.return_30d, 0), fmt_pct(r.volatility_30d, 0, False),
            fmt_num(r.rsi_14d, 0), fmt_pct(r.distance_from_30d_high, 0), fmt_compact(r.adv_usd),
            NA if r.days_to_earnings is None else str(r.days_to_earnings))))
    return "\n".join(rows)


def volume_unit(volumes: list[float]) -> tuple[float, str]:
    """The ohlcv layout's volume unit of a series: the largest of :data:`VOLUME_UNITS` in which
    its median volume is at least 10 (units, when it is below 10)."""
    ordered = sorted(v for v in volumes if v == v)
    median = ordered[len(ordered) // 2] if ordered else 0.0
    return next(((size, word) for size, word in VOLUME_UNITS if median >= 10 * size),
                VOLUME_UNITS[-1])


def fmt_volume(volume: float, unit: float) -> str:
    return NA if volume != volume else f"{volume / unit:.0f}"


def _candle_lines(name: str, candles: tuple[Candle, ...], layout: str, dec: int) -> list[str]:
    since = f"from {candles[0].open_time[:10]}"
    if layout == OHLCV:
        unit, word = volume_unit([c.volume for c in candles])
        return [f"{name} {since}, open,high,low,close,volume (volume in {word}):",
                *(",".join((*(fmt_price(x, dec) for x in c[1:5]), fmt_volume(c.volume, unit)))
                  for c in candles)]
    high, low = max(c.high for c in candles), min(c.low for c in candles)
    return [f"{name} {since} (high {fmt_price(high, dec)}, low {fmt_price(low, dec)}): "
            + ",".join(fmt_price(c.close, dec) for c in candles)]


def _layouts(layout: str | Mapping[str, str]) -> dict[str, str]:
    """Each interval's layout: one layout for every interval, or one per interval."""
    chosen = {i: layout for i in CANDLE_INTERVALS} if isinstance(layout, str) else dict(layout)
    for interval in CANDLE_INTERVALS:
        check_layout(chosen.get(interval, ""))
    return chosen


def asset_block(d: AssetDetail, layout: str | Mapping[str, str] = DEFAULT_LAYOUT,
                stale_since: str | None = None) -> str:
    """One asset's full depth: a summary line and its weekly, daily and 4-hour candles in
    ``layout`` (one for every interval, or one per interval); ``stale_since``: when its last
    price printed, if that price is stale (flagged)."""
    style = _layouts(layout)
    return _rendered.get(d, (stale_since, tuple(sorted(style.items()))),
                         lambda: _asset_block(d, style, stale_since))


def _asset_block(d: AssetDetail, style: Mapping[str, str], stale_since: str | None) -> str:
    dec = price_decimals(d.price)
    head = [f"### {d.symbol} price {fmt_price(d.price, dec)}", f"rsi_4h {fmt_num(d.rsi_4h, 0)}",
            f"rsi_1d {fmt_num(d.rsi_1d, 0)}", f"rsi_1w {fmt_num(d.rsi_1w, 0)}"]
    if stale_since is not None:
        head.insert(1, stale_marker(stale_since))
    if d.asset_class == "crypto":
        head.append("funding NA" if d.funding_rate is None else
                    f"funding {100 * d.funding_rate:+.3f}% per 8h")
    lines = [" | ".join(head)]
    for interval in CANDLE_INTERVALS:
        candles = d.candles(interval)
        if candles:
            lines.extend(_candle_lines(interval, candles, style[interval], dec))
        else:
            lines.append(f"{interval}: no completed bar yet")
    return "\n".join(lines)


def candles_section(market: MarketData, layout: str = DEFAULT_LAYOUT) -> str:
    if not market.assets:
        return "No asset was screened or held."
    return "\n\n".join(asset_block(d, layout, market.stale.get(d.symbol))
                       for d in market.assets)


def candle_layout_note(layout: str) -> str:
    """What the investor template says of the candles' layout, after "completed bars only"
    (the close layout's words are those its prompts have always had)."""
    if check_layout(layout) == OHLCV:
        return (". Each series starts with a line giving its interval, the open date of its "
                "first bar, its columns and the unit of its volumes; then one row per bar, "
                "oldest first (the last one is the most recent completed bar): open, high, low "
                "and close in USD, and the volume as a whole number of the named unit, in the "
                "asset's own units (coins or shares).")
    return (": the open date of the first bar, the highest high and lowest low of the bars "
            "shown, then their closes, oldest first (the last one is the most recent completed "
            "bar). Prices are USD.")


def screen_note(market: MarketData) -> str:
    s = market.screen
    stocks = ", ".join(s.stocks) if s.stocks else "none (NYSE closed today)"
    held_only = [h for h in market.held if h not in s.selected]
    note = f"Screened crypto: {', '.join(s.crypto) or 'none'}. Screened stocks: {stocks}."
    if held_only:
        note += f" Held, shown in full as well: {', '.join(held_only)}."
    return note


def candle_depths() -> str:
    """The candles each asset shows, in words, from :data:`DEPTH`: ``26 weekly (1w), 30 daily
    (1d) and 24 four-hour (4h)``."""
    parts = [f"{DEPTH[iv]} {INTERVAL_WORDS[iv]} ({iv})" for iv in CANDLE_INTERVALS]
    return f"{', '.join(parts[:-1])} and {parts[-1]}"


def trend_figures(d: AssetDetail) -> tuple[float | None, float | None]:
    """A benchmark's two trend figures, fractions read from its block: its price against the
    average of the daily closes shown, and its last weekly close against the one
    :data:`TREND_WEEKS` weekly candles earlier (None where the block lacks them)."""
    closes = [c.close for c in d.daily]
    versus_average = None
    if d.price is not None and closes:
        versus_average = d.price / (sum(closes) / len(closes)) - 1.0
    weekly = d.weekly
    change = None if len(weekly) <= TREND_WEEKS else \
        weekly[-1].close / weekly[-1 - TREND_WEEKS].close - 1.0
    return versus_average, change


def trend_direction(versus_average: float | None, change: float | None) -> str:
    """``up`` when the price is above its daily average and the 4-week change positive,
    ``down`` when both are below zero, ``mixed`` otherwise; NA without both figures."""
    if versus_average is None or change is None:
        return NA
    if versus_average > 0 and change > 0:
        return UP
    if versus_average < 0 and change < 0:
        return DOWN
    return MIXED


def _percent_text(x: float | None) -> str:
    return NA if x is None else f"{fmt_pct(x)}%"


def trend_line(d: AssetDetail) -> str:
    """A benchmark's trend in one line, in the prompt's own terms (:func:`trend_figures`)."""
    versus_average, change = trend_figures(d)
    pct = _percent_text
    return (f"trend {trend_direction(versus_average, change)}: price {pct(versus_average)} "
            f"against the average of its {len(d.daily)} daily closes shown; "
            f"{TREND_WEEKS}-week change {pct(change)} (last weekly close against the one "
            f"{TREND_WEEKS} weeks earlier)")


def trend_note() -> str:
    """What the investor template says of the benchmarks' trend lines."""
    return (f"Each benchmark's trend line reads its own candles: the price against the average "
            f"of its daily closes shown, and its {TREND_WEEKS}-week change (the last weekly "
            f"close against the one {TREND_WEEKS} weekly candles earlier). The trend is {UP} when "
            f"both are positive, {DOWN} when both are negative, {MIXED} otherwise.")


def benchmark_block(d: AssetDetail, layout: str | Mapping[str, str] = DEFAULT_LAYOUT,
                    stale_since: str | None = None) -> str:
    """A benchmark's block: :func:`asset_block` with its trend line under the summary line."""
    head, _, candles = asset_block(d, layout, stale_since).partition("\n")
    return "\n".join((head, trend_line(d), candles))


def benchmarks_section(market: MarketData, layout: str = DEFAULT_LAYOUT) -> str:
    return "\n\n".join(benchmark_block(b, layout, market.stale.get(b.symbol))
                       for b in market.benchmarks)


def portfolio_section(snapshot: Mapping[str, Any]) -> str:
    s = snapshot
    lines = [f"Cash {_money(s['cash'])} | equity {_money(s['equity'])} | fees paid "
             f"{_money(s['fees_paid'])} | realised P&L {_money(s['realised_pnl'])} | open "
             f"positions {s['open_positions']} of {s['max_positions']} | new positions you may "
             f"still open this cycle: {s['new_positions_left']}"]
    if not s["positions"]:
        lines.append("No open positions.")
        return "\n".join(lines)
    lines.append("symbol,side,quantity,entry_price,price,notional_usd,unrealised_pnl_usd,"
                 "unrealised_pct,share_of_equity_pct,invalidation_price,opened_at")
    for p in s["positions"]:
        dec = price_decimals(p["price"])
        share = NA if p["percent_of_equity"] is None else fmt_pct(p["percent_of_equity"], 1, False)
        lines.append(",".join((
            p["symbol"], p["side"], f"{p['quantity']:.6g}", fmt_price(p["entry_price"], dec),
            fmt_price(p["price"], dec), fmt_price(p["notional"], 2),
            NA if p["unrealised_pnl"] is None else f"{p['unrealised_pnl']:+.2f}",
            fmt_pct(p["unrealised_pct"]), share,
            fmt_price(p["invalidation_price"], dec), p["opened_at"][:16])))
        lines.append(f"  {p['symbol']} thesis: {p['thesis'] or NA}")
        lines.append(f"  {p['symbol']} invalidation: {p['invalidation'] or NA}")
        if p.get("stale_since"):
            lines.append(f"  {p['symbol']} {stale_marker(p['stale_since'])}: valued at it; no "
                         "trade executes at a stale price (a hold is accepted)")
    return "\n".join(lines)


def _and(items: Sequence[str]) -> str:
    return " and ".join(filter(None, (", ".join(items[:-1]), *items[-1:])))


def rule_fields(rules: Rules, benchmarks: Sequence[str]) -> dict[str, str]:
    """The engine's numbers as the rules template shows them, and the season's benchmarks by
    the names the prompt gives them (``BTC and SPY``; a blind season's neutral names)."""
    return {"benchmarks": _and(list(benchmarks)),
            "benchmark_holds": ", ".join(f"of {b}" for b in benchmarks),
            "start_cash": f"${rules.start_cash:,.0f}", "fee_pct": f"{rules.fee_rate:.1%}",
            "min_confidence": f"{rules.min_confidence:.2f}",
            "min_open_pct": f"{rules.min_open_share:.0%}", "max_positions": str(rules.max_positions),
            "max_new_per_cycle": "one" if rules.max_new_per_cycle == 1 else
            str(rules.max_new_per_cycle),
            "equity_pct_min": f"{rules.equity_percent[0]:g}",
            "equity_pct_max": f"{rules.equity_percent[1]:g}",
            "position_pct_min": f"{rules.position_percent[0]:g}",
            "position_pct_max": f"{rules.position_percent[1]:g}"}


def sections(market: MarketData, snapshot: Mapping[str, Any], rules: Rules,
             prompts: Prompts, candles: str = DEFAULT_LAYOUT) -> dict[str, str]:
    """Every field the investor, judge and strategist templates take; ``candles``: the
    season's candle layout."""
    numbers = rule_fields(rules, [b.symbol for b in market.benchmarks])
    return {"header": header(market), "rules": prompts.render("rules", **numbers).strip(),
            "contract": prompts.render("contract", **numbers).strip(),
            "universe_table": universe_table(market), "screen_note": screen_note(market),
            "candle_layout": candle_layout_note(candles), "candle_depths": candle_depths(),
            "trend_note": trend_note(),
            "candles": candles_section(market, candles),
            "benchmarks": benchmarks_section(market, candles),
            "portfolio": portfolio_section(snapshot)}
