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
behind a reverse proxy (``--proxied``), see the README.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.core.errors import UnusableInput
from arena.core.lazy import lazy_import
from arena.core.marts import LEAGUE_MARTS, SEASON_MARTS
from arena.data.lake import Lake

if TYPE_CHECKING:
    from fastapi import FastAPI

pd = lazy_import("pandas")

HOST, PORT = "127.0.0.1", 8780
LOOPBACK = ("127.0.0.1", "localhost", "::1")
# the marts the API serves (a mart a publication lacks answers 404 naming it)
API_MARTS = SEASON_MARTS  # every mart a season publishes (arena.core.marts)
MAX_ROWS = 50_000  # rows one API answer holds at most (a larger mart is paged: offset, limit)


class SiteError(UnusableInput, ValueError):
    """The site cannot be served from what it was given (no season, a bad host)."""


def is_lake(path: Path) -> bool:
    """A season's lake: its season config, or (a lake published before seasons had one) its
    leaderboard mart. A league folder has marts of its own (league_*), never a leaderboard."""
    return ((path / "season" / "season.json").is_file()
            or (path / "marts" / "leaderboard.parquet").is_file())


def season_lakes(root: Path) -> list[Path]:
    """The season lakes ``root`` holds: itself when it is one, else its sub-folders that are
    (a league's seasons), in name order."""
    if is_lake(root):
        return [root]
    if not root.is_dir():
        raise SiteError(f"{root} does not exist")
    found = sorted(p for p in root.iterdir() if p.is_dir() and is_lake(p))
    if not found:
        raise SiteError(f"{root} is neither a season's lake nor a folder of them (a league): "
                        "start a season with arena season init, or publish a replay with "
                        "arena replay")
    return found


def _identity(folder: Path, marker: str = "leaderboard.parquet") -> tuple[int, ...] | None:
    """What changes when a publication swaps ``folder`` (its inode and time, and those of the
    ``marker`` file in it); None: nothing published."""
    try:
        outer = folder.stat()
        inner = (folder / marker).stat()
    except OSError:
        return None
    return (outer.st_ino, outer.st_mtime_ns, inner.st_ino, inner.st_mtime_ns, inner.st_size)


def _version(identity: tuple[int, ...] | None) -> str:
    return "none" if identity is None else "-".join(map(str, identity))


@dataclass
class _Published:
    identity: tuple[int, ...] | None
    marts: dict[str, pd.DataFrame]
    pages: dict[tuple[object, ...], str] = field(default_factory=dict)
    summary: Any = None  # the season as the site lists it (SeasonSource.summary)

    @property
    def version(self) -> str:
        return _version(self.identity)


class SeasonSource:
    """One season lake as the site reads it: its config, its published marts (read again when a
    publication swapped them), its daily reports."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self._lock = threading.Lock()
        self._published: _Published | None = None
        self.id = self._season_id()

    def _season_id(self) -> str:
        path = self.lake.root / "season" / "season.json"
        try:
            return str(json.loads(path.read_text(encoding="utf-8"))["id"])
        except (OSError, ValueError, KeyError, TypeError):
            return self.lake.root.name

    def published(self) -> _Published:
        """The marts of the latest publication (one or two ``stat`` calls when unchanged)."""
        folder = self.lake.root / "marts"
        identity = _identity(folder)
        with self._lock:
            if self._published is not None and self._published.identity == identity:
                return self._published
            marts: dict[str, pd.DataFrame] = {}
            if identity is not None:
                from arena.reporting.season import read_marts

                marts = read_marts(self.lake)
            self._published = _Published(identity, marts)
            return self._published

    def page(self, key: tuple[object, ...], make: Callable[[_Published], str]) -> tuple[str, str]:
        """A rendered page of the latest publication (rendered once per publication) and the
        publication's version."""
        published = self.published()
        text = published.pages.get(key)
        if text is None:
            text = published.pages[key] = make(published)
        return text, published.version

    def days(self) -> list[str]:
        folder = self.lake.root / "reports" / "daily"
        return sorted(p.stem for p in folder.glob("*.md")) if folder.is_dir() else []

    def summary(self) -> Any:
        """The season as the site lists it, worked out once per publication."""
        published = self.published()
        if published.summary is None:
            published.summary = self._summary(published)
        return published.summary

    def _summary(self, published: _Published) -> Any:
        from arena.reporting.leaderboard import best_contestant
        from arena.reporting.site import Season

        config: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):  # a lake without a season config
            config = json.loads((self.lake.root / "season" / "season.json")
                                .read_text(encoding="utf-8"))
        marts = published.marts
        board = marts.get("leaderboard")
        equity = marts.get("equity_daily")
        if board is None or equity is None or equity.empty:
            return Season(self.id, f"Season {self.id}", None, str(config.get("start") or "")
                          or None, None, 0, "not published")
        closed = (self.lake.root / "season" / "closed.json").is_file()
        state = "closed" if closed else ("replay" if config.get("mode") == "replay" else "live")
        times = pd.to_datetime(equity["cycle_at"], utc=True)
        leader = best_contestant(board)
        market = board["market"].dropna().astype(str).unique() if "market" in board else []
        return Season(self.id, f"Season {self.id}", ", ".join(market) or None,
                      f"{times.min():%Y-%m-%d}", f"{times.max():%Y-%m-%d}",
                      int(times.nunique()), state,
                      None if leader is None else str(leader["contestant"]))


