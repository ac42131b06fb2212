"""Prefect flow: ingest one provider's bars into the lake - the ingest job
(:func:`arena.app.ingest.ingest`), each asset's fetch a task (a pool of four; retried with
backoff only on rate limits and outages), then one validation and publication of the batch,
all-or-nothing per asset. The good assets publish; a failed fetch or expectation then fails the
run after its artifacts are written, naming the bad assets (their partitions stay as they were).
"""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.task_runners import ThreadPoolTaskRunner

from arena.app.handle import SeasonHandle
from arena.app.ingest import IngestRequest, ingest
from arena.app.params import optional_time, symbol_list
from arena.core.runner import width_of
from arena.core.settings import prepare_process
from arena.data.ingest import IngestError, fetch
from arena.data.lake import Lake
from arena.flows.artifacts import ingest_artifacts
from arena.flows.tasks import PrefectRunner, flow_effects, run_name


@flow(name="ingest", flow_run_name=run_name("ingest"),
      task_runner=ThreadPoolTaskRunner(max_workers=width_of(fetch)))
def ingest_flow(source: str | None = None, start: str | None = None, end: str | None = None,
                symbols: list[str] | None = None, seed: int | None = None,
                drop: str | None = None, drop_interval: str = "1h", lake_root: str | None = None,
                now: str | None = None, full: bool = False, instead_of: str | None = None) -> dict:
    """Ingest ``source`` bars for the universe (or ``symbols``) over ``[start, end)`` into the
    lake; into a season's lake the season decides (see :mod:`arena.app.ingest`). ``now``: the
    wall clock (default: the real one; a rehearsal injects its own)."""
    prepare_process()
    logger = get_run_logger()
    lake = Lake(lake_root)
    season = SeasonHandle.find(lake)
    asked = IngestRequest(source, symbol_list(symbols), optional_time(start, "start"),
                          optional_time(end, "end"), seed, drop, drop_interval, instead_of, full)
    out = ingest(lake, asked, season=season,
                 effects=flow_effects(season, now=now, runner=PrefectRunner()))
    ingest_artifacts(out)
    for source_, why in out.watch_problems.items():
        logger.error("the 15-minute bars of the held %s (%s): %s", ", ".join(out.watched),
                     source_, why)
    summary = out.summary
    if out.error is not None:
        logger.error("published %s; not published: %s", ", ".join(out.error.published) or
                     "nothing", ", ".join(summary.not_published if summary else ()) or "the run")
        raise out.error
    logger.info("published %s bars (%s)", summary.bars_published,
                summary.validation.summary if summary.validation else "not validated")
    if out.watch_problems:
        raise IngestError("the held stocks' 15-minute bars (the monitor's) were not published: "
                          "see the logs", out.manifest)
    return out.manifest


if __name__ == "__main__":
    manifest = ingest_flow()
    print(f"ingest {manifest['run_id']}: {manifest['status']}, "
          f"{manifest['bars_published']:,} bars published")
