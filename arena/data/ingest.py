"""Ingest: fetch bars from a provider, derive coarser intervals, validate, publish atomically.

The steps are plain functions so the CLI (in-process, with a progress bar) and the Prefect flow
(one task per asset) run the same code:

1. :func:`fetch_asset` - one provider call per asset at the provider's finest interval (the
   *base*), only bars closed by ``end``; funding rates for crypto;
2. :func:`build_partitions` - merge with what the lake holds, derive ``1h/4h/1d/1w`` from the
   merged base series (stock 4h candles stay inside one session; only complete bars);
3. :func:`validate_partitions` - one Great Expectations run over the concatenated batch;
4. :func:`finish_ingest` - publication, all-or-nothing *per asset*, and the run's manifest.

One bad asset blocks no one: an asset whose fetch, build, expectations or publication failed
keeps its last good partitions byte-for-byte (its new files go to
``quarantine/<run>/<symbol>/`` with the reason), the others publish, and the manifest gives every
asset's outcome. Fetch and validation run without any lock; only the read-merge-swap of the
publication holds the lake's writer lock, and an asset whose stored partitions another run
replaced since they were read is merged again (and validated again) under it: overlapping runs
never lose each other's bars.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from arena.core.errors import Failed, UnusableInput
from arena.core.lazy import lazy_import
from arena.core.runner import INLINE, Retry, Runner, step
from arena.core.sessions import (
    INTERVAL_ORDER,
    NAT,
    NYSE,
    bar_close_times,
    ceil_micros,
    coarser_or_equal,
    expected_bars,
    interval_delta,
    ny_dates,
    utc,
)
from arena.core.universe import Asset, Universe
from arena.data.bars import drop_unclosed, resample, utc_micros
from arena.data.errors import NoDataError, ProviderError, UnsupportedError, is_transient
from arena.data.lake import (
    Key,
    Lake,
    PartitionKey,
    TableKey,
    is_disk_error,
    merge_bars,
    os_error_text,
    write_text,
)
from arena.data.manifest import IngestSummary
from arena.data.providers import is_synthetic
from arena.data.providers.base import BAR_COLUMNS, Provider
from arena.data.recovery import recover_publications
from arena.data.validation.checks import Window, validate_series
from arena.data.validation.config import ValidationConfig
from arena.data.validation.html import PAGE

np = lazy_import("numpy")
pd = lazy_import("pandas")
_log = logging.getLogger(__name__)

EARNINGS_HORIZON = dt.timedelta(days=180)  # how far ahead earnings calendars are kept


class IngestError(Failed, RuntimeError):
    """An ingest run failed for at least one asset (fetch, validation or publication); the
    manifest says which assets published and why the others did not."""

    def __init__(self, message: str, manifest: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.manifest = manifest or {}

    @property
    def published(self) -> list[str]:
        """The assets this run published despite the failure of others."""
        assets = self.manifest.get("assets") or {}
        return [s for s, a in assets.items() if a.get("status") == PUBLISHED]

    @property
    def summary(self) -> IngestSummary | None:
        """The manifest, typed (None: the run stopped before it had one)."""
        return IngestSummary.of(self.manifest) if self.manifest.get("asked") else None


class IngestRequestError(UnusableInput, ValueError):
    """An ingest that cannot be asked for: a window that is empty or in the future, a provider
    that serves none of the assets or not the interval; nothing was fetched."""


class LakeWriteError(IngestError, OSError):
    """The lake could not be written (a full or read-only disk, no permission): the run stopped
    there. Nothing more was published (an asset published before the failure stays, whole; every
    other asset keeps its last good partitions) and the run's staging folder is gone. ``manifest``
    (with the error) was written to ``manifest_path``, or could not be: ``manifest_error``.
    An :class:`IngestError` (callers that play on with the published assets still do) and an
    :class:`OSError` with the failed write's ``errno`` and ``filename``."""

    def __init__(self, cause: OSError, run_id: str, manifest: dict[str, object],
                 manifest_path: Path | None, manifest_error: str | None = None) -> None:
        OSError.__init__(self, cause.errno, cause.strerror, cause.filename)
        self.cause, self.run_id, self.manifest = cause, run_id, manifest
        self.manifest_path, self.manifest_error = manifest_path, manifest_error

    def __str__(self) -> str:
        done = f"published {', '.join(self.published)} before it" if self.published \
            else "nothing published"
        where = f"manifest {self.manifest_path}" if self.manifest_path is not None else \
            f"the manifest could not be written either: {self.manifest_error}"
        return (f"ingest {self.run_id}: the lake could not be written: "
                f"{os_error_text(self.cause)} ({done}; staging removed; {where})")


# an asset's outcome in the manifest; "held": only suspects at the newest bars (a jump whose
# reversion cannot be seen yet), so its new bars wait in quarantine and the next run judges them
# again (it fetches from the last stored bar)
PUBLISHED, QUARANTINED, FETCH_FAILED, FAILED = "published", "quarantined", "fetch_failed", "failed"
HELD = "held"


def base_interval(provider: Provider) -> str:
    """The interval the lake's series of a provider are built from: its own ``base`` when it
    names one, else the finest it serves natively. Every coarser interval is derived from it."""
    named = getattr(provider, "base", None)
    if named is not None:
        return named
    for interval in INTERVAL_ORDER:
        if interval in provider.intervals:
            return interval
    raise UnsupportedError("provider serves none of the product's intervals", provider=provider.name)


def new_run_id(provider: str, started: pd.Timestamp) -> str:
    return f"{started:%Y%m%dT%H%M%S}-{provider}-{uuid.uuid4().hex[:6]}"


RESTATEMENT_OVERLAP = dt.timedelta(days=2)  # stored bars every run fetches again, to compare
DERIVE_CONTEXT = dt.timedelta(days=8)  # base bars re-derived before the first change (a week)


@dataclass
class AssetFetch:
    """What one asset's fetch brought back.

    ``fetched_from``: where the fetch started - the asked start, or earlier to re-fetch the last
    ``RESTATEMENT_OVERLAP`` of what is stored (or all of it: ``full``). ``filled``: the holes
    a window that does not touch the stored span would leave, fetched too. ``restatement``: set when
    re-fetched bars differed from the stored ones; the fetch then holds the vendor's whole
    series over the stored span (see :func:`fetch_asset`)."""

    symbol: str
    base: pd.DataFrame
    funding: pd.DataFrame | None = None
    earnings: list[pd.Timestamp] | None = None
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    fetched_from: pd.Timestamp | None = None
    restatement: dict[str, object] | None = None
    events: pd.DataFrame | None = None  # splits and dividends (stocks and ETFs)
    # the stored base series the fetch compared with, and the identity of its file then: the
    # build reuses it when the file is still the same one (no second read of the history)
    stored: pd.DataFrame | None = None
    stored_signature: object | None = None  # Lake.signature of the stored partition
    # the holes between the asked window and the stored series that the fetch covered too, so
    # the stored series stays contiguous: {"side": "before"|"after", "from": t, "to": t}
    filled: list[dict[str, object]] = field(default_factory=list)
    # the first fetched bar that is new or differs from ``stored`` (see _first_change), found
    # by the fetch's comparison; None: nothing stored
    first_change: pd.Timestamp | None = None


