"""Prefect flow: the season published at full size - the luck and reference-rules tables with
20,000 zero-skill players per asset, the dbt marts and the season report - from the cycles
recorded so far (:func:`arena.pipeline.live.publish_season`). The cycle flow publishes after
every cycle with fewer players (2,000, a minute's work); this flow is the nightly deployment that
brings the luck tables to their full size, then copies the lake to its mirror when one is set.
A season with fewer than two cycles has nothing to publish yet: the run says so and completes."""

from __future__ import annotations

from prefect import flow, get_run_logger

from arena.core.settings import prepare_process
from arena.data.lake import Lake
from arena.data.persistence import upload_lake
from arena.flows.tasks import PrefectRunner, ledger_slot, run_name
from arena.pipeline.live import PublishError, publish_season
from arena.pipeline.season_config import load_season
from arena.scoring.asset_luck import DEFAULT_PLAYERS


@flow(name="publish", flow_run_name=run_name("publish"))
def publish_flow(lake_root: str | None = None, players: int = DEFAULT_PLAYERS,
                 mirror: str | None = None) -> dict:
    """Rebuild the season's luck tables (``players`` per asset), marts and report; then copy
    the lake to ``mirror`` (a path or fsspec URI), unless its last restore failed or a start
    found it volatile (:func:`arena.data.persistence.upload_lake` refuses; the run fails)."""
    prepare_process()
    logger = get_run_logger()
    lake = Lake(lake_root)
    season = load_season(lake)
    out: dict = {"season": season.id, "published": False}
    try:
        done = publish_season(lake, season, players=players,
                              runner=PrefectRunner(dask=season.dask),
                              progress=logger.info)
        logger.info("season %s published with %s players per asset: %s", season.id,
                    f"{players:,}", done.report)
        out.update(published=True, report=str(done.report), marts=str(done.marts.marts))
    except PublishError as exc:
        logger.info("season %s: nothing to publish yet: %s", season.id, exc)
        out["reason"] = str(exc)
    if mirror:  # no cycle or monitor window writes meanwhile; MirrorError fails the run: an alert
        with ledger_slot(season.id):
            out["mirrored"] = upload_lake(lake, mirror)
        logger.info("lake copied to the mirror %s: %s", mirror, ", ".join(out["mirrored"]))
    return out


if __name__ == "__main__":
    print(publish_flow())
