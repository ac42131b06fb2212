"""The serve job: a live season's scheduled deployments, registered and run until stopped.

One deployment per job of the season (:func:`season_jobs`), each with a kebab-case name that
starts with the season's id, tags (``season:<id>``, ``job:<job>``, ``provider:<name>``) and a
concurrency limit of one (a run still going when the next is due makes the next wait):

========  ========================  ====================================================
job       schedule (UTC)            what it runs
========  ========================  ====================================================
ingest    hourly at :01             ``arena.flows.ingest:ingest_flow``, one deployment per
                                    provider of the season (crypto and stocks apart)
monitor   every 15 minutes (:03)    ``arena.flows.monitor:monitor_flow``
cycle     daily at the cycle time   ``arena.flows.cycle:cycle_flow``: the missed cycles
          plus 10 minutes           first, the cycle, then the marts and the report
publish   nightly at 00:30          ``arena.flows.publish:publish_flow``: the luck tables
                                    at full size, marts, report, then the lake's mirror
========  ========================  ====================================================

The offsets leave the vendors the minute they need to serve a bar that just closed: the cycle at
16:00 runs at 16:10, after the 16:01 ingest brought the bar that closed at 16:00 (the cycle's
time is the season's, not the run's). Entrypoints are named by module, so a served run or a
worker on another machine finds the flow wherever the package is installed.

:func:`serve` decides what is served and when it is refused, before anything is registered: an
empty lake is restored from its mirror first; a lake whose last restore failed, a replayed
season and a closed one are refused; a second ``arena serve`` on the same lake is refused while
the first runs (a lock in the lake's ``_locks/``). The server (:class:`DeploymentServer`, Prefect's
in :mod:`arena.flows.deployments`) registers the deployments, installs the alerts, proves the
storage and runs the deployments until SIGINT or SIGTERM, then pauses their schedules: a season
stopped on purpose raises no Late alert, one whose server died does.

The repository's ``prefect.yaml`` declares the same jobs for workers on a pool (``prefect deploy
--all``), its ingest one deployment for all the season's providers; :func:`pool_season` is the
season it deploys, refused as :func:`prepare` refuses one, and when ``$ARENA_LAKE`` is unset.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from filelock import FileLock, Timeout

from arena.app.handle import SeasonHandle
from arena.core.environment import is_set, setting
from arena.core.errors import Failed, UnusableInput
from arena.data.lake import Lake
from arena.data.persistence import Boot, MirrorError, lake_checked, restore_failed, restore_lake
from arena.pipeline.season_config import REPLAY, SeasonConfig, find_season, season_slug

INGEST_MINUTE, MONITOR_MINUTE, CYCLE_DELAY_MINUTES = 1, 3, 10
PUBLISH_CRON = "30 0 * * *"
SERVE_LOCK = "_locks/serve.lock"  # beside the writer lock (never mirrored)


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
    root, name = str(lake.root.resolve()), season_slug(season.id)
    providers = season.sources
    base = (f"season:{season.id}",)
    every = tuple(f"provider:{p}" for p in providers)
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
            f"{CYCLE_DELAY_MINUTES} {season.cycle_hour} * * *", {"lake_root": root},
            (*base, "job:cycle", *every),
            f"daily: the decision cycle of {season.cycle_hour:02d}:00 UTC (the missed ones "
            "first), then the marts, the luck tables (2,000 players) and the daily report"),
        Job(f"{name}-publish", "arena.flows.publish:publish_flow", PUBLISH_CRON,
            {"lake_root": root, **({"mirror": mirror} if mirror else {})},
            (*base, "job:publish", *every),
            "nightly: the luck tables at full size (20,000 players), the marts and the report"
            + (", then the lake copied to its mirror" if mirror else "")),
    ]
    return jobs


class ServeRefused(UnusableInput):
    """The season is not served (nothing registered); the message says why."""

    consequence = "nothing registered"


class RestoreFailed(Failed):
    """The lake is part of a restore that failed: it is never served as it is."""


class DeploymentServer(Protocol):
    """What serves a season's deployments (Prefect's: :mod:`arena.flows.deployments`)."""

    def install_alerts(self, season: SeasonConfig, webhook: str) -> list[str]:
        """Install the season's alerts posting to ``webhook``; their names."""
        ...

    def check_storage(self, handle: SeasonHandle) -> Boot:
        """Count this start in the lake and on the server; the verdict (raises a
        :class:`~arena.core.errors.Failed` when the lake lost what it was given)."""
        ...

    def serve(self, jobs: list[Job]) -> None:
        """Register ``jobs`` and run each when due, until SIGINT or SIGTERM; then pause their
        schedules."""
        ...


