"""``arena lake market``: where the lake's market data lives."""

from __future__ import annotations

import cyclopts

from arena.cli._render import print_json

lake_app = cyclopts.App(name="lake", help="the lake's own settings: where its market data lives",
                        version_flags=[])


@lake_app.command
def market(location: str | None = None, /, *, lake: str | None = None,
           json: bool = False) -> int:
    """Show, or set, where the lake's market data (bars, funding, earnings) lives: its own
    folders (the default), another path, or an object-store URI such as s3://bucket/prefix.

    Parameters
    ----------
    location
        a path or URI (credentials and endpoint from the environment: AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL); only while the lake holds no market data
    lake
        lake root (default: $ARENA_LAKE or ./data_lake)
    json
        print the lake and its market as JSON
    """
    from arena.data.lake import Lake

    where = Lake(lake)
    if location is not None:
        print(f"the market data of {where.root} lives at "
              f"{where.set_market(location).describe()}")
    count = len(where.partitions())
    described = where.market.describe()
    if json:
        print_json({"lake": str(where.root), "market": described, "partitions": count})
    elif location is None:
        print(f"{where.root}: market data at {described} ({count} bar partitions)")
    return 0
