"""A contest's page on the site, rendered from a hand-made season's marts (``tiny_marts`` and the
contest's two marts as dbt writes them, ``tests/pipeline/test_contest_marts.py`` building the
same answers for real): who cleared the luck ceiling on each asset, the leaders (a tie for first
on BTC), the standings with their places and prizes, the front page's link to it only when the
season is a contest, and the page in headless Chromium at 1280 and 390 px."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest

from arena.reporting import site
from tests.browser import load_page
from tests.reporting.test_site import DAYS, SEASON, URLS
from tests.reporting.tiny_marts import tiny_marts

NAN = float("nan")


def contest_frames() -> dict[str, pd.DataFrame]:
    """The FINCHAL contest's marts: BTC's ceiling cleared by ann and bob (tied first, sharing
    the first two prizes), dan's better return ineligible; NVDA led below its ceiling; GLD with
    no entrant yet; USO led exactly at its ceiling (not above it)."""
    boundary = pd.DataFrame({
        "contest": ["FINCHAL"] * 4, "symbol": ["NVDA", "BTC", "GLD", "USO"],
        "name": ["NVIDIA", "Bitcoin", "SPDR Gold Shares", "United States Oil Fund"],
        "ordinal": [1, 2, 3, 4], "fee_rate": [0.0002, 0.0006, 0.0002, 0.0003],
        "eligibility": [0.7] * 4, "luck_ceiling": [0.5, 0.3, NAN, 0.12],
        "zero_skill_players": [20_000, 20_000, None, 20_000], "entrants": [2, 5, 0, 1],
        "eligible_tracks": [2, 3, 0, 1], "cleared_tracks": [0, 2, 0, 0],
        "best_return": [0.45, 0.4, NAN, 0.12], "leaders": ["ann", "ann, bob", None, "cat"],
        "leader_count": [1, 2, 0, 1], "leader_cleared": [False, True, False, False],
        "prize_paid": [500.0, 900.0, 0.0, 500.0], "prize_pool": [500.0, 900.0, 500.0, 500.0],
        "prizes": [[500.0], [500.0, 300.0, 100.0], [500.0], [500.0]], "currency": ["USD"] * 4})
    entrants = ["ann", "bob", "cat", "dan", "eve", "ann", "bob", "cat"]
    standings = pd.DataFrame({
        "contest": ["FINCHAL"] * 8, "entrant": entrants,
        "symbol": ["BTC"] * 5 + ["NVDA", "NVDA", "USO"],
        "ordinal": [2] * 5 + [1, 1, 4],
        "status": ["scored"] * 4 + ["no_position"] + ["scored"] * 3,
        "total_return": [0.4, 0.4, 0.1, 0.9, NAN, 0.45, 0.2, 0.12],
        "luck_percentile": [0.97, 0.97, 0.6, 0.999, NAN, 0.9, 0.7, 0.95],
        "coverage": [0.9, 1.0, 0.75, 0.5, 0.0, 0.95, 0.8, 0.7],
        "eligible": [True, True, True, False, False, True, True, True],
        "place": [1, 1, 3, None, None, 1, 2, 1],
        "luck_ceiling": [0.3] * 4 + [NAN] + [0.5, 0.5, 0.12],
        "cleared": [True, True, False, False, False, False, False, False],
        "prize": [400.0, 400.0, 100.0, 0.0, 0.0, 500.0, 0.0, 500.0], "currency": ["USD"] * 8})
    return {"contest_boundary": boundary, "contest_standings": standings}


def contest_marts() -> dict[str, pd.DataFrame]:
    return {**tiny_marts(), **contest_frames()}


def shown(text: str) -> str:
    return html.unescape(text)


def _rows(page: str, table: int) -> list[str]:
    """The body rows of the page's ``table``-th data table (0 = first), as HTML."""
    body = page.split('<table class="data">')[table + 1].split("<tbody>")[1]
    return body.split("</tbody>")[0].split("<tr>")[1:]


def _cells(row: str) -> list[str]:
    """A row's cells as a reader sees them (the tags taken out)."""
    return [re.sub(r"<[^>]+>", "", c).strip() for c in row.split("</td>")[:-1]]


