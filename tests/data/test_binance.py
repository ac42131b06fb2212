"""CcxtProvider against recorded Binance responses, through the real ccxt code path.

The ccxt exchange objects are the adapter's own (``binance_spot()``, ``binance_usdm()``) with a
fake transport mounted on their ``requests`` session: ccxt builds and signs nothing differently,
loads its markets from a recorded ``exchangeInfo``, parses recorded klines / funding JSON, and
raises its own exceptions through ``handle_errors`` / ``handle_http_status_code``. The fake
serves klines and funding with Binance's semantics (``startTime``, ``endTime``, ``limit``) over a
recorded series, so paging is exercised against the real contract.
"""

from __future__ import annotations

import io
import json
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
import requests
from requests.adapters import BaseAdapter, HTTPAdapter
from urllib3 import HTTPResponse

from arena.core.universe import Asset, load_universe
from arena.data.errors import (
    BadSymbolError,
    BlockedError,
    NoDataError,
    RateLimitedError,
    UnavailableError,
    UnsupportedError,
)
from arena.data.providers.base import BAR_COLUMNS, FUNDING_COLUMNS, Provider
from arena.data.providers.binance import CcxtProvider, binance_spot, binance_usdm

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vendors" / "binance"
UNIVERSE = load_universe()
ETH, AAPL = UNIVERSE["ETH"], UNIVERSE["AAPL"]
T = pd.Timestamp
H = 3_600_000
KLINES = json.loads((FIXTURES / "klines_ETHUSDT_1h.json").read_text())
FUNDING = json.loads((FIXTURES / "fundingRate_ETHUSDT.json").read_text())


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json;charset=UTF-8"
    headers: dict[str, str] = field(default_factory=dict)


def error(status: int, code: int, msg: str, **headers: str) -> Reply:
    return Reply(status, json.dumps({"code": code, "msg": msg}).encode(), headers=headers)


HTML_200 = Reply(200, b"<!DOCTYPE html><html><head><title>Binance</title></head><body><h1>System "
                      b"maintenance</h1><p>Binance is upgrading its systems.</p></body></html>",
                 "text/html")
CLOUDFRONT_403 = Reply(403, b'<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">\n'
                            b"<HTML><HEAD><TITLE>ERROR: The request could not be satisfied</TITLE>"
                            b"</HEAD><BODY><H1>403 ERROR</H1><H2>The request could not be "
                            b"satisfied.</H2></BODY></HTML>", "text/html")
BAD_GATEWAY = Reply(502, b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>"
                         b"502 Bad Gateway</h1></center></body></html>", "text/html")
GEO_451 = error(451, 0, "Service unavailable from a restricted location according to 'b. "
                        "Eligibility' in https://www.binance.com/en/terms. Please contact customer "
                        "service if you believe you received this message in error.")


_REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 418: "I'm a teapot",
            429: "Too Many Requests", 451: "Unavailable For Legal Reasons", 502: "Bad Gateway",
            503: "Service Unavailable"}