class LeagueSource:
    """A league folder's own marts (``arena league publish``), read again when republished."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._read: tuple[tuple[int, ...] | None, dict[str, pd.DataFrame]] | None = None

    def marts(self) -> tuple[str, dict[str, pd.DataFrame]]:
        folder = self.root / "marts"
        identity = _identity(folder, "league_verdict.parquet")
        with self._lock:
            if self._read is None or self._read[0] != identity:
                marts = {} if identity is None else {
                    name: pd.read_parquet(folder / f"{name}.parquet") for name in LEAGUE_MARTS
                    if (folder / f"{name}.parquet").is_file()}
                self._read = (identity, marts)
            return _version(identity), self._read[1]


class Site:
    """The seasons a site serves, the newest (by first cycle, then id) last; a league's own
    marts when it serves a league."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.league = None if is_lake(root) else LeagueSource(root)
        self.sources = {}
        for path in season_lakes(root):
            source = SeasonSource(Lake(path))
            if source.id in self.sources:  # two lakes of one id: the folder names tell them apart
                source.id = path.name
            self.sources[source.id] = source

    def refresh(self) -> None:
        """Pick up a season a league gained since the site started."""
        if is_lake(self.root):
            return
        known = {s.lake.root.resolve() for s in self.sources.values()}
        for path in season_lakes(self.root):
            if path.resolve() not in known:
                source = SeasonSource(Lake(path))
                self.sources[source.id if source.id not in self.sources else path.name] = source

    def seasons(self) -> list[Any]:
        self.refresh()
        listed = [s.summary() for s in self.sources.values()]
        return sorted(listed, key=lambda s: (s.start or "", s.id), reverse=True)

    def current(self) -> SeasonSource:
        seasons = self.seasons()
        published = [s for s in seasons if s.state != "not published"] or seasons
        return self.sources[published[0].id]

    def source(self, season_id: str) -> SeasonSource:
        if season_id not in self.sources:
            self.refresh()
        try:
            return self.sources[season_id]
        except KeyError:
            from arena.reporting.site import PageNotFound

            raise PageNotFound(f"no season {season_id!r} here (seasons: "
                               f"{', '.join(sorted(self.sources))})") from None


