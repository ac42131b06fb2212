"""The season's scheduled deployments, served by ``arena serve`` (SPEC §9: operations).

One deployment per job of a live season, each with a kebab-case name that starts with the
season's id (:func:`arena.flows.tasks.slug`), tags (``season:<id>``, ``job:<job>``,
``provider:<name>``), runs named by job and scheduled time (:func:`arena.flows.tasks.run_name`;
a run the scheduler made but has not started yet still shows Prefect's random name) and a
concurrency limit of one (a run still going when the next is due makes the next wait, never run
beside it):

========  ========================  ====================================================
job       schedule (UTC)            what it runs
========  ========================  ====================================================
ingest    hourly at :01             :func:`arena.flows.ingest.ingest_flow`, one deployment
                                    per provider of the season (crypto and stocks apart)
monitor   every 15 minutes (:03)    :func:`arena.flows.monitor.monitor_flow`
cycle     daily at the cycle time   :func:`arena.flows.cycle.cycle_flow`, then the marts,
          plus 10 minutes           luck tables (2,000 players) and the daily report
publish   nightly at 00:30          :func:`arena.flows.publish.publish_flow`: the luck
                                    tables at full size (20,000 players), marts, report,
                                    then the lake copied to its mirror (if one is set)
========  ========================  ====================================================

The offsets leave the vendors the minute they need to serve a bar that just closed: the cycle at
16:00 runs at 16:10, after the 16:01 ingest brought the bar that closed at 16:00 (the cycle's
time is the season's, not the run's: :func:`arena.pipeline.live.current_cycle`). The cycle and
the monitor share the season's ledger slot, so a monitor window and a cycle never write at once.

The deployments name their entrypoints by module (``arena.flows.cycle:cycle_flow``), so a
served run or a worker on another machine finds the flow wherever the package is installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena.data.lake import Lake
from arena.flows.tasks import slug
from arena.pipeline.season_config import SeasonConfig

INGEST_MINUTE, MONITOR_MINUTE, CYCLE_DELAY_MINUTES = 1, 3, 10
PUBLISH_CRON = "30 0 * * *"


@dataclass(frozen=True)
class Job:
    """One deployment of a season: what ``arena serve`` registers and ``--list`` prints."""

    name: str  # the deployment's name: <season>-<job>[-<provider>]
    flow: str  # module:function of the flow
    cron: str  # UTC
    parameters: dict[str, Any]
    tags: tuple[str, ...]
    description: str
    concurrency_limit: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "flow": self.flow, "cron": self.cron, "timezone": "UTC",
                "parameters": self.parameters, "tags": list(self.tags),
                "concurrency_limit": self.concurrency_limit, "description": self.description}


def season_jobs(lake: Lake, season: SeasonConfig, mirror: str | None = None) -> list[Job]:
    """The season's deployments (see the module docstring), its lake as every run's lake;
    ``mirror``: where the nightly publish copies the lake (:mod:`arena.data.persistence`)."""
    root, name = str(lake.root.resolve()), slug(season.id)
    providers = sorted(set(season.providers.values()))
    base = (f"season:{season.id}",)
    every = tuple(f"provider:{p}" for p in providers)
    cycle_minute = CYCLE_DELAY_MINUTES
    jobs = [
        Job(f"{name}-ingest-{provider}", "arena.flows.ingest:ingest_flow",
            f"{INGEST_MINUTE} * * * *", {"source": provider, "lake_root": root},
            (*base, "job:ingest", f"provider:{provider}"),
            f"hourly: the season's {provider} bars up to the hour, validated and published")
        for provider in providers]
    jobs += [
        Job(f"{name}-monitor", "arena.flows.monitor:monitor_flow",
            f"{MONITOR_MINUTE}-59/15 * * * *", {"lake_root": root}, (*base, "job:monitor", *every),
            "every 15 minutes: the held symbols' bars, then the invalidation monitor"),
        Job(f"{name}-cycle", "arena.flows.cycle:cycle_flow",
            f"{cycle_minute} {season.cycle_hour} * * *", {"lake_root": root},
            (*base, "job:cycle", *every),
            f"daily: the decision cycle of {season.cycle_hour:02d}:00 UTC, then the marts, the "
            "luck tables (2,000 players) and the daily report"),
        Job(f"{name}-publish", "arena.flows.publish:publish_flow", PUBLISH_CRON,
            {"lake_root": root, **({"mirror": mirror} if mirror else {})},
            (*base, "job:publish", *every),
            "nightly: the luck tables at full size (20,000 players), the marts and the report"
            + (", then the lake copied to its mirror" if mirror else "")),
    ]
    return jobs


def _flow(entry: str):
    from importlib import import_module

    module, name = entry.split(":")
    return getattr(import_module(module), name)


def to_deployments(jobs: list[Job]) -> list:
    """Prefect runner deployments of ``jobs``, their entrypoints by module path."""
    from prefect.deployments.runner import EntrypointType

    return [_flow(j.flow).to_deployment(
        name=j.name, cron=j.cron, parameters=j.parameters, tags=list(j.tags),
        description=j.description, concurrency_limit=j.concurrency_limit,
        entrypoint_type=EntrypointType.MODULE_PATH) for j in jobs]


def serve_season(lake: Lake, jobs: list[Job], *, limit: int | None = None) -> None:
    """Register ``jobs`` and run them when due, until stopped (Ctrl-C or SIGTERM: the served
    runs in progress are cancelled). The schedules stay active on the server, so a run due
    while nothing serves it turns Late - and the season's alert says so."""
    from prefect import serve

    serve(*to_deployments(jobs), limit=limit, print_starting_message=False,
          pause_on_shutdown=False)
