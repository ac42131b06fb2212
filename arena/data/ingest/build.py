"""Building an asset's partitions from its fetch: the fetched base bars merged into the stored
series, every coarser interval derived again where a base bar is new or changed (complete bars
only), the bars of each partition that validation judges, with their context, and the funding,
events and earnings tables merged."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from arena.core.sessions import (
    NAT,
    NYSE,
    bar_close_times,
    ceil_micros,
    coarser_or_equal,
    expected_bars,
    interval_delta,
    ny_dates,
)
from arena.core.universe import Asset
from arena.data.bars import resample, utc_micros
from arena.data.ingest.fetch import EARNINGS_HORIZON, AssetFetch, first_change
from arena.data.lake import Key, Lake, PartitionKey, TableKey, merge_bars
from arena.data.providers.base import BAR_COLUMNS

DERIVE_CONTEXT = dt.timedelta(days=8)  # base bars re-derived before the first change (a week)


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
    read = {k: lake.signature(k) for k in (*keys, fkey)}  # before reading: see publish
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
        else first_change(existing, fetched.base))
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
