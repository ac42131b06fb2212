"""A model that trades what its prompt shows (:func:`blind_model`, for the loopback model server)
and the leak search of a blind season: every text a contestant of the season read or wrote - the
prompts the ledger keeps, its conversations, answers, tool calls and their answers, its parse
errors and rejection messages, and every request a model server received - searched for what
would name the real market:

* a ticker (as written, in capitals), a vendor symbol, or a company name (in any case) of the
  universe file;
* a real date of the season's window and of the history its prompts reach back to, with its
  year, in the common formats (ISO, ``2008/09/15``, ``09/15/2008``, ``15.09.2008``,
  ``20080915``, ``September 15, 2008``, ``15 Sep 2008``), or a real month with its year;
* a real price level: any raw price of the lake (full precision) anywhere, and each asset's
  prices as the prompt prints them (four significant digits) or as the engine's messages do
  (``:g``) on the price fields of the lines that speak of that asset under its name (its table
  row, its block of candles, its position, a rejection or a fill). Printed prices are searched
  there only: at four digits, some blind price of one asset always equals some real price of
  another, which names nothing.

What it does not search: a year alone, a lower-case ticker, a brand that is not the universe
file's name (``Google``), a real volume, or a price in free prose.

:func:`season_texts` gathers the texts, :func:`leaks` names what it finds in them.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from arena.core.universe import DEFAULT_UNIVERSE
from arena.ledger.store import Ledger
from arena.market.blind import Blinding
from arena.market.sections import fmt_price, price_decimals
from arena.market.types import MarketData
from tests.agents.openai_stub import RecordedRequest, StubResponse

TABLE_ROW = re.compile(r"^([A-Z][A-Z0-9.]*),(?:crypto|stock|etf),[^,\n]*,Y,([0-9.]+)", re.M)


def blind_model(request: RecordedRequest) -> StubResponse:
    """A model that trades what its prompt's universe table shows (in a blind season, the
    neutral names): it asks the researcher's tools about the first tradable row, and otherwise
    opens a long in it (no tradable row: a hold)."""
    text = "\n".join(str(m.get("content") or "") for m in request.messages)
    found = TABLE_ROW.search(text)
    if found is None:
        return StubResponse.answer(json.dumps({"reasoning": "no tradable name", "decisions": []}))
    name, price = found.group(1), float(found.group(2))
    body = request.body if isinstance(request.body, dict) else {}
    if body.get("tools") and not any(m.get("role") == "tool" for m in request.messages):
        return StubResponse.tool_calls([
            ("get_candles", {"symbol": name, "interval": "1d", "count": 40}),
            ("get_candles", {"symbol": name, "interval": "1w", "count": 30}),
            ("get_indicators", {"symbol": name, "interval": "4h"}),
            ("indicator_summary", {"symbol": name}), ("portfolio_state", {})])
    return StubResponse.answer(json.dumps({"reasoning": f"{name} looks strong", "decisions": [
        {"action": "open_long", "symbol": name, "percent_of_equity": 20, "confidence": 0.9,
         "invalidation_price": round(price * 0.8, 6), "thesis": f"{name} trends up",
         "invalidation": "a close 20% lower"}]}))


# the ledger's text columns: what a contestant read or wrote (its structured columns - symbols,
# fills, levels, the decisions' JSON - are real by design)
TEXT_COLUMNS = {"messages": ("content",), "responses": ("text", "extra", "notes", "raw_json"),
                "rejections": ("message",),
                "outcome": ("parse_error_answer", "parse_error_repair", "errors"),
                "calls": ("error",)}
MONTHS = "January February March April May June July August September October November December"
_MONTH = {m.lower(): i for i, m in enumerate(MONTHS.split(), 1)} | {
    m[:3].lower(): i for i, m in enumerate(MONTHS.split(), 1)}
_NAMED = "|".join(sorted(_MONTH, key=len, reverse=True))
# date-like tokens, each read back as (year, month, day)
_DATES = [
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), (0, 1, 2)),
    (re.compile(r"(?<!\d)(\d{1,2})/(\d{1,2})/(\d{4})(?!\d)"), (2, 0, 1)),
    (re.compile(r"(?<!\d)(\d{1,2})\.(\d{1,2})\.(\d{4})(?!\d)"), (2, 1, 0)),
    (re.compile(r"(?<![\d.])(\d{4})(\d{2})(\d{2})(?![\d.])"), (0, 1, 2)),
]
_NAMED_DATES = [re.compile(rf"\b({_NAMED})\.? (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.I),
                re.compile(rf"\b(\d{{1,2}}) ({_NAMED})\.?,? (\d{{4}})\b", re.I)]
_MONTH_YEAR = re.compile(rf"\b({_NAMED})\.?,? (\d{{4}})\b", re.I)


@dataclass(frozen=True)
class Real:
    """What would name the real market: words (tickers, vendor symbols, company names), the
    real days, and price levels (as the prompt prints them, and raw)."""

    tickers: frozenset[str]
    vendor_symbols: frozenset[str]
    names: frozenset[str]
    days: frozenset[dt.date]
    printed: Mapping[str, frozenset[str]]  # real symbol -> its prices as the prompt prints them
    raw_prices: frozenset[str]


def universe_words(path: Path = DEFAULT_UNIVERSE) -> tuple[set[str], set[str], set[str]]:
    """Every ticker, vendor symbol and company name of the universe file."""
    tickers, vendor, names = set(), set(), set()
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            tickers.add(row["symbol"])
            names.add(row["name"])
            vendor |= {v for k, v in row.items() if k.endswith("_symbol") and v}
    return tickers, vendor, names


def real_of(markets: Iterable[MarketData], first_day: dt.date, last_day: dt.date) -> Real:
    """The real words of the universe file, every day from ``first_day`` to ``last_day``, and
    the price levels of ``markets`` (the real markets of the season's cycles): each asset's
    cycle price and every candle price shown."""
    tickers, vendor, names = universe_words()
    printed: dict[str, set[str]] = {}
    raw: set[str] = set()
    for market in markets:
        levels = [(r.symbol, r.price) for r in market.table]
        for d in (*market.assets, *market.benchmarks):
            levels.append((d.symbol, d.price))
            levels += [(d.symbol, x) for c in (*d.daily, *d.weekly, *d.four_hour) for x in c[1:5]]
        for symbol, p in levels:
            if p:  # as the prompt prints it, as the engine's messages do (:g), and raw
                printed.setdefault(symbol, set()).update({fmt_price(p, price_decimals(p)),
                                                          f"{p:g}"})
                raw.add(repr(float(p)))
    days = frozenset(pd.date_range(first_day, last_day, freq="D").date)
    return Real(frozenset(tickers), frozenset(vendor), frozenset(names), days,
                {s: frozenset(v) for s, v in printed.items()}, frozenset(raw))


def _day(parts: Sequence[str], order: tuple[int, int, int]) -> dt.date | None:
    try:
        y, m, d = (int(parts[i]) for i in order)
        return dt.date(y, m, d)
    except ValueError:
        return None


def _dates(text: str) -> Iterator[tuple[str, dt.date]]:
    for pattern, order in _DATES:
        for m in pattern.finditer(text):
            day = _day(m.groups(), order)
            if day is not None:
                yield m.group(0), day
    for i, pattern in enumerate(_NAMED_DATES):
        for m in pattern.finditer(text):
            a, b, year = m.groups()
            month, day = (a, b) if i == 0 else (b, a)
            found = _day((year, str(_MONTH[month.lower()]), day), (0, 1, 2))
            if found is not None:
                yield m.group(0), found


def _scoped_lines(text: str, names: re.Pattern[str]) -> Iterator[tuple[set[str], str]]:
    """Each line of ``text`` with the neutral names it speaks of: those it names, and for the
    lines of an asset's block (from its ``### NAME`` heading to a blank line), that asset."""
    block: str | None = None
    for line in text.splitlines():
        heading = re.match(r"### (\S+)", line)
        if heading:  # an asset's block (another heading, a debate's "### Bull", ends one)
            block = heading.group(1) if names.fullmatch(heading.group(1)) else None
        elif not line.strip() or line.startswith("#"):
            block = None
        named = set(names.findall(line)) | ({block} if block else set())
        if named:
            yield named, line


_NUMBER = r"\d+(?:\.\d+)?"
_CANDLE_ROW = re.compile(rf"^{_NUMBER}(?:,{_NUMBER}){{4}}$")
_TABLE_ROW = re.compile(r"^\w+,(?:crypto|stock|etf),")
_POSITION_ROW = re.compile(r"^\w+,(?:long|short),")


def _price_fields(line: str) -> list[str]:
    """The prices a prompt line prints: a candle row's open, high, low and close (not its
    volume), a table row's price, a position row's entry, price and level, a block heading's
    price, a close-layout line's high, low and closes. Other lines (a thesis, a message) carry
    percentages, sizes and counts beside the names, which a price would only meet by chance."""
    fields = line.split(",")
    if _CANDLE_ROW.match(line):
        return fields[:4]
    if _TABLE_ROW.match(line):
        return fields[4:5]
    if _POSITION_ROW.match(line):
        return [fields[i] for i in (3, 4, 9) if i < len(fields)]
    if line.startswith(("Executed:", "Rejected decision")):  # the engine's words, prices in :g
        return re.findall(rf"(?<![\d.:-]){_NUMBER}(?![\d.:-])", line)
    heading = re.match(rf"### \S+ price ({_NUMBER})", line)
    if heading:
        return [heading.group(1)]
    closes = re.match(rf"^\w+ from \S+ \(high ({_NUMBER}), low ({_NUMBER})\): (.*)$", line)
    if closes:
        return [closes.group(1), closes.group(2), *closes.group(3).split(",")]
    return []


def shown_as(blinding: Blinding) -> dict[str, str]:
    """Each name a blind prompt shows -> the real symbol it stands for."""
    return {n: s for s, n in blinding.names.items()}


def _printed_leaks(text: str, real: Real, shown: Mapping[str, str]) -> list[str]:
    names = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(
        sorted(map(re.escape, shown), key=len, reverse=True)) + r")(?![A-Za-z0-9])")
    found = []
    for named, line in _scoped_lines(text, names):
        numbers = set(_price_fields(line))
        for name in named:
            symbol = shown[name]
            hits = numbers & real.printed.get(symbol, frozenset())
            found += [f"real price {p} of {symbol} beside {name}" for p in sorted(hits)]
    return found


