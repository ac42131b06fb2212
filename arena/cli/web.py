"""``arena web``: the arena's site, served live from a season's (or a league's) published marts."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from arena.cli._options import Port

Root = Annotated[str | None, Parameter(
    help="a season's lake, or a league folder of season lakes (default: $ARENA_LAKE or "
         "./data_lake)")]


def web(*, lake: Root = None, host: str = "127.0.0.1", port: Port = 8780,
        proxied: bool = False, entries: bool = False) -> int:
    """Serve the site: the live leaderboard, a page per contestant, trade, asset and day, and a
    JSON API (OpenAPI at /openapi.json), until Ctrl-C. A publication shows at the next request.

    Parameters
    ----------
    host
        address to listen on (beyond loopback only with --proxied)
    proxied
        the site sits behind a reverse proxy that terminates TLS (README: the site behind a
        reverse proxy); trusts its X-Forwarded-* headers
    entries
        take people's positions through the site: each asset of a live season gets an entry
        page (/seasons/ID/enter/SYMBOL) where an entrant's key (arena entrant add) and a
        position slider record a single-asset position, as the MCP door's submit_position
        does; without it the site is read-only
    """
    from arena.data.lake import Lake
    from arena.doors.web import check_host, season_lakes, serve

    root = Lake(lake).root
    check_host(host, proxied)
    seasons = season_lakes(root)
    taking = "taking entries at /seasons/ID/enter/SYMBOL" if entries else "read-only"
    print(f"arena web: {len(seasons)} season{'s' if len(seasons) != 1 else ''} from {root} at "
          f"http://{host}:{port}/ ({taking}; the JSON API at /api/; Ctrl-C stops)", flush=True)
    serve(root, host=host, port=port, proxied=proxied, entries_open=entries)
    return 0
