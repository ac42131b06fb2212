"""Binance and Yahoo as a live season meets them, offline: the vendors' own response formats and
query semantics over a deterministic market (the synthetic provider's paths, served as if they
were the vendors'), with the failure modes they really show switched on per test.

The adapters run their real code paths (ccxt's request building and parsing, yfinance's cookie,
crumb, chart request and JSON parsing); only the socket is replaced: a ``requests`` transport
adapter mounted on the session each SDK uses. The single-response fakes of the adapter tests
(:mod:`tests.data.test_binance`, :mod:`tests.data.test_yahoo`) pin the formats against recorded
bodies; these serve any window, so a season can run through days of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import requests
from requests.adapters import BaseAdapter

from arena.core.sessions import NY, interval_delta, sessions
from arena.core.universe import Universe
from arena.data.errors import ProviderError
from arena.data.providers.base import empty_bars
from arena.data.providers.binance import binance_spot, binance_usdm
from arena.data.providers.symbols import BINANCE, YFINANCE, vendor_symbol
from arena.data.providers.synthetic import SyntheticProvider
from tests.data.test_binance import FakeBinance
from tests.data.test_binance import Reply as BinanceReply
from tests.data.test_binance import error as binance_error
from tests.data.test_yahoo import FakeYahoo, Reply

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "vendors"
_YAHOO_INTERVALS = {"15m": "15m", "1h": "1h", "1d": "1d", "1wk": "1w"}


class Market:
    """The deterministic market both fakes serve: the synthetic provider's bars of a symbol
    at an interval over a window, and its funding rates. ``calls``: (vendor, symbol, interval)
    of every bar request served."""

    def __init__(self, universe: Universe, seed: int = 7) -> None:
        self.universe = universe
        self.source = SyntheticProvider(seed)
        self.calls: list[tuple[str, str, str]] = []

    def bars(self, vendor: str, symbol: str, interval: str, start: pd.Timestamp,
             end: pd.Timestamp) -> pd.DataFrame:
        self.calls.append((vendor, symbol, interval))
        try:
            return self.source.fetch_bars(self.universe[symbol], interval, start, end)
        except ProviderError:  # no bar there (a closed market, an empty window): the vendor
            return empty_bars()  # answers none

    def funding(self, symbol: str, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        return self.source.fetch_funding(self.universe[symbol], start, end)


def _ms(t: pd.Timestamp) -> int:
    return int(t.value // 1_000_000)


class SeriesBinance(FakeBinance):
    """api.binance.com / fapi.binance.com over :class:`Market`: ``klines`` and ``fundingRate``
    with Binance's semantics (``startTime`` and ``endTime`` inclusive, ``limit``, oldest first),
    ``exchangeInfo`` from the recorded files (BTCUSDT, ETHUSDT). ``faults``: replies (or
    exceptions) served, one each, to the next klines requests instead of the series."""

    def __init__(self, market: Market) -> None:
        super().__init__()
        self.market = market
        self.faults: list[object] = []
        by_pair = {vendor_symbol(BINANCE, a): a.symbol for a in market.universe
                   if vendor_symbol(BINANCE, a)}
        self._symbol = {pair.replace("/", "").split(":")[0]: sym for pair, sym in by_pair.items()}

    def send(self, request, **kwargs):
        klines = request.url.split("?")[0].endswith("/klines")
        self.overrides["klines"] = self.faults.pop(0) if klines and self.faults else None
        return super().send(request, **kwargs)

    def _recorded(self, host: str, endpoint: str, q: dict[str, str]) -> BinanceReply:
        if endpoint not in ("klines", "fundingRate"):
            return super()._recorded(host, endpoint, q)
        symbol = self._symbol[q["symbol"]]
        lo = pd.Timestamp(int(q.get("startTime", 0)), unit="ms", tz="UTC")
        hi = pd.Timestamp(int(q.get("endTime", _ms(lo) + 86_400_000 * 30)), unit="ms", tz="UTC")
        limit = int(q.get("limit", 500 if endpoint == "klines" else 100))
        if endpoint == "fundingRate":
            rates = self.market.funding(symbol, lo, hi + pd.Timedelta(milliseconds=1))
            rows = [{"symbol": q["symbol"], "fundingTime": _ms(t) + 3, "fundingRate": f"{r:.8f}",
                     "markPrice": "0.00000000"}
                    for t, r in zip(rates["timestamp"], rates["funding_rate"], strict=True)]
        else:
            interval = q["interval"]  # Binance names its intervals as the product does
            bars = self.market.bars("binance", symbol, interval, lo,
                                    hi + pd.Timedelta(milliseconds=1))
            step = interval_delta(interval) // pd.Timedelta(milliseconds=1)
            rows = [[_ms(t), f"{o:.8f}", f"{h:.8f}", f"{lw:.8f}", f"{c:.8f}", f"{v:.8f}",
                     _ms(t) + step - 1, f"{v * c:.8f}", 1000, f"{v / 2:.8f}", f"{v * c / 2:.8f}",
                     "0"]
                    for t, o, h, lw, c, v in bars.itertuples(index=False)]
        return BinanceReply(200, json.dumps(rows[:limit], separators=(",", ":")).encode())


class SeriesYahoo(FakeYahoo):
    """Yahoo's chart API over :class:`Market` (``period1 <= open < period2``; intraday bars
    labelled by their open, daily bars at the session's open, as Yahoo does), the cookie and
    crumb handshake of :class:`~tests.data.test_yahoo.FakeYahoo`, the recorded earnings page.
    ``down``: a reply served instead of every chart request while set (a blocked vendor)."""

    def __init__(self, market: Market) -> None:
        super().__init__(earnings=Reply(200, (FIXTURES / "yahoo" / "earnings_AAPL.html")
                                        .read_bytes(), "text/html; charset=utf-8"))
        self.market = market
        self.down: Reply | None = None
        self._symbol = {vendor_symbol(YFINANCE, a): a.symbol for a in market.universe
                        if vendor_symbol(YFINANCE, a)}
        self._query: dict[str, str] = {}

    def send(self, request, **kwargs):
        from urllib.parse import parse_qs, urlsplit

        self._query = {k: v[0] for k, v in parse_qs(urlsplit(request.url).query).items()}
        return super().send(request, **kwargs)

    def _route(self, host: str, path: str) -> object:
        if not path.startswith("/v8/finance/chart/"):
            return super()._route(host, path)
        if self.down is not None:
            return self.down
        q = self._query
        yahoo = path.rsplit("/", 1)[1]
        interval = _YAHOO_INTERVALS[q.get("interval", "1d")]
        lo = pd.Timestamp(int(q["period1"]), unit="s", tz="UTC")
        hi = pd.Timestamp(int(q["period2"]), unit="s", tz="UTC")
        bars = self.market.bars("yahoo", self._symbol[yahoo], interval, lo, hi)
        return Reply(200, json.dumps(chart_body(yahoo, q.get("interval", "1d"), bars, lo, hi))
                     .encode())


def chart_body(yahoo_symbol: str, interval: str, bars: pd.DataFrame, lo: pd.Timestamp,
               hi: pd.Timestamp) -> dict:
    """A v8 chart response in Yahoo's format (as in ``fixtures/vendors/yahoo``)."""
    days = sessions((lo - pd.Timedelta(days=1)).tz_convert(NY).tz_localize(None).normalize(),
                    hi.tz_convert(NY).tz_localize(None).normalize())
    periods = [[{"timezone": "EST", "start": int(o.timestamp()), "end": int(c.timestamp()),
                 "gmtoffset": -18000}] for o, c in zip(days["open"], days["close"], strict=True)]
    stamps = [int(t.timestamp()) for t in bars["timestamp"]]
    quote = {c: [float(x) for x in bars[c]] for c in ("open", "high", "low", "close")}
    quote["volume"] = [int(x) for x in bars["volume"]]
    indicators: dict[str, object] = {"quote": [quote]}
    if interval in ("1d", "1wk"):
        indicators["adjclose"] = [{"adjclose": quote["close"]}]
    meta = {"currency": "USD", "symbol": yahoo_symbol, "exchangeName": "NMS",
            "instrumentType": "EQUITY", "firstTradeDate": 345479400, "gmtoffset": -18000,
            "timezone": "EST", "exchangeTimezoneName": "America/New_York", "priceHint": 2,
            "dataGranularity": interval, "range": "", "tradingPeriods": periods,
            "validRanges": ["1d", "5d", "1mo", "3mo", "6mo", "1y", "2y", "5y", "10y", "ytd",
                            "max"]}
    result: dict[str, object] = {"meta": meta, "indicators": indicators}
    if stamps:
        result["timestamp"] = stamps
    return {"chart": {"result": [result], "error": None}}


def session_with(adapter: BaseAdapter) -> requests.Session:
    session = requests.Session()
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


def install(monkeypatch, market: Market) -> tuple[SeriesBinance, SeriesYahoo]:
    """Route every provider the product builds (``make_provider``: flows, commands) to the
    fakes: ccxt's exchanges get the Binance transport, yfinance the Yahoo session."""
    binance, yahoo = SeriesBinance(market), SeriesYahoo(market)

    def exchange(build: Callable[[], object]) -> Callable[[], object]:
        def make() -> object:
            ex = build()
            ex.enableRateLimit = False  # no throttling sleeps in tests
            ex.session.mount("https://", binance)
            return ex
        return make

    import arena.data.providers.binance as binance_module
    import arena.data.providers.yahoo as yahoo_module

    monkeypatch.setattr(binance_module, "binance_spot", exchange(binance_spot))
    monkeypatch.setattr(binance_module, "binance_usdm", exchange(binance_usdm))
    monkeypatch.setattr(yahoo_module, "_default_session",
                        lambda: yahoo_module._observe(session_with(yahoo)))
    return binance, yahoo


__all__ = ["Market", "SeriesBinance", "SeriesYahoo", "binance_error", "install", "session_with"]
