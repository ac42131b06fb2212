"""The site's pages: a router of the app (``/``, ``/seasons/...``, ``/league/``, and the league's
archive in headline figures, ``/league/archive``; ``/contest``, the current season's contest),
none of them in the API's OpenAPI document, and the page a request that fails is answered with.

Every page of a season is :mod:`arena.reporting.site`'s, rendered from the season's latest
publication once per publication (the ``X-Arena-Version`` header names that publication). The
site a route serves is the app's (``app.state.site``, set by :func:`arena.doors.web.build_app`),
handed to it by :func:`served_site`. The site's own bits of HTML (an error's message, the API's
index) are Jinja2 templates of ``templates/`` (:func:`render`), every value escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Annotated, Any

import pandas as pd
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from arena.doors.web.sources import Site
from arena.reporting import site as site_pages
from arena.reporting.layout import page

router = APIRouter(include_in_schema=False)
ARCHIVE = "league_archive"  # the mart of the league's headline figures
ARCHIVE_COUNTS = ("seasons", "contestants", "models", "contestant_seasons", "positive_seasons",
                  "trades", "closed_trades", "fills")


def served_site(request: Request) -> Site:
    """The site the app serves (a route's dependency)."""
    site: Site = request.app.state.site
    return site


ServedSite = Annotated[Site, Depends(served_site)]


@cache
def _environment() -> Environment:
    """The site's templates (from the package, so an installed arena finds them), every value
    escaped, an undefined name an error."""
    return Environment(loader=PackageLoader("arena.doors.web", "templates"),
                       autoescape=select_autoescape(("html", "j2")), undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True)


def render(template: str, **context: object) -> str:
    """A template of ``templates/`` rendered with ``context``."""
    return _environment().get_template(template).render(**context)


def error_page(status: int, message: str, request: Request) -> Response:
    """What a request that fails is answered with: under ``/api/`` a JSON object naming the
    error, elsewhere a page saying what happened."""
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)

    return HTMLResponse(page(f"{status}: not here" if status == 404 else f"{status}",
                             [("What happened", render("error.html.j2", message=message))],
                             links=[("Current season", "/"), ("All seasons", "/seasons/")]),
                        status_code=status)


def _urls(site: Site, season_id: str) -> site_pages.Urls:
    return site_pages.Urls(season_id, league=site.league is not None, entries=site.entries)


def _season_page(site: Site, season_id: str, key: tuple[object, ...],
                 make: Callable[[Any, Any, list[str], str], str]) -> HTMLResponse:
    """A page of a published season: ``make(marts, season, days, version)``, rendered once per
    publication (and per list of daily reports)."""
    source = site.source(season_id)
    summary = source.summary()
    if summary.state == "not published":
        raise HTTPException(404, f"season {season_id} has no publication yet: its first "
                                 "cycle publishes it (arena season publish)")
    days = source.days()
    text, version = source.page(
        (*key, tuple(days)),
        lambda published: make(published.marts, summary, days, published.version))
    return HTMLResponse(text, headers={"X-Arena-Version": version})


@router.get("/", response_class=HTMLResponse)
def home(site: ServedSite) -> HTMLResponse:
    return season_board(site, site.current().id)


@router.get("/seasons/", response_class=HTMLResponse)
def seasons(site: ServedSite) -> HTMLResponse:
    return HTMLResponse(site_pages.seasons_page(site.seasons()))


@router.get("/seasons/{season_id}/", response_class=HTMLResponse)
def season_board(site: ServedSite, season_id: str) -> HTMLResponse:
    urls = _urls(site, season_id)
    return _season_page(site, season_id, ("board",), lambda marts, season, days, version:
                        site_pages.leaderboard_page(marts, season, urls, days, version=version))


@router.get("/seasons/{season_id}")
def season_slash(site: ServedSite, season_id: str) -> RedirectResponse:
    return RedirectResponse(_urls(site, season_id).home)


@router.get("/seasons/{season_id}/contestants/{name}", response_class=HTMLResponse)
def contestant(site: ServedSite, season_id: str, name: str) -> HTMLResponse:
    urls = _urls(site, season_id)
    return _season_page(site, season_id, ("contestant", name),
                        lambda marts, season, days, version: site_pages.contestant_page(
                            marts, name, season, urls, days, version=version))


@router.get("/seasons/{season_id}/trades/{name}/{symbol}/{trip}", response_class=HTMLResponse)
def trade(site: ServedSite, season_id: str, name: str, symbol: str, trip: int) -> HTMLResponse:
    urls = _urls(site, season_id)
    return _season_page(site, season_id, ("trade", name, symbol, trip),
                        lambda marts, season, days, version: site_pages.trade_page(
                            marts, name, symbol, trip, season, urls, days, version=version))


