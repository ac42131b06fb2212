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

from arena.core.sessions import (
    INTERVAL_ORDER,
    bar_close_times,
    coarser_or_equal,
    expected_bars,
    interval_delta,
    utc,
)
from arena.core.universe import Asset, Universe
from arena.data.bars import drop_unclosed, resample
from arena.data.errors import NoDataError, ProviderError, UnsupportedError
from arena.data.lake import Key, Lake, PartitionKey, TableKey, concat_partitions, merge_bars
from arena.data.providers import is_synthetic
from arena.data.providers.base import Provider
from arena.data.validation.checks import Window, validate_bars

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
    """Coarser bars from ``base``: only bars whose every expected source bar is present."""
    return resample(base, source, target, calendar, complete_only=True)


@dataclass
class AssetPartitions:
    """The frames one asset will publish, with counts for the manifest."""

    symbol: str
    frames: dict[Key, pd.DataFrame]
    stats: dict[str, object]


def build_partitions(lake: Lake, provider_name: str, asset: Asset, fetched: AssetFetch,
                     base: str) -> AssetPartitions:
    """Merge the fetch into the stored base series and derive every coarser interval.

    A derived interval with no complete bar yet (a window shorter than a week, say) is left out
    of the run: its stored partition, if any, stays as it is.
    """
    base_key = PartitionKey(provider_name, base, asset.symbol)
    existing = lake.read_bars(base_key)
    merged, revised = merge_bars(existing, fetched.base)
    frames: dict[Key, pd.DataFrame] = {base_key: merged}
    not_yet = []
    for interval in coarser_or_equal(base)[1:]:
        derived = derive_complete(merged, base, interval, asset.calendar)
        if derived.empty:
            not_yet.append(interval)
        else:
            frames[PartitionKey(provider_name, interval, asset.symbol)] = derived
    if fetched.funding is not None and not fetched.funding.empty:
        fkey = TableKey("funding", provider_name, asset.symbol)
        frames[fkey] = (pd.concat([lake.read_table(fkey), fetched.funding], ignore_index=True)
                        .drop_duplicates("timestamp", keep="last").sort_values("timestamp")
                        .reset_index(drop=True))
    stats = {"fetched": len(fetched.base), "stored_before": len(existing),
             "new": len(merged) - len(existing), "revised": revised,
             "first": fetched.base["timestamp"].iloc[0], "last": fetched.base["timestamp"].iloc[-1],
             "fetch_seconds": round(fetched.seconds, 3), "no_complete_bar_yet": not_yet,
             "warnings": fetched.warnings}
    return AssetPartitions(asset.symbol, frames, stats)


def merge_earnings(stored: pd.DataFrame, fetches: Sequence[AssetFetch], start: pd.Timestamp,
                   end: pd.Timestamp) -> pd.DataFrame | None:
    """The earnings table after this run: for every symbol whose calendar was fetched, the fetch
    replaces the stored dates inside ``[start, end + horizon)``; every other row is kept."""
    fetched = [f for f in fetches if f.earnings is not None]
    if not fetched:
        return None
    new = pd.DataFrame([(f.symbol, d) for f in fetched for d in f.earnings],
                       columns=["symbol", "date"])
    new["date"] = pd.to_datetime(new["date"], utc=True).dt.as_unit("us")
    if not stored.empty:
        refreshed = (stored["symbol"].isin([f.symbol for f in fetched])
                     & (stored["date"] >= start) & (stored["date"] < end + EARNINGS_HORIZON))
        new = pd.concat([stored[~refreshed], new], ignore_index=True)
    return new.drop_duplicates(["symbol", "date"]).sort_values(["symbol", "date"], ignore_index=True)


def validate_partitions(parts: Sequence[AssetPartitions], universe: Universe, *,
                        start: pd.Timestamp, as_of: pd.Timestamp, base: str):
    """One validation run over every bar partition of the run (returns a ValidationReport).

    Base series are counted from the asked ``start`` (older stored history is judged against the
    calendar but not counted, so a long history cannot dilute a hole in the new bars); derived
    series from their first complete bar. The end is judged by staleness at ``as_of``, or at the
    lake's horizon when a backfill merges into bars stored beyond ``as_of``.
    """
    bar_frames = [(k, f) for p in parts for k, f in p.frames.items() if isinstance(k, PartitionKey)]
    windows = [Window(symbol=k.symbol, interval=k.interval, calendar=universe[k.symbol].calendar,
                      start=start if k.interval == base else None)
               for k, _ in bar_frames]
    horizon = max((bar_close_times(universe[k.symbol].calendar, k.interval,
                                   pd.DatetimeIndex(f["timestamp"].iloc[-1:]))[0]
                   for k, f in bar_frames if k.interval == base and not f.empty), default=as_of)
    return validate_bars(concat_partitions(bar_frames), windows, as_of=max(as_of, horizon))


