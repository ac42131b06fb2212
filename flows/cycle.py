"""Prefect flow: the daily decision cycle, one task per contestant.

The flow runs :func:`arena.pipeline.cycle.run_cycle` - the same steps as ``arena cycle`` - with a
:class:`~arena.flows.tasks.PrefectRunner`: the market is one task, every contestant plays in a task
of its own (a bounded thread pool, so one slow model never holds the others back), reverse
contestants after the others. Contestants of one model provider share a strict Prefect global
concurrency limit (``model-provider-<provider>``, ``$ARENA_PROVIDER_CONCURRENCY`` slots, default
4; created by the flow if missing). A table artifact shows each contestant's outcome; its
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

from arena.agents.factory import contestants_from_roster
from arena.core.sessions import cycle_at, utc
from arena.core.settings import prepare_process
from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.data.providers import provider_note
from arena.engine.outcomes import FAILED, CycleOutcome
from arena.flows.tasks import PrefectRunner, ensure_limits, provider_slot
from arena.pipeline.cycle import run_cycle

CONTESTANT_WORKERS = 8


class CycleFailed(RuntimeError):
    """Some contestant's cycle could not be played (nothing recorded for it); the others were."""


@flow(name="cycle", task_runner=ThreadPoolTaskRunner(max_workers=CONTESTANT_WORKERS))
def cycle_flow(at: str | None = None, roster: str | None = None, lake_root: str | None = None,
               provider: str = "synthetic") -> list[dict]:
    """Run the decision cycle at ``at`` (default: the latest 16:00 UTC) for the roster."""
    prepare_process()
    logger = get_run_logger()
    at_ts = utc(at) if at else cycle_at(pd.Timestamp.now(tz="UTC"))
    contestants, skipped = contestants_from_roster(roster, os.environ)
    for item in skipped:
        logger.warning("contestant %s", item)
    ensure_limits(contestants)
    outcomes = run_cycle(Lake(lake_root), provider, load_universe(), contestants, at_ts,
                         runner=PrefectRunner(), slot=provider_slot)
    rows = [o.as_dict() for o in outcomes] + [  # roster skips are not played, so not recorded
        {"contestant": s.spec.name, "recorded": "not recorded", "status": CycleOutcome.SKIPPED.value,
         "error": s.reason} for s in skipped]
    create_table_artifact(rows, key="cycle-outcomes",
                          description=f"decision cycle {at_ts.isoformat()} "
                                      f"({provider_note(provider)})")
    logger.info("cycle %s: %d contestants played, %d skipped", at_ts, len(outcomes), len(skipped))
    failed = [r for r in rows if r["status"] == FAILED]
    if failed:
        raise CycleFailed(f"cycle {at_ts.isoformat()}: {len(failed)} contestant(s) failed, nothing "
                          "recorded for them: " + "; ".join(f"{r['contestant']}: {r['error']}"
                                                           for r in failed))
    return rows


if __name__ == "__main__":
    for row in cycle_flow():
        print(row)
