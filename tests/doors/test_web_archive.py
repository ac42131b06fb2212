"""The league's archive in headline figures: a league of three tiny seasons (two ended and
published, one still open) gathered and built by a real ``dbt build`` into the
``league_archive`` mart, whose one row equals the figures counted here by hand; the site serves
them on the league's archive page, and names a publication without them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from arena.pipeline.league import read_league
from arena.pipeline.league_marts import build_league
from tests.doors.test_web import get, served, text
from tests.pipeline.test_league import _board, _season

CONTESTANT, RULER = "contestant", "ruler"


def _trips(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    """A season's trades mart: (contestant, status, net P&L) round trips."""
    return pd.DataFrame({"contestant": pd.Series([r[0] for r in rows], dtype=str),
                         "status": pd.Series([r[1] for r in rows], dtype=str),
                         "net_pnl": pd.Series([r[2] for r in rows], dtype=float)})


def _published(root: Path, season_id: str, start: str, closed: bool,
               board: list[tuple[str, str, float, int]],
               trips: list[tuple[str, str, float]]) -> None:
    """A two-day season of the league with its leaderboard ((contestant, role, return, fills)
    rows) and round trips published."""
    frame = _board([row[:3] for row in board]).assign(fills=[row[3] for row in board])
    lake = _season(root, season_id, start, 2, closed=closed, board=frame)
    _trips(trips).to_parquet(lake.root / "marts" / "trades.parquet")


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("archive") / "league"
    _published(root, "s1", "2026-01-01", True,
               [("alpha", CONTESTANT, 0.10, 3), ("beta", CONTESTANT, -0.05, 2),
                ("momentum", RULER, 0.20, 2)],
               [("alpha", "closed", 5.0), ("alpha", "open", 0.0), ("beta", "closed", -3.0),
                ("momentum", "closed", 1.0)])
    _published(root, "s2", "2026-01-02", True,
               [("gamma", CONTESTANT, 0.30, 4), ("alpha", CONTESTANT, 0.0, 0),
                ("momentum", RULER, -0.10, 6)],
               [("gamma", "closed", 2.0), ("gamma", "closed", -1.0), ("momentum", "open", 0.0)])
    _published(root, "s3", "2026-01-03", False,  # open: published, not counted
               [("alpha", CONTESTANT, 0.50, 2)], [("alpha", "closed", 9.0)])
    build_league(root, read_league(root))
    return root


def test_the_archive_mart_counts_the_ended_seasons_by_hand(league):
    [row] = pd.read_parquet(league / "marts" / "league_archive.parquet").to_dict("records")
    first_cycle, last_cycle = row.pop("first_cycle"), row.pop("last_cycle")
    assert row == {
        "seasons": 2,  # s1 and s2: s3 is still open
        "contestants": 3,  # alpha, beta, gamma (momentum is a ruler)
        "models": 3,
        "contestant_seasons": 4,  # alpha and beta in s1, gamma and alpha in s2
        "positive_seasons": 2,  # alpha's +10% in s1, gamma's +30% in s2 (alpha's 0 is not)
        "positive_share": 0.5,
        "trades": 5,  # round trips: alpha 2 and beta 1 in s1, gamma 2 in s2 (not momentum's)
        "closed_trades": 4,  # alpha's second trip is still open
        "fills": 9}  # 3 + 2 in s1, 4 + 0 in s2
    seasons = {s.id: s for s in read_league(league)}
    assert pd.Timestamp(first_cycle) == seasons["s1"].config.first
    assert pd.Timestamp(last_cycle) == seasons["s2"].config.last


def test_the_site_shows_the_archive_and_names_a_publication_without_it(league):
    with served(league) as url:
        page = text(url, "/league/archive")
        assert ("over 2 finished seasons\n(to 2026-01-03), 3 contestants\n(3 models) made 5\n"
                "trades. Of 4 contestant-seasons,\n2 ended positive: 50.0%.") in page
        assert "Since 2026-01-01" in page
        for figure, value in (("trades (round trips opened)", 5), ("trades closed", 4),
                              ("fills (opens, adds and closes)", 9),
                              ("share ended positive", "50.0%")):
            assert f'<tr><td>{figure}</td><td class="num">{value}</td></tr>' in page
        rows = get(url, "/api/league/league_archive").json()["rows"]
        assert [(r["seasons"], r["trades"], r["positive_share"]) for r in rows] == [(2, 5, 0.5)]
        (league / "marts" / "league_archive.parquet").unlink()  # published by an older arena
        assert "publish it again with arena league publish" in text(url, "/league/archive", 404)
