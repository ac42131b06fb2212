"""Prefect flow: one live monitor tick of the season (every 15 minutes on a schedule) - the
monitor job (:func:`arena.app.monitor.monitor`), the same as ``arena monitor``: the held symbols'
15-minute bars first, then every open position's invalidation level checked against the bars
since its last window, each window recorded exactly once, holding the season's ledger slot
(shared with the cycle flow). A tick that cannot be sound (in the future, already watched, bars
that do not reach it) is refused before anything is recorded and fails the run; a closed season,
or one with no cycle played yet, has nothing to watch and completes. A run is named after its
season and scheduled time (``s1 2025-11-29 16:33``) and tagged ``season:<id>``, ``job:monitor``.
"""

from __future__ import annotations

from prefect import flow, get_run_logger

from arena.app.handle import SeasonHandle
from arena.app.monitor import monitor
from arena.app.params import optional_time
from arena.core.settings import prepare_process
from arena.flows.command import run_from_command_line
from arena.flows.tasks import flow_effects, run_name, season_of, tag_run
from arena.pipeline.live.closed import OffSeason


@flow(name="monitor", flow_run_name=run_name)
def monitor_flow(lake_root: str | None = None, at: str | None = None, now: str | None = None,
                 ingest: bool = True) -> dict:
    """One tick at ``at`` (default: now); ``ingest``: the held symbols' bars first. ``now``:
    the wall clock (default: the real one; a rehearsal injects its own)."""
    prepare_process()
    tag_run("monitor", season_of(lake_root))
    logger = get_run_logger()
    handle = SeasonHandle.open(lake_root)
    try:
        tick = monitor(handle, at=optional_time(at, "at"), ingest=ingest,
                       effects=flow_effects(handle, now=now))
    except OffSeason as exc:  # a closed season: nothing to watch, not a failure
        logger.info("no monitor tick: %s", exc)
        return {"season": handle.id, "end": None, "automatic_closes": 0}
    for source, why in tick.ingest_problems.items():  # the monitor then names the bars missing
        logger.warning("ingest of the held symbols' 15-minute bars from %s: %s", source, why)
    if tick.end is None:
        logger.info("season %s: no cycle played yet, nothing to watch", handle.id)
        return {"season": handle.id, "end": None, "automatic_closes": 0}
    logger.info("monitor of season %s up to %s: %d symbol(s) held, %d automatic close(s)",
                handle.id, tick.end, len(tick.held), tick.automatic_closes)
    return {"season": handle.id, "end": tick.end.isoformat(), "held": tick.held,
            "contestants": tick.contestants, "automatic_closes": tick.automatic_closes}


if __name__ == "__main__":
    print(run_from_command_line(monitor_flow))
