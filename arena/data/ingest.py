"""Ingest: fetch bars from a provider, derive coarser intervals, validate, publish atomically.

The steps are plain functions so the CLI (in-process, with a progress bar) and the Prefect flow
(one task per asset) run the same code:

1. :func:`fetch_asset` - one provider call per asset at the provider's finest interval (the
   *base*), only bars closed by ``end``; funding rates for crypto;
2. :func:`build_partitions` - merge with what the lake holds, derive ``1h/4h/1d/1w`` from the
   merged base series (stock 4h candles stay inside one session; only complete bars);
3. :func:`validate_partitions` - one Great Expectations run over the concatenated batch;
4. :func:`publish_or_quarantine` - all-or-nothing publication and the run's manifest.

Any fetch or validation failure publishes nothing: the lake keeps its last good partitions.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from arena.calendar import bar_close_times, interval_delta, utc
from arena.data.bars import drop_unclosed, resample
from arena.data.errors import NoDataError, ProviderError, UnsupportedError
from arena.data.lake import Key, Lake, PartitionKey, TableKey, concat_partitions, merge_bars
from arena.data.providers.base import Provider
from arena.universe import Asset, Universe

INTERVAL_ORDER = ("15m", "1h", "4h", "1d", "1w")
STORED_INTERVALS = INTERVAL_ORDER
EARNINGS_HORIZON = pd.Timedelta(days=180)  # how far ahead earnings calendars are kept


class IngestError(RuntimeError):
    """An ingest run failed (fetch or validation); nothing was published."""

    def __init__(self, message: str, manifest: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.manifest = manifest or {}


def base_interval(provider: Provider) -> str:
    """The finest interval a provider serves natively: every other interval is derived from it."""
    for interval in INTERVAL_ORDER:
        if interval in provider.intervals:
            return interval
    raise UnsupportedError("provider serves none of the product's intervals", provider=provider.name)


def new_run_id(provider: str, started: pd.Timestamp) -> str:
    return f"{started:%Y%m%dT%H%M%S}-{provider}-{uuid.uuid4().hex[:6]}"


@dataclass
class AssetFetch:
    """What one asset's fetch brought back."""

    symbol: str
    base: pd.DataFrame
    funding: pd.DataFrame | None = None
    earnings: list[pd.Timestamp] | None = None
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


def fetch_asset(provider: Provider, asset: Asset, interval: str, start: pd.Timestamp,
                end: pd.Timestamp) -> AssetFetch:
    """Fetch one asset's base bars (closed by ``end``), its funding rates and earnings dates.

    Candle failures raise :class:`ProviderError`; funding and earnings are reference data, so a
    provider that does not serve them is noted, not fatal.
    """
    t0 = time.perf_counter()
    bars = provider.fetch_bars(asset, interval, start, end)
    bars = drop_unclosed(bars, interval, asset.calendar, end)
    if bars.empty:
        raise NoDataError(f"no {interval} bar closed between {start} and {end}",
                          provider=provider.name, symbol=asset.symbol)
    out = AssetFetch(asset.symbol, bars)
    if asset.is_crypto:
        try:
            out.funding = provider.fetch_funding(asset, start, end)
        except (UnsupportedError, NoDataError) as exc:
            out.warnings.append(f"funding: {exc}")
    if asset.asset_class == "stock":
        try:
            out.earnings = provider.earnings_dates(asset, start, end + EARNINGS_HORIZON)
        except ProviderError as exc:
            out.warnings.append(f"earnings: {exc}")
    out.seconds = time.perf_counter() - t0
    return out


def derive_complete(base: pd.DataFrame, source: str, target: str, calendar: str) -> pd.DataFrame:
    """Coarser bars from ``base`` keeping only bars whose whole span the base series covers."""
    bars = resample(base, source, target, calendar)
    if bars.empty or source == target:
        return bars
    first = base["timestamp"].iloc[0]
    last_close = bar_close_times(calendar, source, pd.DatetimeIndex(base["timestamp"].iloc[-1:]))[0]
    closes = bar_close_times(calendar, target, pd.DatetimeIndex(bars["timestamp"]))
    keep = (bars["timestamp"] >= first).to_numpy() & (closes <= last_close)
    return bars[keep].reset_index(drop=True)


@dataclass
class AssetPartitions:
    """The frames one asset will publish, with counts for the manifest."""

    symbol: str
    frames: dict[Key, pd.DataFrame]
    stats: dict[str, object]