def test_the_contest_page_says_who_cleared_the_luck_ceiling_on_each_asset():
    page = shown(site.contest_page(contest_marts(), SEASON, URLS, DAYS, version="v1"))
    assert "FINCHAL: Season s1" in page
    # the plain words of the luck ceiling, with the players the ceiling was drawn from
    assert "95th percentile of the returns of 20,000\nzero-skill players" in page
    assert "paying the same fees" in page and "at least\n70.0% of the asset's season" in page
    boundary = _rows(page, 0)
    assert [_cells(r)[0] for r in boundary] == ["NVDA", "BTC", "GLD", "USO"]
    btc = boundary[1]
    for cell in (">0.06%<", ">+30.00%<", ">5<", ">3<", ">2<", ">ann, bob<", ">+40.00%<",
                 ">900.00<"):
        assert cell in btc, cell
    assert ">–<" in boundary[2]  # GLD: no ceiling yet, no leader
    assert 'href="/seasons/s1/assets/BTC"' in btc  # BTC was traded: it has a page
    assert 'href="/seasons/s1/assets/NVDA"' not in page  # NVDA has none in this season
    assert "prize (USD)" in page and "pool (USD)" in page


def test_the_standings_mark_who_cleared_and_share_the_prizes_of_a_tie():
    page = shown(site.contest_page(contest_marts(), SEASON, URLS, DAYS))
    standings = _rows(page, 1)
    assert len(standings) == 8
    order = [tuple(_cells(r)[:2]) for r in standings]
    # by asset in the contest's order, then by place, the unplaced by return (none last)
    assert order == [("NVDA", "ann"), ("NVDA", "bob"), ("BTC", "ann"), ("BTC", "bob"),
                     ("BTC", "cat"), ("BTC", "dan"), ("BTC", "eve"), ("USO", "cat")]
    marked = [o for o, r in zip(order, standings, strict=True) if f">{site.CONTEST_MARK}<" in r]
    assert marked == [("BTC", "ann"), ("BTC", "bob")]
    assert ">400.00<" in standings[2] and ">400.00<" in standings[3]  # tied first: 800 shared
    assert ">+90.00%<" in standings[5] and ">50.0%<" in standings[5]  # dan: ineligible
    assert ">0.00<" in standings[5]
    assert ">500.00<" in standings[7] and f">{site.CONTEST_MARK}<" not in standings[7]


def test_the_front_page_links_the_contest_only_when_the_season_is_one():
    board = shown(site.leaderboard_page(contest_marts(), SEASON, URLS, DAYS))
    assert 'href="/seasons/s1/contest">Contest</a>' in board  # in the links
    assert "This season is the contest <strong>FINCHAL</strong>" in board
    asset = shown(site.asset_page(contest_marts(), "ETH", SEASON, URLS, DAYS))
    assert 'href="/seasons/s1/contest"' in asset
    empty = {**tiny_marts(), **{k: v.iloc[0:0] for k, v in contest_frames().items()}}
    for marts in (tiny_marts(), empty):  # not a contest; published before contests had marts
        plain = shown(site.leaderboard_page(marts, SEASON, URLS, DAYS))
        assert '/contest"' not in plain and "is the contest" not in plain
        with pytest.raises(site.PageNotFound, match="season s1 is not a contest"):
            site.contest_page(marts, SEASON, URLS, DAYS)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_contest_page_renders_in_a_real_browser(browser, tmp_path, width):
    """Headless Chromium: no script error, no request leaving the page, and nothing scrolls
    sideways on a phone (a wide table scrolls inside itself)."""
    path = tmp_path / "contest.html"
    path.write_text(site.contest_page(contest_marts(), SEASON, URLS, DAYS), encoding="utf-8")
    result = load_page(path, tmp_path / f"contest-{width}.png", width=width, context=browser)
    assert result.console_errors == [] and result.page_errors == []
    assert result.external_requests == []
    assert result.title == "FINCHAL: Season s1"
    assert result.scroll_width <= width
