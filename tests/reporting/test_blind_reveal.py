"""A blind season on the season report and the site, from the marts of a replayed blind season
(``tests/blind_lakes.py``): once it has ended, a section reveals each neutral name's asset, its
price factor and the calendar's shift; before its end (the ``blind_names`` mart has no rows
then) a line says it is played blind and no neutral name appears; a season played open shows
neither; a league's page marks its blind seasons."""

from __future__ import annotations

import html
import re

import pandas as pd

from arena.data.lake import Lake
from arena.reporting import site
from arena.reporting.blind import BLIND_NAMES, LINE, SECTION, played_blind
from arena.reporting.season import read_marts, season_report
from tests.blind_lakes import BlindSeason, blind_season  # noqa: F401
from tests.reporting.test_site import league_marts

URLS = site.Urls("s9")


def _season(blind: bool) -> site.Season:
    return site.Season("s9", "Season s9", "SYNTHETIC", "2026-10-01", "2026-10-02", 2,
                       "replay", blind=blind)


def _text(page: str) -> str:
    """The page's text on one line: tags gone, entities read, whitespace single spaces."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _board(marts: dict[str, pd.DataFrame], blind: bool) -> str:
    return site.leaderboard_page(marts, _season(blind), URLS, [])


def _still_running(marts: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The marts as a publication before the season's end has them: ``blind_names`` empty
    (the ``blinding`` table has no rows until the last cycle is recorded: the pipeline's
    tests)."""
    return {**marts, BLIND_NAMES: marts[BLIND_NAMES].iloc[0:0]}


def _revealed(page: str, season: BlindSeason) -> None:
    """``page`` holds the reveal: its section, a row per asset (neutral name, symbol, name,
    factor), the shift in weeks and years."""
    text = _text(page)
    assert f'<h2><a href="#blind-names-revealed">{SECTION}</a></h2>' in page
    weeks = season.blinding.shift_weeks
    assert f"moved forward by {weeks:,} weeks (about {weeks * 7 / 365.2425:.1f} years)" in text
    for symbol, neutral in season.blinding.names.items():
        factor = season.blinding.factor(symbol)
        row = re.search(rf"<tr><td>{neutral}</td><td>{symbol}</td><td>[^<]+</td>"
                        rf'<td class="num" data-value="{factor!r}">', page)
        assert row is not None, (neutral, symbol)
    assert LINE not in text


def test_the_report_of_an_ended_blind_season_reveals_its_names(blind_season):  # noqa: F811
    report = (blind_season.lake.root / "reports" / "season.html").read_text(encoding="utf-8")
    _revealed(report, blind_season)
    assert played_blind(blind_season.lake)


def test_the_sites_leaderboard_reveals_them_too(blind_season):  # noqa: F811
    marts = read_marts(blind_season.lake)
    _revealed(_board(marts, blind=True), blind_season)


def test_before_its_end_the_season_is_said_blind_and_no_name_is_shown(blind_season):  # noqa: F811
    marts = _still_running(read_marts(blind_season.lake))
    neutral = sorted(blind_season.blinding.names.values())
    for page in (season_report(marts, blind=True), _board(marts, blind=True)):
        text = _text(page)
        assert LINE in text and SECTION not in text
        assert not [n for n in neutral if n in page]


def test_a_season_played_open_shows_neither(blind_season, tmp_path):  # noqa: F811
    marts = _still_running(read_marts(blind_season.lake))  # an open season's mart is empty
    older = {k: v for k, v in marts.items() if k != BLIND_NAMES}  # published before the mart
    for published in (marts, older):
        for page in (season_report(published), _board(published, blind=False)):
            text = _text(page)
            assert LINE not in text and SECTION not in text and "blind" not in text.lower()
    # a blind season published before the mart still says it is blind
    assert LINE in _text(season_report(older, blind=True))
    assert not played_blind(Lake(tmp_path / "no-season"))


def test_a_leagues_page_marks_its_blind_seasons():
    marts = league_marts()
    marts["league_seasons"] = marts["league_seasons"].assign(blind=[False, True])
    page = html.unescape(site.league_page(marts, title="League"))
    assert '<th scope="col">blind</th>' in page
    rows = re.findall(r'<tr><td><a href="/seasons/(s\d)/">.*?</tr>', page, flags=re.S)
    assert rows == ["s1", "s2"]
    blind = {m.group(1): m.group(2) for m in re.finditer(
        r'<tr><td><a href="/seasons/(s\d)/">.*?<td>(yes|no)</td></tr>', page, flags=re.S)}
    assert blind == {"s1": "no", "s2": "yes"}
