"""Prefect flow: ingest one provider's bars into the lake - the ingest job
(:func:`arena.app.ingest.ingest`), each asset's fetch a task (a pool of four; retried with
backoff only on rate limits and outages), then one validation and publication of the batch,
all-or-nothing per asset. The good assets publish; a failed fetch or expectation then fails the
run after its artifacts are written, naming the bad assets (their partitions stay as they were).

Into a season's lake, a run that names no provider (and no symbols) ingests each of the
season's providers in turn (:func:`season_sources`: its crypto from Binance and its stocks from
Yahoo, or the synthetic market alone), so one deployment serves any season; a provider that
fails does not keep the others from publishing, and fails the run after them. A run is named
after its season and scheduled time and tagged ``season:<id>``, ``job:ingest``.
"""

from __future__ import annotations

from dataclasses import replace

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
from arena.flows.command import run_from_command_line
from arena.flows.tasks import PrefectRunner, flow_effects, run_name, tag_run


def season_sources(season: SeasonHandle | None, asked: IngestRequest) -> list[str | None]:
    """The providers a run ingests: the one it names; else, into a season's lake and for the
    season's own assets, each of the season's providers (sorted); else the default (None: the
    season's only provider, or the synthetic market)."""
    if asked.source is not None or asked.symbols or season is None:
        return [asked.source]
    return season.config.sources


@flow(name="ingest", flow_run_name=run_name,
      task_runner=ThreadPoolTaskRunner(max_workers=width_of(fetch)))
def ingest_flow(source: str | None = None, start: str | None = None, end: str | None = None,
                symbols: list[str] | None = None, seed: int | None = None,
                drop: str | None = None, drop_interval: str = "1h", lake_root: str | None = None,
                now: str | None = None, full: bool = False, instead_of: str | None = None) -> dict:
    """Ingest ``source`` bars for the universe (or ``symbols``) over ``[start, end)`` into the
    lake; into a season's lake the season decides (see :mod:`arena.app.ingest`), and without a
    ``source`` each of its providers is ingested in turn. ``now``: the wall clock (default: the
    real one; a rehearsal injects its own). Returns the run's manifest (several providers:
    ``{"runs": [manifest, ...]}``)."""
    prepare_process()
    lake = Lake(lake_root)
    season = SeasonHandle.find(lake)
    tag_run("ingest", season.id if season else None)
    asked = IngestRequest(source, symbol_list(symbols), optional_time(start, "start"),
                          optional_time(end, "end"), seed, drop, drop_interval, instead_of, full)
    done = [_ingest_one(lake, replace(asked, source=provider), season, now)
            for provider in season_sources(season, asked)]
    failures = [error for _, error in done if error is not None]
    if failures:
        raise failures[0]  # the others are in the run's log, each with its artifacts
    manifests = [manifest for manifest, _ in done]
    return manifests[0] if len(manifests) == 1 else {"runs": manifests}


def _ingest_one(lake: Lake, asked: IngestRequest, season: SeasonHandle | None,
                now: str | None) -> tuple[dict, IngestError | None]:
    """One provider's ingest, its artifacts and log lines; its manifest and its failure."""
    logger = get_run_logger()
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
        return out.manifest, out.error
    logger.info("%s: published %s bars (%s)", summary.provider, summary.bars_published,
                summary.validation.summary if summary.validation else "not validated")
    if out.watch_problems:
        return out.manifest, IngestError("the held stocks' 15-minute bars (the monitor's) were "
                                         "not published: see the logs", out.manifest)
    return out.manifest, None


if __name__ == "__main__":
    result = run_from_command_line(ingest_flow)
    for manifest in result.get("runs", [result]):
        print(f"ingest {manifest['run_id']}: {manifest['status']}, "
              f"{manifest['bars_published']:,} bars published")
