"""The monitor job: one live tick between the cycles.

First the 15-minute bars of the symbols any contestant holds, from each symbol's season provider,
up to the tick (:func:`arena.pipeline.season_ingest.ingest_watched`: a Yahoo stock's in a watch
run of its own); then every open position's invalidation level checked against the bars since
its last window (:func:`arena.pipeline.live.run_monitor`), each window recorded exactly once. A
tick that cannot be sound (in the future, already watched, bars that do not reach it, a closed
season) is refused before anything is recorded; a season with no cycle played yet has nothing to
watch (``end`` is None).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from arena.app.effects import INLINE, Effects
from arena.app.handle import SeasonHandle
from arena.pipeline.live.monitor import MonitorOffSeason, monitor_end, run_monitor
from arena.pipeline.season_ingest import held_symbols, ingest_watched


@dataclass
class MonitorResult:
    """A tick: where its windows end (None: nothing to watch yet), the symbols held, the
    contestants watched, the automatic closes recorded, and the held symbols' bars that could
    not be ingested first (provider -> why; the monitor then says which bars are missing)."""

    season: str
    end: pd.Timestamp | None
    held: list[str] = field(default_factory=list)
    contestants: list[str] = field(default_factory=list)
    automatic_closes: int = 0
    ingest_problems: dict[str, str] = field(default_factory=dict)


def monitor(handle: SeasonHandle, *, at: pd.Timestamp | None = None, ingest: bool = True,
            effects: Effects = INLINE) -> MonitorResult:
    """One tick at ``at`` (default: the clock's time); ``ingest``: the held symbols' bars first
    (see the module docstring). The effects' ``hold`` is held while the tick records (a flow's
    ledger slot), not while it fetches the bars."""
    closed = handle.closed_at
    if closed is not None:
        raise MonitorOffSeason(f"season {handle.id!r} was closed at {closed}: nothing to watch")
    now = effects.clock()
    tick = at if at is not None else now
    end = monitor_end(handle.config, handle.ledger, tick)
    if end is None:
        return MonitorResult(handle.id, None)
    problems: dict[str, str] = {}
    held = held_symbols(handle.ledger)
    if ingest and held and end <= now:
        problems = ingest_watched(handle.lake, handle.config, held, end=end, now=now)
    with effects.hold():  # never beside the season's cycle
        run = run_monitor(handle.lake, handle.config, handle.contestants(tick).playing, tick,
                          now=now, universe=handle.universe, ledger=handle.ledger)
    return MonitorResult(handle.id, run.end, run.held, run.contestants, run.automatic_closes,
                         problems)
