"""``arena web``: the site of a live season, served by a real uvicorn server on 127.0.0.1 from the
marts the season's cycles publish - the pages, the JSON API against the marts, a cycle published
while the server runs, and a reader in headless Chromium (1280 px and a 390 px phone) following
the leader to a trade and the trade to its reasoning, with no request leaving the machine."""

from __future__ import annotations

import html
import json
import os
import shutil
import socket
from urllib.parse import quote

import httpx
import pandas as pd
import pytest
from filelock import FileLock

from arena.cli import main
from arena.data.lake import Lake
from arena.doors.deadline import REQUEST_TIMEOUT
from arena.doors.web import SiteError, check_host, season_lakes, server_config
from tests import serving
from tests.agents.openai_stub import OpenAIStub, StubResponse
from tests.browser import chromium_available, launch, watched_page
from tests.market_lakes import season_lake
from tests.reporting.test_site import league_marts

REASONING = "ETH holds its trend while the majors stall: a small long, stopped far below."
ANSWER = json.dumps({"reasoning": REASONING, "decisions": [
    {"action": "open_long", "symbol": "ETH", "percent_of_equity": 15, "confidence": 0.85,
     "invalidation_price": 1.0, "thesis": "trend intact", "invalidation": "a collapse",
     "rationale": "the strongest large coin this week"}]})
DAY1, DAY2 = "2025-11-24", "2025-11-25"


def roster(url: str) -> str:
    return ("contestants:\n"
            f"  - {{name: gpt-stub, kind: llm, model: openai/stub-model, api_base: '{url}',"
            " params: {max_tokens: 400, timeout: 5, num_retries: 0}}\n"
            "  - {name: momentum, kind: house, strategy: momentum}\n")


def served(root, request_timeout: float = REQUEST_TIMEOUT) -> serving.Served:
    """The site of ``root`` in a uvicorn thread on a free loopback port, served as ``arena web``
    serves it (:func:`server_config`: the request deadline, keep-alive, header limit)."""
    return serving.Served(server_config(root, "127.0.0.1", 0, request_timeout=request_timeout))


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub(default=StubResponse.answer(ANSWER)) as server:
        yield server


@pytest.fixture(scope="module")
def live(tmp_path_factory, universe, stub):
    """A live season of three days whose first cycle is played and published (arena season
    backfill publishes): a model that opens ETH, and a house rule. The site only reads it, so
    the pytest-xdist workers that run this module's tests share one, built by the first."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root, done = shared / "web-live" / "lake", shared / "web-live.done"
    with FileLock(str(shared / "web-live.lock")):
        if not done.is_file():
            shutil.rmtree(root.parent, ignore_errors=True)
            lake = season_lake(tmp_path_factory, universe, root, roster(stub.url), start=DAY1,
                               days=3)
            assert main(["season", "backfill", DAY1, "--lake", str(lake.root), "--json"]) == 0
            done.write_text("built\n", encoding="utf-8")
    return Lake(root)


@pytest.fixture(scope="module")
def site(live):
    with served(live.root) as url:
        yield url


def season_id(lake) -> str:
    return json.loads((lake.root / "season" / "season.json").read_text())["id"]


def get(url: str, path: str, status: int = 200) -> httpx.Response:
    response = httpx.get(url + path, timeout=30)
    assert response.status_code == status, (path, response.text[:300])
    return response


def text(url: str, path: str, status: int = 200) -> str:
    """A page's text as a reader sees it (entities unescaped)."""
    return html.unescape(get(url, path, status).text)


def test_the_pages_lead_from_the_leaderboard_to_a_trades_reasoning(site, live):
    sid = quote(season_id(live), safe="")
    home = get(site, "/").text
    assert "gpt-stub" in home and "momentum" in home
    assert f'href="/seasons/{sid}/contestants/gpt-stub"' in home
    assert "1 cycle published" in home
    page = get(site, f"/seasons/{sid}/contestants/gpt-stub").text
    trade = f"/seasons/{sid}/trades/gpt-stub/ETH/1"
    assert f'href="{trade}"' in page  # the trip links to the trade's page
    assert REASONING in page  # the decisions, cycle by cycle, with the answer's reasoning
    assert f'href="/seasons/{sid}/contestants/gpt-stub#d-gpt-stub-20251124T1600-answer-0"' in page
    shown = get(site, trade).text
    assert REASONING in shown and "the strongest large coin this week" in shown
    assert '"invalidation_price": 1.0' in html.unescape(shown)  # the decision's JSON
    assert f'href="/seasons/{sid}/days/{DAY1}"' in shown
    day = get(site, f"/seasons/{sid}/days/{DAY1}").text
    assert "gpt-stub" in day
    asset = get(site, f"/seasons/{sid}/assets/ETH").text
    assert "Luck ceiling" in asset and f'href="{trade}"' in asset
    assert "no single-asset track table" in asset or "Entrants" in asset
    assert "ETH" in get(site, f"/seasons/{sid}/assets/").text
    assert season_id(live) in get(site, "/seasons/").text
    # the static season report is served too, its daily links leading to the site's days
    assert get(site, f"/seasons/{sid}/report").text.startswith("<!doctype html>")
    moved = httpx.get(f"{site}/seasons/{sid}/daily/{DAY1}.html", follow_redirects=False)
    assert moved.status_code == 307 and moved.headers["location"] == f"/seasons/{sid}/days/{DAY1}"


