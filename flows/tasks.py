"""The Prefect side of :class:`arena.core.runner.Runner`: every step a task.

:class:`PrefectRunner` runs a step as a Prefect task named by the step's run name template
(``play-momentum``, ``day-2026-10-01``), so the flows hold no logic of their own: they hand this
runner to the same pipeline functions the command line runs. Tasks are not cached (every step is
idempotent by itself: the ledger records each cycle once) and not retried (a model call retries
its own transient errors; a failed step fails the flow). :func:`provider_slot` holds a contestant's
model provider's global concurrency slot while it plays; :func:`ledger_slot` the season's ledger
slot while a cycle or a monitor window writes; :func:`flow_effects` gives a job all of them
at once. :func:`run_name` names a flow's runs by season and scheduled time, :func:`tag_run` tags
them with their season and job.
"""

from __future__ import annotations

import datetime as dt
import inspect
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import cache, partial
from typing import Any, TypeVar

from prefect import Task, task
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.context import FlowRunContext
from prefect.exceptions import ObjectNotFound
from prefect.runtime import flow_run
from prefect.task_runners import TaskRunner

from arena.agents.base import Contestant
from arena.agents.roster import ContestantSpec, model_provider
from arena.app.effects import Effects
from arena.app.handle import SeasonHandle, as_lake
from arena.app.params import clock_of
from arena.core.environment import setting
from arena.core.errors import ArenaError
from arena.core.runner import Retry, Runner, retry_of
from arena.data.lake import Lake
from arena.pipeline.season_config import LOCAL_DASK, SeasonConfig, find_season, season_slug
from arena.pipeline.warehouse import DBT_PROJECT, Invoke, profiles_dir

T = TypeVar("T")


slug = season_slug  # kebab-case names of Prefect objects (deployments, blocks, limits)


NO_SEASON = "no season"  # what a run's name says of a lake that holds no season


def season_of(lake_root: object) -> str | None:
    """The id of the season the lake ``lake_root`` holds (a flow's parameter: a path, or None
    for ``$ARENA_LAKE``); None when it holds none or cannot be read: a run's name and tags never
    fail it (the run itself says what is wrong with its lake)."""
    try:
        season = find_season(as_lake(lake_root))
    except (ArenaError, OSError, ValueError):
        return None
    return None if season is None else season.id


def when(at: dt.datetime) -> str:
    """A time as a run's name writes it: UTC, to the minute (``2025-11-29 16:01``)."""
    return f"{at.astimezone(dt.UTC):%Y-%m-%d %H:%M}"


def run_name() -> str:
    """A flow run's name: its season and its scheduled time, ``s1 2025-11-29 16:01`` (UTC; the
    UI shows the flow, the job, beside it), the same for a scheduled and a manual run; a lake
    without a season reads ``no season 2025-11-29 16:01``. (A cycle run is named after the cycle
    it plays, :func:`arena.flows.cycle.cycle_run_name`, and a replay after its days.)"""
    season = season_of(flow_run.parameters.get("lake_root")) or NO_SEASON
    return f"{season} {when(flow_run.scheduled_start_time)}"


def run_tags(job: str, season_id: str | None) -> tuple[str, ...]:
    """A run's tags: ``season:<id>`` (what the season's alerts match) and ``job:<job>``, the
    tags the season's deployments give their runs."""
    return (*((f"season:{season_id}",) if season_id else ()), f"job:{job}")


