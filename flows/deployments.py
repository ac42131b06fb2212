"""The season's deployments on Prefect: what ``arena serve`` runs (SPEC §9: operations).

:mod:`arena.app.serve` decides what is served (:func:`~arena.app.serve.season_jobs`: one
deployment per job, its schedule, tags and limit) and when a start is refused; this module is the
Prefect side of it (:class:`PrefectServer`): the deployments registered from those jobs, their
entrypoints by module path (``arena.flows.cycle:cycle_flow``), so a served run or a worker on
another machine finds the flow wherever the package is installed; the season's alerts; the
storage check; and Prefect's runner serving them until SIGINT or SIGTERM, after which it pauses
their schedules (a season stopped on purpose raises no Late alert; the next start resumes them).

:func:`deployed_season` is the build step of the repository's ``prefect.yaml``: ``prefect deploy
--all`` runs it before it registers anything, and templates every deployment with the season of
``$ARENA_LAKE`` (its tag ``season:<id>``, the lake as every run's ``lake_root``, the cycle's
hour), or stops with the refusal on one line.
"""

from __future__ import annotations

import sys

from arena.app.handle import SeasonHandle
from arena.app.serve import Job, pool_season
from arena.core.errors import ArenaError
from arena.data.persistence import Boot
from arena.pipeline.season_config import SeasonConfig


def _flow(entry: str):
    from importlib import import_module

    module, name = entry.split(":")
    return getattr(import_module(module), name)


def deployed_season() -> dict[str, object]:
    """``prefect.yaml``'s build step (``{{ season.id }}`` and the others in its deployments):
    the season :func:`arena.app.serve.pool_season` deploys - its ``id``, its ``lake`` (absolute)
    and its ``cycle_hour``. A refusal is one line on stderr and the error family's exit code
    (2: nothing registered), not a traceback."""
    try:
        handle = pool_season()
    except ArenaError as exc:
        print(f"prefect deploy: {exc.describe()}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    return {"id": handle.id, "lake": str(handle.lake.root.resolve()),
            "cycle_hour": handle.config.cycle_hour}


def to_deployments(jobs: list[Job]) -> list:
    """Prefect runner deployments of ``jobs``, their entrypoints by module path."""
    from prefect.deployments.runner import EntrypointType

    return [_flow(j.flow).to_deployment(
        name=j.name, cron=j.cron, parameters=j.parameters, tags=list(j.tags),
        description=j.description, concurrency_limit=j.concurrency_limit,
        entrypoint_type=EntrypointType.MODULE_PATH) for j in jobs]


class PrefectServer:
    """The season's deployments served by Prefect (:class:`arena.app.serve.DeploymentServer`)."""

    def __init__(self, *, limit: int | None = None) -> None:
        self.limit = limit

    def install_alerts(self, season: SeasonConfig, webhook: str) -> list[str]:
        from arena.flows.alerts import install_alerts

        return list(install_alerts(season.id, webhook,
                                   cycle_deadline_s=season.cycle_deadline_s).automations)

    def check_storage(self, handle: SeasonHandle) -> Boot:
        from prefect import tags

        from arena.flows.persistence import check_persistence

        with tags(f"season:{handle.id}", "job:storage"):  # a volatile lake fails it: an alert
            return check_persistence(handle.lake, handle.id)

    def serve(self, jobs: list[Job]) -> None:
        """Register ``jobs`` and run them when due, until SIGINT or SIGTERM: the served runs in
        progress are cancelled and the schedules paused (registering them again resumes
        them)."""
        from prefect import serve

        serve(*to_deployments(jobs), limit=self.limit, print_starting_message=False,
              pause_on_shutdown=True)
