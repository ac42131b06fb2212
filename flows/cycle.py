"""Prefect flow: the season's decision cycle - the cycle job (:func:`arena.app.cycle.cycle`),
the same as ``arena cycle``, with every contestant's turn a task of its own, all started at once
(threads, or the season's Dask cluster) and reverse contestants after the others.

A scheduled run plays the season's current cycle, the missed ones first (``missed="backfill"``,
within the season's deadline); before the season or once it is closed it has nothing to do and
completes. When ``$ARENA_PROVIDER_CONCURRENCY`` is set, contestants of one model provider share a
strict global concurrency limit of that many slots (``model-provider-<provider>``; unset: no
limit, distinct providers never wait for each other); the cycle holds
the season's one-slot ledger limit while it records, never beside a monitor window. A run is
named after its season and the cycle it plays (``s1 2026-11-30``, ``s1 2026-11-30 backfill``)
and tagged ``season:<id>``, ``job:cycle``; a table artifact shows each contestant's outcome. A
contestant that could not be played fails the run after every other contestant has played and
the artifact is written: never green.
"""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.runtime import flow_run
from prefect.task_runners import ThreadPoolTaskRunner

from arena.app.cycle import (
    BackfillIncomplete,
    CycleRequest,
    CycleResult,
    Kind,
    Missed,
    cycle,
    cycle_time,
)
from arena.app.handle import SeasonHandle
from arena.app.params import clock_of, optional_time
from arena.core.settings import prepare_process
from arena.flows.artifacts import cycle_artifacts, cycle_rows, report_link
from arena.flows.command import run_from_command_line
from arena.flows.tasks import NO_SEASON, ensure_limits, flow_effects, season_of, tag_run, when
from arena.pipeline.live.closed import OffSeason


def _kind(backfill: bool, retry: bool) -> Kind:
    return Kind.BACKFILL if backfill else Kind.RETRY if retry else Kind.CYCLE


def cycle_run_name() -> str:
    """A cycle run named after its season and the cycle it plays, ``s1 2025-11-29`` (a backfill
    or a retry says so: ``s1 2025-11-29 backfill``), whenever it runs; a run with no cycle to
    play (before or after the season, a bad parameter) by its scheduled time, ``s1 no cycle
    2025-11-20 16:10``."""
    p = flow_run.parameters
    kind = _kind(bool(p.get("backfill")), bool(p.get("retry")))
    try:
        handle = SeasonHandle.open(p.get("lake_root"))
        at = cycle_time(handle, CycleRequest(kind, optional_time(p.get("at"), "at")),
                        clock_of(p.get("now"))())
    except Exception:  # no season, off season, a bad parameter: the run itself says why
        return (f"{season_of(p.get('lake_root')) or NO_SEASON} no cycle "
                f"{when(flow_run.scheduled_start_time)}")
    return f"{handle.id} {at:%Y-%m-%d}" + ("" if kind is Kind.CYCLE else f" {kind.value}")


@flow(name="cycle", flow_run_name=cycle_run_name,
      task_runner=ThreadPoolTaskRunner())  # unbounded: every contestant's call at once
def cycle_flow(at: str | None = None, lake_root: str | None = None, backfill: bool = False,
               retry: bool = False, force_time: bool = False, now: str | None = None,
               publish: bool = True, missed: str = Missed.BACKFILL.value) -> list[dict]:
    """Run the season's cycle at ``at`` (default: the current one; ``missed``: what to do with
    earlier missed cycles, see :mod:`arena.app.cycle`); ``backfill``: a missed cycle (with the
    default ``missed``, the missed cycles before it are played first, in order);
    ``retry``: a cycle played before, for the contestants without a record; ``now``: the wall
    clock (a rehearsal injects its own); ``publish``: rebuild the season's tables, marts and
    report after a cycle every contestant played."""
    prepare_process()
    tag_run("cycle", season_of(lake_root))
    logger = get_run_logger()
    handle = SeasonHandle.open(lake_root)
    ensure_limits(list(handle.roster()))
    try:
        result = cycle(handle, CycleRequest(_kind(backfill, retry), optional_time(at, "at"),
                                            Missed(missed), force_time, publish),
                       flow_effects(handle, now=now))
    except OffSeason as exc:
        if at or backfill or retry:  # asked for by an operator: say no (and alert)
            raise
        logger.info("no cycle: %s", exc)  # a scheduled run before or after the season
        return []
    except BackfillIncomplete as exc:  # the missed cycles it did play are shown, then it fails
        for played in exc.backfilled:
            cycle_artifacts(played, handle.config)
        raise
    cycle_artifacts(result, handle.config)
    _log(result, handle, logger)
    result.raise_for_failures()
    if result.publication is not None and result.publication.error is not None:
        raise result.publication.error  # the cycle is recorded and shown; its marts are not
    return [row for row in cycle_rows(result) if row["cycle_at"] == result.at.isoformat()]


def _log(result: CycleResult, handle: SeasonHandle, logger) -> None:
    for played in result.backfilled:
        logger.warning("missed cycle %s backfilled first: %d played", played.at,
                       len(played.played))
    for at, who in (*result.missed_forfeits, *result.run.forfeits):
        logger.warning("contestant %s recorded as forfeited at %s", who, at)
    for item in result.skipped:
        logger.warning("contestant %s", item)
    if result.run.plan.stale:
        logger.warning("cycle %s: stale, not traded: %s", result.at, ", ".join(result.run.plan.stale))
    logger.info("cycle %s: %d contestants played, %d already recorded, %d skipped, %d failed, "
                "%d automatic closes", result.at, len(result.played), len(result.already),
                len(result.skipped), len(result.failed), result.run.automatic_closes)
    published = result.publication
    if published is not None and published.outputs is not None:
        logger.info("season %s published: %s%s", result.season, published.report,
                    "; the season is closed" if published.closed else "")
        report_link(published.report, handle.config)
    elif published is not None and published.not_yet is not None:
        logger.info("not published yet: %s", published.not_yet)
    elif published is not None:
        logger.error("the cycle is recorded, but its publication failed: %s", published.error)


if __name__ == "__main__":
    for row in run_from_command_line(cycle_flow):
        print(row)