@dataclass
class Serving:
    """What a start of the season's server found and did before serving."""

    season: SeasonHandle
    jobs: list[Job]
    restored: list[str] = field(default_factory=list)  # folders restored from the mirror
    checked: bool = False  # a volatile lake the operator checked: uploads resume
    alerts: list[str] = field(default_factory=list)
    boot: Boot | None = None
    storage_error: str | None = None  # the lake lost what it was given: no upload until restored


def prepare(lake: Lake, *, mirror: str | None = None, checked: bool = False,
            listing: bool = False, now: dt.datetime | None = None) -> Serving:
    """What would be served, refused before anything is registered (see the module
    docstring); an empty lake is restored from ``mirror`` first. ``listing``: only to show the
    deployments (nothing is restored, and a lake whose restore failed is listed too)."""
    restored: list[str] = []
    if mirror and not listing and find_season(lake) is None:  # a replaced disk: restore first
        try:
            restored = restore_lake(lake, mirror, now or dt.datetime.now(dt.UTC))
        except MirrorError as exc:
            raise RestoreFailed(str(exc)) from exc
    handle = SeasonHandle.open(lake)
    failed = restore_failed(lake)
    if failed is not None and not listing:
        raise RestoreFailed(f"the restore of {failed['at']} from {failed['mirror']} failed "
                            f"({failed['error']}): move the lake aside and restore it again "
                            "(--mirror)")
    if handle.config.mode == REPLAY:
        raise ServeRefused(f"season {handle.id!r} is a replay: it has no schedule to serve "
                           f"(arena season init --lake NEW ... starts a live season)")
    if handle.closed_at is not None:
        raise ServeRefused(f"season {handle.id!r} was closed at {handle.closed_at}: nothing is "
                           "due any more; start the next season in a new lake (arena season "
                           "init --lake NEW ...)")
    return Serving(handle, season_jobs(lake, handle.config, mirror), restored,
                   checked and not listing and lake_checked(lake))


def pool_season() -> SeasonHandle:
    """The season ``prefect deploy --all`` deploys for the workers of a pool: the one in the
    lake ``$ARENA_LAKE`` names (every run's ``lake_root``), refused before anything is registered
    when the variable is unset (a default lake would be each worker's own folder) or when
    :func:`prepare` refuses to serve the season."""
    if not is_set("lake"):
        raise ServeRefused("ARENA_LAKE is not set: export ARENA_LAKE=<the season's lake> (the "
                           "same path on every worker's machine) and deploy again")
    return prepare(Lake(setting("lake"))).season


@contextmanager
def serve_lock(lake: Lake) -> Iterator[None]:
    """Held while the season is served: a second server on the lake is refused, naming the
    first (its process and when it started)."""
    path = lake.root / SERVE_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), timeout=0)
    holder = path.with_suffix(".json")
    try:
        lock.acquire()
    except Timeout:
        who = holder.read_text(encoding="utf-8") if holder.is_file() else "{}"
        raise ServeRefused(f"another arena serve runs on {lake.root} ({json.loads(who)}); stop "
                           "it first (SIGTERM)") from None
    try:
        holder.write_text(json.dumps({"pid": os.getpid(),
                                      "since": dt.datetime.now(dt.UTC).isoformat()}),
                          encoding="utf-8")
        yield
    finally:
        holder.unlink(missing_ok=True)
        lock.release()


def serve(lake: Lake, server: DeploymentServer, *, mirror: str | None = None,
          checked: bool = False, webhook: str | None = None,
          ready: Callable[[Serving], None] | None = None) -> Serving:
    """Serve the lake's season: under the lake's serve lock (a second server is refused before
    anything else), :func:`prepare` (restored from ``mirror`` first when the lake is empty), the
    alerts (when a ``webhook`` is given), the storage check, then the deployments until stopped.
    ``ready`` hears of what was found before anything is registered, and again (its alerts and
    storage verdict filled in) before the deployments run."""
    with serve_lock(lake):
        serving = prepare(lake, mirror=mirror, checked=checked)
        if ready is not None:
            ready(serving)
        if webhook is not None:
            serving.alerts = server.install_alerts(serving.season.config, webhook)
        try:
            serving.boot = server.check_storage(serving.season)
        except Failed as exc:  # a volatile lake: served, but never uploaded until mended
            serving.storage_error = str(exc)
        if ready is not None:
            ready(serving)
        server.serve(serving.jobs)
    return serving