class FakeBinance(BaseAdapter):
    """api.binance.com and fapi.binance.com. ``klines``/``funding``/``exchange_info``: a reply or
    exception overriding the recorded behaviour (a list is served in turn, the last repeats)."""

    def __init__(self, klines: object = None, funding: object = None,
                 exchange_info: object = None, repeat_first: bool = False) -> None:
        super().__init__()
        self.overrides = {"klines": klines, "fundingRate": funding, "exchangeInfo": exchange_info}
        self.repeat_first = repeat_first  # a vendor that sends each page's first row twice
        self.calls: list[tuple[str, dict[str, str]]] = []

    def requests_to(self, endpoint: str) -> list[dict[str, str]]:
        return [q for path, q in self.calls if path.endswith(endpoint)]

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        url = urlsplit(request.url)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.calls.append((url.netloc + url.path, query))
        endpoint = url.path.rsplit("/", 1)[1]
        reply = self.overrides.get(endpoint)
        if isinstance(reply, list):
            reply = reply.pop(0) if len(reply) > 1 else reply[0]
        if reply is None:
            reply = self._recorded(url.netloc, endpoint, query)
        if isinstance(reply, BaseException):
            raise reply
        raw = HTTPResponse(body=io.BytesIO(reply.body), status=reply.status, preload_content=False,
                           headers={"Content-Type": reply.content_type, **reply.headers},
                           reason=_REASONS.get(reply.status, "Error"))
        return HTTPAdapter().build_response(request, raw)

    def _recorded(self, host: str, endpoint: str, q: dict[str, str]) -> Reply:
        if endpoint == "exchangeInfo":
            name = "exchangeInfo_usdm.json" if host.startswith("fapi") else "exchangeInfo_spot.json"
            return Reply(200, (FIXTURES / name).read_bytes())
        if endpoint == "klines":
            rows = self._window(KLINES, lambda r: r[0], q, default_limit=500)
        elif endpoint == "fundingRate":
            rows = self._window(FUNDING, lambda r: r["fundingTime"], q, default_limit=100)
        else:
            return error(404, -1, "Not found")
        return Reply(200, json.dumps(rows, separators=(",", ":")).encode())

    def _window(self, series: list, stamp, q: dict[str, str], default_limit: int) -> list:
        lo, hi = int(q.get("startTime", 0)), int(q.get("endTime", 2**62))
        picked = [r for r in series if lo <= stamp(r) <= hi]
        if self.repeat_first:
            picked = picked[:1] + picked
        return picked[: int(q.get("limit", default_limit))]

    def close(self) -> None:
        pass


def provider_for(fake: FakeBinance, page_limit: int = 1000) -> CcxtProvider:
    spot, futures = binance_spot(), binance_usdm()
    for ex in (spot, futures):
        ex.enableRateLimit = False  # no throttling sleeps in tests
        ex.session.mount("https://", fake)
    return CcxtProvider(exchange=spot, futures=futures, page_limit=page_limit)


def expected_bars(lo: int, hi: int) -> list[list[float]]:
    """The recorded klines with open time in [lo, hi), as ccxt parses them."""
    return [[r[0], *map(float, r[1:6])] for r in KLINES if lo <= r[0] < hi]


START = T("2025-11-24", tz="UTC")


# -- bars ------------------------------------------------------------------------------------------

