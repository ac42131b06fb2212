"""A small live season's lake: AAPL and SOL ingested up to Friday 2025-11-21 16:00 UTC with the
clock at 16:00, so it holds only the bars closed by then (as a live lake does, unlike the
``full`` lake of :mod:`tests.market_lakes`, which also holds later bars). Built once per test
session (about 4 s); each test gets its own copy.

By the calendar, that lake is the lake a live season holds at any minute of SOL's hour
16:00-16:59 (its 16:00 bar closes at 17:00) and of AAPL's hour 15:30-16:29 (its 15:30 bar closes
at 16:30).
"""

from __future__ import annotations

import shutil

from arena.core.universe import Universe
from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from tests.conftest import ts

SYMBOLS = ("AAPL", "SOL")
CUT = ts("2025-11-21 16:00")  # the ingest's end and clock: a Friday, NYSE in session
START = ts("2025-11-10")
HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"

_built: dict[str, Lake] = {}


def live_lake(tmp_path_factory, universe: Universe, dest, *, start: str | None = None,
              days: int = 1) -> Lake:
    """A copy at ``dest`` of the lake ingested up to :data:`CUT`, holding a season over
    :data:`SYMBOLS` with a house contestant: by default the one day of Friday's 16:00 cycle;
    ``start`` and ``days``: a season of 16:00 cycles from ``start`` (ending by Friday's for
    a lake that holds its bars)."""
    from arena.pipeline.season_config import init_season, make_season

    if "lake" not in _built:
        built = Lake(tmp_path_factory.mktemp("live_lake") / "lake")
        run_ingest(SyntheticProvider(), universe.select(SYMBOLS), start=START, end=CUT,
                   lake=built, now=CUT)
        _built["lake"] = built
    lake = Lake(dest)
    shutil.copytree(_built["lake"].root, lake.root)
    roster = lake.root.parent / f"{lake.root.name}-roster.yaml"
    roster.write_text(HOUSE, encoding="utf-8")
    init_season(lake, make_season(start or CUT.date(), days, SYMBOLS), roster=roster)
    return lake