def _json_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON values: times as ISO 8601 (UTC), missing values as null, lists as lists."""
    out = json.loads(frame.to_json(orient="records", date_format="iso", date_unit="us",
                                   double_precision=15))
    return out  # type: ignore[no-any-return]


def build_app(root: str | Path) -> FastAPI:
    """The site as an ASGI app (FastAPI: the JSON API documented by OpenAPI)."""
    from fastapi import FastAPI, HTTPException, Query, Request
    from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse

    from arena.reporting import site as pages
    from arena.reporting.season import ReportError

    site = Site(Path(root))
    app = FastAPI(title="LLM trading arena", version="1",
                  description="The arena's seasons as published: leaderboards, equity, trades, "
                              "decisions and the luck tables. Every number is a row of the "
                              "season's dbt marts.",
                  docs_url=None, redoc_url=None)

    def urls_of(season_id: str) -> Any:
        return pages.Urls(season_id, league=site.league is not None)

    def season_page(season_id: str, key: tuple[object, ...],
                    make: Callable[[Any, Any, list[str], str], str]) -> HTMLResponse:
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

    @app.exception_handler(pages.PageNotFound)
    async def not_found(request: Request, exc: pages.PageNotFound) -> HTMLResponse:
        return _error_page(404, str(exc), request)

    @app.exception_handler(ReportError)
    async def unreadable(request: Request, exc: ReportError) -> HTMLResponse:
        return _error_page(503, str(exc), request)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> HTMLResponse:
        return _error_page(exc.status_code, str(exc.detail), request)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home() -> HTMLResponse:
        return season_board(site.current().id)

    @app.get("/seasons/", response_class=HTMLResponse, include_in_schema=False)
    def seasons() -> HTMLResponse:
        return HTMLResponse(pages.seasons_page(site.seasons()))

    @app.get("/seasons/{season_id}/", response_class=HTMLResponse, include_in_schema=False)
    def season_board(season_id: str) -> HTMLResponse:
        urls = urls_of(season_id)
        return season_page(season_id, ("board",), lambda marts, season, days, version:
                           pages.leaderboard_page(marts, season, urls, days, version=version))

    @app.get("/seasons/{season_id}", include_in_schema=False)
    def season_slash(season_id: str) -> RedirectResponse:
        return RedirectResponse(urls_of(season_id).home)

    @app.get("/seasons/{season_id}/contestants/{name}", response_class=HTMLResponse,
             include_in_schema=False)
    def contestant(season_id: str, name: str) -> HTMLResponse:
        urls = urls_of(season_id)
        return season_page(season_id, ("contestant", name), lambda marts, season, days, version:
                           pages.contestant_page(marts, name, season, urls, days,
                                                 version=version))

    @app.get("/seasons/{season_id}/trades/{name}/{symbol}/{trip}", response_class=HTMLResponse,
             include_in_schema=False)
    def trade(season_id: str, name: str, symbol: str, trip: int) -> HTMLResponse:
        urls = urls_of(season_id)
        return season_page(season_id, ("trade", name, symbol, trip),
                           lambda marts, season, days, version: pages.trade_page(
                               marts, name, symbol, trip, season, urls, days, version=version))

    @app.get("/seasons/{season_id}/assets/", response_class=HTMLResponse,
             include_in_schema=False)
    def assets(season_id: str) -> HTMLResponse:
        urls = urls_of(season_id)
        return season_page(season_id, ("assets",), lambda marts, season, days, version:
                           pages.assets_page(marts, season, urls, days, version=version))

    @app.get("/seasons/{season_id}/assets/{symbol}", response_class=HTMLResponse,
             include_in_schema=False)
    def asset(season_id: str, symbol: str) -> HTMLResponse:
        urls = urls_of(season_id)
        return season_page(season_id, ("asset", symbol), lambda marts, season, days, version:
                           pages.asset_page(marts, symbol, season, urls, days, version=version))

    @app.get("/seasons/{season_id}/days/{day}", response_class=HTMLResponse,
             include_in_schema=False)
    def day(season_id: str, day: str) -> HTMLResponse:
        source = site.source(season_id)
        if day not in source.days():
            raise pages.PageNotFound(f"no daily report for {day!r} in season {source.id}")
        text = (source.lake.root / "reports" / "daily" / f"{day}.md").read_text(encoding="utf-8")
        return HTMLResponse(pages.day_page(text, urls_of(source.id)))

    @app.get("/seasons/{season_id}/daily/{page}", include_in_schema=False)
    def daily_file(season_id: str, page: str) -> RedirectResponse:
        """The season report's links to its daily pages (``daily/<day>.html``), served."""
        return RedirectResponse(urls_of(season_id).day(page.removesuffix(".html")))

    @app.get("/seasons/{season_id}/report", include_in_schema=False)
    def report(season_id: str) -> FileResponse:
        source = site.source(season_id)
        path = source.lake.root / "reports" / "season.html"
        if not path.is_file():
            raise pages.PageNotFound(f"season {source.id} has no season report yet")
        return FileResponse(path, media_type="text/html")

    @app.get("/league/", response_class=HTMLResponse, include_in_schema=False)
    def league() -> HTMLResponse:
        if site.league is None:
            raise pages.PageNotFound("this site serves one season, not a league")
        version, marts = site.league.marts()
        if not marts:
            raise pages.PageNotFound("the league is not published yet: arena league publish "
                                     f"{site.root}")
        return HTMLResponse(pages.league_page(marts, title=f"League {site.root.name}"),
                            headers={"X-Arena-Version": version})

    # ------------------------------------------------------------------------ the JSON API
    @app.get("/api/", response_class=HTMLResponse, include_in_schema=False)
    def api_index() -> HTMLResponse:
        return HTMLResponse(_api_index(app.openapi()))

    @app.get("/api/seasons", summary="The seasons served, newest first")
    def api_seasons() -> list[dict[str, Any]]:
        from dataclasses import asdict

        return [asdict(s) for s in site.seasons()]

    @app.get("/api/seasons/{season_id}/version",
             summary="Which publication of the season is current (changes with each one)")
    def api_version(season_id: str) -> dict[str, str]:
        source = site.source(season_id)
        return {"season": source.id, "version": source.published().version}

    @app.get("/api/seasons/{season_id}/{mart}",
             summary=f"A mart's rows for the season ({', '.join(API_MARTS)})",
             response_model=None)
    def api_mart(season_id: str, mart: str,
                 contestant: str | None = Query(None, description="only this contestant's rows"),
                 symbol: str | None = Query(None, description="only this asset's rows"),
                 offset: int = Query(0, ge=0), limit: int = Query(MAX_ROWS, ge=1, le=MAX_ROWS),
                 ) -> JSONResponse:
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

    @app.get("/api/league/{mart}", response_model=None,
             summary=f"A league mart ({', '.join(LEAGUE_MARTS)}): the seasons added up and "
                     "the verdict on skill")
    def api_league(mart: str) -> JSONResponse:
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

    @app.get("/api/leaderboard", summary="The current season's leaderboard", response_model=None)
    def api_leaderboard() -> JSONResponse:
        return api_mart(site.current().id, "leaderboard", None, None, 0, MAX_ROWS)

    return app