def build_partitions(lake: Lake, provider_name: str, asset: Asset, fetched: AssetFetch,
                     base: str, intervals: Sequence[str] = STORED_INTERVALS) -> AssetPartitions:
    """Merge the fetch into the stored base series and derive every coarser stored interval."""
    base_key = PartitionKey(provider_name, base, asset.symbol)
    existing = lake.read_bars(base_key)
    merged, revised = merge_bars(existing, fetched.base)
    frames: dict[Key, pd.DataFrame] = {base_key: merged}
    for interval in intervals:
        if INTERVAL_ORDER.index(interval) > INTERVAL_ORDER.index(base):
            key = PartitionKey(provider_name, interval, asset.symbol)
            frames[key] = derive_complete(merged, base, interval, asset.calendar)
    if fetched.funding is not None and not fetched.funding.empty:
        fkey = TableKey("funding", provider_name, asset.symbol)
        old = lake.read_table(fkey)
        frames[fkey] = (pd.concat([old, fetched.funding], ignore_index=True)
                        .drop_duplicates("timestamp", keep="last").sort_values("timestamp")
                        .reset_index(drop=True))
    stats = {"fetched": len(fetched.base), "stored_before": len(existing),
             "new": len(merged) - len(existing), "revised": revised,
             "first": fetched.base["timestamp"].iloc[0], "last": fetched.base["timestamp"].iloc[-1],
             "fetch_seconds": round(fetched.seconds, 3), "warnings": fetched.warnings}
    return AssetPartitions(asset.symbol, frames, stats)


def earnings_frame(fetches: Sequence[AssetFetch]) -> pd.DataFrame | None:
    rows = [(f.symbol, d) for f in fetches if f.earnings for d in f.earnings]
    if not rows:
        return None
    return pd.DataFrame(rows, columns=["symbol", "date"]).sort_values(["symbol", "date"],
                                                                      ignore_index=True)


def validate_partitions(parts: Sequence[AssetPartitions], universe: Universe, *,
                        start: pd.Timestamp, as_of: pd.Timestamp, base: str):
    """One validation run over every bar partition of the run (returns a ValidationReport).

    Base series are counted from the asked ``start`` (or their older stored history), so bars
    missing at the start of the window fail; derived series from their first complete bar. The
    end is judged by staleness at ``as_of``.
    """
    from arena.data.validation import Window, validate_bars

    bar_frames = [(k, f) for p in parts for k, f in p.frames.items() if isinstance(k, PartitionKey)]
    batch = concat_partitions(bar_frames)
    windows = []
    for key, frame in bar_frames:
        first = frame["timestamp"].iloc[0] if not frame.empty else start
        window_start = min(first, start) if key.interval == base else None
        windows.append(Window(symbol=key.symbol, interval=key.interval,
                              calendar=universe[key.symbol].calendar, start=window_start))
    return validate_bars(batch, windows, as_of=as_of)


@dataclass
class IngestResult:
    run_id: str
    published: bool
    manifest: dict[str, object]
    manifest_path: Path


ProgressFn = Callable[[str, int, int], None]


