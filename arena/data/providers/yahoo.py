"""Yahoo Finance candles for US stocks and ETFs, through ``yfinance`` (1.x).

Conventions of the frames returned (see :mod:`arena.data.providers.base` and :mod:`arena.core.sessions`):

* **Prices are split-adjusted, not dividend-adjusted** (``auto_adjust=False``; Yahoo's chart API
  already applies splits to OHLC). They are the prices the market quoted, so a bar never changes
  when a dividend is paid later, and fills simulated on them are real prices; dividends are
  ignored (returns are price returns). A split *does* rewrite earlier bars: refetch after one.
* **Timestamps are bar open times in UTC.** ``1h`` and ``15m`` bars keep Yahoo's 9:30, 10:30...
  (9:30, 9:45...) New York labels (converted to UTC). Daily bars, which Yahoo labels at midnight New York of the session
  date, are relabelled to that session's open; weekly bars (labelled Monday midnight) to the first
  session open of their week. A label without an NYSE session (should not happen) falls back to
  9:30 New York on that date, so validation sees it rather than losing it.
* **The lake's series are built from ``1h`` bars** (:data:`BASE`: they reach back ~730 days);
  ``15m`` bars, which Yahoo keeps for about 60 days (:data:`REACH`), are fetched on their own for
  the stocks a contestant holds, for the invalidation monitor (see :mod:`arena.data.ingest`).
* Volume is in shares. The still-forming bar is returned if Yahoo sends it: the caller decides.

Failures become :mod:`arena.data.errors`: ``YFRateLimitError``/429 -> ``RateLimitedError``;
404 (unknown or delisted symbol) -> ``BadSymbolError``; 5xx, timeouts, Yahoo's "Will be right back"
page -> ``UnavailableError``; a non-JSON (HTML) body with status 200, 401/403/451 ->
``BlockedError``; an answer without rows -> ``NoDataError``. yfinance does not expose HTTP
statuses, so the adapter observes them on the session it hands to yfinance (``_observe``).
"""

from __future__ import annotations

import contextlib
import threading
from functools import lru_cache
from typing import Any

import pandas as pd

from arena.core.sessions import NY, NYSE, TS_UNIT, expected_bars, sessions, utc
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
from arena.data.providers.base import empty_events, require_interval, to_bar_frame
from arena.data.providers.symbols import YFINANCE, vendor_symbol

INTERVALS = frozenset({"15m", "1h", "1d", "1w"})
BASE = "1h"  # the lake's stock series are built from hourly bars (they reach back ~730 days)
#: how far back Yahoo serves intraday bars (it refuses older ranges with HTTP 422)
REACH = {"15m": pd.Timedelta(days=60), "1h": pd.Timedelta(days=730)}
_YF_INTERVAL = {"15m": "15m", "1h": "1h", "1d": "1d", "1w": "1wk"}
_PAD = {"15m": pd.Timedelta(0), "1h": pd.Timedelta(0), "1d": pd.Timedelta(days=1),
        "1w": pd.Timedelta(days=7)}
_OPEN_NY = pd.Timedelta(hours=9, minutes=30)
_OBSERVED_PATHS = ("/v8/finance/chart/", "/calendar/earnings")
_STATUS = threading.local()  # HTTP status of this thread's last chart / earnings call


def _yfinance() -> Any:
    """Import yfinance lazily and make it raise instead of returning empty frames."""
    import yfinance as yf

    yf.config.debug.hide_exceptions = False
    return yf


def _observe(session: Any) -> Any:
    """Wrap ``session.request`` (requests or curl_cffi) to record the status of chart calls."""
    if session is None or getattr(session, "_arena_observed", False):
        return session
    send = session.request

    def request(*args: Any, **kwargs: Any) -> Any:
        response = send(*args, **kwargs)
        url = str(kwargs.get("url", args[1] if len(args) > 1 else ""))
        if any(p in url for p in _OBSERVED_PATHS):
            _STATUS.code = getattr(response, "status_code", None)
        return response

    session.request = request
    session._arena_observed = True
    return session


@lru_cache(maxsize=1)
def _default_session() -> Any:
    """yfinance's own kind of session (curl_cffi, browser TLS), observed; one per process."""
    try:
        from yfinance._http import new_session
    except ImportError:  # layout changed: let yfinance pick its session, statuses unobserved
        return None
    return _observe(new_session())


def _forget_cached_responses(yf: Any) -> None:
    """yfinance memoises, per process, every response to a past window and the earnings page,
    failures included: a retry would get the same 500 and a long-lived worker stale earnings.
    Drop the memo so each fetch really asks Yahoo."""
    with contextlib.suppress(AttributeError):
        yf.data.YfData.cache_get.cache_clear()


