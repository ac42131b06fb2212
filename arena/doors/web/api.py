"""The site's JSON API: a router of the app (``/api/...``) serving the published marts' rows,
each endpoint's answer a pydantic model the OpenAPI document (``/openapi.json``) names, with
every other status it can answer, each an :class:`ApiError`: 404 (no such season or mart), 400
(a filter the mart cannot take), 422 (a parameter out of its range, or not a number:
:func:`invalid_text` says which) and 503 (a publication that cannot be read); ``/api/`` lists the
endpoints as a page (FastAPI's documentation pages load their scripts from a CDN and are off).

A mart's rows are answered as the marts hold them (:func:`_json_rows`), never validated row by
row: the models describe the answers, the marts' dbt models describe the rows.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pandas as pd
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field

from arena.core.marts import LEAGUE_MARTS
from arena.doors.web.pages import ServedSite, render
from arena.doors.web.sources import API_MARTS, MAX_ROWS, Site
from arena.reporting.layout import page

router = APIRouter()


class ApiError(BaseModel):
    """What the API answers when it cannot serve a request: the reason, in a sentence."""

    error: str


class SeasonListed(BaseModel):
    """A season as the site lists it (:class:`arena.reporting.site.Season`)."""

    id: str = Field(description="the season's id (its pages are under /seasons/<id>/)")
    title: str
    market: str | None = Field(description="the markets its assets trade on")
    start: str | None = Field(description="its first cycle's day, ISO 8601")
    end: str | None = Field(description="its last published cycle's day, ISO 8601")
    cycles: int = Field(description="the cycles published")
    state: str = Field(description="live, closed, replay or not published")
    leader: str | None = Field(None, description="the best contestant, when there is one")
    blind: bool = Field(False, description="played blind: its prompts showed neutral names, a "
                        "relabelled calendar and rescaled prices (the blind_names mart reveals "
                        "them once it has ended)")


class Publication(BaseModel):
    """Which publication of a season is current (it changes with each one)."""

    season: str
    version: str


class MartRows(BaseModel):
    """A page of a season mart's rows (``offset``, at most ``limit`` of ``total``)."""

    season: str
    mart: str
    version: str = Field(description="the publication the rows come from")
    total: int = Field(description="the rows that match (before paging)")
    offset: int
    rows: list[dict[str, Any]] = Field(
        description="the mart's rows, its columns as the dbt model's: times in ISO 8601 (UTC), "
                    "a missing value null")


class LeagueRows(BaseModel):
    """A league mart's rows, every one."""

    mart: str
    version: str = Field(description="the league's publication the rows come from")
    total: int
    rows: list[dict[str, Any]] = Field(description="the mart's rows (see MartRows)")


Responses = dict[int | str, dict[str, Any]]
UNREADABLE: Responses = {503: {"model": ApiError, "description": "The season's publication "
                               "cannot be read right now (missing, or being swapped): try again"}}
INVALID: Responses = {422: {"model": ApiError, "description": "A parameter out of its range or "
                            "of the wrong type (the error names it)"}}


def _not_found(description: str) -> Responses:
    return {404: {"model": ApiError, "description": description}}


def invalid_text(exc: RequestValidationError) -> str:
    """A request's invalid parameters in a sentence: where each is, its name and what is
    wrong (``query limit: Input should be less than or equal to 50000``)."""
    problems = [f"{' '.join(str(part) for part in error.get('loc', ()))}: "
                f"{error.get('msg', 'invalid')}" for error in exc.errors()]
    return "; ".join(problems) or "invalid request"


def _json_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON values: times as ISO 8601 (UTC), missing values as null, lists as lists."""
    out = json.loads(frame.to_json(orient="records", date_format="iso", date_unit="us",
                                   double_precision=15))
    return out  # type: ignore[no-any-return]


@router.get("/api/", response_class=HTMLResponse, include_in_schema=False)
def api_index(request: Request) -> HTMLResponse:
    return HTMLResponse(_api_index(request.app.openapi()))


def _api_index(spec: dict[str, Any]) -> str:
    """The API's endpoints as a page (offline: no documentation scripts from a CDN)."""
    endpoints = [(method.upper(), path, op.get("summary", ""),
                  ", ".join(p["name"] for p in op.get("parameters", [])))
                 for path, methods in sorted(spec.get("paths", {}).items())
                 for method, op in methods.items()]
    body = render("api_index.html.j2", openapi=spec.get("openapi", ""), endpoints=endpoints)
    return page("JSON API", [("Endpoints", body)], links=[("Current season", "/")])