def _error_page(status: int, message: str, request: Any) -> Any:
    from fastapi.responses import HTMLResponse, JSONResponse

    from arena.reporting.layout import page

    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    from markupsafe import escape

    return HTMLResponse(page(f"{status}: not here" if status == 404 else f"{status}",
                             [("What happened", f"<p>{escape(message)}</p>")],
                             links=[("Current season", "/"), ("All seasons", "/seasons/")]),
                        status_code=status)


def _api_index(spec: dict[str, Any]) -> str:
    """The API's endpoints as a page (offline: no documentation scripts from a CDN)."""
    from markupsafe import escape

    from arena.reporting.layout import page

    items = []
    for path, methods in sorted(spec.get("paths", {}).items()):
        for method, op in methods.items():
            params = ", ".join(p["name"] for p in op.get("parameters", []))
            items.append(f"<li><code>{escape(method.upper())} {escape(path)}</code>: "
                         f"{escape(op.get('summary', ''))}"
                         + (f" <span class='note'>({escape(params)})</span>" if params else "")
                         + "</li>")
    body = (f"<p>The machine-readable description: <a href=\"/openapi.json\">/openapi.json</a> "
            f"(OpenAPI {escape(spec.get('openapi', ''))}).</p><ul>{''.join(items)}</ul>")
    return page("JSON API", [("Endpoints", body)], links=[("Current season", "/")])


def check_host(host: str, proxied: bool) -> None:
    """A host beyond loopback only behind a reverse proxy (the README shows one)."""
    if host not in LOOPBACK and not proxied:
        raise SiteError(f"--host {host} would serve the site beyond this machine: put it behind "
                        "a reverse proxy that terminates TLS and pass --proxied (README: "
                        "'The site behind a reverse proxy')")


def serve(root: str | Path, host: str = HOST, port: int = PORT, *, proxied: bool = False,
          ready: Callable[[str], None] | None = None) -> None:
    """Serve the site until interrupted (``arena web``)."""
    import uvicorn

    check_host(host, proxied)
    app = build_app(root)
    if ready is not None:
        ready(f"http://{host}:{port}/")
    uvicorn.run(app, host=host, port=port, log_level="warning", proxy_headers=proxied,
                forwarded_allow_ips=None,  # uvicorn's: $FORWARDED_ALLOW_IPS, else 127.0.0.1
                timeout_keep_alive=5)


__all__: Sequence[str] = ("SiteError", "build_app", "check_host", "season_lakes", "serve")