class YFinanceProvider:
    """Stocks and ETFs from Yahoo Finance (``1h`` reaches back about 730 days, ``15m`` 60)."""

    name = "yfinance"
    intervals = INTERVALS
    base = BASE
    reach = REACH

    def __init__(self, session: Any = None, timeout: float = 30.0) -> None:
        """``session``: a ``requests`` or ``curl_cffi`` Session for yfinance (tests inject one);
        default: a curl_cffi session made on first use. No I/O here."""
        self.session = session
        self.timeout = timeout

    @classmethod
    def configured(cls, options: ProviderOptions) -> YFinanceProvider:
        """The provider ``arena.data.providers.make_provider`` builds (it takes no option)."""
        return cls()

    def supports(self, asset: Asset) -> bool:
        return asset.asset_class in {"stock", "etf"} and bool(vendor_symbol(YFINANCE, asset))

    def fetch_bars(self, asset: Asset, interval: str, start: pd.Timestamp,
                   end: pd.Timestamp) -> pd.DataFrame:
        """Bars opening in ``[start, end)``: split-adjusted, labelled by UTC open time."""
        require_interval(self.name, interval, self.intervals)
        self._require(asset)
        start_ts, end_ts = utc(start), utc(end)
        if end_ts <= start_ts:
            raise NoDataError("empty window", provider=self.name, symbol=asset.symbol)
        # Yahoo's daily/weekly range filters are midnight-based: ask wider, clip afterwards
        ask_from = start_ts.tz_convert(NY).normalize() - _PAD[interval]
        raw = self._call(asset, lambda t: t.history(
            start=ask_from, end=end_ts + _PAD[interval], interval=_YF_INTERVAL[interval],
            auto_adjust=False, back_adjust=False, actions=False, prepost=False, repair=False,
            keepna=False, timeout=self.timeout))
        if raw.empty:
            raise NoDataError("yfinance returned no rows", provider=self.name, symbol=asset.symbol)
        prices = raw[["Open", "High", "Low", "Close"]]
        raw = raw[prices.notna().all(axis=1)]  # Yahoo's rows with null prices are not bars
        frame = pd.DataFrame({
            "timestamp": _open_times(pd.DatetimeIndex(raw.index), interval),
            **{c.lower(): raw[c].to_numpy(dtype="float64")
               for c in ("Open", "High", "Low", "Close")},
            "volume": raw["Volume"].to_numpy(dtype="float64"),
        })
        return to_bar_frame(frame, provider=self.name, symbol=asset.symbol, start=start_ts,
                            end=end_ts)

    def fetch_events(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        """Dividends (cash per share) and splits (new shares per old) with ex-date in
        ``[start, end)``, from Yahoo's daily chart events. Stored as events, never applied to the
        prices: the bars stay split-adjusted by Yahoo and not dividend-adjusted."""
        self._require(asset)
        start_ts, end_ts = utc(start), utc(end)
        raw = self._call(asset, lambda t: t.history(
            start=start_ts.tz_convert(NY).normalize() - _PAD["1d"], end=end_ts + _PAD["1d"],
            interval="1d", auto_adjust=False, back_adjust=False, actions=True, prepost=False,
            repair=False, keepna=False, timeout=self.timeout))
        rows = []
        for column, kind in (("Dividends", "dividend"), ("Stock Splits", "split")):
            if column in raw.columns:
                hit = raw[column][raw[column].fillna(0.0) != 0.0]
                rows += [(label, kind, float(v)) for label, v in hit.items()]
        if not rows:
            return empty_events()
        frame = pd.DataFrame(rows, columns=["label", "kind", "value"])
        labels = pd.DatetimeIndex(frame["label"])
        local = labels.tz_convert(NY).tz_localize(None) if labels.tz is not None else labels
        frame["timestamp"] = local.normalize().tz_localize("UTC").as_unit(TS_UNIT)
        frame = frame[(frame["timestamp"] >= start_ts.normalize()) & (frame["timestamp"] < end_ts)]
        return frame[["timestamp", "kind", "value"]].sort_values(
            ["timestamp", "kind"], ignore_index=True)

    def fetch_funding(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        raise UnsupportedError("stocks and ETFs have no funding rates", provider=self.name,
                               symbol=asset.symbol)

    def earnings_dates(self, asset: Asset, start: pd.Timestamp,
                       end: pd.Timestamp) -> list[pd.Timestamp]:
        """Earnings dates (the New York calendar date, as UTC midnight) in ``[start, end)``, from
        Yahoo's earnings calendar (last ~25 years and the next scheduled one). ``[]`` for ETFs."""
        if asset.asset_class != "stock" or not vendor_symbol(YFINANCE, asset):
            return []
        table = self._call(asset, lambda t: t.get_earnings_dates(limit=100))
        if table is None:
            raise NoDataError("no earnings table on Yahoo's earnings calendar page",
                              provider=self.name, symbol=asset.symbol)
        idx = pd.DatetimeIndex(table.index)
        local = idx.tz_convert(NY).tz_localize(None) if idx.tz is not None else idx
        days = pd.DatetimeIndex(local.normalize().unique()).tz_localize("UTC").as_unit(TS_UNIT)
        lo, hi = utc(start), utc(end)
        return sorted(d for d in days if lo <= d < hi)

    # -- internals -------------------------------------------------------------------------

    def _require(self, asset: Asset) -> None:
        if not self.supports(asset):
            raise UnsupportedError(f"{asset.asset_class} is not served by Yahoo here",
                                   provider=self.name, symbol=asset.symbol)

    def _call(self, asset: Asset, fn: Any) -> Any:
        """Run ``fn(ticker)`` for the asset's Yahoo symbol, translating every failure."""
        yf = _yfinance()
        session = _observe(self.session) if self.session is not None else _default_session()
        ticker = yf.Ticker(vendor_symbol(YFINANCE, asset), session=session)
        if asset.calendar == NYSE:
            # Known exchange timezone: spares yfinance its timezone probe (one chart request per
            # symbol, and a quoteSummary fallback that turns an unknown symbol into odd errors).
            ticker._tz = NY
        _forget_cached_responses(yf)
        _STATUS.code = None
        try:
            return fn(ticker)
        except Exception as exc:
            raise self._translate(exc, asset, getattr(_STATUS, "code", None)) from exc

    def _translate(self, exc: Exception, asset: Asset, status: int | None) -> ProviderError:
        from yfinance.exceptions import (
            YFPricesMissingError,
            YFRateLimitError,
            YFTickerMissingError,
        )

        where = {"provider": self.name, "symbol": asset.symbol}
        response = getattr(exc, "response", None)
        status = status or getattr(response, "status_code", None)
        text = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, YFRateLimitError) or status == 429:
            return RateLimitedError(f"Yahoo rate limit (HTTP 429): {text}", **where)
        if status == 404:
            return BadSymbolError(f"Yahoo does not know {vendor_symbol(YFINANCE, asset)!r} "
                                  f"(HTTP 404): {text}", **where)
        if status is not None and status >= 500:
            return UnavailableError(f"Yahoo HTTP {status}: {text}", **where)
        if status in (401, 403, 451):
            return BlockedError(f"Yahoo refused the request (HTTP {status}): {text}", **where)
        if status == 422:
            return UnsupportedError(f"Yahoo refused the range (HTTP 422; 1h history reaches "
                                    f"back ~730 days, 15m ~60 days): {text}", **where)
        if isinstance(exc, YFPricesMissingError):
            return NoDataError(f"Yahoo returned no prices: {text}", **where)
        if isinstance(exc, YFTickerMissingError):
            return BadSymbolError(f"Yahoo does not know {vendor_symbol(YFINANCE, asset)!r}: "
                                  f"{text}", **where)
        if "CURRENTLY DOWN" in str(exc):
            return UnavailableError(f"Yahoo's maintenance page: {text}", **where)
        if isinstance(exc, ValueError) and "JSONDecodeError" in type(exc).__name__:
            return BlockedError(f"Yahoo answered HTTP {status or 200} with a body that is not "
                                f"JSON (an HTML page?): {text}", **where)
        if isinstance(exc, (OSError, TimeoutError)):
            return UnavailableError(f"network failure talking to Yahoo: {text}", **where)
        return ProviderError(f"yfinance failed: {text}", **where)


def _open_times(labels: pd.DatetimeIndex, interval: str) -> pd.DatetimeIndex:
    """UTC open times of yfinance's bar labels (see the module docstring)."""
    if interval in ("15m", "1h"):
        return labels.tz_convert("UTC").as_unit(TS_UNIT)
    local = labels.tz_convert(NY).tz_localize(None) if labels.tz is not None else labels
    days = local.normalize()
    if interval == "1d":  # the session's open (as arena.core.sessions.regular_session, vectorised)
        if len(days) == 0:
            return pd.DatetimeIndex([], tz="UTC").as_unit(TS_UNIT)
        found = pd.DatetimeIndex(sessions(days.min(), days.max())["open"].reindex(days))
        return found.where(found.notna(), _fallback_open(days)).as_unit(TS_UNIT)
    mondays = days - pd.to_timedelta(days.weekday, unit="D")
    if len(mondays) == 0:
        return pd.DatetimeIndex([], tz="UTC").as_unit(TS_UNIT)
    first = mondays.min().tz_localize(NY).tz_convert("UTC")
    last = mondays.max().tz_localize(NY).tz_convert("UTC") + pd.Timedelta(days=7)
    week_open = {}
    for o in expected_bars(NYSE, "1w", first, last):
        local_day = o.tz_convert(NY).tz_localize(None).normalize()
        week_open[local_day - pd.Timedelta(days=local_day.weekday())] = o
    found = pd.DatetimeIndex([week_open.get(m, pd.NaT) for m in mondays], tz="UTC")
    return found.where(found.notna(), _fallback_open(mondays)).as_unit(TS_UNIT)


def _fallback_open(day: pd.DatetimeIndex) -> pd.DatetimeIndex:
    """9:30 New York on naive dates, in UTC (for labels without an NYSE session)."""
    return (day + _OPEN_NY).tz_localize(NY).tz_convert("UTC")

