"""The live monitor between the cycles: one tick watches every contestant's book since it last
changed, up to the 15-minute mark (:func:`monitor_end`), never past a due cycle, and records
the window when it closed something."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from arena.agents.base import Contestant
from arena.core.errors import UnusableInput
from arena.core.sessions import bar_close_times, expected_bars, regular_session
from arena.core.universe import Universe
from arena.data.lake import Lake, PartitionKey
from arena.ledger.store import Ledger
from arena.market.asof import (
    provider_of,
)
from arena.pipeline.cycle import secret_names
from arena.pipeline.day import (
    monitor_day,
)
from arena.pipeline.live.closed import OffSeason, closed_at
from arena.pipeline.season_config import (
    SeasonConfig,
)

MONITOR_STEP = dt.timedelta(minutes=15)


class MonitorRefused(UnusableInput, RuntimeError):
    """The monitor was not run (nothing recorded); the message says why."""

    consequence = "nothing recorded"


class MonitorOffSeason(MonitorRefused, OffSeason):
    """No monitor tick: the season is closed."""


@dataclass
class MonitorRun:
    end: pd.Timestamp
    contestants: list[str]
    automatic_closes: int
    held: list[str]  # the symbols any contestant holds (what the monitor watched)


def monitor_end(season: SeasonConfig, ledger: Ledger, tick: pd.Timestamp) -> pd.Timestamp | None:
    """Where a live monitor tick may end: the 15-minute mark at or before ``tick`` (a step
    earlier at an NYSE session's open, whose opening print needs the session's first bar), but
    never past a cycle of the season that is due and not played yet (that cycle records the
    window up to itself first, so the ledger keeps its order). None: nothing to watch yet (the
    season's first cycle is not played)."""
    end = tick.floor(MONITOR_STEP)
    session = regular_session(end)
    if session is not None and session.open == end:
        # The session's opening print is observed at the open but its bar closes a step later:
        # a window ending at the open would be written before that bar exists and the print,
        # at the window's end, would never be watched. The window ends a step earlier; the
        # next tick's window holds the open and its bar.
        end -= MONITOR_STEP
    played = {k.cycle_at for k in ledger.records()}
    if not played:
        return None
    pending = [t for t in season.times if t <= end and t > max(played)]
    return min([end, *pending[:1]])


def run_monitor(lake: Lake, season: SeasonConfig, contestants: Sequence[Contestant],
                tick: pd.Timestamp, *, now: pd.Timestamp, universe: Universe | None = None,
                ledger: Ledger | None = None) -> MonitorRun:
    """One live monitor tick: every contestant's open positions checked against the bars since
    its last monitor window (or its last cycle), up to :func:`monitor_end` - with the same pure
    monitor as a replay, each window recorded exactly once. Refused (nothing recorded) for a
    tick in the future and when a held symbol's 15-minute bars do not reach the window's end
    yet: a window is recorded once, so a bar ingested after it would never be watched."""
    closed = closed_at(lake)
    if closed is not None:
        raise MonitorOffSeason(f"season {season.id!r} was closed at {closed}: nothing to watch")
    if tick > now:
        raise MonitorRefused(f"the tick {tick.isoformat()} is in the future (now "
                             f"{now.isoformat()})")
    universe = universe or season.universe()
    ledger = ledger or Ledger(lake, secret_names=secret_names(contestants))
    end = monitor_end(season, ledger, tick)
    if end is None:
        raise MonitorRefused(f"season {season.id!r} has no cycle played yet: no position to "
                             "watch")
    cycles = [k.cycle_at for k in ledger.records() if k.cycle_at <= end]
    if not cycles or end <= max(cycles):
        raise MonitorRefused(f"the tick {tick.isoformat()} is not after the season's last played "
                             f"cycle ({max(k.cycle_at for k in ledger.records()).isoformat()})")
    latest = max(cycles)
    # a contestant without a record at the latest cycle is still being played, retried or
    # forfeited there: that cycle's own monitor step watches it (its record must come first)
    playing = [c for c in contestants if ledger.has(latest, c.name)]
    watched = max((k.end for c in playing for k in ledger.monitor_records(c.name)), default=None)
    if watched is not None and end < watched:
        raise MonitorRefused(f"the tick {tick.isoformat()} is already watched: the monitor's "
                             f"windows reach {watched.isoformat()} (a window is recorded once; "
                             "a later tick watches on)")
    held = sorted({s for c in playing for s in ledger.portfolio(c.name).positions})
    behind = _bars_behind(lake, season, universe, held, end)
    if behind:
        raise MonitorRefused("the 15-minute bars of " + ", ".join(
            f"{s} (to {t:%Y-%m-%d %H:%M})" if t is not None else f"{s} (none)"
            for s, t in behind.items()) + f" do not reach {end.isoformat()}: ingest first")
    closes = monitor_day(lake, ledger, season.market, universe, playing, end)
    return MonitorRun(end, [c.name for c in playing], closes, held)


def _bars_behind(lake: Lake, season: SeasonConfig, universe: Universe, symbols: Sequence[str],
                 end: pd.Timestamp) -> dict[str, pd.Timestamp | None]:
    """The symbols with a 15-minute bar the calendar expects to close by ``end`` that the lake
    does not hold yet, each with where its bars end."""
    out: dict[str, pd.Timestamp | None] = {}
    for symbol in symbols:
        asset = universe[symbol]
        bars = lake.read_bars(PartitionKey(provider_of(season.market, asset), "15m", symbol),
                              end - pd.Timedelta(days=7), end)
        last = None
        if len(bars):
            last = bar_close_times(asset.calendar, "15m",
                                   pd.DatetimeIndex(bars["timestamp"].iloc[-1:]))[0]
        since = last if last is not None else end - pd.Timedelta(days=7)
        opens = expected_bars(asset.calendar, "15m", since, end)
        if len(opens) and bool((bar_close_times(asset.calendar, "15m", opens) <= end).any()):
            out[symbol] = last
    return out