def test_bars_are_paged_by_hand_over_three_pages() -> None:
    fake = FakeBinance()
    end = START + pd.Timedelta(hours=13)
    bars = provider_for(fake, page_limit=5).fetch_bars(ETH, "1h", START, end)

    assert list(bars.columns) == list(BAR_COLUMNS)
    assert str(bars["timestamp"].dtype) == "datetime64[us, UTC]"
    assert bars["timestamp"].tolist() == list(pd.date_range(START, periods=13, freq="h").as_unit("us"))
    assert bars["timestamp"].is_unique
    got = [[int(t.value // 1_000_000), o, h, lo, c, v] for t, o, h, lo, c, v in bars.itertuples(index=False)]
    assert got == expected_bars(START.value // 1_000_000, end.value // 1_000_000)
    assert bars["close"].iloc[0] == 2798.50 and bars["volume"].iloc[0] == 18109.9941

    pages = fake.requests_to("/api/v3/klines")
    assert [int(q["startTime"]) for q in pages] == [START.value // 1_000_000 + k * H for k in (0, 5, 10)]
    assert all(q["symbol"] == "ETHUSDT" and q["interval"] == "1h" and q["limit"] == "5" for q in pages)
    assert {int(q["endTime"]) for q in pages} == {end.value // 1_000_000 - 1}


def test_paging_stops_on_a_short_page_and_keeps_the_forming_bar() -> None:
    fake = FakeBinance()
    bars = provider_for(fake, page_limit=5).fetch_bars(ETH, "1h", START, START + pd.Timedelta(days=1))
    assert len(bars) == 16  # everything recorded, the last one still forming
    assert len(fake.requests_to("/api/v3/klines")) == 4  # 5 + 5 + 5 + 1: the short page ends it

    fake = FakeBinance()
    assert len(provider_for(fake).fetch_bars(ETH, "1h", START, START + pd.Timedelta(days=1))) == 16
    assert len(fake.requests_to("/api/v3/klines")) == 1  # production page size: one short page


def test_repeated_rows_are_dropped_and_paging_goes_on() -> None:
    fake = FakeBinance(repeat_first=True)  # pages like [b0, b0, b1, b2, b3]
    bars = provider_for(fake, page_limit=5).fetch_bars(ETH, "1h", START, START + pd.Timedelta(hours=13))
    assert bars["timestamp"].tolist() == list(pd.date_range(START, periods=13, freq="h").as_unit("us"))
    assert len(fake.requests_to("/api/v3/klines")) == 4  # 5 + 5 + 5 + 2 rows, 13 distinct


def test_bars_are_clipped_to_the_window() -> None:
    fake = FakeBinance()
    bars = provider_for(fake).fetch_bars(ETH, "1h", START + pd.Timedelta(minutes=30),
                                         START + pd.Timedelta(hours=3))
    assert bars["timestamp"].tolist() == [START + pd.Timedelta(hours=h) for h in (1, 2)]


# -- funding ---------------------------------------------------------------------------------------

def test_funding_history_is_paged_and_stamped_at_the_settlement() -> None:
    fake = FakeBinance()
    start, end = T("2025-11-20", tz="UTC"), T("2025-11-24", tz="UTC")
    funding = provider_for(fake, page_limit=5).fetch_funding(ETH, start, end)

    assert list(funding.columns) == list(FUNDING_COLUMNS)
    assert str(funding["timestamp"].dtype) == "datetime64[us, UTC]"
    assert funding["timestamp"].tolist() == list(pd.date_range(start, periods=12, freq="8h").as_unit("us"))
    assert funding["funding_rate"].tolist() == [float(r["fundingRate"]) for r in FUNDING[:12]]
    pages = fake.requests_to("/fapi/v1/fundingRate")
    assert len(pages) == 3 and all(q["symbol"] == "ETHUSDT" and q["limit"] == "5" for q in pages)
    assert not fake.requests_to("/api/v3/klines")  # the perpetual lives on binanceusdm


# -- failures --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("reply", "expected"), [
    pytest.param(error(429, -1003, "Too many requests; current limit of IP(203.0.113.7) is 6000 "
                 "requests per minute. Please use the websocket for live updates to avoid polling "
                 "the API.", **{"Retry-After": "37"}), RateLimitedError, id="429"),
    pytest.param(error(418, -1003, "Way too many requests; IP(203.0.113.7) banned until "
                 "1764043200000. Please use the websocket for live updates to avoid bans.",
                 **{"Retry-After": "1140"}), RateLimitedError, id="418-ip-ban"),
    pytest.param(GEO_451, BlockedError, id="451-geo-block"),
    pytest.param(CLOUDFRONT_403, BlockedError, id="403-waf"),
    pytest.param(HTML_200, BlockedError, id="html-page-with-200"),
    pytest.param(Reply(200, b"[]"), NoDataError, id="empty-list"),
    pytest.param(error(400, -1121, "Invalid symbol."), BadSymbolError, id="400-invalid-symbol"),
    pytest.param(error(503, -1008, "Server is currently overloaded with other requests. Please try "
                 "again in a few minutes."), UnavailableError, id="503-overloaded"),
    pytest.param(BAD_GATEWAY, UnavailableError, id="502-html"),
    pytest.param(requests.exceptions.ReadTimeout("Read timed out. (read timeout=10.0)"),
                 UnavailableError, id="timeout"),
    pytest.param(requests.exceptions.ConnectionError("('Connection aborted.', "
                 "ConnectionResetError(104, 'Connection reset by peer'))"), UnavailableError,
                 id="connection-reset"),
])
def test_vendor_failures_become_typed_errors(reply: object, expected: type) -> None:
    fake = FakeBinance(klines=reply)
    with pytest.raises(expected) as err:
        provider_for(fake).fetch_bars(ETH, "1h", START, START + pd.Timedelta(hours=13))
    assert err.value.provider == "ccxt" and err.value.symbol == "ETH"
    if isinstance(reply, Reply) and "Retry-After" in reply.headers:
        assert err.value.retry_after == float(reply.headers["Retry-After"])


def test_geo_block_on_the_first_request_is_blocked() -> None:
    fake = FakeBinance(exchange_info=GEO_451)  # what a US address meets: exchangeInfo -> 451
    with pytest.raises(BlockedError):
        provider_for(fake).fetch_bars(ETH, "1d", START, START + pd.Timedelta(days=3))
    assert not fake.requests_to("/api/v3/klines")


def test_funding_failures_are_typed() -> None:
    fake = FakeBinance(funding=error(429, -1003, "Too many requests.", **{"Retry-After": "5"}))
    with pytest.raises(RateLimitedError):
        provider_for(fake).fetch_funding(ETH, START, START + pd.Timedelta(days=1))
    fake = FakeBinance(funding=Reply(200, b"[]"))
    with pytest.raises(NoDataError):
        provider_for(fake).fetch_funding(ETH, START, START + pd.Timedelta(days=1))


def test_symbol_missing_from_the_markets_is_a_bad_symbol_without_a_klines_request(
        tmp_path, monkeypatch) -> None:
    own = tmp_path / "universe.csv"  # a universe of one's own names GHOST's pairs
    own.write_text("symbol,name,asset_class,sector,tradable,benchmark,calendar,binance_symbol,"
                   "binance_perp_symbol\nGHOST,Ghost,crypto,meme,true,false,24/7,GHOST/USDT,"
                   "GHOST/USDT:USDT\n")
    monkeypatch.setenv("ARENA_UNIVERSE", str(own))
    ghost = Asset("GHOST", "Ghost", "crypto", "meme", True, False, "24/7")
    fake = FakeBinance()
    provider = provider_for(fake)
    with pytest.raises(BadSymbolError):
        provider.fetch_bars(ghost, "1h", START, START + pd.Timedelta(hours=2))
    with pytest.raises(BadSymbolError):
        provider.fetch_funding(ghost, START, START + pd.Timedelta(days=1))
    assert not fake.requests_to("/klines") and not fake.requests_to("/fundingRate")


def test_refusals_happen_before_any_request() -> None:
    fake = FakeBinance()
    provider = provider_for(fake)
    assert provider.supports(ETH) and not provider.supports(AAPL)
    with pytest.raises(UnsupportedError):
        provider.fetch_bars(AAPL, "1h", START, START + pd.Timedelta(hours=2))
    with pytest.raises(UnsupportedError):
        provider.fetch_bars(ETH, "30m", START, START + pd.Timedelta(hours=2))
    with pytest.raises(UnsupportedError):
        provider.fetch_funding(AAPL, START, START + pd.Timedelta(days=1))
    assert provider.earnings_dates(ETH, START, START + pd.Timedelta(days=90)) == []
    assert fake.calls == []


def test_provider_is_lazy_picklable_and_a_provider() -> None:
    assert isinstance(CcxtProvider(), Provider)
    clone = pickle.loads(pickle.dumps(CcxtProvider(page_limit=5000)))
    assert clone.name == "ccxt" and clone.page_limit == 1000  # Binance's cap
    code = ("import sys; from arena.data.providers.binance import CcxtProvider; "
            "CcxtProvider(); assert 'ccxt' not in sys.modules, 'imported ccxt'")
    subprocess.run([sys.executable, "-c", code], check=True)
