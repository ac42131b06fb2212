"""A cycle is played only when it is sound.

:func:`check_cycle` refuses a cycle - before anything is recorded - when the lake holds no season
(or another one), when the time is off the season's schedule (unless forced) or in the future,
when a later cycle is already recorded (cycles are recorded in order), when the time is not the
season's current cycle (a missed day is played only as an explicit backfill, oldest first, and
only while no later cycle exists), and when the market is not fresh enough to trade: a benchmark
stale or unusable, most assets stale, or no bars at all. Each asset's freshness is judged by its
own calendar (:func:`arena.market.asof.is_stale`: a stock holding Friday's close is fresh on
Sunday). A benchmark is unusable when a bar partition the cycle's market reads of it (its daily,
4-hour and weekly bars, its price) is missing, cannot be read or holds bars no validated series
has, or when it holds no daily bar closed by the cycle (:func:`benchmark_damage`): the market
would carry it as damaged (:attr:`arena.market.types.MarketData.damaged`), the benchmark every
book is measured against shown to none of the contestants.

A cycle recorded already (every contestant has its record there) is not checked past
:func:`check_open`, nor played again (:func:`arena.pipeline.live.cycle.recorded_run`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from arena.core.errors import UnusableInput
from arena.core.universe import Asset, Universe
from arena.data.errors import DamagedFile
from arena.data.lake import Lake, PartitionKey
from arena.ledger.attempts import Attempts
from arena.ledger.store import Ledger
from arena.market.asof import (
    BarRead,
    is_stale,
    last_price,
    price_interval,
    provider_of,
    scan_closed_bars,
)
from arena.market.briefing import RSI_HISTORY, SCAN_WINDOW
from arena.pipeline.live.closed import OffSeason, closed_at
from arena.pipeline.season_config import (
    SeasonConfig,
)

STALE_SHARE_REFUSED = 0.5  # a cycle refuses when more than this share of its assets is stale
BENCHMARK_BARS = ("1d", "4h", "1w")  # what a cycle's market reads of a benchmark besides its price
RESTORE = ("restore it (arena season verify --repair derives a derived interval again from its "
           "base bars, arena season verify --restore-from MIRROR copies the file back from a "
           "mirror) or ingest it again (arena ingest)")


class CycleRefused(UnusableInput, RuntimeError):
    """The cycle was not run (nothing recorded); the message says why and what to do."""

    consequence = "nothing recorded"


class CycleOffSeason(CycleRefused, OffSeason):
    """No cycle: the season has not started or is closed."""


@dataclass(frozen=True)
class Freshness:
    """One asset's data at a time: its last price's print time (None: no bar), the interval
    it comes from, whether it is stale there, and what of its bars the cycle cannot use
    (``damage``, naming the file; None: nothing)."""

    symbol: str
    provider: str
    interval: str | None
    printed_at: pd.Timestamp | None
    stale: bool
    damage: str | None = None

    @property
    def state(self) -> str:
        if self.damage is not None:
            return "damaged"
        return "no data" if self.printed_at is None else ("stale" if self.stale else "fresh")


def freshness(lake: Lake, season: SeasonConfig, universe: Universe, at: pd.Timestamp
              ) -> list[Freshness]:
    """Every asset of the season: how fresh its price is at ``at``, by its own calendar; a
    price file that cannot be read is damage (the asset has no price), and so is, for a
    benchmark, any of the bars the cycle reads of it (:func:`benchmark_damage`)."""
    out = []
    for asset in universe:
        provider = provider_of(season.market, asset)
        interval = price_interval(lake, provider, asset.symbol)
        try:
            got = last_price(lake, provider, asset, at) if interval else None
            damage = benchmark_damage(lake, provider, asset, at) if asset.benchmark else None
        except DamagedFile as exc:
            got, damage = None, str(exc)
        printed = None if got is None else got[1]
        stale = printed is None or is_stale(asset.calendar, interval, printed, at)
        out.append(Freshness(asset.symbol, provider, interval, printed, stale, damage))
    return out


def benchmark_damage(lake: Lake, provider: str, asset: Asset, at: pd.Timestamp) -> str | None:
    """What the cycle at ``at`` cannot use of a benchmark's daily, 4-hour and weekly bars - a
    partition missing, unreadable, or holding bars no validated series has
    (:func:`arena.market.asof.scan_closed_bars`, read as the cycle's market reads it), or no
    daily bar closed by ``at`` -, naming the file; None when they are whole."""
    for interval in BENCHMARK_BARS:
        key = PartitionKey(provider, interval, asset.symbol)
        found: dict[str, str] = {}
        [bars] = scan_closed_bars(lake, [BarRead(asset, provider, interval, RSI_HISTORY,
                                                 SCAN_WINDOW.get(interval))], at, damage=found)
        if asset.symbol in found:
            return f"{found[asset.symbol]} ({lake.root / key.relative})"
        if interval == "1d" and bars.empty:
            return f"{key} holds no bar closed by {at.isoformat()} ({lake.root / key.relative})"
    return None


@dataclass
class CyclePlan:
    """A sound cycle: when, the market's freshness, and the monitor window before it."""

    at: pd.Timestamp
    fresh: list[Freshness]
    monitor_from: pd.Timestamp | None

    @property
    def stale(self) -> list[str]:
        return [f.symbol for f in self.fresh if f.stale]


def current_cycle(season: SeasonConfig, now: pd.Timestamp) -> pd.Timestamp:
    """The season's cycle due at ``now`` (:class:`CycleRefused` before its first)."""
    due = season.due(now)
    if due is None:
        raise CycleOffSeason(f"season {season.id!r} starts {season.first.isoformat()}: no cycle "
                           "is due yet")
    return due


def check_open(lake: Lake, season: SeasonConfig) -> None:
    """:class:`CycleOffSeason` once the season is closed: it takes no cycle, backfill or retry,
    not even of a cycle recorded already."""
    closed = closed_at(lake)
    if closed is not None:
        raise CycleOffSeason(f"season {season.id!r} was closed at {closed} after its last cycle: "
                             "no further cycle is accepted; start the next season in a new lake "
                             "(arena season init --lake ...)")


def check_cycle(lake: Lake, season: SeasonConfig, ledger: Ledger, universe: Universe,
                at: pd.Timestamp, *, now: pd.Timestamp, force_time: bool = False,
                backfill: bool = False, retry: bool = False) -> CyclePlan:
    """Whether the cycle at ``at`` may run now (see the module docstring); raises
    :class:`CycleRefused` naming the reason, before anything is recorded. ``retry``: the cycle
    was played before (a record or a failed attempt exists) and is played again for the
    contestants without a record."""
    where = f"season {season.id!r}"
    check_open(lake, season)
    if not season.on_schedule(at):
        inside = season.first <= at < season.last + pd.Timedelta(days=1)
        if not (force_time and inside):
            raise CycleRefused(
                f"{at.isoformat()} is not a cycle time of {where} (daily at "
                f"{season.cycle_hour:02d}:00 UTC from {season.first:%Y-%m-%d} to "
                f"{season.last:%Y-%m-%d})" + ("" if inside else "; it lies outside the season")
                + ("" if force_time or not inside else "; --force-time runs it anyway"))
    if at > now:
        raise CycleRefused(f"{at.isoformat()} is in the future (now {now.isoformat()}): its bars "
                           "do not exist yet")
    recorded = {k.cycle_at for k in ledger.records()}
    later = sorted(t for t in recorded if t > at)
    if later:
        raise CycleRefused(f"{where} already has a later cycle ({later[0].isoformat()}): cycles "
                           "are recorded in order, so this one can no longer be played")
    due = season.due(now)
    if retry:
        played = recorded | set(Attempts(lake).cycles())
        if at not in played:
            raise CycleRefused(f"{at.isoformat()} was never played in {where}: nothing to retry")
    elif backfill and due is not None and at >= due:
        raise CycleRefused(f"{at.isoformat()} is the current cycle of {where}, not a missed one: "
                           "run it with arena cycle")
    if not (backfill or retry) and due is not None and at < due:
        raise CycleRefused(f"{at.isoformat()} is not the current cycle of {where} (due: "
                           f"{due.isoformat()}); a missed cycle is played by arena season "
                           f"backfill {at:%Y-%m-%d}, oldest first, while no later cycle "
                           "exists")
    fresh = freshness(lake, season, universe, at)
    check_market(fresh, universe, at, where)
    previous = [t for t in recorded if t < at]
    return CyclePlan(at, fresh, max(previous) if previous else None)


def check_market(fresh: Sequence[Freshness], universe: Universe, at: pd.Timestamp,
                  where: str) -> None:
    """Refuse a market the cycle cannot trade on (see the module docstring): no bars at all, a
    benchmark unusable (named with its file and how to restore it) or stale, or more than
    :data:`STALE_SHARE_REFUSED` of the assets stale."""
    if all(f.printed_at is None for f in fresh):
        raise CycleRefused(f"the lake of {where} holds no bars closed by {at.isoformat()} "
                           "(run arena ingest first)")
    benchmarks = {a.symbol for a in universe.benchmarks}
    unusable = [f for f in fresh if f.symbol in benchmarks and f.damage is not None]
    if unusable:
        raise CycleRefused(
            f"the market at {at.isoformat()} is not usable: the benchmark"
            + ("s " if len(unusable) > 1 else " ")
            + "; ".join(f"{f.symbol} cannot be used - {f.damage}" for f in unusable)
            + f"; {RESTORE}")
    bad_bench = [f for f in fresh if f.symbol in benchmarks and f.stale]
    stale = [f for f in fresh if f.stale]
    if bad_bench or len(stale) > STALE_SHARE_REFUSED * len(fresh):
        shown = ", ".join(f"{f.symbol} ({_since(f)})" for f in (bad_bench or stale)[:6])
        more = f" and {len(stale) - 6} more" if len(stale) > 6 else ""
        what = "the benchmark" + ("s are" if len(bad_bench) > 1 else " is") if bad_bench else \
            f"{len(stale)} of {len(fresh)} assets are"
        raise CycleRefused(f"the market at {at.isoformat()} is not fresh: {what} stale - {shown}"
                           f"{more}; ingest up to the cycle first (arena ingest)")


def _since(f: Freshness) -> str:
    return "no bars" if f.printed_at is None else f"last price {f.printed_at:%Y-%m-%d %H:%M}"
