"""Prefect flow: the season published - the publish job (:func:`arena.app.publish.publish`),
the same as ``arena season publish``: the luck and reference-rules tables (20,000 zero-skill
players per asset), the dbt marts and the season report from the cycles recorded so far, then the
lake copied to its mirror when one is set (holding the season's ledger slot, so no cycle or
monitor window writes meanwhile). The cycle flow publishes after every cycle with fewer players;
this is the nightly deployment. A season with no cycle yet has nothing to publish: the run says
so and completes. A run is named after its season and scheduled time (``s1 2025-11-30 00:30``)
and tagged ``season:<id>``, ``job:publish``."""

from __future__ import annotations

from prefect import flow, get_run_logger

from arena.app.handle import SeasonHandle
from arena.app.publish import publish
from arena.core.settings import prepare_process
from arena.flows.artifacts import report_link
from arena.flows.command import run_from_command_line
from arena.flows.tasks import flow_effects, run_name, season_of, tag_run
from arena.scoring.asset_luck import DEFAULT_PLAYERS


@flow(name="publish", flow_run_name=run_name)
def publish_flow(lake_root: str | None = None, players: int = DEFAULT_PLAYERS,
                 mirror: str | None = None) -> dict:
    """Rebuild the season's luck tables (``players`` per asset), marts and report; then copy the
    lake to ``mirror`` (a path or fsspec URI), unless its last restore failed or a start found it
    volatile (:func:`arena.data.persistence.upload_lake` refuses; the run fails)."""
    prepare_process()
    tag_run("publish", season_of(lake_root))
    logger = get_run_logger()
    handle = SeasonHandle.open(lake_root)
    done = publish(handle, players=players, mirror=mirror, effects=flow_effects(handle))
    out: dict = {"season": handle.id, "published": done.outputs is not None}
    if done.outputs is None:
        logger.info("season %s: nothing to publish yet: %s", handle.id, done.not_yet)
        out["reason"] = done.not_yet
    else:
        report_link(done.report, handle.config)
        logger.info("season %s published with %s players per asset: %s", handle.id,
                    f"{players:,}", done.report)
        out.update(report=str(done.report), marts=str(done.outputs.marts.marts))
    if mirror:
        logger.info("lake copied to the mirror %s: %s", mirror, ", ".join(done.mirrored))
        out["mirrored"] = done.mirrored
    return out


if __name__ == "__main__":
    print(run_from_command_line(publish_flow))