@router.get("/seasons/{season_id}/assets/", response_class=HTMLResponse)
def assets(site: ServedSite, season_id: str) -> HTMLResponse:
    urls = _urls(site, season_id)
    return _season_page(site, season_id, ("assets",), lambda marts, season, days, version:
                        site_pages.assets_page(marts, season, urls, days, version=version))


@router.get("/seasons/{season_id}/assets/{symbol}", response_class=HTMLResponse)
def asset(site: ServedSite, season_id: str, symbol: str) -> HTMLResponse:
    urls = _urls(site, season_id)
    return _season_page(site, season_id, ("asset", symbol),
                        lambda marts, season, days, version: site_pages.asset_page(
                            marts, symbol, season, urls, days, version=version))


@router.get("/contest", response_class=HTMLResponse)
def current_contest(site: ServedSite) -> HTMLResponse:
    """The current season's contest page (404 when that season is not a contest)."""
    return contest(site, site.current().id)


@router.get("/seasons/{season_id}/contest", response_class=HTMLResponse)
def contest(site: ServedSite, season_id: str) -> HTMLResponse:
    urls = _urls(site, season_id)
    return _season_page(site, season_id, ("contest",), lambda marts, season, days, version:
                        site_pages.contest_page(marts, season, urls, days, version=version))


@router.get("/seasons/{season_id}/days/{day}", response_class=HTMLResponse)
def day(site: ServedSite, season_id: str, day: str) -> HTMLResponse:
    source = site.source(season_id)
    if day not in source.days():
        raise site_pages.PageNotFound(f"no daily report for {day!r} in season {source.id}")
    text = (source.lake.root / "reports" / "daily" / f"{day}.md").read_text(encoding="utf-8")
    return HTMLResponse(site_pages.day_page(text, _urls(site, source.id)))


@router.get("/seasons/{season_id}/daily/{page}")
def daily_file(site: ServedSite, season_id: str, page: str) -> RedirectResponse:
    """The season report's links to its daily pages (``daily/<day>.html``), served."""
    return RedirectResponse(_urls(site, season_id).day(page.removesuffix(".html")))


@router.get("/seasons/{season_id}/report")
def report(site: ServedSite, season_id: str) -> FileResponse:
    source = site.source(season_id)
    path = source.lake.root / "reports" / "season.html"
    if not path.is_file():
        raise site_pages.PageNotFound(f"season {source.id} has no season report yet")
    return FileResponse(path, media_type="text/html")


def _league_marts(site: Site) -> tuple[str, dict[str, pd.DataFrame]]:
    """The league's published marts and their version; a site of one season, or a league not
    published yet, is not here."""
    if site.league is None:
        raise site_pages.PageNotFound("this site serves one season, not a league")
    version, marts = site.league.marts()
    if not marts:
        raise site_pages.PageNotFound("the league is not published yet: arena league publish "
                                      f"{site.root}")
    return version, marts


@router.get("/league/", response_class=HTMLResponse)
def league(site: ServedSite) -> HTMLResponse:
    version, marts = _league_marts(site)
    return HTMLResponse(site_pages.league_page(marts, title=f"League {site.root.name}"),
                        headers={"X-Arena-Version": version})


@router.get("/league/archive", response_class=HTMLResponse)
def archive(site: ServedSite) -> HTMLResponse:
    """The league's archive in headline figures (the ``league_archive`` mart): its seasons,
    contestants, trades and the share of seasons the contestants ended positive."""
    version, marts = _league_marts(site)
    figures = marts.get(ARCHIVE)
    if figures is None or len(figures) != 1:
        raise site_pages.PageNotFound(f"the league's publication has no {ARCHIVE} mart (it was "
                                      "published by an older arena): publish it again with "
                                      f"arena league publish {site.root}")
    body = render("archive.html.j2", **archive_figures(figures.iloc[0].to_dict()))
    return HTMLResponse(page(f"Archive of league {site.root.name}",
                             [("Headline figures", body)],
                             links=[("League", "/league/"), ("All seasons", "/seasons/"),
                                    ("JSON API", f"/api/league/{ARCHIVE}")]),
                        headers={"X-Arena-Version": version})


def archive_figures(row: Mapping[str, Any]) -> dict[str, object]:
    """The archive's figures as the page shows them: counts as integers, the share of seasons
    ended positive as a percentage (a dash before any season counts), the first and last
    cycle's days."""
    def count(name: str) -> int:
        return 0 if pd.isna(row.get(name)) else int(row[name])

    def day(name: str) -> str | None:
        value = row.get(name)
        return None if value is None or pd.isna(value) else f"{pd.Timestamp(value):%Y-%m-%d}"

    share = row.get("positive_share")
    return {**{name: count(name) for name in ARCHIVE_COUNTS},
            "positive_share": "–" if share is None or pd.isna(share) else f"{share:.1%}",
            "first_day": day("first_cycle"), "last_day": day("last_cycle")}


__all__ = ["ARCHIVE", "ServedSite", "archive_figures", "error_page", "render", "router",
           "served_site"]