@router.get("/api/seasons", summary="The seasons served, newest first", responses=UNREADABLE)
def api_seasons(site: ServedSite) -> list[SeasonListed]:
    return [SeasonListed(**asdict(s)) for s in site.seasons()]


@router.get("/api/seasons/{season_id}/version",
            summary="Which publication of the season is current (changes with each one)",
            responses={**_not_found("No season of that id"), **INVALID, **UNREADABLE})
def api_version(site: ServedSite, season_id: str) -> Publication:
    source = site.source(season_id)
    return Publication(season=source.id, version=source.published().version)


@router.get("/api/seasons/{season_id}/{mart}",
            summary=f"A mart's rows for the season ({', '.join(API_MARTS)})",
            response_model=MartRows,
            responses={**_not_found("No season of that id, no mart of that name, or the "
                                    "season's publication has no such mart"),
                       400: {"model": ApiError,
                             "description": "A filter on a column the mart does not have"},
                       **INVALID, **UNREADABLE})
def api_mart(site: ServedSite, season_id: str, mart: str,
             contestant: str | None = Query(None, description="only this contestant's rows"),
             symbol: str | None = Query(None, description="only this asset's rows"),
             offset: int = Query(0, ge=0), limit: int = Query(MAX_ROWS, ge=1, le=MAX_ROWS),
             ) -> JSONResponse:
    return _mart_rows(site, season_id, mart, contestant, symbol, offset, limit)


def _mart_rows(site: Site, season_id: str, mart: str, contestant: str | None,
               symbol: str | None, offset: int, limit: int) -> JSONResponse:
    """A season mart's rows (a :class:`MartRows`), filtered, then paged."""
    if mart not in API_MARTS:
        raise HTTPException(404, f"no mart {mart!r} (the API serves {', '.join(API_MARTS)})")
    source = site.source(season_id)
    published = source.published()
    frame = published.marts.get(mart)
    if frame is None:
        raise HTTPException(404, f"season {source.id}'s publication has no {mart} mart")
    for column, value in (("contestant", contestant), ("symbol", symbol)):
        if value is not None:
            if column not in frame.columns:
                raise HTTPException(400, f"the {mart} mart has no {column} column")
            frame = frame[frame[column].astype(str) == value]
    page = frame.iloc[offset:offset + limit]
    return JSONResponse({"season": source.id, "mart": mart, "version": published.version,
                         "total": len(frame), "offset": offset, "rows": _json_rows(page)},
                        headers={"X-Arena-Version": published.version})


@router.get("/api/league/{mart}", response_model=LeagueRows,
            summary=f"A league mart ({', '.join(LEAGUE_MARTS)}): the seasons added up and "
                    "the verdict on skill",
            responses={**_not_found("The site serves one season (no league), no league mart "
                                    "of that name, or the league's publication has no such "
                                    "mart"), **INVALID})
def api_league(site: ServedSite, mart: str) -> JSONResponse:
    if site.league is None:
        raise HTTPException(404, "this site serves one season, not a league")
    if mart not in LEAGUE_MARTS:
        raise HTTPException(404, f"no league mart {mart!r} (the API serves "
                                 f"{', '.join(LEAGUE_MARTS)})")
    version, marts = site.league.marts()
    if mart not in marts:
        raise HTTPException(404, f"the league's publication has no {mart} mart (arena "
                                 "league publish)")
    return JSONResponse({"mart": mart, "version": version, "total": len(marts[mart]),
                         "rows": _json_rows(marts[mart])})


@router.get("/api/leaderboard", summary="The current season's leaderboard",
            response_model=MartRows,
            responses={**_not_found("The current season's publication has no leaderboard"),
                       **UNREADABLE})
def api_leaderboard(site: ServedSite) -> JSONResponse:
    return _mart_rows(site, site.current().id, "leaderboard", None, None, 0, MAX_ROWS)


__all__ = ["ApiError", "LeagueRows", "MartRows", "Publication", "SeasonListed", "invalid_text",
           "router"]
