"""YFinanceProvider against recorded Yahoo responses, through the real yfinance code path.

A ``requests.Session`` with a fake transport adapter is handed to the provider: yfinance does its
whole routine (cookie from fc.yahoo.com, crumb, chart request, retry with the other cookie
strategy after an HTTP error, JSON parsing, timezone handling) and only the socket is replaced.
yfinance's process-wide state (YfData singleton, its response memo, cookie/tz caches on disk) is
reset around every test, so the tests are order-independent.
"""

from __future__ import annotations

import http.client
import io
import json
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
import requests
import yfinance  # noqa: F401 - imported at collection so its warning filters don't leak into a test
from requests.adapters import BaseAdapter, HTTPAdapter
from urllib3 import HTTPResponse

from arena.core.sessions import NYSE, expected_bars
from arena.core.universe import load_universe
from arena.data.errors import (
    BadSymbolError,
    BlockedError,
    NoDataError,
    RateLimitedError,
    UnavailableError,
    UnsupportedError,
)
from arena.data.providers.base import BAR_COLUMNS, Provider
from arena.data.providers.yahoo import YFinanceProvider

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vendors" / "yahoo"
UNIVERSE = load_universe()
AAPL, BRKB, SPY, ETH = (UNIVERSE[s] for s in ("AAPL", "BRK.B", "SPY", "ETH"))
T = pd.Timestamp
# yfinance 1.7 still calls sort_index(inplace=True), deprecated by pandas 3.1
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword")


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json;charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


def chart(name: str, status: int = 200) -> Reply:
    return Reply(status, fixture_bytes(name))


def html(name: str, status: int = 200) -> Reply:
    return Reply(status, fixture_bytes(name), "text/html; charset=utf-8")