def run_ingest(provider: Provider, universe: Universe, *, start: object, end: object,
               lake: Lake | None = None, now: pd.Timestamp | None = None,
               progress: ProgressFn | None = None) -> IngestResult:
    """Fetch, validate and publish one provider's bars for ``universe`` over ``[start, end)``.

    ``now`` is the wall-clock time of the run (injected; it only names the run). Raises
    :class:`IngestError` (after writing the manifest) when anything failed: nothing is published.
    """
    lake = lake or Lake()
    start_ts, end_ts = utc(start), utc(end)
    if end_ts <= start_ts:
        raise ValueError(f"empty window: start {start_ts} is not before end {end_ts}")
    started = utc(now) if now is not None else pd.Timestamp.now(tz="UTC")
    run_id = new_run_id(provider.name, started)
    base = base_interval(provider)
    assets = [a for a in universe if provider.supports(a)]
    timings: dict[str, float] = {}
    notify = progress or (lambda stage, done, total: None)

    t0 = time.perf_counter()
    fetches, errors = [], {}
    for i, asset in enumerate(assets, start=1):
        try:
            fetches.append(fetch_asset(provider, asset, base, start_ts, end_ts))
        except ProviderError as exc:
            errors[asset.symbol] = f"{type(exc).__name__}: {exc}"
        notify("fetch", i, len(assets))
    timings["fetch"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    parts = [build_partitions(lake, provider.name, universe[f.symbol], f, base) for f in fetches]
    timings["build"] = time.perf_counter() - t0

    return finish_ingest(lake, provider.name, universe, run_id=run_id, started=started,
                         start=start_ts, end=end_ts, base=base, asked=[a.symbol for a in assets],
                         fetches=fetches, parts=parts, errors=errors, timings=timings,
                         notify=notify)


def finish_ingest(lake: Lake, provider_name: str, universe: Universe, *, run_id: str,
                  started: pd.Timestamp, start: pd.Timestamp, end: pd.Timestamp, base: str,
                  asked: list[str], fetches: Sequence[AssetFetch], parts: Sequence[AssetPartitions],
                  errors: dict[str, str], timings: dict[str, float],
                  notify: ProgressFn | None = None) -> IngestResult:
    """Validate (if every fetch succeeded), then publish everything or nothing; write the manifest."""
    notify = notify or (lambda stage, done, total: None)
    report = docs = None
    staged: dict[Key, Path] = {}
    frames: dict[Key, pd.DataFrame] = {k: f for p in parts for k, f in p.frames.items()}
    earnings = earnings_frame(fetches)
    if earnings is not None:
        ekey = TableKey("earnings", provider_name)
        old = lake.read_table(ekey)
        keep = old[~old["symbol"].isin(earnings["symbol"])] if not old.empty else old
        frames[ekey] = pd.concat([keep, earnings], ignore_index=True)
    if not errors:
        t0 = time.perf_counter()
        staged = lake.stage(run_id, frames)
        timings["stage"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        notify("validate", 0, 1)
        report = validate_partitions(parts, universe, start=start, as_of=end, base=base)
        notify("validate", 1, 1)
        timings["validate"] = time.perf_counter() - t0
        report.write(lake.root / "validation" / run_id)
        # Data Docs are rebuilt for every run that validated (about 0.15 s), passed or failed
        docs = report.build_data_docs(lake.root / "validation" / "docs", run_name=run_id)
    ok = not errors and report is not None and report.success
    t0 = time.perf_counter()
    if ok:
        lake.publish(run_id, staged)
        quarantined = None
    else:
        quarantined = lake.quarantine(run_id)
    timings["publish"] = time.perf_counter() - t0
    manifest = {
        "run_id": run_id, "provider": provider_name, "synthetic": provider_name == "synthetic",
        "status": "published" if ok else "failed", "started": started,
        "asked": {"symbols": asked, "start": start, "end": end, "base_interval": base,
                  "intervals": [i for i in STORED_INTERVALS if INTERVAL_ORDER.index(i) >= INTERVAL_ORDER.index(base)]},
        "got": {p.symbol: p.stats for p in parts},
        "partitions": {str(k): len(f) for k, f in frames.items()},
        "bars_published": int(sum(len(f) for k, f in frames.items() if isinstance(k, PartitionKey))) if ok else 0,
        "fetch_errors": errors,
        "validation": None if report is None else {
            "success": report.success, "summary": report.summary(),
            "failed": [r.message for r in report.failed()],
            "results": str(lake.root / "validation" / run_id), "data_docs": str(docs)},
        "quarantine": None if quarantined is None else str(quarantined),
        "timings_seconds": {k: round(v, 3) for k, v in timings.items()},
    }
    path = lake.write_json(Path("manifests") / "ingest" / f"{run_id}.json", manifest)
    result = IngestResult(run_id, ok, manifest, path)
    if not ok:
        reasons = [f"{s}: {e}" for s, e in errors.items()] or (
            [r.message for r in report.failed()] if report is not None else [])
        shown = "; ".join(reasons[:5]) + (f"; ... {len(reasons) - 5} more" if len(reasons) > 5 else "")
        raise IngestError(f"ingest {run_id} failed, nothing published: {shown} "
                          f"(manifest: {path})", manifest)
    return result


def default_window(now: pd.Timestamp, days: int = 200) -> tuple[pd.Timestamp, pd.Timestamp]:
    """``[now - days, now)`` on whole hours: enough history for 26 weekly candles."""
    end = utc(now).floor(interval_delta("1h"))
    return (end - pd.Timedelta(days=days)).normalize(), end
