"""Prefect flow: the daily decision cycle, one task per contestant.

The market is built once; every contestant plays in its own task (a bounded thread pool, so one
slow model never holds the others back), reverse contestants after the one they mirror. Each task
records its contestant's cycle in the ledger exactly once: re-running the flow for the same cycle
executes nothing twice. Model calls retry transient errors inside the contestant (429, 5xx,
timeouts), so the tasks themselves do not retry. Contestants of one model provider share a strict
Prefect global concurrency limit (``model-provider-<provider>``, ``$ARENA_PROVIDER_CONCURRENCY``
slots, default 4; created by the flow if missing), so a provider is never sent more concurrent
contestants than it allows. A table artifact shows each contestant's outcome; its description
says whose prices the cycle ran on (SYNTHETIC for the embedded default). A contestant that failed
(its model unreachable: nothing recorded, see :mod:`arena.engine.outcomes`) fails the flow run
after every other contestant has played and the artifact is written: never green.
"""

from __future__ import annotations

import os

import pandas as pd
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.task_runners import ThreadPoolTaskRunner

from arena.agents.base import Contestant
from arena.agents.factory import build_contestant
from arena.agents.roster import is_loopback, load_roster
from arena.core.sessions import utc
from arena.core.universe import Universe, load_universe
from arena.data.lake import Lake
from arena.data.providers import provider_note
from arena.engine.outcomes import FAILED, CycleOutcome
from arena.ledger.store import Ledger
from arena.market.types import MarketData
from arena.pipeline.cycle import Outcome, cycle_market, play_safely, secret_names, split_mirrors

CONTESTANT_WORKERS = 8


class CycleFailed(RuntimeError):
    """Some contestant's cycle could not be played (nothing recorded for it); the others were."""
PROVIDER_CONCURRENCY_ENV = "ARENA_PROVIDER_CONCURRENCY"


def provider_limit(contestant: Contestant) -> str | None:
    """The concurrency limit a contestant's model calls count against (None: no model)."""
    spec = getattr(contestant, "spec", None)
    model = getattr(spec, "model", None)
    if not model:
        return None
    provider = "local" if is_loopback(spec.api_base) else model.split("/", 1)[0]
    return f"model-provider-{provider}"


def ensure_limits(names: set[str]) -> None:
    """Create (or resize) the providers' global concurrency limits before the tasks need them."""
    slots = int(os.environ.get(PROVIDER_CONCURRENCY_ENV, "4"))
    with get_client(sync_client=True) as client:
        for name in sorted(names):
            client.upsert_global_concurrency_limit_by_name(name, slots)


@task(cache_policy=NO_CACHE, task_run_name="play-{contestant.name}")
def play_contestant(contestant: Contestant, market: MarketData, ledger: Ledger,
                    universe: Universe, at: pd.Timestamp,
                    candidates: tuple[str, ...] = ()) -> Outcome:
    """Play and record one contestant's cycle (holding a slot of its provider's limit)."""
    limit = provider_limit(contestant)
    if limit is None:
        return play_safely(contestant, market, ledger, universe, at, candidates=candidates)
    with concurrency(limit, occupy=1, strict=True):
        return play_safely(contestant, market, ledger, universe, at, candidates=candidates)


def cycle_at(now: pd.Timestamp) -> pd.Timestamp:
    """The latest 16:00 UTC cycle time at or before ``now``."""
    today = now.normalize() + pd.Timedelta(hours=16)
    return today if today <= now else today - pd.Timedelta(days=1)


@flow(name="cycle", task_runner=ThreadPoolTaskRunner(max_workers=CONTESTANT_WORKERS))
def cycle_flow(at: str | None = None, roster: str | None = None, lake_root: str | None = None,
               provider: str = "synthetic") -> list[dict]:
    """Run the decision cycle at ``at`` (default: the latest 16:00 UTC) for the roster."""
    logger = get_run_logger()
    at_ts = utc(at) if at else cycle_at(pd.Timestamp.now(tz="UTC"))
    universe = load_universe()
    runnable, skipped = load_roster(roster).available(os.environ)
    for item in skipped:
        logger.warning("contestant %s", item)
    contestants = [build_contestant(spec) for spec in runnable]
    ensure_limits({name for c in contestants if (name := provider_limit(c))})
    lake = Lake(lake_root)
    ledger = Ledger(lake, secret_names=secret_names(contestants))
    market = cycle_market(lake, provider, universe, contestants, at_ts, ledger)
    first, mirrors = split_mirrors(contestants)
    outcomes = [f.result() for f in [play_contestant.submit(c, market, ledger, universe, at_ts)
                                     for c in first]]
    names = tuple(c.name for c in first)
    outcomes += [play_contestant(m, market, ledger, universe, at_ts, names) for m in mirrors]
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
