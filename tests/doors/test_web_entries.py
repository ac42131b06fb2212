"""People enter the single-asset track through ``arena web --entries``: a served site on
127.0.0.1 over a live season with entrants, where a POST of the entry page records exactly what
the MCP door's ``submit_position`` records (its function, :func:`submit_positions`, writes the
same file for an agent at the same instant), a wrong or revoked key, a season over and a site
without the flag are refused with nothing stored, and a person in headless Chromium (1280 px
and a 390 px phone) moves the slider, submits and reads what was recorded."""

from __future__ import annotations

import html
from pathlib import Path

import httpx
import pandas as pd
import pytest

from arena.doors.web import server_config
from arena.doors.web.entries import FLAG, words
from arena.pipeline.entrants import add_entrant, revoke_entrant
from arena.pipeline.outside import Arena, OutsideError, submit_positions
from arena.pipeline.season_config import load_season
from arena.pipeline.season_tables import TRACK_DIR
from arena.reporting import site as site_pages
from tests import serving
from tests.browser import chromium_available, launch, watched_page
from tests.conftest import ts
from tests.market_lakes import season_lake
from tests.reporting.tiny_marts import tiny_marts
from tests.serving import Clock

HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"
BEFORE = ts("2025-11-24 13:00")  # three hours before the season's first cycle (16:00)
OVER = ts("2025-11-26 16:00:01")  # after its last cycle (a season of three days)


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe):
    """A live season of three days with two entrants: ``walk-in`` (a person, through the site)
    and ``agent`` (through the door's function); their keys."""
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)
    arena = Arena(lake, load_season(lake))
    _, person = add_entrant(lake, arena.season, "walk-in", BEFORE - pd.Timedelta(days=1))
    agent, _ = add_entrant(lake, arena.season, "agent", BEFORE - pd.Timedelta(days=1))
    return arena, person, agent


def served(arena: Arena, clock: Clock, *, entries: bool = True) -> serving.Served:
    return serving.Served(server_config(arena.lake.root, "127.0.0.1", 0, entries_open=entries,
                                        now=clock))


def enter_path(arena: Arena, symbol: str = "ETH") -> str:
    return f"/seasons/{arena.season.id}/enter/{symbol}"


def post(url: str, path: str, key: str, position: str) -> httpx.Response:
    return httpx.post(url + path, data={"key": key, "position": position}, timeout=30)


def kept(arena: Arena, name: str) -> list[tuple[str, bytes]]:
    """The entrant's track files as stored: (file name, bytes), in order."""
    folder = arena.lake.root / TRACK_DIR / name
    return [(p.name, p.read_bytes()) for p in sorted(folder.glob("*"))] if folder.is_dir() else []


def shown(response: httpx.Response) -> str:
    return html.unescape(response.text)


def test_a_posted_position_is_recorded_as_the_mcp_door_records_it(season):
    arena, key, agent = season
    clock = Clock(BEFORE)
    with served(arena, clock) as url:
        form = httpx.get(url + enter_path(arena), timeout=30)
        assert form.status_code == 200 and 'type="range"' in form.text
        assert 'min="-1" max="1" step="0.05"' in form.text and 'method="post"' in form.text
        for n, asked in enumerate(["0.35", "1.5", "-1"]):
            clock.at = BEFORE + pd.Timedelta(minutes=n)
            answer = post(url, enter_path(arena), key, asked)
            assert answer.status_code == 200, answer.text[:300]
            # the door's own function, for the agent, at the same instant
            door = submit_positions(arena, agent, {"ETH": float(asked)}, clock.at)
            page = shown(answer)
            assert f"{door['positions']['ETH']:+.2f} ({words(door['positions']['ETH'])})" in page
            assert door["received_at"] in page and "walk-in" in page
            assert ("so\n1.0 was kept" in page) == bool(door["clipped"])
            # the key is the credential of the POST alone: never echoed, no cookie, not cached
            assert key not in answer.text and "set-cookie" not in answer.headers
            assert answer.headers["cache-control"] == "no-store"
    walk_in, door_kept = kept(arena, "walk-in"), kept(arena, "agent")
    assert len(walk_in) == 3 and walk_in == door_kept
    assert b'"positions": {"ETH": 1.0}' in walk_in[1][1]  # clipped, as the door clips