def test_what_the_site_does_not_have_is_named(site, live):
    sid = quote(season_id(live), safe="")
    assert "no contestant named 'nobody'" in text(site, f"/seasons/{sid}/contestants/nobody",
                                                  404)
    assert "no season 'elsewhere'" in text(site, "/seasons/elsewhere/", 404)
    assert "no trade ETH #7" in text(site, f"/seasons/{sid}/trades/gpt-stub/ETH/7", 404)
    assert "no asset 'NOPE'" in text(site, f"/seasons/{sid}/assets/NOPE", 404)
    assert "no daily report" in text(site, f"/seasons/{sid}/days/2020-01-01", 404)
    wrong = get(site, f"/api/seasons/{sid}/secrets", 404).json()
    assert "no mart 'secrets'" in wrong["error"]


def test_the_api_serves_the_marts_rows(site, live):
    sid = quote(season_id(live), safe="")
    board = pd.read_parquet(live.root / "marts" / "leaderboard.parquet")
    served = get(site, f"/api/seasons/{sid}/leaderboard").json()
    assert served["total"] == len(board) and served["season"] == season_id(live)
    got = pd.DataFrame(served["rows"]).set_index("contestant")
    for row in board.itertuples():
        assert got.loc[row.contestant, "final_equity"] == pytest.approx(row.final_equity,
                                                                         rel=1e-12)
        assert got.loc[row.contestant, "role"] == row.role
    trades = get(site, f"/api/seasons/{sid}/trades?contestant=gpt-stub").json()
    assert [(r["symbol"], r["trip"]) for r in trades["rows"]] == [("ETH", 1)]
    paged = get(site, f"/api/seasons/{sid}/decisions?offset=0&limit=1").json()
    assert len(paged["rows"]) == 1 and paged["total"] >= 2
    assert get(site, "/api/leaderboard").json()["rows"] == served["rows"]
    spec = get(site, "/openapi.json").json()
    assert {"/api/seasons", "/api/seasons/{season_id}/{mart}", "/api/leaderboard",
            "/api/seasons/{season_id}/version"} <= set(spec["paths"])
    assert "/openapi.json" in get(site, "/api/").text
    assert get(site, "/docs", 404)  # no documentation page that loads scripts from a CDN


def test_a_cycle_published_while_the_site_runs_shows_without_a_restart(live, tmp_path_factory,
                                                                        universe, stub):
    """Its own lake (the module's site stays at one cycle): publish day 2 while serving."""
    lake = season_lake(tmp_path_factory, universe, tmp_path_factory.mktemp("web2") / "lake",
                       roster(stub.url), start=DAY1, days=3)
    assert main(["season", "backfill", DAY1, "--lake", str(lake.root), "--json"]) == 0
    sid = quote(season_id(lake), safe="")
    with served(lake.root) as url:
        before = get(url, f"/api/seasons/{sid}/version").json()["version"]
        page = get(url, f"/seasons/{sid}/contestants/momentum").text
        assert "1 cycle published" in page
        equity = get(url, f"/api/seasons/{sid}/equity_daily?contestant=momentum").json()
        assert equity["total"] == 1
        assert main(["season", "backfill", DAY2, "--lake", str(lake.root), "--json"]) == 0
        after = get(url, f"/api/seasons/{sid}/version").json()["version"]
        assert after != before
        assert "2 cycles published" in get(url, f"/seasons/{sid}/contestants/momentum").text
        assert "2 cycles published" in get(url, "/").text
        equity = get(url, f"/api/seasons/{sid}/equity_daily?contestant=momentum").json()
        assert equity["total"] == 2 and equity["version"] == after
        assert f'href="/seasons/{sid}/days/{DAY2}"' in get(url, "/").text


