"""Prefect flow: the season's daily decision cycle, one task per contestant.

The flow runs :func:`arena.pipeline.live.play_season_cycle` - the same steps as ``arena cycle``:
the lake's season config decides the providers, the roster and the schedule; a cycle that is not
sound (off schedule, out of order, on a stale market, a lake without the season) is refused
before anything is recorded and fails the run - with a
:class:`~arena.flows.tasks.PrefectRunner`: the market is one task, every contestant plays in a task
of its own (a bounded thread pool, so one slow model never holds the others back), reverse
contestants after the others. Contestants of one model provider share a strict Prefect global
concurrency limit (``model-provider-<provider>``, ``$ARENA_PROVIDER_CONCURRENCY`` slots, default
4; created by the flow if missing). The cycle holds the season's ledger slot (``ledger-<season>``,
one slot) shared with the monitor flow, so a cycle and a monitor window never write at once.
Runs are named by job and scheduled time (``cycle-2026-10-01-1610``). A table artifact shows each contestant's outcome; its
description says whose prices the cycle ran on (SYNTHETIC for the embedded default). A contestant
that failed (its model unreachable: nothing recorded, see :mod:`arena.engine.outcomes`) fails the
flow run after every other contestant has played and the artifact is written: never green.
"""

from __future__ import annotations

import os

import pandas as pd
from prefect import flow, get_run_logger
from prefect.artifacts import create_table_artifact
from prefect.task_runners import ThreadPoolTaskRunner

from arena.core.sessions import utc
from arena.core.settings import prepare_process
from arena.data.lake import Lake
from arena.data.providers import provider_note
from arena.engine.outcomes import FAILED, CycleOutcome
from arena.flows.tasks import (
    PrefectRunner,
    ensure_limits,
    ledger_slot,
    provider_slot,
    run_name,
)
from arena.pipeline.live import (
    LIVE_PLAYERS,
    CycleRefused,
    OffSeason,
    PublishError,
    current_cycle,
    play_season_cycle,
    publish_season,
)
from arena.pipeline.season_config import load_season, season_contestants
from arena.scoring.asset_luck import DEFAULT_PLAYERS

CONTESTANT_WORKERS = 8


class CycleFailed(RuntimeError):
    """Some contestant's cycle could not be played (nothing recorded for it); the others were."""


@flow(name="cycle", flow_run_name=run_name("cycle"),
      task_runner=ThreadPoolTaskRunner(max_workers=CONTESTANT_WORKERS))
def cycle_flow(at: str | None = None, lake_root: str | None = None, backfill: bool = False,
               retry: bool = False, force_time: bool = False, now: str | None = None,
               publish: bool = True) -> list[dict]:
    """Run the season's cycle at ``at`` (default: the season's current cycle) for its roster;
    ``backfill``: a missed cycle (only while no later one exists); ``retry``: a cycle played
    before, for the contestants without a record; ``now``: the wall clock (default: the real
    one; a rehearsal injects its own). ``publish``: after a cycle every contestant played,
    rebuild the season's tables, marts and report from the cycles so far (after the season's
    last cycle, at full size, and close the season)."""
    prepare_process()
    logger = get_run_logger()
    lake = Lake(lake_root)
    now_ts = utc(now) if now else pd.Timestamp.now(tz="UTC")
    season = load_season(lake)
    try:
        at_ts = utc(at) if at else current_cycle(season, now_ts)
    except OffSeason as exc:  # before the season: a scheduled run has nothing to do
        logger.info("no cycle: %s", exc)
        return []
    contestants, skipped = season_contestants(lake, os.environ,
                                              call_timeout=season.call_timeout_s, at=at_ts)
    for item in skipped:
        logger.warning("contestant %s", item)
    ensure_limits(contestants)
    try:
        with ledger_slot(season.id):  # never beside a monitor window of the season
            run = play_season_cycle(lake, season, contestants, at_ts, now=now_ts,
                                    backfill=backfill, retry=retry, force_time=force_time,
                                    runner=PrefectRunner(dask=season.dask),
                                    slot=provider_slot)
    except OffSeason as exc:
        if at or backfill or retry:  # asked for by an operator: say no (and alert)
            logger.error("cycle %s refused, nothing recorded: %s", at_ts, exc)
            raise
        logger.info("no cycle: %s", exc)  # a scheduled run of a closed season: nothing to do
        return []
    except CycleRefused as exc:
        logger.error("cycle %s refused, nothing recorded: %s", at_ts, exc)
        raise
    outcomes = run.outcomes
    rows = [o.as_dict() for o in outcomes] + [  # roster skips are not played, so not recorded
        {"contestant": s.spec.name, "recorded": "not recorded", "status": CycleOutcome.SKIPPED.value,
         "error": s.reason} for s in skipped]
    notes = [provider_note(p) for p in sorted(set(season.providers.values()))]
    create_table_artifact(rows, key="cycle-outcomes",
                          description=f"decision cycle {at_ts.isoformat()} of season {season.id} "
                                      f"({'; '.join(notes)})")
    for cycle, who in run.forfeits:
        logger.warning("contestant %s recorded as forfeited at %s (no answer by this cycle)",
                       who, cycle)
    if run.plan.stale:
        logger.warning("cycle %s: stale, not traded: %s", at_ts, ", ".join(run.plan.stale))
    logger.info("cycle %s: %d contestants played, %d skipped, %d automatic closes", at_ts,
                len(outcomes), len(skipped), run.automatic_closes)
    failed = [r for r in rows if r["status"] == FAILED]
    if publish and not failed:
        final = at_ts == season.last
        try:
            out = publish_season(lake, season, final=final,
                                 runner=PrefectRunner(dask=season.dask),
                                 players=DEFAULT_PLAYERS if final else LIVE_PLAYERS,
                                 progress=logger.info)
            logger.info("season %s published: %s%s", season.id, out.report,
                        "; the season is closed" if final else "")
        except PublishError as exc:
            logger.info("not published yet: %s", exc)
    if failed:
        for r in failed:
            logger.error("contestant %s failed, nothing recorded: %s", r["contestant"], r["error"])
        raise CycleFailed(f"cycle {at_ts.isoformat()}: {len(failed)} contestant(s) failed, nothing "
                          "recorded for them: " + "; ".join(f"{r['contestant']}: {r['error']}"
                                                           for r in failed))
    return rows


if __name__ == "__main__":
    for row in cycle_flow():
        print(row)
