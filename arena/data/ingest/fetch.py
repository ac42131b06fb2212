"""Fetching one asset: its base bars closed by the window's end, the last stored bars fetched
again to look for restatements (the vendor's whole series when one differs), the holes between
the window and the stored series filled, and its funding rates, earnings dates and corporate
events; the run's fetch step (:func:`fetch`: retried on a vendor's transient errors, a few
assets at a time per vendor)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from arena.core.runner import Retry, step
from arena.core.sessions import interval_delta, utc
from arena.core.universe import Asset
from arena.data.bars import drop_unclosed, utc_micros
from arena.data.errors import NoDataError, ProviderError, UnsupportedError, is_transient
from arena.data.ingest.plan import IngestPlan
from arena.data.lake import Lake, PartitionKey
from arena.data.providers.base import BAR_COLUMNS, Provider

EARNINGS_HORIZON = dt.timedelta(days=180)  # how far ahead earnings calendars are kept
RESTATEMENT_OVERLAP = dt.timedelta(days=2)  # stored bars every run fetches again, to compare


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
    # the first fetched bar that is new or differs from ``stored`` (see first_change), found
    # by the fetch's comparison; None: nothing stored
    first_change: pd.Timestamp | None = None


def fetch_asset(provider: Provider, asset: Asset, interval: str, start: pd.Timestamp,
                end: pd.Timestamp, *, lake: Lake | None = None, full: bool = False,
                reference: bool = True) -> AssetFetch:
    """Fetch one asset's base bars (closed by ``end``), its funding rates and earnings dates
    (``reference``; a watch run, see :func:`~arena.data.ingest.plan.plan_ingest`, fetches the
    bars only).

    With a ``lake`` holding the asset, the fetch also covers the last ``RESTATEMENT_OVERLAP`` of
    the stored bars (``full``: all of them), and a window that ends before the first stored bar
    is fetched up to it (a back-fill never leaves a hole between its bars and the stored ones;
    a window that starts after the last stored bar already fetches from it). When a re-fetched bar differs from the stored one
    (a split the vendor has since applied, a correction), the vendor's series over the whole
    stored span is fetched: :func:`~arena.data.ingest.build.build_partitions` then republishes
    it whole or quarantines it (the restatement rule; see ``data_lake/README.md``).

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
        """See :func:`first_change`."""
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


def first_change(stored: pd.DataFrame, fetched: pd.DataFrame) -> pd.Timestamp:
    """Open time of the first fetched bar that is new or differs from the stored one; just after
    the last bar when there is none (the bars before the fetch are the stored ones, unchanged)."""
    return _Comparison(stored, fetched).first_change()


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