def test_a_league_folder_serves_each_season_and_the_newest_at_home(live, tmp_path):
    league = tmp_path / "league"
    league.mkdir()
    (league / "s1").symlink_to(live.root, target_is_directory=True)
    (league / "notes").mkdir()  # not a lake: left out
    assert [p.name for p in season_lakes(league)] == ["s1"]
    with pytest.raises(SiteError, match="neither a season's lake nor a folder"):
        season_lakes(tmp_path / "league" / "notes")
    with served(league) as url:
        seasons = get(url, "/api/seasons").json()
        assert [s["id"] for s in seasons] == [season_id(live)]
        assert seasons[0]["state"] == "live" and seasons[0]["cycles"] == 1
        assert "gpt-stub" in get(url, "/").text
        assert 'href="/league/"' in get(url, "/").text
        assert "arena league publish" in text(url, "/league/", 404)
        # the league published (its marts as arena league publish writes them): the page and
        # the API read them without a restart, and the league is still no season
        (league / "marts").mkdir()
        for name, frame in league_marts().items():
            frame.to_parquet(league / "marts" / f"{name}.parquet")
        page = text(url, "/league/")
        assert "evidence of skill at 5% after correction" in page
        assert "Holm-Bonferroni over 2 contestants" in page
        rows = get(url, "/api/league/league_verdict").json()["rows"]
        assert [(r["model"], r["verdict"]) for r in rows][:2] == [
            ("alpha", "evidence of skill at 5% after correction"),
            ("beta", "not distinguishable from luck")]
        assert [s["id"] for s in get(url, "/api/seasons").json()] == [season_id(live)]
    assert [p.name for p in season_lakes(league)] == ["s1"]


def test_the_site_beyond_loopback_only_behind_a_proxy():
    check_host("127.0.0.1", proxied=False)
    check_host("0.0.0.0", proxied=True)
    with pytest.raises(SiteError, match="reverse proxy"):
        check_host("0.0.0.0", proxied=False)
    assert main(["web", "--host", "0.0.0.0", "--lake", "/nonexistent"]) == 2


def test_silent_and_half_open_connections_are_closed_while_readers_are_served(tmp_path):
    """As the MCP door does, ``arena web`` closes a connection that brings no whole request
    within its deadline: a silent one without a word, half a request with a 408; a reader is
    served meanwhile. (Before, uvicorn held both for as long as the client liked.)"""
    (tmp_path / "season").mkdir()
    (tmp_path / "season" / "season.json").write_text(json.dumps({"id": "s1"}), encoding="utf-8")
    assert server_config(tmp_path).http.request_timeout == REQUEST_TIMEOUT == 10.0
    timeout, bound = 0.5, 15.0  # the test's deadline; what "closed" must come before
    sends = [b"", b"GET /api/seas", b"GET /api/seasons HTTP/1.1\r\nHost: 127.0.0.1\r\n"]
    with served(tmp_path, request_timeout=timeout) as url:
        port = int(url.rsplit(":", 1)[1])
        socks = [socket.create_connection(("127.0.0.1", port), timeout=bound) for _ in sends]
        for sock, data in zip(socks, sends, strict=True):
            sock.sendall(data)
        assert [s["id"] for s in get(url, "/api/seasons").json()] == ["s1"]
        answers = [_until_closed(sock) for sock in socks]
    assert answers[0] == b""
    assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers[1:]), answers


def _until_closed(sock: socket.socket) -> bytes:
    """What the server sent before it closed ``sock`` (a socket timeout if it never does)."""
    got = b""
    with sock:
        while chunk := sock.recv(65536):
            got += chunk
    return got


@pytest.mark.skipif(not chromium_available(), reason="make test installs Chromium")
@pytest.mark.parametrize("width", [1280, 390])
def test_a_reader_follows_the_leader_to_a_trade_and_its_reasoning(site, live, width,
                                                                  tmp_path):
    """Headless Chromium on the served site: from the leaderboard to the contestant, from the
    trip to the trade's page, the reasoning on screen; no request leaves the site, no error, and
    no page scrolls sideways (a wide table scrolls inside itself on a phone)."""
    with launch() as browser:
        watched = watched_page(browser, width, 900, allowed=lambda u: u.startswith(site))
        page, widths = watched.page, []
        page.goto(site + "/", wait_until="load")
        widths.append(watched.scroll_width())
        page.click("text=gpt-stub >> nth=0")
        page.wait_for_url("**/contestants/gpt-stub")
        widths.append(watched.scroll_width())
        page.click('a[href$="/trades/gpt-stub/ETH/1"] >> nth=0')
        page.wait_for_url("**/trades/gpt-stub/ETH/1")
        assert page.locator("blockquote", has_text=REASONING).is_visible()
        widths.append(watched.scroll_width())
        page.screenshot(path=str(tmp_path / f"trade-{width}.png"), full_page=True)
        page.close()
    assert watched.external == [] and watched.errors == []
    assert max(widths) <= width, widths