@dataclass(frozen=True)
class IngestPlan:
    """What one ingest run will do; built before any fetch (no I/O)."""

    run_id: str
    provider: str
    started: pd.Timestamp
    start: pd.Timestamp
    end: pd.Timestamp
    base: str
    assets: tuple[Asset, ...]
    asked_end: pd.Timestamp
    closed: tuple[str, ...] = ()  # served, but their market had no bar in the window: not asked

    @property
    def symbols(self) -> list[str]:
        return [a.symbol for a in self.assets]


def plan_ingest(provider: Provider, universe: Universe, *, start: object, end: object,
                now: object | None = None) -> IngestPlan:
    """Check the window and choose the base interval. ``now`` (injected; default the wall clock)
    caps ``end``: a bar that has not closed yet is never ingested."""
    started = utc(now) if now is not None else pd.Timestamp.now(tz="UTC")
    start_ts, asked_end = utc(start), utc(end)
    end_ts = min(asked_end, started)
    if end_ts <= start_ts:
        why = "starts in the future" if start_ts >= started else "is empty"
        raise ValueError(f"window {start_ts} .. {asked_end} {why} (now {started})")
    served = tuple(a for a in universe if provider.supports(a))
    if not served:
        raise ValueError(f"{provider.name} serves none of the requested assets")
    base = base_interval(provider)
    assets = tuple(a for a in served if _bars_close_in(a.calendar, base, start_ts, end_ts))
    closed = tuple(a.symbol for a in served if a not in assets)
    return IngestPlan(new_run_id(provider.name, started), provider.name, started, start_ts,
                      end_ts, base, assets, asked_end, closed)


def _bars_close_in(calendar: str, interval: str, start: pd.Timestamp, end: pd.Timestamp) -> bool:
    """Whether the calendar expects a bar that opens at or after ``start`` and closes by ``end``
    (a stock over a weekend expects none: asking would only return "no data")."""
    opens = expected_bars(calendar, interval, start, end)
    return bool(len(opens)) and bool((bar_close_times(calendar, interval, opens) <= end).any())


@dataclass
class IngestResult:
    run_id: str
    published: bool
    manifest: dict[str, object]
    manifest_path: Path


ProgressFn = Callable[[str, int, int], None]


def _quiet(stage: str, done: int, total: int) -> None:
    """The default progress callback: says nothing."""


def run_ingest(provider: Provider, universe: Universe, *, start: object, end: object,
               lake: Lake | None = None, now: object | None = None,
               progress: ProgressFn | None = None) -> IngestResult:
    """Fetch, validate and publish one provider's bars for ``universe`` over ``[start, end)``.

    Raises :class:`IngestError` (after writing the manifest) when anything failed: nothing is
    published then. The Prefect flow runs the same steps with one task per fetch.
    """
    lake = lake or Lake()
    plan = plan_ingest(provider, universe, start=start, end=end, now=now)
    notify = progress or _quiet
    t0 = time.perf_counter()
    fetches, errors = [], {}
    for i, asset in enumerate(plan.assets, start=1):
        try:
            fetches.append(fetch_asset(provider, asset, plan.base, plan.start, plan.end))
        except ProviderError as exc:
            errors[asset.symbol] = f"{type(exc).__name__}: {exc}"
        notify("fetch", i, len(plan.assets))
    timings = {"fetch": time.perf_counter() - t0}
    return finish_ingest(lake, plan, universe, fetches, errors, timings, notify)


