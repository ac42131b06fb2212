"""The published marts are named once (arena/core/marts.py): every mart has its dbt model and
YAML, every model of the marts' and the league's folders is a published mart, and the site's
JSON API serves - and its exposure names - exactly the season's marts; the publication, the
site's pages and the API take their lists from the registry."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from arena.core.marts import LEAGUE, LEAGUE_MARTS, LEAGUE_PAGES, SEASON, SEASON_MARTS, SEASON_PAGES

MODELS = Path(__file__).resolve().parents[2] / "dbt_project" / "models"


def _models(folder: str) -> set[str]:
    return {p.stem for p in (MODELS / folder).glob("*.sql")}


def test_every_mart_is_a_model_of_its_folder_and_every_model_a_mart():
    assert _models("marts") == set(SEASON_MARTS)
    assert _models("league") == set(LEAGUE_MARTS)
    for folder, marts in (("marts", SEASON_MARTS), ("league", LEAGUE_MARTS)):
        for name in marts:
            assert (MODELS / folder / f"{name}.yml").is_file(), name
    assert len(set(SEASON_MARTS)) == len(SEASON) and len(set(LEAGUE_MARTS)) == len(LEAGUE)
    assert set(SEASON_PAGES) < set(SEASON_MARTS) and set(LEAGUE_PAGES) < set(LEAGUE_MARTS)
    assert all(m.grain for m in (*SEASON, *LEAGUE))


def test_the_api_serves_and_its_exposure_names_exactly_the_seasons_marts():
    from arena.doors.web import API_MARTS
    from arena.pipeline.league_marts import publish_league
    from arena.pipeline.warehouse import MARTS, publish

    assert API_MARTS == MARTS == SEASON_MARTS
    assert publish.__defaults__ == (SEASON_MARTS,)
    assert publish_league.__defaults__ == (LEAGUE_MARTS,)
    exposures = yaml.safe_load((MODELS / "exposures.yml").read_text(encoding="utf-8"))
    api = next(e for e in exposures["exposures"] if e["name"] == "site_json_api")
    named = [re.fullmatch(r"ref\('(\w+)'\)", d).group(1) for d in api["depends_on"]]
    assert sorted(named) == sorted(SEASON_MARTS)


def test_the_sites_pages_name_a_missing_mart_from_the_registry():
    import pytest

    from arena.reporting import site
    from arena.reporting.season import ReportError

    with pytest.raises(ReportError, match="lack " + ", ".join(SEASON_PAGES)):
        site.leaderboard_page({}, None, None, [])  # type: ignore[arg-type]
    with pytest.raises(ReportError, match="lack " + ", ".join(LEAGUE_PAGES)):
        site.league_page({})
