"""Prefect flow: one live monitor tick of the season (every 15 minutes on a schedule).

It ingests the 15-minute bars of the symbols any contestant holds, from each symbol's season
provider, up to the tick (for Yahoo's stocks a watch run of their own:
:func:`arena.pipeline.season_ingest.ingest_watched`), then runs
:func:`arena.pipeline.live.run_monitor` - the same step as ``arena monitor``: every open
position's invalidation level checked against the bars since its last window, each window
recorded exactly once. A tick that cannot be sound (in the future,
bars that do not reach it, a closed season) is refused before anything is recorded and fails
the run; a season with no cycle played yet has nothing to watch and completes. The monitor holds
the season's ledger slot (shared with the cycle flow) while it records.
"""

from __future__ import annotations

import os

import pandas as pd
from prefect import flow, get_run_logger

from arena.core.sessions import utc
from arena.core.settings import prepare_process
from arena.data.lake import Lake
from arena.flows.tasks import ledger_slot, run_name
from arena.ledger.store import Ledger
from arena.pipeline.live import (
    MonitorRefused,
    OffSeason,
    closed_at,
    monitor_end,
    run_monitor,
)
from arena.pipeline.season_config import load_season, season_contestants
from arena.pipeline.season_ingest import held_symbols, ingest_watched


@flow(name="monitor", flow_run_name=run_name("monitor"))
def monitor_flow(lake_root: str | None = None, at: str | None = None, now: str | None = None,
                 ingest: bool = True) -> dict:
    """One tick at ``at`` (default: now): ingest the held symbols' bars, then the monitor.
    ``now``: the wall clock (default: the real one; a rehearsal injects its own)."""
    prepare_process()
    logger = get_run_logger()
    lake = Lake(lake_root)
    now_ts = utc(now) if now else pd.Timestamp.now(tz="UTC")
    tick = utc(at) if at else now_ts
    season = load_season(lake)
    closed = closed_at(lake)
    if closed is not None:  # nothing to watch, and nothing to ingest for it
        logger.info("no monitor tick: season %s was closed at %s", season.id, closed)
        return {"season": season.id, "end": None, "automatic_closes": 0}
    contestants, _ = season_contestants(lake, os.environ, at=tick)
    ledger = Ledger(lake)
    end = monitor_end(season, ledger, tick)
    if end is None:
        logger.info("season %s: no cycle played yet, nothing to watch", season.id)
        return {"season": season.id, "end": None, "automatic_closes": 0}
    held = held_symbols(ledger)
    if ingest and held:
        for source, why in ingest_watched(lake, season, held, end=end, now=now_ts).items():
            # the monitor then says which bars are missing
            logger.warning("ingest of the held symbols' 15-minute bars from %s: %s", source, why)
    try:
        with ledger_slot(season.id):  # never beside the season's cycle
            run = run_monitor(lake, season, contestants, tick, now=now_ts)
    except OffSeason as exc:  # a closed season: nothing to watch, not a failure
        logger.info("no monitor tick: %s", exc)
        return {"season": season.id, "end": None, "automatic_closes": 0}
    except MonitorRefused as exc:
        logger.error("monitor tick %s refused, nothing recorded: %s", tick, exc)
        raise
    logger.info("monitor of season %s up to %s: %d symbol(s) held, %d automatic close(s)",
                season.id, run.end, len(run.held), run.automatic_closes)
    return {"season": season.id, "end": run.end.isoformat(), "held": run.held,
            "automatic_closes": run.automatic_closes}


if __name__ == "__main__":
    print(monitor_flow())