_REASONS = {200: "OK", 404: "Not Found", 422: "Unprocessable Entity", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable"}
_COOKIE = ("A3=d=AQABBJ3fKGkCEDlBgS0Bwgn3AA8Aw5ZHa9EFEgEBAQFwKWkvaQAAAAAA_eMAAA&S=AQAAAq8J0R3;"
           " Expires=Wed, 29 Nov 2028 18:00:00 GMT; Max-Age=63158400; Domain=.yahoo.com; Path=/;"
           " SameSite=None; Secure; HttpOnly")


class FakeYahoo(BaseAdapter):
    """Yahoo's hosts as yfinance meets them. ``charts`` maps a Yahoo symbol to a reply, an
    exception to raise, or a list of those served in turn (the last one repeats)."""

    def __init__(self, charts: dict[str, object] | None = None,
                 earnings: Reply | None = None) -> None:
        super().__init__()
        self.charts = dict(charts or {})
        self.earnings = earnings
        self.calls: list[tuple[str, dict[str, str]]] = []

    def chart_calls(self) -> list[dict[str, str]]:
        return [q for path, q in self.calls if "/v8/finance/chart/" in path]

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        url = urlsplit(request.url)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.calls.append((url.netloc + url.path, query))
        reply = self._route(url.netloc, url.path)
        if isinstance(reply, BaseException):
            raise reply
        headers = {"Content-Type": reply.content_type, **reply.headers}
        raw = HTTPResponse(body=io.BytesIO(reply.body), headers=headers, status=reply.status,
                           reason=_REASONS.get(reply.status, "Error"), preload_content=False)
        message = http.client.HTTPMessage()
        for key, value in headers.items():
            message[key] = value
        raw._original_response = SimpleNamespace(  # lets requests read Set-Cookie
            msg=message, isclosed=lambda: True, close=lambda: None)
        return HTTPAdapter().build_response(request, raw)

    def _route(self, host: str, path: str) -> object:
        if host == "fc.yahoo.com":  # the cookie endpoint answers 404 and sets the A3 cookie
            return Reply(404, b"<html><body>Not Found</body></html>", "text/html",
                         {"Set-Cookie": _COOKIE})
        if path == "/v1/test/getcrumb":
            return Reply(200, b"kR8iQ7oX2tJ", "text/plain;charset=utf-8")
        if host == "guce.yahoo.com":  # consent flow, only outside the EU's consent wall
            return Reply(404, b"<html><body>Not Found</body></html>", "text/html")
        if path.startswith("/v8/finance/chart/"):
            symbol = path.rsplit("/", 1)[1]
            replies = self.charts.get(symbol)
            if isinstance(replies, list):
                return replies.pop(0) if len(replies) > 1 else replies[0]
            if replies is not None:
                return replies
        if path == "/calendar/earnings" and self.earnings is not None:
            return self.earnings
        return Reply(404, b'{"finance":{"result":null,"error":{"code":"Not Found",'
                          b'"description":"HTTP 404 Not Found"}}}')

    def close(self) -> None:
        pass


def provider_for(fake: FakeYahoo) -> YFinanceProvider:
    session = requests.Session()
    session.mount("https://", fake)
    session.mount("http://", fake)
    return YFinanceProvider(session=session)


@pytest.fixture(autouse=True)
def fresh_yfinance(tmp_path, monkeypatch):
    """Reset yfinance's process-wide state: YfData singleton (session, cookie, crumb), its
    response memo, and the on-disk cookie/tz/ISIN caches (moved to a temporary folder)."""
    import yfinance as yf
    from yfinance import base, cache, data

    old_dirs = (cache._TzDBManager.get_location(), cache._CookieDBManager.get_location(),
                cache._ISINDBManager.get_location())

    def reset() -> None:
        data.SingletonMeta._instances.pop(data.YfData, None)
        data.YfData.cache_get.cache_clear()

    reset()
    yf.set_tz_cache_location(str(tmp_path / "py-yfinance"))
    for manager, attr in ((cache._TzCacheManager, "_tz_cache"),
                          (cache._CookieCacheManager, "_Cookie_cache"),
                          (cache._ISINCacheManager, "_isin_cache")):
        monkeypatch.setattr(manager, attr, None)
    monkeypatch.setattr(base, "_tz_info_fetch_ctr", 0)
    yield
    reset()
    cache._TzDBManager.set_location(old_dirs[0])
    cache._CookieDBManager.set_location(old_dirs[1])
    cache._ISINDBManager.set_location(old_dirs[2])


def recorded(name: str) -> dict:
    return json.loads(fixture_bytes(name))["chart"]["result"][0]


# -- happy paths ----------------------------------------------------------------------------------

def test_hourly_bars_are_labelled_by_utc_open_and_keep_the_early_close() -> None:
    fake = FakeYahoo({"AAPL": chart("chart_AAPL_1h.json")})
    start, end = T("2025-11-25 14:30", tz="UTC"), T("2025-12-02", tz="UTC")
    bars = provider_for(fake).fetch_bars(AAPL, "1h", start, end)

    assert list(bars.columns) == list(BAR_COLUMNS)
    assert str(bars["timestamp"].dtype) == "datetime64[us, UTC]"
    assert len(bars) == 25  # 7 + 7 + 4 (13:00 close on 2025-11-28) + 7; Thanksgiving closed
    assert bars["timestamp"].tolist() == list(expected_bars(NYSE, "1h", start, end))
    first = bars["timestamp"].iloc[0]
    assert first == T("2025-11-25 14:30", tz="UTC")  # 9:30 EST
    early = bars[bars["timestamp"].dt.date == pd.Timestamp("2025-11-28").date()]
    assert early["timestamp"].tolist() == [T(f"2025-11-28 {h}:30", tz="UTC") for h in (14, 15, 16, 17)]
    quote = recorded("chart_AAPL_1h.json")["indicators"]["quote"][0]
    for col in ("open", "high", "low", "close", "volume"):
        assert bars[col].tolist() == [float(x) for x in quote[col]]
    assert bars["close"].iloc[0] == pytest.approx(quote["close"][0]) and 250 < bars["close"].iloc[0] < 300
    # one chart request with Yahoo's own parameters; the timezone probe is skipped
    (query,) = fake.chart_calls()
    assert query["interval"] == "1h" and query["includePrePost"] == "False"
    assert int(query["period1"]) == int(T("2025-11-25", tz="America/New_York").timestamp())
    assert int(query["period2"]) == int(end.timestamp())
    assert query["crumb"] == "kR8iQ7oX2tJ"


def test_hourly_window_is_clipped_to_start_and_end() -> None:
    fake = FakeYahoo({"AAPL": chart("chart_AAPL_1h.json")})
    start, end = T("2025-11-26 15:00", tz="UTC"), T("2025-11-28 16:30", tz="UTC")
    bars = provider_for(fake).fetch_bars(AAPL, "1h", start, end)
    assert bars["timestamp"].iloc[0] == T("2025-11-26 15:30", tz="UTC")
    assert bars["timestamp"].iloc[-1] == T("2025-11-28 15:30", tz="UTC")
    assert len(bars) == 8


def test_daily_bars_open_at_the_session_open_across_dst_and_are_not_dividend_adjusted() -> None:
    fake = FakeYahoo({"AAPL": chart("chart_AAPL_1d.json")})
    start, end = T("2025-10-27", tz="UTC"), T("2025-11-12", tz="UTC")
    bars = provider_for(fake).fetch_bars(AAPL, "1d", start, end)

    assert len(bars) == 12
    assert bars["timestamp"].tolist() == list(expected_bars(NYSE, "1d", start, end))
    assert bars["timestamp"].iloc[0] == T("2025-10-27 13:30", tz="UTC")  # EDT
    assert bars["timestamp"].iloc[5] == T("2025-11-03 14:30", tz="UTC")  # EST after 2025-11-02
    rec = recorded("chart_AAPL_1d.json")
    raw_close = rec["indicators"]["quote"][0]["close"]
    adj_close = rec["indicators"]["adjclose"][0]["adjclose"]
    assert bars["close"].tolist() == [float(x) for x in raw_close]
    assert bars["close"].iloc[0] != pytest.approx(adj_close[0], abs=1e-6)  # before the dividend
    assert bars["volume"].tolist() == [float(x) for x in rec["indicators"]["quote"][0]["volume"]]
    assert int(fake.chart_calls()[0]["period1"]) == int(T("2025-10-25", tz="America/New_York").timestamp())


def test_dividends_are_events_on_their_ex_date_and_the_bars_stay_unadjusted() -> None:
    fake = FakeYahoo({"AAPL": chart("chart_AAPL_1d.json")})
    start, end = T("2025-10-27", tz="UTC"), T("2025-11-12", tz="UTC")
    provider = provider_for(fake)
    events = provider.fetch_events(AAPL, start, end)
    assert events.to_dict("records") == [
        {"timestamp": T("2025-11-10", tz="UTC"), "kind": "dividend", "value": 0.26}]
    assert {"div", "splits"} <= set(fake.chart_calls()[0]["events"].split(","))
    # the same window's bars are the raw quotes: the dividend is stored, never applied
    bars = provider.fetch_bars(AAPL, "1d", start, end)
    raw_close = recorded("chart_AAPL_1d.json")["indicators"]["quote"][0]["close"]
    assert bars["close"].tolist() == [float(x) for x in raw_close]
    assert provider.fetch_events(AAPL, T("2025-11-11", tz="UTC"), end).empty


def test_weekly_bars_open_at_the_first_session_of_the_week() -> None:
    fake = FakeYahoo({"SPY": chart("chart_SPY_1wk.json")})
    start, end = T("2025-01-13", tz="UTC"), T("2025-03-01", tz="UTC")
    bars = provider_for(fake).fetch_bars(SPY, "1w", start, end)

    assert bars["timestamp"].tolist() == list(expected_bars(NYSE, "1w", start, end))
    assert bars["timestamp"].tolist() == [
        T("2025-01-13 14:30", tz="UTC"), T("2025-01-21 14:30", tz="UTC"),  # MLK day Monday
        T("2025-01-27 14:30", tz="UTC"), T("2025-02-03 14:30", tz="UTC"),
        T("2025-02-10 14:30", tz="UTC"), T("2025-02-18 14:30", tz="UTC"),  # Presidents' Day
        T("2025-02-24 14:30", tz="UTC")]
    quote = recorded("chart_SPY_1wk.json")["indicators"]["quote"][0]
    assert bars["open"].tolist() == [float(x) for x in quote["open"]]
    assert fake.chart_calls()[0]["interval"] == "1wk"


def test_vendor_spelling_is_used_on_the_wire() -> None:
    fake = FakeYahoo({"BRK-B": chart("chart_BRK-B_1d.json")})
    bars = provider_for(fake).fetch_bars(BRKB, "1d", T("2025-11-12", tz="UTC"), T("2025-11-15", tz="UTC"))
    assert bars["timestamp"].tolist() == [T(f"2025-11-{d} 14:30", tz="UTC") for d in (12, 13, 14)]
    assert any(path.endswith("/v8/finance/chart/BRK-B") for path, _ in fake.calls)


def test_unknown_symbol_is_reported_in_house_form() -> None:
    missing = FakeYahoo({"BRK-B": chart("chart_not_found.json", status=404)})
    with pytest.raises(BadSymbolError) as err:
        provider_for(missing).fetch_bars(BRKB, "1d", T("2025-11-12", tz="UTC"), T("2025-11-15", tz="UTC"))
    assert err.value.symbol == "BRK.B" and err.value.provider == "yfinance"


def test_earnings_dates_are_utc_midnights_of_the_new_york_date() -> None:
    fake = FakeYahoo(earnings=html("earnings_AAPL.html"))
    provider = provider_for(fake)
    got = provider.earnings_dates(AAPL, T("2025-01-01", tz="UTC"), T("2026-01-01", tz="UTC"))
    assert got == [T(d, tz="UTC") for d in ("2025-01-30", "2025-05-01", "2025-07-31", "2025-10-30")]
    query = fake.calls[-1][1]
    assert fake.calls[-1][0] == "finance.yahoo.com/calendar/earnings"
    assert query["symbol"] == "AAPL" and query["size"] == "100"
    # ETFs and crypto have none, without asking anybody
    n = len(fake.calls)
    assert provider.earnings_dates(SPY, T("2025-01-01", tz="UTC"), T("2026-01-01", tz="UTC")) == []
    assert provider.earnings_dates(ETH, T("2025-01-01", tz="UTC"), T("2026-01-01", tz="UTC")) == []
    assert len(fake.calls) == n


# -- failure modes -----------------------------------------------------------------------------

WINDOW = (T("2025-10-27", tz="UTC"), T("2025-11-12", tz="UTC"))


@pytest.mark.parametrize(("reply", "error"), [
    pytest.param(chart("chart_AAPL_1d_no_rows.json"), NoDataError, id="200-result-without-timestamp"),
    pytest.param(chart("chart_not_found.json", status=404), BadSymbolError, id="404-unknown-symbol"),
    pytest.param(html("consent_wall.html"), BlockedError, id="html-page-with-200"),
    pytest.param(Reply(429, b"Too Many Requests\r\n", "text/plain"), RateLimitedError, id="429"),
    pytest.param(chart("chart_internal_error.json", status=500), UnavailableError, id="500-json"),
    pytest.param(html("will_be_right_back.html", status=503), UnavailableError, id="503-will-be-right-back"),
    pytest.param(requests.exceptions.ReadTimeout("Read timed out. (read timeout=30)"),
                 UnavailableError, id="timeout"),
    pytest.param(requests.exceptions.ConnectionError("Connection reset by peer"),
                 UnavailableError, id="connection-reset"),
])
def test_vendor_failures_become_typed_errors(reply: object, error: type) -> None:
    # same symbol and window as the happy path: a leak from yfinance's caches would show here
    fake = FakeYahoo({"AAPL": reply})
    with pytest.raises(error) as err:
        provider_for(fake).fetch_bars(AAPL, "1d", *WINDOW)
    assert err.value.provider == "yfinance" and err.value.symbol == "AAPL"
    assert fake.chart_calls(), "the failure must come from the chart request"


def test_hourly_history_beyond_730_days_is_refused_not_emptied() -> None:
    fake = FakeYahoo({"AAPL": chart("chart_range_refused.json", status=422)})
    with pytest.raises(UnsupportedError, match="730 days"):
        provider_for(fake).fetch_bars(AAPL, "1h", T("2023-11-23 14:30", tz="UTC"),
                                      T("2023-11-30 14:30", tz="UTC"))


def test_a_retry_after_an_outage_asks_yahoo_again() -> None:
    # yfinance memoises responses of past windows in-process; the adapter must forget a failure
    fake = FakeYahoo({"AAPL": [chart("chart_internal_error.json", status=500),
                               chart("chart_internal_error.json", status=500),
                               chart("chart_AAPL_1d.json")]})
    provider = provider_for(fake)
    with pytest.raises(UnavailableError):
        provider.fetch_bars(AAPL, "1d", *WINDOW)
    assert len(provider.fetch_bars(AAPL, "1d", *WINDOW)) == 12
    assert len(fake.chart_calls()) == 3  # 500, yfinance's own retry (500), then 200


def test_earnings_failures_are_typed() -> None:
    limited = FakeYahoo(earnings=Reply(429, b"Too Many Requests\r\n", "text/plain"))
    with pytest.raises(RateLimitedError):
        provider_for(limited).earnings_dates(AAPL, T("2025-01-01", tz="UTC"), T("2026-01-01", tz="UTC"))
    no_table = FakeYahoo(earnings=html("consent_wall.html"))
    with pytest.raises(NoDataError):
        provider_for(no_table).earnings_dates(AAPL, T("2025-01-01", tz="UTC"), T("2026-01-01", tz="UTC"))


def test_refusals_happen_before_any_request() -> None:
    fake = FakeYahoo()
    provider = provider_for(fake)
    assert provider.supports(AAPL) and provider.supports(SPY) and not provider.supports(ETH)
    with pytest.raises(UnsupportedError):
        provider.fetch_bars(ETH, "1d", *WINDOW)
    with pytest.raises(UnsupportedError):
        provider.fetch_bars(AAPL, "4h", *WINDOW)  # derived by the lake, never asked
    with pytest.raises(UnsupportedError):
        provider.fetch_funding(AAPL, *WINDOW)
    assert fake.calls == []


def test_provider_is_lazy_picklable_and_a_provider() -> None:
    assert isinstance(YFinanceProvider(), Provider)
    assert pickle.loads(pickle.dumps(YFinanceProvider())).name == "yfinance"
    code = ("import sys; from arena.data.providers.yahoo import YFinanceProvider; "
            "YFinanceProvider(); assert 'yfinance' not in sys.modules, 'imported yfinance'")
    subprocess.run([sys.executable, "-c", code], check=True)