def leaks(text: str, real: Real, shown: Mapping[str, str]) -> list[str]:
    """What of ``real`` ``text`` shows, each named (none: an empty list); ``shown`` maps each
    name the text may show to the real symbol (:func:`shown_as`), so a line's prices are read
    against the asset it speaks of. A JSON text (a tool call, a request body) is read as its
    strings, one after another, so an escaped line break hides no word."""
    found = [f"real raw price {p}" for p in real.raw_prices if p in text]
    text = _readable(text)
    for t in real.tickers:
        if re.search(rf"(?<![A-Za-z0-9.]){re.escape(t)}(?![A-Za-z0-9])", text):
            found.append(f"ticker {t}")
    found += [f"vendor symbol {v}" for v in real.vendor_symbols
              if re.search(rf"(?<![A-Za-z0-9]){re.escape(v)}(?![A-Za-z0-9])", text)]
    found += [f"company name {n}" for n in real.names
              if re.search(rf"(?<![A-Za-z0-9]){re.escape(n)}(?![A-Za-z0-9])", text, re.I)]
    found += [f"real date {token!r}" for token, day in _dates(text) if day in real.days]
    months = {(d.year, d.month) for d in real.days}
    found += [f"real month {m.group(0)!r}" for m in _MONTH_YEAR.finditer(text)
              if (int(m.group(2)), _MONTH[m.group(1).lower()]) in months]
    found += _printed_leaks(text, real, shown)
    return sorted(set(found))


