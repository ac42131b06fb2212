"""Prefect flow: ingest one provider's bars into the lake, validated, published per asset.

Each asset's fetch is a task (bounded thread pool, retried with backoff only on transient vendor
errors: rate limits and outages); validation and publication are one task over the whole batch,
all-or-nothing per asset. The good assets publish; a failed fetch or a failed expectation then
fails the flow run, naming the bad assets (their partitions stay as they were, quarantined).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
from prefect import flow, get_run_logger, task
from prefect.artifacts import (
    create_link_artifact,
    create_markdown_artifact,
    create_table_artifact,
)
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from arena.core.sessions import utc
from arena.core.universe import Asset, Universe, load_universe
from arena.data.errors import ProviderError, is_transient
from arena.data.ingest import (
    AssetFetch,
    IngestError,
    IngestPlan,
    IngestResult,
    default_window,
    fetch_asset,
    finish_ingest,
    plan_ingest,
)
from arena.data.lake import Lake
from arena.data.providers import Provider, make_provider, provider_note
from arena.data.validation.html import PAGE
from arena.flows.tasks import run_name
from arena.pipeline.season_config import find_season
from arena.pipeline.season_ingest import season_ingest, watch_after_ingest

FETCH_WORKERS = 4  # vendors throttle; four concurrent calls per provider is polite


def _retry_if_transient(task, task_run, state) -> bool:
    """Retry only rate limits and outages; a bad symbol or an HTML page will not heal."""
    try:
        state.result()
    except Exception as exc:
        return is_transient(exc)
    return False


@task(retries=3, retry_delay_seconds=[2, 10, 30], retry_condition_fn=_retry_if_transient,
      cache_policy=NO_CACHE, task_run_name="fetch-{asset.symbol}")
def fetch_bars(provider: Provider, asset: Asset, interval: str, start: pd.Timestamp,
               end: pd.Timestamp, lake: Lake | None = None, full: bool = False,
               reference: bool = True) -> AssetFetch:
    """Fetch one asset's base bars (with the stored overlap that shows restatements), funding
    and earnings from its provider."""
    return fetch_asset(provider, asset, interval, start, end, lake=lake, full=full,
                       reference=reference)


@task(cache_policy=NO_CACHE)
def validate_and_publish(lake: Lake, plan: IngestPlan, universe: Universe,
                         fetches: list[AssetFetch], errors: dict[str, str],
                         timings: dict[str, float]) -> IngestResult:
    """Build partitions, validate the whole batch once, publish every good asset (raises
    :class:`IngestError` naming the others after publishing the good ones)."""
    return finish_ingest(lake, plan, universe, fetches, errors, timings)


def _report(manifest: dict) -> None:
    got, rows = manifest["got"], []
    for symbol, outcome in manifest["assets"].items():
        st = got.get(symbol, {})
        rows.append({"symbol": symbol, "status": outcome["status"],
                     "fetched": st.get("fetched", 0), "new": st.get("new", 0),
                     "revised": st.get("revised", 0), "first": str(st.get("first", "")),
                     "last": str(st.get("last", "")), "reason": outcome.get("reason") or ""})
    create_table_artifact(rows, key="ingest-assets",
                          description=f"ingest {manifest['run_id']} "
                                      f"({provider_note(manifest['provider'])}): "
                                      f"{manifest['status']}")
    validation = manifest["validation"] or {"summary": "not run (fetch failed)", "failed": []}
    failed = "\n".join(f"* {m}" for m in validation["failed"][:50]) or "* none"
    published = ", ".join(manifest["published"]) or "none"
    bad = "\n".join(f"* {s}: {r}" for s, r in manifest["not_published"].items()) or "* none"
    create_markdown_artifact(
        f"# Ingest {manifest['run_id']}\n\nProvider **{manifest['provider']}**"
        f"{' (SYNTHETIC market)' if manifest['synthetic'] else ''}, status **{manifest['status']}**."
        f"\n\nPublished: {published}\n\nNot published (kept as they were):\n{bad}\n"
        f"\nValidation: {validation['summary']}\n\nFailed checks:\n{failed}\n",
        key="ingest-report")
    results = validation.get("results")  # the run's folder; its page reads offline
    if results and (page := Path(results) / PAGE).is_file():
        create_link_artifact(page.resolve().as_uri(), link_text=f"validation {manifest['run_id']}",
                             key="validation-report",
                             description="the run's candle validation: every check, offline")


@flow(name="ingest", flow_run_name=run_name("ingest"),
      task_runner=ThreadPoolTaskRunner(max_workers=FETCH_WORKERS))
def ingest_flow(source: str | None = None, start: str | None = None, end: str | None = None,
                symbols: list[str] | None = None, seed: int | None = None,
                drop: str | None = None, drop_interval: str = "1h", lake_root: str | None = None,
                now: str | None = None, full: bool = False, instead_of: str | None = None) -> dict:
    """Ingest ``source`` bars for the universe (or ``symbols``) over ``[start, end)``;
    ``full``: re-fetch every stored bar to look for restatements (else the last two days).

    Into a season's lake, the season decides: ``source`` (default: its only provider) brings
    the season's assets of the classes it serves, ``instead_of`` lets a files drop folder stand
    in for a blocked vendor, and the held stocks' 15-minute bars follow (the monitor's)."""
    logger = get_run_logger()
    now_ts = utc(now) if now else pd.Timestamp.now(tz="UTC")
    default_start, default_end = default_window(now_ts)
    lake = Lake(lake_root)
    universe = load_universe().select(symbols)
    season = find_season(lake)
    if season is not None:
        taken = season_ingest(season, universe, source, seed, explicit=bool(symbols),
                              instead_of=instead_of)
        universe, source, seed = taken.universe, taken.source, taken.seed
    provider = make_provider(source or "synthetic", seed=seed, drop=drop,
                             drop_interval=drop_interval, instead_of=instead_of)
    plan = plan_ingest(provider, universe, start=start or default_start, end=end or default_end,
                       now=now_ts, full=full)
    logger.info("ingest %s: %d assets, %s .. %s, base %s", plan.run_id, len(plan.assets),
                plan.start, plan.end, plan.base)

    t0 = time.perf_counter()
    futures = {a.symbol: fetch_bars.submit(provider, a, plan.base, plan.start, plan.end, lake,
                                           plan.full, not plan.watch)
               for a in plan.assets}
    fetches, errors = [], {}
    for symbol, fut in futures.items():
        try:
            fetches.append(fut.result())
        except ProviderError as exc:
            errors[symbol] = f"{type(exc).__name__}: {exc}"
            logger.error("fetch %s failed: %s", symbol, exc)
    timings = {"fetch": time.perf_counter() - t0}
    try:
        result = validate_and_publish(lake, plan, universe, fetches, errors, timings)
    except IngestError as exc:  # the good assets are published; the run is red, naming the bad
        _report(exc.manifest)
        logger.error("published %s; not published: %s", ", ".join(exc.published) or "nothing",
                     ", ".join(exc.manifest.get("not_published") or {}) or "the run")
        if season is not None:
            _watch_held(lake, season, plan, now_ts, drop if instead_of else None)
        raise
    _report(result.manifest)
    logger.info("published %s bars (%s)", result.manifest["bars_published"],
                result.manifest["validation"]["summary"])
    if season is not None and not _watch_held(lake, season, plan, now_ts,
                                              drop if instead_of else None):
        raise IngestError("the held stocks' 15-minute bars (the monitor's) were not published: "
                          "see the logs", result.manifest)
    return result.manifest


def _watch_held(lake: Lake, season, plan: IngestPlan, now: pd.Timestamp,
                drop: str | None) -> bool:
    """The held stocks' 15-minute bars (the monitor's, :func:`watch_after_ingest`); False
    (logged) when they could not be published."""
    symbols, problems = watch_after_ingest(lake, season, plan.provider, end=plan.end, now=now,
                                           drop=drop)
    for source, why in problems.items():
        get_run_logger().error("the 15-minute bars of the held %s (%s): %s",
                               ", ".join(symbols), source, why)
    return not problems


if __name__ == "__main__":
    manifest = ingest_flow()
    print(f"ingest {manifest['run_id']}: {manifest['status']}, "
          f"{manifest['bars_published']:,} bars published")
