"""The second store of the boot counter (:mod:`arena.data.persistence`): a Prefect variable on the
server, ``arena-boots-<season>``, which outlives the lake's disk. :func:`check_persistence`, a
flow, runs at every start of ``arena serve``: it compares the two counts, records the boot in both
and shows the verdict in the UI as a markdown artifact of its run (``storage-<season>``); the run
is named after its season and time (``s1 2025-11-29 16:05``)."""

from __future__ import annotations

import datetime as dt

from prefect import flow
from prefect.artifacts import create_markdown_artifact
from prefect.runtime import flow_run
from prefect.variables import Variable

from arena.core.errors import Failed
from arena.data.lake import Lake
from arena.data.persistence import VOLATILE, Boot, boot_history, record_boot
from arena.flows.tasks import slug, when


def boots_variable(season_id: str) -> str:
    return f"arena-boots-{slug(season_id)}"


class StorageVolatile(Failed, RuntimeError):
    """The lake lost boots the server counted: the run fails (and alerts); ``boot`` says more."""

    def __init__(self, boot: Boot) -> None:
        super().__init__(boot.describe())
        self.boot = boot


def storage_run_name() -> str:
    """A storage check named after its season and time: ``s1 2025-11-29 16:05`` (UTC)."""
    return f"{flow_run.parameters.get('season_id')} {when(flow_run.scheduled_start_time)}"


@flow(name="storage", flow_run_name=storage_run_name)
def check_persistence(lake: Lake, season_id: str, now: dt.datetime | None = None) -> Boot:
    """Count this start in the lake and in the server's variable; returns the boot (its verdict:
    confirmed or unknown) after publishing it as an artifact, or raises :class:`StorageVolatile`
    (the run fails, so the season's alert fires) when the lake lost what it was given."""
    name = boots_variable(season_id)
    stored = Variable.get(name, default=None)
    boot = record_boot(lake, int(stored) if stored is not None else None,
                       now or dt.datetime.now(dt.UTC))
    Variable.set(name, boot.count, overwrite=True)
    rows = "\n".join(f"| {b.count} | {b.at} | {b.verdict} | {b.lake_count} | {b.store_count} |"
                     for b in reversed(boot_history(lake)[-10:]))
    warning = ("\n\n**The lake lost what it was given: restore it from the mirror before the "
               "next cycle (README, runbook).**" if boot.verdict == VOLATILE else "")
    create_markdown_artifact(
        f"# Storage of season {season_id}: {boot.verdict}\n\n{boot.describe()}{warning}\n\n"
        "| boot | at | verdict | lake count | server count |\n|---|---|---|---|---|\n" + rows,
        key=f"storage-{slug(season_id)}", description=f"persistence of season {season_id}")
    if boot.verdict == VOLATILE:
        raise StorageVolatile(boot)
    return boot