def fetch_asset(provider: Provider, asset: Asset, interval: str, start: pd.Timestamp,
                end: pd.Timestamp, *, lake: Lake | None = None, full: bool = False,
                reference: bool = True) -> AssetFetch:
    """Fetch one asset's base bars (closed by ``end``), its funding rates and earnings dates
    (``reference``; a watch run, see :func:`plan_ingest`, fetches the bars only).

    With a ``lake`` holding the asset, the fetch also covers the last ``RESTATEMENT_OVERLAP`` of
    the stored bars (``full``: all of them), and a window that ends before the first stored bar
    is fetched up to it (a back-fill never leaves a hole between its bars and the stored ones;
    a window that starts after the last stored bar already fetches from it). When a re-fetched bar differs from the stored one
    (a split the vendor has since applied, a correction), the vendor's series over the whole
    stored span is fetched: :func:`build_partitions` then republishes it whole or quarantines it
    (the restatement rule; see ``data_lake/README.md``).

    Candle failures raise :class:`ProviderError`; funding and earnings are reference data, so a
    provider that does not serve them is noted, not fatal.
    """
    t0 = time.perf_counter()
    key = PartitionKey(provider.name, interval, asset.symbol)
    signature = lake.signature(key) if lake is not None else None
    stored = lake.read_bars(key) if lake is not None else None
    fetch_from, fetch_to = utc(start), utc(end)
    holes: list[tuple[str, pd.Timestamp, pd.Timestamp]] = []  # (side, from, to)
    if stored is not None and not stored.empty:
        first, last = stored["timestamp"].iloc[0], stored["timestamp"].iloc[-1]
        after = last + interval_delta(interval)  # where the stored series ends
        fetch_from = min(fetch_from, first if full else after - RESTATEMENT_OVERLAP)
        if utc(start) > after:  # a hole after the stored bars: the fetch from the tail fills it
            holes.append(("after", after, utc(start)))
        if fetch_to < first:  # ... or before them: fetched up to the first stored bar
            # from the first bar that does not close by the asked end
            opens_after = fetch_to - interval_delta(interval) + pd.Timedelta(microseconds=1)
            holes.append(("before", opens_after, first))
            fetch_to = first
    bars = _fetch_closed(provider, asset, interval, fetch_from, fetch_to)
    out = AssetFetch(asset.symbol, bars, fetched_from=fetch_from, stored=stored,
                     stored_signature=signature, filled=_filled(bars, holes))
    if stored is not None and not stored.empty:
        compared = _Comparison(stored, bars)
        out.first_change = compared.first_change()
        if compared.any_restated():
            changed = compared.restated()
            out.restatement = _restate(provider, asset, interval, stored, bars, changed, end)
            whole = out.restatement.pop("base")
            if whole is not None:
                out.base = whole
    if not reference:
        out.seconds = time.perf_counter() - t0
        return out
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
    if not asset.is_crypto:
        try:
            out.events = provider.fetch_events(asset, fetch_from, end)
        except ProviderError as exc:
            out.warnings.append(f"events: {exc}")
    out.seconds = time.perf_counter() - t0
    return out


def _filled(bars: pd.DataFrame, holes: list[tuple[str, pd.Timestamp, pd.Timestamp]]
            ) -> list[dict[str, object]]:
    """The holes between the window and the stored series the fetch brought bars for (a hole
    over a closed market brings none): side, first bar, the time the hole ends, how many bars."""
    times = bars["timestamp"]
    out = []
    for side, begin, end in holes:
        inside = times[(times >= begin) & (times < end)]
        if len(inside):
            out.append({"side": side, "from": inside.iloc[0], "to": end, "bars": len(inside)})
    return out


def _fetch_closed(provider: Provider, asset: Asset, interval: str, start: pd.Timestamp,
                  end: pd.Timestamp) -> pd.DataFrame:
    bars = drop_unclosed(provider.fetch_bars(asset, interval, start, end), interval,
                         asset.calendar, end)
    if bars.empty:
        raise NoDataError(f"no {interval} bar closed between {start} and {end}",
                          provider=provider.name, symbol=asset.symbol)
    return bars


def restated_bars(stored: pd.DataFrame, fetched: pd.DataFrame, rtol: float = 1e-9
                  ) -> pd.DataFrame:
    """The fetched bars at times the lake holds whose open, high, low, close or volume differ
    from the stored ones (relative tolerance ``rtol``), with the stored close as ``close_old``.
    Only the stored bars from the fetch's first on are read."""
    return _Comparison(stored, fetched).restated(rtol)


_PRICES = list(BAR_COLUMNS[1:])  # open, high, low, close, volume: what a restatement changes


class _Comparison:
    """The fetched bars against the stored series: ``got``, the rows of the fetched bars whose
    time the lake holds, and the fetched and stored values there (rows x :data:`_PRICES`).
    Values are taken row-first per column: a run compares a few re-fetched bars with a long
    stored series. One comparison serves the restatement check and the first change."""

    def __init__(self, stored: pd.DataFrame, fetched: pd.DataFrame) -> None:
        self.stored, self.fetched = stored, fetched
        self.got, held = _stored_matches(stored, fetched)
        self.new, self.old = (np.column_stack([f[c].to_numpy(dtype=float)[rows] for c in _PRICES])
                              for f, rows in ((fetched, self.got), (stored, held)))

    def differ(self, rtol: float) -> np.ndarray:
        """Per matched row: whether a value differs (relative tolerance ``rtol``)."""
        if rtol == 0.0:  # exactly equal, nulls equal: the same answer as isclose, cheaper
            same = (self.new == self.old) | (np.isnan(self.new) & np.isnan(self.old))
            return ~same.all(axis=1)
        return ~np.isclose(self.new, self.old, rtol=rtol, atol=0.0, equal_nan=True).all(axis=1)

    def restated(self, rtol: float = 1e-9) -> pd.DataFrame:
        """See :func:`restated_bars`."""
        differ = self.differ(rtol)
        rows = self.got[differ]
        out = self.fetched.iloc[rows][["timestamp", *_PRICES]].assign(
            close_old=self.old[differ, 3])
        if not out["timestamp"].is_monotonic_increasing:
            out = out.sort_values("timestamp", kind="stable")
        return out.reset_index(drop=True)

    def any_restated(self, rtol: float = 1e-9) -> bool:
        return bool(self.differ(rtol).any())

    def first_change(self) -> pd.Timestamp:
        """See :func:`_first_change`."""
        same = np.zeros(len(self.fetched), dtype=bool)
        same[self.got] = ~self.differ(0.0)
        times = self.fetched["timestamp"]
        if not same.all():
            return times.iloc[np.flatnonzero(~same)].min()
        last = self.stored["timestamp"].iloc[-1]
        newest = times.iloc[-1] if times.is_monotonic_increasing else times.max()
        return max(last, newest) + pd.Timedelta(microseconds=1)