def _readable(text: str) -> str:
    """``text``, or, when it is a JSON object or array, its keys and strings, a blank line
    between each two (so a block of candles ends with its string)."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return "\n\n".join(_strings(value)) if isinstance(value, dict | list) else text


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple) or hasattr(value, "tolist"):
        for v in (value.tolist() if hasattr(value, "tolist") else value):
            yield from _strings(v)


def season_texts(ledger: Ledger, requests: Iterable[Mapping[str, object]] = ()
                 ) -> dict[str, str]:
    """Every text of the season a contestant read or wrote, by where it is kept: the prompt
    files, the ledger's text columns (:data:`TEXT_COLUMNS`) of every record, and the bodies of
    the model server's ``requests``."""
    out = {f"prompt {p.name}": p.read_text(encoding="utf-8")
           for p in sorted((ledger.dir / "prompts").glob("*.txt"))}
    for key in ledger.records():
        for table, columns in TEXT_COLUMNS.items():
            try:
                rows = ledger.record_rows(table, key.cycle_at, key.contestant)
            except KeyError:
                continue
            for i, row in enumerate(rows):
                for column in columns:  # each apart: a JSON column is read as JSON
                    text = "\n".join(_strings(row.get(column)))
                    if text:
                        where = f"{key.contestant} {key.cycle_at:%Y-%m-%d} {table}[{i}]"
                        out[f"{where}.{column}"] = text
    for i, body in enumerate(requests):
        out[f"request {i}"] = json.dumps(body)
    return out