def finish_ingest(lake: Lake, plan: IngestPlan, universe: Universe, fetches: Sequence[AssetFetch],
                  errors: dict[str, str], timings: dict[str, float],
                  notify: ProgressFn = _quiet) -> IngestResult:
    """Build partitions, validate them once, publish everything or nothing; write the manifest.

    Whatever goes wrong (a fetch, a build, an expectation, the publication itself), the staged
    files go to quarantine, the lake keeps its last good partitions and the manifest says why.
    """
    errors = dict(errors)
    parts: list[AssetPartitions] = []
    frames: dict[Key, pd.DataFrame] = {}
    report = docs = failure = None
    try:
        t0 = time.perf_counter()
        for f in fetches:
            try:
                parts.append(build_partitions(lake, plan.provider, universe[f.symbol], f, plan.base))
            except ValueError as exc:  # e.g. bars that no calendar bar can hold
                errors[f.symbol] = f"build: {exc}"
        frames = {k: fr for p in parts for k, fr in p.frames.items()}
        earnings_key = TableKey("earnings", plan.provider)
        earnings = merge_earnings(lake.read_table(earnings_key), fetches, plan.start, plan.end)
        if earnings is not None:
            frames[earnings_key] = earnings
        timings["build"] = time.perf_counter() - t0
        if not errors:
            t0 = time.perf_counter()
            staged = lake.stage(plan.run_id, frames)
            timings["stage"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            notify("validate", 0, 1)
            report = validate_partitions(parts, universe, start=plan.start, as_of=plan.end,
                                         base=plan.base)
            notify("validate", 1, 1)
            timings["validate"] = time.perf_counter() - t0
            report.write(lake.root / "validation" / plan.run_id)
            # Data Docs are rebuilt for every run that validated (about 0.15 s), passed or failed
            docs = report.build_data_docs(lake.root / "validation" / "docs", run_name=plan.run_id)
            if report.success:
                t0 = time.perf_counter()
                lake.publish(plan.run_id, staged)
                timings["publish"] = time.perf_counter() - t0
    except Exception as exc:
        failure = f"{type(exc).__name__}: {exc}"
    ok = not errors and failure is None and report is not None and report.success
    quarantined = None if ok else lake.quarantine(plan.run_id)
    manifest = _manifest(lake, plan, parts, frames, errors, report, docs, failure, quarantined,
                         timings, ok)
    path = lake.write_json(Path("manifests") / "ingest" / f"{plan.run_id}.json", manifest)
    if not ok:
        reasons = ([f"{s}: {e}" for s, e in errors.items()] + ([failure] if failure else [])
                   + ([r.message for r in report.failed()] if report is not None else []))
        shown = "; ".join(reasons[:5]) + (f"; ... {len(reasons) - 5} more" if len(reasons) > 5 else "")
        raise IngestError(f"ingest {plan.run_id} failed, nothing published: {shown} "
                          f"(manifest: {path})", manifest)
    return IngestResult(plan.run_id, ok, manifest, path)


def _manifest(lake: Lake, plan: IngestPlan, parts: Sequence[AssetPartitions],
              frames: dict[Key, pd.DataFrame], errors: dict[str, str], report, docs,
              failure: str | None, quarantined: Path | None, timings: dict[str, float],
              ok: bool) -> dict[str, object]:
    bar_rows = sum(len(f) for k, f in frames.items() if isinstance(k, PartitionKey))
    return {
        "run_id": plan.run_id, "provider": plan.provider, "synthetic": is_synthetic(plan.provider),
        "status": "published" if ok else "failed", "started": plan.started,
        "asked": {"symbols": plan.symbols, "market_closed": list(plan.closed),
                  "start": plan.start, "end": plan.asked_end,
                  "end_used": plan.end, "base_interval": plan.base,
                  "intervals": list(coarser_or_equal(plan.base))},
        "got": {p.symbol: p.stats for p in parts},
        "partitions": {str(k): len(f) for k, f in frames.items()},
        "bars_published": bar_rows if ok else 0,
        "fetch_errors": errors,
        "error": failure,
        "validation": None if report is None else {
            "success": report.success, "summary": report.summary(),
            "failed": [r.message for r in report.failed()],
            "results": str(lake.root / "validation" / plan.run_id), "data_docs": str(docs)},
        "quarantine": None if quarantined is None else str(quarantined),
        "timings_seconds": {k: round(v, 3) for k, v in timings.items()},
    }


def default_window(now: pd.Timestamp, days: int = 200) -> tuple[pd.Timestamp, pd.Timestamp]:
    """``[now - days, now)`` on whole hours: enough history for 26 weekly candles."""
    end = utc(now).floor(interval_delta("1h"))
    return (end - pd.Timedelta(days=days)).normalize(), end
