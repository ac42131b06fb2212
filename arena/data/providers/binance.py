"""Binance spot candles and USD-M perpetual funding rates, through ``ccxt`` (4.x).

* Bars: the asset's spot pair (``ETH/USDT``, :mod:`arena.data.providers.symbols`) on ccxt's
  ``binance`` (spot). Open times in UTC as Binance labels them (4h at 00/04/..., 1d at 00:00, 1w
  on Monday 00:00); prices in USDT, volume in base units. Paged by hand (``paginate=True`` does
  not backfill from an old ``since``): each page asks ``since`` / ``limit`` / ``until = end - 1
  ms``, the next page starts at the last open + one interval, and paging stops on a short page or
  past ``end``. Rows are de-duplicated and clipped to ``[start, end)``; the still-forming bar is
  returned if Binance sends it (the caller decides).
* Funding: the asset's perpetual (``ETH/USDT:USDT``) on ``binanceusdm``; ``funding_rate`` is the
  fraction paid per funding period (8h for the majors), stamped at the settlement time floored
  to the second (Binance records settlements a few ms late).

Failures become :mod:`arena.data.errors`: 429/418 (``DDoSProtection``, ``RateLimitExceeded``) ->
``RateLimitedError`` with ``Retry-After``; 451 (geo block) and 403 (WAF) -> ``BlockedError``; other
``ExchangeNotAvailable``, ``RequestTimeout``, ``NetworkError`` -> ``UnavailableError``;
``BadSymbol`` -> ``BadSymbolError``; an HTML body with status 200 -> ``BlockedError`` (ccxt turns
it into an empty page, or rows of ``None`` without ``since``); zero rows -> ``NoDataError``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import pandas as pd

from arena.core.sessions import INTERVAL_ORDER, TS_UNIT, interval_delta, utc
from arena.core.universe import Asset
from arena.data.errors import (
    BadSymbolError,
    BlockedError,
    NoDataError,
    ProviderError,
    RateLimitedError,
    UnavailableError,
    UnsupportedError,
)
from arena.data.providers import ProviderOptions
from arena.data.providers.base import looks_like_html, require_interval, to_bar_frame
from arena.data.providers.symbols import BINANCE, BINANCE_PERP, vendor_symbol

INTERVALS = frozenset(INTERVAL_ORDER)
MAX_PAGE = 1000  # Binance's cap per klines / fundingRate request


def binance_spot() -> Any:
    """The spot exchange as this adapter configures it (markets: spot only, one request)."""
    import ccxt

    return ccxt.binance({"enableRateLimit": True, "options": {"fetchMarkets": {"types": ["spot"]}}})


def binance_usdm() -> Any:
    """The USD-M futures exchange (perpetual funding rates)."""
    import ccxt

    return ccxt.binanceusdm({"enableRateLimit": True})


class CcxtProvider:
    """Crypto from Binance. ``exchange``/``futures``: pre-built ccxt objects (tests); by default
    each thread builds its own on first use (ccxt objects keep per-request state)."""

    name = "ccxt"
    intervals = INTERVALS

    def __init__(self, exchange: Any = None, futures: Any = None,
                 page_limit: int = MAX_PAGE) -> None:
        self.exchange = exchange
        self.futures = futures
        self.page_limit = max(1, min(int(page_limit), MAX_PAGE))
        self._local = threading.local()

    @classmethod
    def configured(cls, options: ProviderOptions) -> CcxtProvider:
        """The provider ``arena.data.providers.make_provider`` builds (it takes no option)."""
        return cls()

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_local"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def supports(self, asset: Asset) -> bool:
        return asset.is_crypto and bool(vendor_symbol(BINANCE, asset))

    def fetch_bars(self, asset: Asset, interval: str, start: pd.Timestamp,
                   end: pd.Timestamp) -> pd.DataFrame:
        """Bars opening in ``[start, end)``, paged by hand (see the module docstring)."""
        require_interval(self.name, interval, self.intervals)
        if not self.supports(asset):
            raise UnsupportedError(f"{asset.asset_class} is not served by Binance",
                                   provider=self.name, symbol=asset.symbol)
        ex = self._exchange("spot", binance_spot)
        pair = vendor_symbol(BINANCE, asset)
        start_ms, end_ms = _ms(start), _ms(end)
        rows = self._pages(ex, asset, start_ms, end_ms, lambda since, limit: ex.fetch_ohlcv(
            pair, interval, since=since, limit=limit, params={"until": end_ms - 1}),
            stamp=lambda row: row[0], step=int(interval_delta(interval).total_seconds() * 1000))
        return to_bar_frame(rows, provider=self.name, symbol=asset.symbol, start=start, end=end)

    def fetch_events(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        raise UnsupportedError("crypto has no corporate actions", provider=self.name,
                               symbol=asset.symbol)

    def fetch_funding(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        """Columns ``timestamp`` (settlement, UTC) and ``funding_rate`` (fraction per period)."""
        perp = vendor_symbol(BINANCE_PERP, asset)
        if not asset.is_crypto or not perp:
            raise UnsupportedError("no perpetual contract for this asset", provider=self.name,
                                   symbol=asset.symbol)
        fut = self._exchange("futures", binance_usdm)
        start_ms, end_ms = _ms(start), _ms(end)
        rows = self._pages(fut, asset, start_ms, end_ms, lambda since, limit: (
            fut.fetch_funding_rate_history(perp, since=since, limit=limit,
                                           params={"until": end_ms - 1})),
            stamp=lambda row: row.get("timestamp"), step=1)
        if any(r.get("timestamp") is None or r.get("fundingRate") is None for r in rows):
            raise BlockedError("funding rows without time or rate: not funding data",
                               provider=self.name, symbol=asset.symbol)
        ts = pd.to_datetime([r["timestamp"] for r in rows], unit="ms", utc=True).floor("s")
        frame = pd.DataFrame({"timestamp": ts.as_unit(TS_UNIT),
                              "funding_rate": [float(r["fundingRate"]) for r in rows]})
        frame = frame[(frame["timestamp"] >= utc(start)) & (frame["timestamp"] < utc(end))]
        if frame.empty:
            raise NoDataError("no funding settlements in the window", provider=self.name,
                              symbol=asset.symbol)
        return frame.sort_values("timestamp").drop_duplicates("timestamp").reset_index(drop=True)

    def earnings_dates(self, asset: Asset, start: pd.Timestamp,
                       end: pd.Timestamp) -> list[pd.Timestamp]:
        return []  # crypto has no earnings

    # -- internals -------------------------------------------------------------------------

    def _exchange(self, kind: str, build: Callable[[], Any]) -> Any:
        given = self.exchange if kind == "spot" else self.futures
        if given is not None:
            return given
        if getattr(self._local, kind, None) is None:
            setattr(self._local, kind, build())
        return getattr(self._local, kind)

    def _pages(self, ex: Any, asset: Asset, start_ms: int, end_ms: int,
               fetch: Callable[[int, int], list[Any]], *, stamp: Callable[[Any], int | None],
               step: int) -> list[Any]:
        """All rows from ``start_ms`` on, page by page, each time stamp once (first copy kept)."""
        rows: list[Any] = []
        seen: set[int] = set()
        since = start_ms
        while since < end_ms:
            page = self._call(ex, asset, lambda since=since: fetch(since, self.page_limit))
            stamps = [stamp(r) for r in page]
            for row, ts in zip(page, stamps, strict=True):
                if ts is None or ts not in seen:  # rows without time go on, to be refused
                    rows.append(row)
                    if ts is not None:
                        seen.add(ts)
            known = [ts for ts in stamps if ts is not None]
            if len(page) < self.page_limit or not known or max(known) + step <= since:
                break  # short page, unusable page, or no progress
            since = max(known) + step
        return rows

    def _call(self, ex: Any, asset: Asset, fn: Callable[[], list[Any]]) -> list[Any]:
        import ccxt

        try:
            page = fn()
        except ccxt.BaseError as exc:
            raise self._translate(exc, ex, asset) from exc
        body = getattr(ex, "last_http_response", None)
        if isinstance(body, str) and looks_like_html(body):
            raise BlockedError("Binance answered with an HTML page instead of JSON",
                               provider=self.name, symbol=asset.symbol)
        return list(page or [])

    def _translate(self, exc: Exception, ex: Any, asset: Asset) -> ProviderError:
        import ccxt

        where = {"provider": self.name, "symbol": asset.symbol}
        status = _http_status(exc)
        text = f"{type(exc).__name__}: {exc}" + (f" [HTTP {status}]" if status else "")
        if isinstance(exc, (ccxt.DDoSProtection, ccxt.RateLimitExceeded)) or status in (418, 429):
            headers = getattr(ex, "last_response_headers", None) or {}
            return RateLimitedError(f"Binance throttled us: {text}",
                                    retry_after=_float(headers.get("Retry-After")), **where)
        if status in (403, 451) or "restricted location" in str(exc):
            return BlockedError(f"Binance refused us (geo block or WAF): {text}", **where)
        if isinstance(exc, ccxt.BadSymbol):
            return BadSymbolError(f"Binance does not list {vendor_symbol(BINANCE, asset)!r}: "
                                  f"{text}", **where)
        if isinstance(exc, ccxt.OperationFailed):  # NetworkError, ExchangeNotAvailable, timeouts
            return UnavailableError(f"Binance unavailable: {text}", **where)
        return ProviderError(f"ccxt failed: {text}", **where)


def _ms(ts: object) -> int:
    return int(utc(ts).value // 1_000_000)


def _http_status(exc: BaseException) -> int | None:
    """The HTTP status behind a ccxt error: its ``requests`` cause, else the message."""
    for inner in (exc.__cause__, exc.__context__):
        code = getattr(getattr(inner, "response", None), "status_code", None)
        if isinstance(code, int):
            return code
    match = re.search(r"\s([1-5]\d\d)\s", str(exc))
    return int(match.group(1)) if match else None


def _float(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