def tag_run(job: str, season_id: str | None) -> None:
    """Add :func:`run_tags` to the current flow run's tags (kept with those it has): a run
    started by hand or from Python is found by the same filters, and alerted on, as a
    deployment's run. Outside a flow run, nothing."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return
    run = context.flow_run
    tags = [*run.tags, *(t for t in run_tags(job, season_id) if t not in run.tags)]
    if tags != list(run.tags):
        with get_client(sync_client=True) as client:
            client.update_flow_run(run.id, tags=tags)
        run.tags = tags


def _retry_condition(policy: Retry) -> Callable[[Any, Any, Any], bool]:
    """Prefect's retry condition for a step's :class:`~arena.core.runner.Retry`."""

    def retry_if(task: Any, task_run: Any, state: Any) -> bool:
        try:
            state.result()
        except Exception as exc:
            return policy.when(exc)
        return False

    return retry_if


@cache
def as_task(fn: Callable[..., Any]) -> Task:
    """The Prefect task of a step (one per step function), retried as the step says."""
    policy = retry_of(fn)
    retries: dict[str, Any] = {} if policy is None else {
        "retries": len(policy.delays), "retry_delay_seconds": list(policy.delays),
        "retry_condition_fn": _retry_condition(policy)}
    return task(fn, name=fn.__name__.replace("_", "-"), cache_policy=NO_CACHE,
                task_run_name=getattr(fn, "run_name", None), **retries)


class PrefectRunner:
    """Runs pipeline steps as tasks of the current flow run; a fan-out submits one task per item
    to the flow's task runner (threads), or to a Dask cluster when ``dask`` names one (a
    scheduler address, or ``"local"``: a cluster of this machine's cores for the fan-out; the
    cycle's and the publication's runner, :func:`season_runner`). A fan-out waits for every
    item it started before it raises a failure."""

    def __init__(self, dask: str | None = None) -> None:
        self.dask = dask

    @property
    def distributes(self) -> bool:
        """Whether a fan-out leaves this process (the luck tables are then fanned out too)."""
        return self.dask is not None

    def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        return as_task(fn)(*args, **kwargs)

    def map(self, fn: Callable[..., T], items: Sequence[Any], /, *args: Any,
            capture: tuple[type[Exception], ...] = (), **kwargs: Any) -> list[T]:
        if self.dask is None:
            futures = [as_task(fn).submit(item, *args, **kwargs) for item in items]
            return _results(futures, capture)
        signature = inspect.signature(fn)
        with dask_task_runner(self.dask, len(items)) as runner:
            futures = [runner.submit(as_task(fn),
                                     parameters=signature.bind(item, *args, **kwargs).arguments)
                       for item in items]
            return _results(futures, capture)


def _results(futures: Sequence[Any], capture: tuple[type[Exception], ...]) -> list[Any]:
    """Every task's result, in order (an exception of ``capture`` it ended with as its result);
    the first other failure is raised once every task has finished."""
    out: list[Any] = []
    failure: BaseException | None = None
    for future in futures:
        try:
            out.append(future.result())
        except capture as exc:
            out.append(exc)
        except Exception as exc:
            failure = failure or exc
            out.append(None)
    if failure is not None:
        raise failure
    return out


def season_runner(season: SeasonConfig) -> PrefectRunner:
    """The runner of a season's cycles and publications: its contestants and luck tables fanned
    out to the season's Dask cluster (its ``dask``, or ``$ARENA_DASK`` for a season already
    running), else to the flow's threads. Ingests and replays keep to the flow's threads."""
    return PrefectRunner(dask=season.dask or setting("dask"))


def dask_task_runner(address: str, items: int) -> TaskRunner:
    """prefect-dask's task runner on the cluster at ``address``, or on a local cluster of one
    single-threaded worker process per core, at most one per item (``"local"``: the steps run
    in other processes, as on other machines, so what they are sent must pickle)."""
    from prefect_dask import DaskTaskRunner

    if address == LOCAL_DASK:
        workers = max(1, min(items, os.cpu_count() or 2))
        return DaskTaskRunner(cluster_kwargs={"n_workers": workers,
                                              "threads_per_worker": 1, "processes": True,
                                              "dashboard_address": None})
    return DaskTaskRunner(address=address)


def provider_limit(contestant: Contestant | ContestantSpec) -> str | None:
    """The concurrency limit a contestant's (or roster entry's) model calls count against
    (None: no model)."""
    provider = model_provider(getattr(contestant, "spec", contestant))
    return None if provider is None else f"model-provider-{provider}"


def ensure_limits(contestants: Sequence[Contestant | ContestantSpec]) -> None:
    """Create (or resize) the providers' global concurrency limits before the tasks need them:
    ``$ARENA_PROVIDER_CONCURRENCY`` slots each; unset, there is no limit to create and every
    contestant's call starts at once."""
    slots = setting("provider_concurrency")
    if slots is None:
        return
    names = {name for c in contestants if (name := provider_limit(c))}
    with get_client(sync_client=True) as client:
        for name in sorted(names):
            client.upsert_global_concurrency_limit_by_name(name, slots)


def ledger_limit(season_id: str) -> str:
    """The global concurrency limit a season's ledger writers share (one slot)."""
    return f"ledger-{slug(season_id)}"


def ledger_slot(season_id: str) -> AbstractContextManager[object]:
    """The season's ledger slot, created with one slot if missing, held while a cycle or a
    monitor window runs: the two never write the same contestant at once (the ledger's own
    per-contestant lock guards the command line the same way; the slot also orders the runs in
    the UI, the second waiting for the first)."""
    name = ledger_limit(season_id)
    with get_client(sync_client=True) as client:
        try:
            client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            client.upsert_global_concurrency_limit_by_name(name, 1)
    return concurrency(name, occupy=1, strict=True)


def provider_slot(contestant: Contestant) -> AbstractContextManager[object]:
    """One slot of the contestant's provider limit, held while it plays (none: no model, or
    ``$ARENA_PROVIDER_CONCURRENCY`` unset)."""
    limit = provider_limit(contestant)
    if limit is None or setting("provider_concurrency") is None:
        return nullcontext()
    return concurrency(limit, occupy=1, strict=True)


def prefect_dbt_invoke(lake: Lake) -> Invoke:
    """prefect-dbt's runner for ``dbt build``: each dbt node becomes a task of the flow run, its
    log lines plain and under the node's task name (:mod:`arena.flows.dbt_runner`), and a
    failed model or test raises (:class:`arena.pipeline.warehouse.MartsError`)."""
    from dbt_common.events.base_types import EventLevel
    from prefect_dbt import PrefectDbtSettings

    from arena.flows.dbt_runner import NamedNodeRunner

    # explicit settings: by default the runner derives dbt's log level from Prefect's, and
    # Prefect's "WARNING" is not a level dbt knows ("warn")
    settings = PrefectDbtSettings(project_dir=DBT_PROJECT, profiles_dir=profiles_dir(lake),
                                  log_level=EventLevel.INFO)
    return NamedNodeRunner(settings=settings, raise_on_failure=True).invoke


def flow_effects(handle: SeasonHandle | None = None, *, now: str | None = None,
                 runner: Runner | None = None, invoke: Invoke | None = None) -> Effects:
    """A flow run's :class:`~arena.app.effects.Effects`: the clock (``now``: a rehearsal's
    fixed time), its steps as tasks (``runner``; default the season's: threads, or its Dask
    cluster), the run's logger hearing progress, the season's one-slot ledger limit held while
    it records, each model provider's global limit held while a contestant calls, and dbt run
    by ``invoke`` (None: dbt's own runner in the flow's process)."""
    from prefect import get_run_logger

    if runner is None:
        runner = season_runner(handle.config) if handle is not None else PrefectRunner()
    hold = nullcontext if handle is None else partial(ledger_slot, handle.id)
    return Effects(clock=clock_of(now), runner=runner, progress=get_run_logger().info,
                   hold=hold, slot=provider_slot, invoke=invoke)
