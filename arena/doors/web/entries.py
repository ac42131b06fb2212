"""People enter the single-asset track through the site: a page per asset of a season
(``/seasons/<id>/enter/<symbol>``) with a position slider from -1 (short) through 0 (flat) to
+1 (long), and the POST that records the position.

A POST records through :func:`arena.pipeline.outside.submit_positions`, the function the MCP
door's ``submit_position`` tool calls, on an :class:`~arena.pipeline.outside.Arena` built as the
door builds it and stamped by the site's clock: the same validation (a finite number, clipped
into [-1, +1]), the same refusal once the season is over, the same files under
``<lake>/season/tracks/<entrant>/``. The person proves who they are with the entrant key an
operator handed out (``arena entrant add``), checked by
:func:`arena.pipeline.entrants.authenticate` as the door checks it.

The key is the credential of each POST, sent in its form-encoded body and nowhere else: the
site sets no cookie and keeps no session, so a page of another site cannot make a browser
submit on its owner's behalf (there is no ambient credential to ride on: no CSRF surface). The
key is never logged, never written into a page (the form's key field comes back empty), never
put in a URL (a GET that carries one is refused and told so) and never stored (only its
hash is, by ``arena entrant add``). Every answer of these routes carries ``Cache-Control:
no-store``.

The site is read-only unless started with ``arena web --entries`` (:class:`Entries`): without
it, these routes answer 404 naming the flag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, cast
from urllib.parse import parse_qs

import pandas as pd
from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from arena.core.universe import Asset
from arena.doors.web.pages import ServedSite, render
from arena.pipeline.entrants import KEY_PREFIX, Entrant, authenticate
from arena.pipeline.outside import POSITION_NOTE, Arena, OutsideError, submit_positions
from arena.pipeline.season_config import SeasonConfigError, load_season
from arena.reporting.layout import page
from arena.reporting.site import Urls

router = APIRouter(include_in_schema=False)
FLAG = "--entries"  # the option of ``arena web`` that opens these routes
FORM = "application/x-www-form-urlencoded"
MAX_FORM = 4096  # bytes a POST's body may carry (a key and a number need a few hundred)
MAX_KEY = 200  # characters of a key (``arena entrant add`` prints about 50)
STEP = 0.05  # the slider's step
NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


class Refused(Exception):
    """A request the entry routes answer with a page of its own: its status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Entries:
    """Whether the site takes entries (``arena web --entries``) and the clock that stamps them
    (the wall clock; a test passes its own)."""

    enabled: bool = False
    clock: Callable[[], pd.Timestamp] = lambda: pd.Timestamp.now(tz="UTC")


def served_entries(request: Request) -> Entries:
    """The app's :class:`Entries` (set by :func:`arena.doors.web.build_app`)."""
    entries: Entries = request.app.state.entries
    return entries


ServedEntries = Annotated[Entries, Depends(served_entries)]


def enter_url(season_id: str, symbol: str) -> str:
    """Where the entry page of ``symbol`` in ``season_id`` lives."""
    return Urls(season_id).enter(symbol)


def _arena(site: ServedSite, entries: Entries, season_id: str, symbol: str
           ) -> tuple[Arena, Asset]:
    """The season and asset an entry page is for, as the MCP door sees the season; refused
    when the site takes no entries, the season has no config, or the asset is not its."""
    if not entries.enabled:
        raise Refused(404, f"this site takes no entries: its operator starts it with "
                           f"arena web {FLAG} to accept positions through the site")
    source = site.source(season_id)
    try:
        arena = Arena(source.lake, load_season(source.lake))
    except SeasonConfigError as exc:
        raise Refused(404, f"season {source.id} takes no entries: {exc}") from None
    try:
        return arena, arena.asset(symbol)
    except OutsideError as exc:
        raise Refused(404, str(exc)) from None


def _page(status: int, title: str, heading: str, body: str, season_id: str | None,
          symbol: str | None) -> HTMLResponse:
    """An answer of the entry routes: a page with links back to the form and the season (as
    the site names it: ``season_id``, None when the site has no such season)."""
    links = [("All seasons", "/seasons/")]
    if season_id is not None:
        urls = Urls(season_id)
        links = [("Season", urls.home), *links]
        if symbol is not None:
            links = [(f"Enter {symbol}", urls.enter(symbol)),
                     (f"{symbol}'s page", urls.asset(symbol)), *links]
    return HTMLResponse(page(title, [(heading, body)], links=links), status_code=status,
                        headers=NO_STORE)


def _refusal(exc: Refused, season_id: str | None = None, symbol: str | None = None
             ) -> HTMLResponse:
    return _page(exc.status, f"{exc.status}: not recorded", "Not recorded",
                 render("error.html.j2", message=str(exc)), season_id, symbol)


