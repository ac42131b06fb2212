"""``arena web``: the arena's public site, served live from the published marts.

The site serves one season's lake, or a league folder of season lakes (the newest season is the
one ``/`` shows). Every page is rendered by :mod:`arena.reporting.site` with the season report's
templates; the JSON API (``/api/...``, described by OpenAPI at ``/openapi.json``) serves the same
marts' rows. Both read the season's *published* marts (``<lake>/marts/*.parquet``: a
publication swaps that folder whole, see :mod:`arena.pipeline.warehouse`) and nothing else of
the lake but its season config, its daily reports and its season report, all read-only.

A season's marts are read once per publication: the folder's identity (inode and modification
time of the folder and of its leaderboard file) is checked on every request - one ``stat`` or
two - and a new publication is read at the next request, so a cycle published while the site
runs shows without a restart; the rendered pages of a publication are kept until the next one.
A page asks ``/api/seasons/<id>/version`` every 20 seconds and reloads itself when a newer
publication is out.

Offline by construction: no page loads anything from another host (the stylesheet is inline,
the charts are inline SVG, FastAPI's documentation pages - which load their scripts from a CDN -
are off; ``/api/`` lists the endpoints instead). 127.0.0.1 by default; beyond loopback only
behind a reverse proxy (``--proxied``), see the README. Served as the MCP door is
(:func:`server_config`): a request must arrive whole within
:data:`~arena.doors.deadline.REQUEST_TIMEOUT` seconds of its connection being ready for it, and
an idle keep-alive connection is closed after a few seconds, so neither a half-open nor an
idle connection is held.

The app (:func:`build_app`) is three routers over one :class:`~arena.doors.web.sources.Site`:
:mod:`arena.doors.web.pages` (the pages, and the page a failed request is answered with),
:mod:`arena.doors.web.api` (the JSON API, its answers pydantic models) and
:mod:`arena.doors.web.entries` (a person's entry to the single-asset track, a position slider per
asset: the site's only writes, refused unless it was started with ``arena web --entries``);
what the site reads is :mod:`arena.doors.web.sources`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response

from arena.doors.deadline import REQUEST_TIMEOUT
from arena.doors.deadline import server_config as door_config
from arena.doors.web import api, entries, pages
from arena.doors.web.entries import Entries
from arena.doors.web.sources import (
    API_MARTS,
    MAX_ROWS,
    LeagueSource,
    SeasonSource,
    Site,
    SiteError,
    is_lake,
    season_lakes,
)
from arena.reporting.season import ReportError
from arena.reporting.site import PageNotFound

HOST, PORT = "127.0.0.1", 8780
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_app(root: str | Path, *, entries_open: bool = False,
              now: Callable[[], pd.Timestamp] | None = None) -> FastAPI:
    """The site as an ASGI app (FastAPI: the pages' router, the entry pages' and the JSON
    API's, the API documented by OpenAPI). ``entries_open``: the entry pages record positions
    (``arena web --entries``); ``now``: the clock that stamps them (the wall clock by default;
    a test passes its own, as it does to the MCP door)."""
    site = Site(Path(root), entries=entries_open)
    app = FastAPI(title="LLM trading arena", version="1",
                  description="The arena's seasons as published: leaderboards, equity, trades, "
                              "decisions and the luck tables. Every number is a row of the "
                              "season's dbt marts.",
                  docs_url=None, redoc_url=None)
    app.state.site = site
    app.state.entries = Entries(entries_open) if now is None else Entries(entries_open, now)

    @app.exception_handler(PageNotFound)
    async def not_found(request: Request, exc: PageNotFound) -> Response:
        return pages.error_page(404, str(exc), request)

    @app.exception_handler(ReportError)
    async def unreadable(request: Request, exc: ReportError) -> Response:
        return pages.error_page(503, str(exc), request)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        return pages.error_page(exc.status_code, str(exc.detail), request)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return pages.error_page(422, api.invalid_text(exc), request)

    app.include_router(pages.router)
    app.include_router(entries.router)
    app.include_router(api.router)
    return app


def check_host(host: str, proxied: bool) -> None:
    """A host beyond loopback only behind a reverse proxy (the README shows one)."""
    if host not in LOOPBACK and not proxied:
        raise SiteError(f"--host {host} would serve the site beyond this machine: put it behind "
                        "a reverse proxy that terminates TLS and pass --proxied (README: "
                        "'The site behind a reverse proxy')")


def server_config(root: str | Path, host: str = HOST, port: int = PORT, *,
                  proxied: bool = False, request_timeout: float = REQUEST_TIMEOUT,
                  entries_open: bool = False, now: Callable[[], pd.Timestamp] | None = None
                  ) -> uvicorn.Config:
    """How uvicorn serves the site of ``root``: the doors' one configuration
    (:func:`arena.doors.deadline.server_config`: a request must arrive whole within
    ``request_timeout`` seconds, idle keep-alive connections closed), trusting a proxy's
    ``X-Forwarded-*`` headers only when ``proxied``; ``entries_open`` and ``now``:
    :func:`build_app`'s."""
    check_host(host, proxied)
    app = build_app(root, entries_open=entries_open, now=now)
    return door_config(app, host, port, request_timeout=request_timeout,
                       proxy_headers=proxied,
                       forwarded_allow_ips=None)  # uvicorn's: $FORWARDED_ALLOW_IPS, else 127.0.0.1


def serve(root: str | Path, host: str = HOST, port: int = PORT, *, proxied: bool = False,
          entries_open: bool = False, ready: Callable[[str], None] | None = None) -> None:
    """Serve the site until interrupted (``arena web``; with ``entries_open``, ``arena web
    --entries``: the entry pages record positions)."""
    config = server_config(root, host, port, proxied=proxied, entries_open=entries_open)
    if ready is not None:
        ready(f"http://{host}:{port}/")
    uvicorn.Server(config).run()


__all__: Sequence[str] = ("API_MARTS", "HOST", "LOOPBACK", "MAX_ROWS", "PORT", "LeagueSource",
                          "SeasonSource", "Site", "SiteError", "build_app", "check_host",
                          "is_lake", "season_lakes", "serve", "server_config")