def _stored_matches(stored: pd.DataFrame, fetched: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Row numbers of the fetched bars whose time the lake holds, and of those stored bars (the
    stored series is sorted by time)."""
    if stored.empty or fetched.empty:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    held, want = utc_micros(stored["timestamp"]), utc_micros(fetched["timestamp"])
    pos = np.clip(np.searchsorted(held, want), 0, len(held) - 1)
    got = np.flatnonzero(held[pos] == want)
    return got, pos[got]


def _restate(provider: Provider, asset: Asset, interval: str, stored: pd.DataFrame,
             fetched: pd.DataFrame, changed: pd.DataFrame, end: pd.Timestamp) -> dict[str, object]:
    """What the manifest says of a restatement, and the vendor's series over the stored span
    (``base``; None, with ``error`` saying why, when the vendor cannot serve the whole span: the
    asset is then quarantined)."""
    ratio = (changed["close"] / changed["close_old"]).to_numpy()
    info: dict[str, object] = {
        "bars_differing": len(changed), "first": changed["timestamp"].iloc[0],
        "last": changed["timestamp"].iloc[-1],
        "close_ratio_min": float(np.nanmin(ratio)), "close_ratio_max": float(np.nanmax(ratio)),
        "stored_from": stored["timestamp"].iloc[0], "base": None, "error": None}
    first = stored["timestamp"].iloc[0]
    try:
        whole = fetched if fetched["timestamp"].iloc[0] <= first else _fetch_closed(
            provider, asset, interval, first, end)
    except ProviderError as exc:
        info["error"] = f"the vendor's whole series could not be fetched: {exc}"
        return info
    if whole["timestamp"].iloc[0] > first:
        info["error"] = (f"the vendor serves bars from {whole['timestamp'].iloc[0]} only; the lake "
                         f"holds bars from {first}")
        return info
    info["base"] = whole
    return info


def derive_complete(base: pd.DataFrame, source: str, target: str, calendar: str) -> pd.DataFrame:
    """Coarser bars from ``base``: only bars whose every expected source bar is present."""
    return resample(base, source, target, calendar, complete_only=True)


@dataclass
class AssetPartitions:
    """The frames one asset will publish, with counts for the manifest.

    ``judge``: per bar partition, the bars to validate - the new and changed bars plus the
    stored context the checks need (``context_bars``) - and the time from which bars are judged
    (None: the whole series, as for a first ingest or a restatement)."""

    symbol: str
    frames: dict[Key, pd.DataFrame]
    stats: dict[str, object]
    read: dict[Key, object | None] = field(default_factory=dict)  # stored, as read
    judge: dict[PartitionKey, tuple[pd.DataFrame, pd.Timestamp | None]] = field(
        default_factory=dict)


def build_partitions(lake: Lake, provider_name: str, asset: Asset, fetched: AssetFetch,
                     base: str, *, context_bars: int = 62,
                     intervals: Sequence[str] | None = None) -> AssetPartitions:
    """Merge the fetch into the stored series and derive every coarser interval (``intervals``:
    only those; a watch run's are its own interval alone).

    Incremental: only the coarser bars a new or changed base bar falls into are derived again
    (from the base bars of ``DERIVE_CONTEXT`` before the first change, or before the end of a
    stored coarser series that stops short of its base bars; a derived bar is kept only
    when complete, so a re-derived bar always replaces the stored one whole), and only the bars
    from the first change on are judged, with ``context_bars`` stored bars (sessions, for stock
    intraday series) before them as the checks' trailing context. A restatement replaces the
    stored series with the vendor's whole one, derived and judged whole. A derived interval with
    no complete bar yet is left out of the run: its stored partition, if any, stays as it is.
    """
    base_key = PartitionKey(provider_name, base, asset.symbol)
    keys = [PartitionKey(provider_name, i, asset.symbol)
            for i in (intervals or coarser_or_equal(base))]
    fkey = TableKey("funding", provider_name, asset.symbol)
    read = {k: lake.signature(k) for k in (*keys, fkey)}  # before reading: see _overtaken
    restated = fetched.restatement is not None
    reuse = fetched.stored is not None and read[base_key] == fetched.stored_signature
    existing = fetched.stored if reuse else lake.read_bars(base_key)
    if restated:
        merged, revised = fetched.base.reset_index(drop=True), len(existing)
    elif existing.empty and _is_bar_series(fetched.base):  # the fetch is the series: no copy
        merged, revised = fetched.base, 0
    else:
        merged, revised = merge_bars(existing, fetched.base)
    changed_from = None if restated or existing.empty else (
        fetched.first_change if reuse and fetched.first_change is not None
        else _first_change(existing, fetched.base))
    frames: dict[Key, pd.DataFrame] = {base_key: merged}
    judge: dict[PartitionKey, tuple[pd.DataFrame, pd.Timestamp | None]] = {}
    not_yet = []
    source = merged if changed_from is None else merged[
        merged["timestamp"] >= (changed_from - DERIVE_CONTEXT).normalize()]
    last_close = bar_close_times(asset.calendar, base,
                                 pd.DatetimeIndex(merged["timestamp"].iloc[-1:]))[0]
    for key in keys:
        derived_again = key.interval != base and changed_from is not None
        # from the first change, or earlier where the stored interval stops short of its base
        # bars (a publication torn before journals, a partial copy): derived again from there
        since = changed_from if not derived_again else min(
            changed_from, _next_open(lake.last_bar_open(key), key.interval, merged))
        if key.interval == base:
            derived = merged
        elif since is not None and not _completes_a_bar(asset.calendar, key.interval, since,
                                                        last_close):
            if read[key] is None:  # nothing stored, nothing complete: nothing to publish
                not_yet.append(key.interval)
            continue  # no bar of this interval holds a changed base bar and is complete
        else:
            stored_key = lake.read_bars(key) if derived_again else None
            fresh = derive_complete(source if since == changed_from else merged[
                merged["timestamp"] >= (since - DERIVE_CONTEXT).normalize()],
                base, key.interval, asset.calendar)
            derived = fresh if stored_key is None else merge_bars(stored_key, fresh)[0]
            if derived.empty:
                not_yet.append(key.interval)
                continue
            frames[key] = derived
        judge[key] = _to_judge(derived, changed_from, asset.calendar, key.interval, context_bars)
    if fetched.funding is not None and not fetched.funding.empty:
        frames[fkey] = _merge_table(lake.read_table(fkey), fetched.funding, ["timestamp"])
    if fetched.events is not None and not fetched.events.empty:
        ekey = TableKey("events", provider_name, asset.symbol)
        frames[ekey] = _merge_table(lake.read_table(ekey), fetched.events, ["timestamp", "kind"])
    stats = {"fetched": len(fetched.base), "fetched_from": fetched.fetched_from,
             "stored_before": len(existing), "new": len(merged) - len(existing),
             "revised": revised, "first": fetched.base["timestamp"].iloc[0],
             "last": fetched.base["timestamp"].iloc[-1], "judged_from": changed_from,
             "fetch_seconds": round(fetched.seconds, 3), "no_complete_bar_yet": not_yet,
             "filled": fetched.filled, "warnings": fetched.warnings}
    return AssetPartitions(asset.symbol, frames, stats, read, judge)


def _is_bar_series(bars: pd.DataFrame) -> bool:
    """Whether ``bars`` is what :func:`~arena.data.lake.merge_bars` makes of it alone: the bar
    columns in order (times in microseconds, values float64), a default index, times strictly
    increasing."""
    if tuple(bars.columns) != tuple(BAR_COLUMNS) or not isinstance(bars.index, pd.RangeIndex) \
            or bars.index.start != 0 or bars.index.step != 1:
        return False
    times = bars["timestamp"].array
    if not isinstance(times, pd.arrays.DatetimeArray) or times.unit != "us" \
            or str(times.tz) != "UTC":
        return False
    if any(bars[c].dtype != np.float64 for c in BAR_COLUMNS[1:]):
        return False
    micros = times.asi8
    return bool(len(micros)) and micros[0] != NAT and bool(np.all(micros[1:] > micros[:-1]))


def _next_open(last_open: pd.Timestamp | None, interval: str, base: pd.DataFrame
               ) -> pd.Timestamp:
    """Where a stored derived series ends (its last bar's open ``last_open`` plus the interval;
    the first base bar when it holds none): a bar of it from there on is missing if its base
    bars are there."""
    if last_open is None:
        return base["timestamp"].iloc[0]
    return last_open + interval_delta(interval)


def _merge_table(stored: pd.DataFrame, fetched: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """Stored rows and fetched ones, the fetched winning on the same ``key``, sorted by it."""
    both = [fetched] if stored.empty else [stored, fetched]
    return (pd.concat(both, ignore_index=True).drop_duplicates(key, keep="last")
            .sort_values(key).reset_index(drop=True))


@lru_cache(maxsize=256)
def _completes_a_bar(calendar: str, interval: str, changed_from: pd.Timestamp,
                     last_close: pd.Timestamp) -> bool:
    """Whether a bar of ``interval`` that holds a base bar from ``changed_from`` on is complete
    by ``last_close`` (the close of the last base bar): else that interval has nothing new.
    Cached: the assets of a calendar mostly share both times in a run."""
    opens = expected_bars(calendar, interval, changed_from - interval_delta(interval),
                          last_close)
    closes = bar_close_times(calendar, interval, opens)
    return bool(((closes > changed_from) & (closes <= last_close)).any())


def _first_change(stored: pd.DataFrame, fetched: pd.DataFrame) -> pd.Timestamp:
    """Open time of the first fetched bar that is new or differs from the stored one; just after
    the last bar when there is none (the bars before the fetch are the stored ones, unchanged)."""
    return _Comparison(stored, fetched).first_change()


_SESSION_BARS = {"15m": 26, "1h": 7, "4h": 2}  # the most bars of one NYSE session


def _to_judge(series: pd.DataFrame, changed_from: pd.Timestamp | None, calendar: str,
              interval: str, context_bars: int) -> tuple[pd.DataFrame, pd.Timestamp | None]:
    """The bars to validate - from ``context_bars`` bars (sessions for stock intraday bars,
    whose overnight returns are judged against earlier overnight returns) before the first
    change - and the time from which they are judged."""
    if changed_from is None:
        return series, None
    micros = utc_micros(series["timestamp"])
    first = int(np.searchsorted(micros, ceil_micros(changed_from)))
    if calendar == NYSE and interval in _SESSION_BARS:
        # the sessions of the last (context_bars + 1) x a session's bars before the change hold
        # the last context_bars session starts (the first of them may start mid-session)
        low = max(first - (context_bars + 1) * _SESSION_BARS[interval], 0)
        day = ny_dates(micros[low:first])
        starts = low + np.flatnonzero(np.r_[True, day[1:] != day[:-1]]) if first > low else \
            np.array([low])
        begin = int(starts[max(len(starts) - context_bars, 0)])
    else:
        begin = max(first - context_bars, 0)
    return series.iloc[begin:].reset_index(drop=True), changed_from


def _overtaken(lake: Lake, part: AssetPartitions) -> bool:
    """Whether another run replaced any of the asset's stored files since they were read."""
    return any(lake.signature(k) != sig for k, sig in part.read.items())


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
                        start: pd.Timestamp, as_of: pd.Timestamp, base: str,
                        lake: Lake | None = None, provider: str | None = None):
    """One validation run over the bars each asset adds, with their context (a ValidationReport).

    Base series are counted from the asked ``start`` (older stored history is judged against the
    calendar but not counted, so a long history cannot dilute a hole in the new bars); derived
    series from their first bar. The end is judged by staleness at ``as_of``, or at the lake's
    horizon when a backfill merges into bars stored beyond ``as_of``. The market of a calendar
    whose benchmark the batch does not hold (a run of one symbol) is the benchmark's stored bars
    from ``lake``.
    """
    bar_frames = [(k, judged) for p in parts for k, (judged, _) in p.judge.items()]
    windows = [Window(symbol=k.symbol, interval=k.interval, calendar=universe[k.symbol].calendar,
                      start=_count_from(start, judged, since) if k.interval == base else None,
                      judged_from=since)
               for p in parts for k, (judged, since) in p.judge.items()]
    lasts: dict[str, list[pd.Timestamp]] = {}  # per calendar: the last bar of each base series
    for k, f in bar_frames:
        if k.interval == base and not f.empty:
            lasts.setdefault(universe[k.symbol].calendar, []).append(f["timestamp"].iloc[-1])
    horizon = max((bar_close_times(calendar, base, pd.DatetimeIndex(times)).max()
                   for calendar, times in lasts.items()), default=as_of)
    market = _stored_market(lake, provider, universe, {k for k, _ in bar_frames})
    return validate_series([(w, judged) for w, (_, judged) in zip(windows, bar_frames,
                                                                  strict=True)],
                           as_of=max(as_of, horizon), market=market)


def _count_from(start: pd.Timestamp, judged: pd.DataFrame, since: pd.Timestamp | None
                ) -> pd.Timestamp:
    """Where the bar count of a base series starts: the asked start, or - for the bars an
    incremental run validates - no earlier than the first of them (older ones were counted when
    they were published)."""
    if since is None or judged.empty:
        return start
    return max(start, judged["timestamp"].iloc[0])


def _stored_market(lake: Lake | None, provider: str | None, universe: Universe,
                   keys: set[PartitionKey]) -> dict[tuple[str, str], pd.Series]:
    """The stored closes of each calendar's benchmark (SPY, BTC) at the batch's intervals, for
    the calendars whose benchmark the batch does not hold."""
    if lake is None or provider is None:
        return {}
    held = {k.symbol for k in keys}
    out = {}
    for calendar, symbol in ValidationConfig().benchmarks:
        if symbol in held:
            continue
        for interval in {k.interval for k in keys if universe[k.symbol].calendar == calendar}:
            bars = lake.read_bars(PartitionKey(provider, interval, symbol))
            if not bars.empty:
                out[(calendar, interval)] = bars.set_index("timestamp")["close"]
    return out


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
    full: bool = False  # re-fetch every stored bar (else the last RESTATEMENT_OVERLAP of them)
    watch: bool = False  # an interval finer than the provider's base, fetched on its own
    source: str = ""  # what fetched the bars, when not the provider whose partitions they fill
    data_docs: bool = False  # build Data Docs for this run (else: see _data_docs)

    @property
    def symbols(self) -> list[str]:
        return [a.symbol for a in self.assets]

    @property
    def intervals(self) -> tuple[str, ...]:
        """The intervals the run publishes: the base and every coarser one derived from it; a
        watch run's own interval only."""
        return (self.base,) if self.watch else tuple(coarser_or_equal(self.base))


def plan_ingest(provider: Provider, universe: Universe, *, start: object, end: object,
                now: object | None = None, full: bool = False,
                interval: str | None = None, data_docs: bool = False) -> IngestPlan:
    """Check the window and choose the base interval. ``now`` (injected; default the wall clock)
    caps ``end``: a bar that has not closed yet is never ingested. ``full``: re-fetch every
    stored bar of the assets (to look for restatements), not only the last two days.

    ``interval``: the provider's base by default. One finer than the base that the provider
    serves makes a *watch* run: that interval alone, fetched, validated and published as a
    series of its own, nothing derived from it (Yahoo's 15-minute stock bars, which the
    invalidation monitor reads, beside the hourly series the lake is built from); its window
    starts no earlier than the vendor keeps the interval (the provider's ``reach``)."""
    started = utc(now) if now is not None else pd.Timestamp.now(tz="UTC")
    start_ts, asked_end = utc(start), utc(end)
    end_ts = min(asked_end, started)
    if end_ts <= start_ts:
        why = "starts in the future" if start_ts >= started else "is empty"
        raise IngestRequestError(f"window {start_ts} .. {asked_end} {why} (now {started})")
    served = tuple(a for a in universe if provider.supports(a))
    if not served:
        raise IngestRequestError(f"{provider.name} serves none of the requested assets")
    base, watch = _run_interval(provider, interval)
    reach = (getattr(provider, "reach", None) or {}).get(base) if watch else None
    if reach is not None and start_ts < started - reach:
        start_ts = (started - reach).ceil("1D")  # a day inside the vendor's reach
        if end_ts <= start_ts:
            raise IngestRequestError(f"window {utc(start)} .. {asked_end}: {provider.name} keeps {base} "
                             f"bars for {reach.days} days only (now {started})")
    assets = tuple(a for a in served if _bars_close_in(a.calendar, base, start_ts, end_ts))
    closed = tuple(a.symbol for a in served if a not in assets)
    stand_in = "files" if getattr(provider, "stands_in_for", None) else ""
    return IngestPlan(new_run_id(provider.name, started), provider.name, started, start_ts,
                      end_ts, base, assets, asked_end, closed, full, watch, stand_in, data_docs)


def _run_interval(provider: Provider, interval: str | None) -> tuple[str, bool]:
    """The interval a run fetches, and whether it is a watch run (see :func:`plan_ingest`)."""
    base = base_interval(provider)
    if interval is None or interval == base:
        return base, False
    if interval not in provider.intervals:
        raise IngestRequestError(f"{provider.name} does not serve {interval} bars (it serves "
                         f"{', '.join(i for i in INTERVAL_ORDER if i in provider.intervals)})")
    if INTERVAL_ORDER.index(interval) > INTERVAL_ORDER.index(base):
        raise IngestRequestError(f"{interval} bars are derived from {provider.name}'s {base} bars: ingest "
                         f"{base} (or a finer interval it serves, fetched on its own)")
    return interval, True


@lru_cache(maxsize=64)
def _bars_close_in(calendar: str, interval: str, start: pd.Timestamp, end: pd.Timestamp) -> bool:
    """Whether the calendar expects a bar that opens at or after ``start`` and closes by ``end``
    (a stock over a weekend expects none: asking would only return "no data"). Cached: a run
    asks it of every asset, for a few calendars."""
    opens = expected_bars(calendar, interval, start, end)
    return bool(len(opens)) and bool((bar_close_times(calendar, interval, opens) <= end).any())


@dataclass
class IngestResult:
    run_id: str
    published: bool
    manifest: dict[str, object]
    manifest_path: Path

    @property
    def summary(self) -> IngestSummary:
        """The manifest, typed."""
        return IngestSummary.of(self.manifest)


ProgressFn = Callable[[str, int, int], None]


def _quiet(stage: str, done: int, total: int) -> None:
    """The default progress callback: says nothing."""


def run_ingest(provider: Provider, universe: Universe, *, start: object, end: object,
               lake: Lake | None = None, now: object | None = None,
               progress: ProgressFn | None = None, full: bool = False,
               interval: str | None = None, runner: Runner = INLINE,
               data_docs: bool = False) -> IngestResult:
    """Fetch, validate and publish one provider's bars for ``universe`` over ``[start, end)``
    (``interval``: a watch run of a finer interval than the provider's base, see
    :func:`plan_ingest`). Each asset's fetch is a step of ``runner`` (:func:`fetch`: the
    command line's threads, a flow's tasks), retried only on transient vendor errors.
    ``data_docs``: build Data Docs for this run (else once a day and for a failed validation).

    Raises :class:`IngestError` (after writing the manifest) when any asset did not publish; the
    others are published (all-or-nothing per asset).
    """
    lake = lake or Lake()
    plan = plan_ingest(provider, universe, start=start, end=end, now=now, full=full,
                       interval=interval, data_docs=data_docs)
    notify = progress or _quiet
    t0 = time.perf_counter()
    counter = _Counter(notify, "fetch", len(plan.assets))
    results = runner.map(fetch, list(plan.assets), provider, plan, lake, counter,
                         capture=(ProviderError,))
    fetches = [r for r in results if isinstance(r, AssetFetch)]
    errors = {a.symbol: f"{type(r).__name__}: {r}" for a, r in zip(plan.assets, results,
                                                                    strict=True)
              if isinstance(r, ProviderError)}
    timings = {"fetch": time.perf_counter() - t0}
    return finish_ingest(lake, plan, universe, fetches, errors, timings, notify)


class _Counter:
    """Counts finished fetches for the progress callback (fetches finish in any order, from
    several threads)."""

    def __init__(self, notify: ProgressFn, stage: str, total: int) -> None:
        self.notify, self.stage, self.total = notify, stage, total
        self.done = 0
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            self.done += 1
            self.notify(self.stage, self.done, self.total)

    def __reduce__(self) -> tuple[object, ...]:  # sent elsewhere (a task's parameters): silent
        return (_Counter, (_quiet, self.stage, self.total))


# a vendor's rate limit or outage heals; a bad symbol or an HTML page will not
FETCH_RETRY = Retry(delays=(2.0, 10.0, 30.0), when=is_transient)
FETCH_WIDTH = 4  # vendors throttle: four concurrent fetches of one provider is polite


@step("fetch-{asset.symbol}", retry=FETCH_RETRY, width=FETCH_WIDTH)
def fetch(asset: Asset, provider: Provider, plan: IngestPlan, lake: Lake,
          done: Callable[[], None] | None = None) -> AssetFetch:
    """One asset's fetch of a run (:func:`fetch_asset` over the plan's window); ``done`` hears
    when it is over (fetched, or failed for good: not a failure its retry may mend)."""
    try:
        fetched = fetch_asset(provider, asset, plan.base, plan.start, plan.end, lake=lake,
                              full=plan.full, reference=not plan.watch)
    except ProviderError as exc:
        if done is not None and not exc.transient:  # a transient one is fetched again
            done()
        raise
    if done is not None:
        done()
    return fetched


def finish_ingest(lake: Lake, plan: IngestPlan, universe: Universe, fetches: Sequence[AssetFetch],
                  errors: dict[str, str], timings: dict[str, float],
                  notify: ProgressFn = _quiet) -> IngestResult:
    """Build partitions, validate them once, publish every good asset; write the manifest.

    All-or-nothing per asset: whatever goes wrong for one asset (its fetch, build, expectations,
    publication), its staged files go to quarantine with the reason, its published partitions
    stay as they were, and the other assets publish. Raises :class:`IngestError` (after writing
    the manifest) when any asset did not publish, and :class:`LakeWriteError` (after writing the
    manifest, when it can be) when the lake could not be written: a full or read-only disk stops
    the run, whoever's file it was writing. An interrupt (``KeyboardInterrupt``) propagates
    at once, and the run's lock removes its staging folder on the way out: whatever was not
    published keeps its last good partitions, and no manifest is written.
    """
    outcomes: dict[str, dict[str, object]] = {
        s: {"status": FETCH_FAILED, "reason": e} for s, e in errors.items()}
    by_symbol = {f.symbol: f for f in fetches}
    parts: dict[str, AssetPartitions] = {}
    published: dict[str, AssetPartitions] = {}
    report = docs = failure = None
    recovered: list[str] = []  # torn publications of killed runs this run rolled forward or back
    disk: OSError | None = None  # a full, read-only or forbidden lake: the run stops
    try:
        with lake.run_lock(plan.run_id):
            lake.clean_stale_staging()
            failure, report, docs = _build_validate_publish(
                lake, plan, universe, fetches, timings, notify, outcomes, by_symbol, parts,
                published, recovered)
    except OSError as exc:  # the staging folder is gone (run_lock); nothing more published
        if not is_disk_error(exc):
            raise
        disk = exc
        failure = f"the lake could not be written: {os_error_text(exc)}"
        for f in fetches:  # the assets it left undecided (no quarantine on a failing disk)
            if f.symbol not in outcomes:
                outcomes[f.symbol] = {"status": FAILED, "reason": failure, "quarantine": None}
    manifest = _manifest(lake, plan, fetches, parts, published, outcomes, report, docs, failure,
                         timings, recovered)
    try:
        path = lake.write_json(Path("manifests") / "ingest" / f"{plan.run_id}.json", manifest)
    except OSError as exc:
        if not is_disk_error(exc):
            raise
        raise LakeWriteError(disk or exc, plan.run_id, manifest, None, os_error_text(exc)) from exc
    if disk is not None:
        raise LakeWriteError(disk, plan.run_id, manifest, path) from disk
    if manifest["status"] != PUBLISHED:
        bad = manifest["not_published"]
        reasons = [f"{s}: {r}" for s, r in bad.items()] + ([failure] if failure and not bad else [])
        shown = "; ".join(reasons[:5]) + (f"; ... {len(reasons) - 5} more" if len(reasons) > 5 else "")
        done = f"published {', '.join(published)}" if published else "nothing published"
        raise IngestError(f"ingest {plan.run_id} failed for {', '.join(bad) or 'the run'} "
                          f"({done}): {shown} (manifest: {path})", manifest)
    return IngestResult(plan.run_id, True, manifest, path)


def _build_validate_publish(lake: Lake, plan: IngestPlan, universe: Universe,
                            fetches: Sequence[AssetFetch], timings: dict[str, float],
                            notify: ProgressFn, outcomes: dict[str, dict[str, object]],
                            by_symbol: dict[str, AssetFetch], parts: dict[str, AssetPartitions],
                            published: dict[str, AssetPartitions], recovered: list[str]
                            ) -> tuple[str | None, object, object]:
    """The steps of :func:`finish_ingest` under the run's lock; fills ``outcomes``, ``parts``
    and ``published``, returns the run's failure (None when it has none), the validation report
    and its Data Docs. An :class:`OSError` of a full, read-only or forbidden disk
    (:func:`~arena.data.lake.is_disk_error`) is no asset's fault: it stops the run and
    propagates (so does an interrupt); any other failure of one asset is that asset's."""
    report = docs = failure = None
    try:
        timings["build"] = timings["stage"] = 0.0
        for f in fetches:
            t0 = time.perf_counter()
            if f.restatement is not None and f.restatement.get("error"):
                _quarantine(lake, plan, outcomes, f.symbol,
                            "restated by the vendor, but " + str(f.restatement["error"]))
                continue
            try:
                part = build_partitions(lake, plan.provider, universe[f.symbol], f, plan.base,
                                        intervals=plan.intervals)
            except Exception as exc:  # e.g. bars that no calendar bar can hold
                outcomes[f.symbol] = {"status": FAILED,
                                      "reason": f"build: {type(exc).__name__}: {exc}"}
                continue
            t1 = time.perf_counter()
            timings["build"] += t1 - t0
            try:
                lake.stage(plan.run_id, part.frames, group=f.symbol)
            except Exception as exc:  # a file that cannot be written: this asset only
                if is_disk_error(exc):  # a full or read-only lake: every asset's, the run stops
                    raise
                _quarantine(lake, plan, outcomes, f.symbol,
                            f"stage: {type(exc).__name__}: {exc}")
                continue
            finally:
                timings["stage"] += time.perf_counter() - t1
            parts[f.symbol] = part
        t0 = time.perf_counter()
        notify("validate", 0, 1)
        report, raised = _validate(list(parts.values()), universe, plan, lake)
        notify("validate", 1, 1)
        timings["validate"] = time.perf_counter() - t0
        if report is not None:
            report.write(lake.root / "validation" / plan.run_id)
            docs = _data_docs(lake, report, plan)
        bad = dict(raised)
        suspect_only = {s: True for s in parts}
        for result in report.failed() if report is not None else []:
            bad.setdefault(result.symbol, []).append(result.message)
            suspect_only[result.symbol] &= result.suspect
        for symbol, messages in bad.items():
            held = suspect_only.get(symbol, False) and symbol not in raised
            _quarantine(lake, plan, outcomes, symbol, "validation: " + "; ".join(messages),
                        status=HELD if held else QUARANTINED)
        good = [p for s, p in parts.items() if s not in bad]
        t0 = time.perf_counter()
        _publish(lake, plan, universe, good, by_symbol, outcomes, published, recovered)
        timings["publish"] = time.perf_counter() - t0
    except Exception as exc:
        if is_disk_error(exc):
            raise
        failure = f"{type(exc).__name__}: {exc}"
    for f in fetches:  # whatever the failure left undecided
        if f.symbol not in outcomes:
            _quarantine(lake, plan, outcomes, f.symbol, failure or "not published")
    return failure, report, docs


DOCS_BUILT = "arena_built.json"  # in the Data Docs folder: the day and run of the last build


class _DocsBeside:
    """Where :func:`_data_docs` builds: here (the default), or, inside :func:`docs_beside`, in
    a process of its own while the caller goes on, waited for when the block ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.pool: Any = None
        self.pending: list[tuple[Any, str]] = []


_beside = _DocsBeside()


@contextmanager
def docs_beside() -> Iterator[None]:
    """Inside this block, an ingest's Data Docs are built in a process of their own (Great
    Expectations' import and build, 5-6 s, on another core) while the block goes on - a
    replay's days; the block's end waits for them (a build that failed is logged, as always).
    A process that imported Great Expectations already builds them itself, as outside it.
    Nesting is allowed; the outermost block waits."""
    with _beside.lock:
        _beside.depth += 1
    try:
        yield
    finally:
        with _beside.lock:
            _beside.depth -= 1
            done = _beside.depth == 0
            pending, pool = (_beside.pending, _beside.pool) if done else ([], None)
            if done:
                _beside.pending, _beside.pool = [], None
        for future, run_id in pending:
            try:
                future.result(timeout=600)
            except Exception:
                _log.warning("Data Docs of %s not built", run_id, exc_info=True)
        if pool is not None:
            pool.shutdown(wait=True)


def _build_docs(report, root: Path, run_id: str, day: str) -> Path:
    """Build the Data Docs of one run and note the day of the build (in a process of its own
    under :func:`docs_beside`)."""
    index = report.build_data_docs(root, run_name=run_id)
    write_text(root / DOCS_BUILT, json.dumps({"day": day, "run_id": run_id}))
    return index


def _data_docs(lake: Lake, report, plan: IngestPlan) -> Path | None:
    """Great Expectations' Data Docs of the lake's validation runs (the index; None: never
    built). They are built for the first run of each UTC day that validated, for every run that
    failed validation and for a run asked for them (``plan.data_docs``): building them imports
    Great Expectations (5-6 s), which the hourly run of a few hundred bars does not pay. Every
    run keeps its own result and page beside them (``validation/<run id>``). A build that fails
    is logged: the stored result is what the run needs. Inside :func:`docs_beside` the build
    runs in a process of its own, and the index returned is where it will be."""
    root = lake.root / "validation" / "docs"
    marker, day = root / DOCS_BUILT, f"{plan.started:%Y-%m-%d}"
    try:
        last = json.loads(marker.read_text(encoding="utf-8")).get("day")
    except (OSError, ValueError, AttributeError):
        last = None
    if plan.data_docs or not report.success or last != day:
        with _beside.lock:
            # a process that has Great Expectations imported already builds them itself
            if _beside.depth and "great_expectations" not in sys.modules:
                if _beside.pool is None:
                    import multiprocessing
                    from concurrent.futures import ProcessPoolExecutor

                    _beside.pool = ProcessPoolExecutor(
                        max_workers=1, mp_context=multiprocessing.get_context("spawn"))
                _beside.pending.append((_beside.pool.submit(_build_docs, report, root,
                                                            plan.run_id, day), plan.run_id))
                return root / "index.html"
        try:
            _build_docs(report, root, plan.run_id, day)
        except Exception:
            _log.warning("Data Docs of %s not built", plan.run_id, exc_info=True)
    index = root / "index.html"
    return index if index.exists() else None


def _validate_plan(parts: list[AssetPartitions], universe: Universe, plan: IngestPlan,
                   lake: Lake):
    """:func:`validate_partitions` of a batch of the plan's run."""
    return validate_partitions(parts, universe, start=plan.start, as_of=plan.end,
                               base=plan.base, lake=lake, provider=plan.provider)


def _validate(parts: list[AssetPartitions], universe: Universe, plan: IngestPlan, lake: Lake):
    """One validation run over the batch; if it raises, the assets that make it raise are found
    one by one and left out (with the error), and the rest is validated again."""
    if not parts:
        return None, {}
    try:
        return _validate_plan(parts, universe, plan, lake), {}
    except Exception:
        raised: dict[str, list[str]] = {}
        for part in parts:
            try:
                _validate_plan([part], universe, plan, lake)
            except Exception as exc:
                raised[part.symbol] = [f"{type(exc).__name__}: {exc}"]
        if not raised or len(raised) == len(parts):  # not one asset's doing
            raise
        rest = [p for p in parts if p.symbol not in raised]
        return (_validate_plan(rest, universe, plan, lake) if rest else None), raised


def _quarantine(lake: Lake, plan: IngestPlan, outcomes: dict[str, dict[str, object]],
                symbol: str, reason: str, status: str = QUARANTINED) -> None:
    where = lake.quarantine(plan.run_id, symbol, reason=reason)
    outcomes[symbol] = {"status": status, "reason": reason,
                        "quarantine": None if where is None else str(where)}


def _publish(lake: Lake, plan: IngestPlan, universe: Universe, good: list[AssetPartitions],
             fetches: dict[str, AssetFetch],
             outcomes: dict[str, dict[str, object]],
             published: dict[str, AssetPartitions], recovered: list[str]) -> None:
    """Publish each good asset, all of its files or none, under the lake's writer lock.

    First, under the lock, every publication a killed run left torn is rolled forward or back
    (:func:`arena.data.recovery.recover_publications`; ``recovered`` gets one line each): the
    assets it touched are then overtaken, merged again with what is stored and validated again.

    An asset whose stored files another run replaced since they were read is merged again with
    what is stored now and validated again before its swap (no lost update). The earnings table,
    shared by the provider's stocks, is merged under the lock with the published assets' dates.
    """
    with lake.writer_lock():
        recovered.extend(p.describe() for p in recover_publications(lake))
        for part in good:
            symbol = part.symbol
            try:
                if _overtaken(lake, part):
                    part = build_partitions(lake, plan.provider, universe[symbol], fetches[symbol],
                                            plan.base, intervals=plan.intervals)
                    report = _validate_plan([part], universe, plan, lake)
                    if not report.success:
                        _quarantine(lake, plan, outcomes, symbol,
                                    "validation after merging with another run's bars: "
                                    + "; ".join(r.message for r in report.failed()))
                        continue
                    lake.discard(plan.run_id, symbol)
                    lake.stage(plan.run_id, part.frames, group=symbol)
                staged = {k: lake.staged_path(plan.run_id, k, symbol) for k in part.frames}
                lake.publish(plan.run_id, staged, group=symbol)
            except Exception as exc:
                if is_disk_error(exc):  # the lake's, not the asset's: the run stops here
                    raise
                _quarantine(lake, plan, outcomes, symbol, f"publish: {type(exc).__name__}: {exc}")
                continue
            published[symbol] = part
            outcomes[symbol] = {"status": PUBLISHED, "reason": None}
        earnings_key = TableKey("earnings", plan.provider)
        earnings = merge_earnings(lake.read_table(earnings_key),
                                  [fetches[s] for s in published], plan.start, plan.end)
        if earnings is not None:
            staged = lake.stage(plan.run_id, {earnings_key: earnings}, group="_earnings")
            lake.publish(plan.run_id, staged, group="_earnings")


def _manifest(lake: Lake, plan: IngestPlan, fetches: Sequence[AssetFetch],
              parts: dict[str, AssetPartitions],
              published: dict[str, AssetPartitions], outcomes: dict[str, dict[str, object]],
              report, docs, failure: str | None, timings: dict[str, float],
              recovered: list[str]) -> dict[str, object]:
    assets = {}
    for symbol in (s for s in plan.symbols if s in outcomes):
        part = published.get(symbol) or parts.get(symbol)
        frames = part.frames if part is not None else {}
        assets[symbol] = {
            **outcomes[symbol],
            "partitions": {str(k): len(f) for k, f in frames.items()},
            "bars_published": sum(len(f) for k, f in frames.items()
                                  if isinstance(k, PartitionKey)) if symbol in published else 0,
        }
    every = all(a["status"] == PUBLISHED for a in assets.values()) and failure is None
    status = PUBLISHED if every else ("partial" if published else "failed")
    quarantined = [a["quarantine"] for a in assets.values() if a.get("quarantine")]
    return {
        "run_id": plan.run_id, "provider": plan.provider, "synthetic": is_synthetic(plan.provider),
        "stand_in": plan.source or None,  # the files folder that filled the provider's partitions
        "market": lake.market.describe(),  # where the partitions are published
        "status": status, "started": plan.started,
        "asked": {"symbols": plan.symbols, "market_closed": list(plan.closed),
                  "start": plan.start, "end": plan.asked_end,
                  "end_used": plan.end, "base_interval": plan.base, "full": plan.full,
                  "intervals": list(plan.intervals), "watch": plan.watch},
        "assets": assets,
        "published": list(published),
        "not_published": {s: a["reason"] for s, a in assets.items() if a["status"] != PUBLISHED},
        "got": {s: p.stats for s, p in parts.items()},
        "partitions": {str(k): len(f) for p in published.values() for k, f in p.frames.items()},
        "bars_published": sum(a["bars_published"] for a in assets.values()),
        "fetch_errors": {s: a["reason"] for s, a in assets.items() if a["status"] == FETCH_FAILED},
        "held": [s for s, a in assets.items() if a["status"] == HELD],
        # the holes a window left before or after the stored series, fetched too
        "filled": {f.symbol: f.filled for f in fetches if f.filled},
        "restated": {f.symbol: {**f.restatement, "outcome": assets.get(f.symbol, {}).get("status")}
                     for f in fetches if f.restatement is not None},
        "error": failure,
        "recovered": list(recovered),
        "validation": None if report is None else {
            "success": report.success, "summary": report.summary(),
            "failed": [r.message for r in report.failed()],
            "results": str(lake.root / "validation" / plan.run_id), "data_docs": None if docs is None else str(docs),
            "page": str(lake.root / "validation" / plan.run_id / PAGE),
            "index": str(lake.root / "validation" / PAGE)},
        "quarantine": str(lake.root / "quarantine" / plan.run_id) if quarantined else None,
        "timings_seconds": {k: round(v, 3) for k, v in timings.items()},
    }


def default_window(now: pd.Timestamp, days: int = 200) -> tuple[pd.Timestamp, pd.Timestamp]:
    """``[now - days, now)`` on whole hours: enough history for 26 weekly candles."""
    end = utc(now).floor(interval_delta("1h"))
    return (end - pd.Timedelta(days=days)).normalize(), end