@router.get("/seasons/{season_id}/enter/{symbol}", response_class=HTMLResponse)
def entry_form(request: Request, site: ServedSite, entries: ServedEntries, season_id: str,
               symbol: str) -> HTMLResponse:
    """The entry page of one asset: the key, the slider, the season's next cycle."""
    arena: Arena | None = None
    try:
        if "key" in request.query_params:
            raise Refused(400, "an entrant key never goes in a URL (it would be kept in "
                               "histories and logs): open the page without it and paste the "
                               "key into the form; ask the operator for a new key "
                               "(arena entrant revoke, then add)")
        arena, asset = _arena(site, entries, season_id, symbol)
        now = entries.clock()
        arena.refuse_when_over(now, "position")
    except OutsideError as exc:
        return _refusal(Refused(409, str(exc)), season_id, symbol)
    except Refused as exc:
        return _refusal(exc, *((season_id, symbol) if arena is not None else ()))
    upcoming = arena.season.next_after(now)
    body = render("entry.html.j2", action=enter_url(season_id, asset.symbol),
                  symbol=asset.symbol, name=asset.name, season=arena.season.id,
                  next_cycle=None if upcoming is None else upcoming.isoformat(), step=STEP,
                  rule=POSITION_NOTE)
    return _page(200, f"Enter {asset.symbol}: season {arena.season.id}",
                 f"Your position on {asset.symbol}", body, season_id, asset.symbol)


async def _form(request: Request) -> Mapping[str, str]:
    """The POST's fields: a form-encoded body of at most :data:`MAX_FORM` bytes holding one
    ``key`` and one ``position``."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != FORM:
        raise Refused(415, f"send the entry as a form ({FORM}), as the entry page does")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM:
            raise Refused(413, f"the form is over {MAX_FORM} bytes: it holds only a key and "
                               "a position")
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=8,
                          strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, "the form cannot be read: send it from the entry page") from None
    form = {}
    for name in ("key", "position"):
        values = fields.get(name, [])
        if len(values) != 1:
            raise Refused(422, f"the form must carry one {name!r} field, not {len(values)}: "
                               "send it from the entry page")
        form[name] = values[0].strip()
    return form


def _entrant(arena: Arena, key: str) -> Entrant:
    """The active entrant of ``key``, as the MCP door finds it; else 401."""
    found = None
    if key.startswith(KEY_PREFIX) and len(key) <= MAX_KEY:
        found = authenticate(arena.lake, key)
    if found is None:
        raise Refused(401, "the key is not an active entrant's key (wrong, mistyped or "
                           "revoked): paste the key the operator gave you (arena entrant add "
                           "prints it once; it starts with 'arena_')")
    return found


def _position(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise Refused(422, f"the position must be a number from -1 to 1, not {text[:40]!r}: "
                           "move the slider and submit again") from None


def _record(arena: Arena, entries: Entries, form: Mapping[str, str], symbol: str
            ) -> tuple[Entrant, dict[str, object]]:
    """Authenticate, then record through the MCP door's own function: the season-over
    refusal is a 409, any other refusal of the function a 422, each with its message."""
    entrant = _entrant(arena, form["key"])
    now = entries.clock()
    try:
        arena.refuse_when_over(now, "position")
    except OutsideError as exc:
        raise Refused(409, str(exc)) from None
    position = _position(form["position"])
    try:
        return entrant, submit_positions(arena, entrant, {symbol: position}, now)
    except OutsideError as exc:
        raise Refused(422, str(exc)) from None


@router.post("/seasons/{season_id}/enter/{symbol}", response_class=HTMLResponse)
async def enter(request: Request, site: ServedSite, entries: ServedEntries, season_id: str,
                symbol: str) -> HTMLResponse:
    """Record a position: the form's key and slider value, through the MCP door's function."""
    arena: Arena | None = None
    try:
        arena, asset = await run_in_threadpool(_arena, site, entries, season_id, symbol)
        form = await _form(request)
        entrant, recorded = await run_in_threadpool(_record, arena, entries, form,
                                                    asset.symbol)
    except Refused as exc:
        return _refusal(exc, *((season_id, symbol) if arena is not None else ()))
    position = cast(Mapping[str, float], recorded["positions"])[asset.symbol]
    body = render("entered.html.j2", symbol=asset.symbol, entrant=entrant.name,
                  position=position, words=words(position),
                  clipped=cast(Mapping[str, object], recorded["clipped"]).get(asset.symbol),
                  received_at=recorded["received_at"], held_from=recorded.get("held_from"),
                  note=recorded["note"])
    return _page(200, f"Recorded: {asset.symbol} at {position:+.2f} ({words(position)})",
                 "What was recorded", body, season_id, asset.symbol)


def words(position: float) -> str:
    """A position in words, as the slider shows it beside its number."""
    if position == 0:
        return "flat"
    side = "long" if position > 0 else "short"
    return side if abs(position) == 1 else f"{abs(position):.0%} {side}"


__all__ = ["FLAG", "Entries", "enter_url", "router", "served_entries", "words"]