def test_a_wrong_or_revoked_key_a_bad_form_or_an_unknown_asset_stores_nothing(season):
    arena, key, _ = season
    with served(arena, Clock(BEFORE)) as url:
        path = enter_path(arena)
        wrong = post(url, path, key + "x", "0.5")
        assert wrong.status_code == 401 and "not an active entrant's key" in shown(wrong)
        assert key not in wrong.text
        assert post(url, path, "", "0.5").status_code == 401
        for bad, why in (("abc", "must be a number from -1 to 1"),
                         ("nan", "must be a finite number")):  # the door's own validation
            refused = post(url, path, key, bad)
            assert refused.status_code == 422 and why in shown(refused), refused.text[:300]
        one_field = httpx.post(url + path, data={"key": key}, timeout=30)
        assert one_field.status_code == 422 and "one 'position' field" in shown(one_field)
        as_json = httpx.post(url + path, json={"key": key, "position": 0.5}, timeout=30)
        assert as_json.status_code == 415
        too_big = post(url, path, key, "0." + "5" * 5000)
        assert too_big.status_code == 413
        in_url = httpx.get(f"{url}{path}?key={key}", timeout=30)
        assert in_url.status_code == 400 and "never goes in a URL" in shown(in_url)
        assert key not in in_url.text
        for method in (httpx.get, lambda u, **kw: httpx.post(u, data={"key": key,
                                                                        "position": "1"}, **kw)):
            unknown = method(url + enter_path(arena, "NOPE"), timeout=30)
            assert unknown.status_code == 404 and "'NOPE' is not an asset" in shown(unknown)
        assert httpx.get(f"{url}/seasons/elsewhere/enter/ETH", timeout=30).status_code == 404
        revoke_entrant(arena.lake, "walk-in", BEFORE)
        revoked = post(url, path, key, "0.5")
        assert revoked.status_code == 401 and "revoked" in shown(revoked)
    assert kept(arena, "walk-in") == []


def test_a_season_over_is_refused_with_the_doors_message(season):
    arena, key, agent = season
    with pytest.raises(OutsideError) as door:
        submit_positions(arena, agent, {"ETH": 0.5}, OVER)
    with served(arena, Clock(OVER)) as url:
        refused = post(url, enter_path(arena), key, "0.5")
        assert refused.status_code == 409
        assert str(door.value) in shown(refused)
        page = httpx.get(url + enter_path(arena), timeout=30)
        assert page.status_code == 409 and "it is over" in shown(page)
        assert 'type="range"' not in page.text
    assert kept(arena, "walk-in") == [] and kept(arena, "agent") == []


def test_without_the_flag_the_site_is_read_only_and_says_how_to_open_entries(season):
    arena, key, _ = season
    with served(arena, Clock(BEFORE), entries=False) as url:
        for answer in (httpx.get(url + enter_path(arena), timeout=30),
                       post(url, enter_path(arena), key, "0.5")):
            assert answer.status_code == 404
            assert f"arena web {FLAG}" in shown(answer)
            assert key not in answer.text
    assert kept(arena, "walk-in") == []


def test_an_assets_page_links_its_entry_page_when_the_site_takes_entries():
    marts = tiny_marts()
    live = site_pages.Season("s1", "Season s1", "SYNTHETIC", "2026-10-01", "2026-10-02", 2,
                             "live")
    link = 'href="/seasons/s1/enter/ETH"'
    taking = site_pages.Urls("s1", entries=True)
    assert link in site_pages.asset_page(marts, "ETH", live, taking, [])
    assert link not in site_pages.asset_page(marts, "ETH", live, site_pages.Urls("s1"), [])
    closed = site_pages.Season("s1", "Season s1", "SYNTHETIC", "2026-10-01", "2026-10-02", 2,
                               "closed")
    assert link not in site_pages.asset_page(marts, "ETH", closed, taking, [])


@pytest.mark.skipif(not chromium_available(), reason="make test installs Chromium")
@pytest.mark.parametrize("width", [1280, 390])
def test_a_person_moves_the_slider_submits_and_reads_what_was_recorded(season, width,
                                                                        tmp_path: Path):
    """Headless Chromium on the served site: the key typed, the slider moved by the keyboard
    (each arrow a step of 0.05) to +0.30, the number and words beside it follow, the form
    submitted; the answer names the position kept, which is the one stored. No request leaves
    the site, no script error, and neither page scrolls sideways at 390 px."""
    arena, key, _ = season
    with served(arena, Clock(BEFORE)) as url, launch() as browser:
        watched = watched_page(browser, width, 900, allowed=lambda u: u.startswith(url))
        page, widths = watched.page, []
        page.goto(url + enter_path(arena), wait_until="load")
        widths.append(watched.scroll_width())
        slider = page.locator("#position")
        box = slider.bounding_box()
        assert box is not None and box["width"] >= min(200, width * 0.5)  # usable on a phone
        page.fill("#key", key)
        slider.focus()
        for _ in range(6):
            page.keyboard.press("ArrowRight")
        assert page.locator("#position-value").inner_text() == "+0.30"
        assert page.locator("#position-side").inner_text() == "30% long"
        page.screenshot(path=str(tmp_path / f"entry-{width}.png"), full_page=True)
        page.click("button[type=submit]")
        page.wait_for_selector("#recorded")
        assert page.locator("#recorded-position").inner_text() == "+0.30 (30% long)"
        assert key not in page.content()
        widths.append(watched.scroll_width())
        page.close()
    assert watched.external == [] and watched.errors == []
    assert max(widths) <= width, widths
    [(_, stored)] = kept(arena, "walk-in")
    assert b'"positions": {"ETH": 0.3}' in stored
