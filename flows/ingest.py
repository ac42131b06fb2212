"""Prefect flow: ingest one provider's bars into the lake, validated, published all-or-nothing.

Each asset's fetch is a task (bounded thread pool, retried with backoff only on transient vendor
errors: rate limits and outages); validation and publication are one task over the whole batch.
A failed fetch or a failed expectation fails the flow and publishes nothing.
"""

from __future__ import annotations

import time

import pandas as pd
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.task_runners import ThreadPoolTaskRunner

from arena.calendar import utc
from arena.data.errors import ProviderError, is_transient
from arena.data.ingest import (
    AssetFetch,
    IngestError,
    IngestResult,
    base_interval,
    build_partitions,
    default_window,
    fetch_asset,
    finish_ingest,
    new_run_id,
)
from arena.data.lake import Lake
from arena.data.providers import Provider, make_provider
from arena.universe import Asset, load_universe

FETCH_WORKERS = 4  # vendors throttle; four concurrent calls per provider is polite


def _retry_if_transient(task, task_run, state) -> bool:
    """Retry only rate limits and outages; a bad symbol or an HTML page will not heal."""
    try:
        state.result()
    except Exception as exc:
        return is_transient(exc)
    return False


@task(retries=3, retry_delay_seconds=[2, 10, 30], retry_condition_fn=_retry_if_transient,
      task_run_name="fetch-{asset.symbol}")
def fetch_bars(provider: Provider, asset: Asset, interval: str, start: pd.Timestamp,
               end: pd.Timestamp) -> AssetFetch:
    """Fetch one asset's base bars, funding and earnings from its provider."""
    return fetch_asset(provider, asset, interval, start, end)


@task
def validate_and_publish(lake: Lake, provider_name: str, run_id: str, started: pd.Timestamp,
                         start: pd.Timestamp, end: pd.Timestamp, base: str, asked: list[str],
                         fetches: list[AssetFetch], errors: dict[str, str],
                         timings: dict[str, float]) -> IngestResult:
    """Build partitions, validate the whole batch once, publish everything or nothing."""
    universe = load_universe()
    t0 = time.perf_counter()
    parts = [build_partitions(lake, provider_name, universe[f.symbol], f, base) for f in fetches]
    timings["build"] = time.perf_counter() - t0
    return finish_ingest(lake, provider_name, universe, run_id=run_id, started=started,
                         start=start, end=end, base=base, asked=asked, fetches=fetches,
                         parts=parts, errors=errors, timings=timings)


def _report(manifest: dict) -> None:
    rows = [{"symbol": s, "fetched": st["fetched"], "new": st["new"], "revised": st["revised"],
             "first": str(st["first"]), "last": str(st["last"])} for s, st in manifest["got"].items()]
    rows += [{"symbol": s, "fetched": 0, "new": 0, "revised": 0, "first": "", "last": e}
             for s, e in manifest["fetch_errors"].items()]
    create_table_artifact(rows, key="ingest-assets",
                          description=f"ingest {manifest['run_id']} ({manifest['provider']}): "
                                      f"{manifest['status']}")
    validation = manifest["validation"] or {"summary": "not run (fetch failed)", "failed": []}
    failed = "\n".join(f"* {m}" for m in validation["failed"][:50]) or "* none"
    create_markdown_artifact(
        f"# Ingest {manifest['run_id']}\n\nProvider **{manifest['provider']}**"
        f"{' (SYNTHETIC market)' if manifest['synthetic'] else ''}, status **{manifest['status']}**."
        f"\n\nValidation: {validation['summary']}\n\nFailed checks:\n{failed}\n",
        key="ingest-report")


@flow(name="ingest", task_runner=ThreadPoolTaskRunner(max_workers=FETCH_WORKERS))
def ingest_flow(source: str = "synthetic", start: str | None = None, end: str | None = None,
                symbols: list[str] | None = None, seed: int | None = None,
                drop: str | None = None, lake_root: str | None = None,
                now: str | None = None) -> dict:
    """Ingest ``source`` bars for the universe (or ``symbols``) over ``[start, end)``."""
    logger = get_run_logger()
    started = utc(now) if now else pd.Timestamp.now(tz="UTC")
    default_start, default_end = default_window(started)
    start_ts = utc(start) if start else default_start
    end_ts = utc(end) if end else default_end
    provider = make_provider(source, seed=seed, drop=drop)
    universe = load_universe().select(symbols)
    lake = Lake(lake_root)
    run_id = new_run_id(provider.name, started)
    base = base_interval(provider)
    assets = [a for a in universe if provider.supports(a)]
    logger.info("ingest %s: %d assets, %s .. %s, base %s", run_id, len(assets), start_ts, end_ts, base)

    t0 = time.perf_counter()
    futures = {a.symbol: fetch_bars.submit(provider, a, base, start_ts, end_ts) for a in assets}
    fetches, errors = [], {}
    for symbol, fut in futures.items():
        try:
            fetches.append(fut.result())
        except ProviderError as exc:
            errors[symbol] = f"{type(exc).__name__}: {exc}"
            logger.error("fetch %s failed: %s", symbol, exc)
    timings = {"fetch": time.perf_counter() - t0}
    try:
        result = validate_and_publish(lake, provider.name, run_id, started, start_ts, end_ts,
                                      base, [a.symbol for a in assets], fetches, errors, timings)
    except IngestError as exc:
        _report(exc.manifest)
        raise
    _report(result.manifest)
    logger.info("published %s bars (%s)", result.manifest["bars_published"],
                result.manifest["validation"]["summary"])
    return result.manifest


if __name__ == "__main__":
    manifest = ingest_flow()
    print(f"ingest {manifest['run_id']}: {manifest['status']}, "
          f"{manifest['bars_published']:,} bars published")
