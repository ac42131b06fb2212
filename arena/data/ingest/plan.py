"""The plan of an ingest run, made before any fetch (no I/O): the window checked against the
clock, the base interval the lake's series are built from (or the finer interval of a *watch*
run), the assets whose market has a bar in the window, and the run's id; the default window."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import lru_cache

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
from arena.data.errors import UnsupportedError
from arena.data.ingest.errors import IngestRequestError
from arena.data.providers.base import Provider


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
    data_docs: bool = False  # build Data Docs for this run (else: see validate.data_docs)

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


def default_window(now: pd.Timestamp, days: int = 200) -> tuple[pd.Timestamp, pd.Timestamp]:
    """``[now - days, now)`` on whole hours: enough history for 26 weekly candles."""
    end = utc(now).floor(interval_delta("1h"))
    return (end - pd.Timedelta(days=days)).normalize(), end
