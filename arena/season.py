"""A season replayed on a simulated clock, through the same code as the live pipeline.

For each day of the season, in order: ingest the bars up to the day's 16:00 UTC cycle (validated,
atomic), run the invalidation monitor over the 15-minute bars since the previous cycle (the monitor
core called with the day's window; automatic closes recorded in the ledger before the cycle, as
the ledger's ordering requires), then the decision cycle itself. Every step is idempotent - the
ingest merges, the ledger records each (window, contestant) and (cycle, contestant) once - so a
replay interrupted half-way resumes where it stopped when run again, duplicating nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd
import pyarrow.parquet as pq

from arena.agents.base import Contestant
from arena.calendar import utc
from arena.daily import Outcome, run_cycle
from arena.data.ingest import IngestError, run_ingest
from arena.data.lake import Lake, PartitionKey
from arena.data.providers.base import Provider
from arena.engine.monitor import check_invalidations
from arena.ledger import Ledger, MonitorRecord
from arena.universe import Universe

log = logging.getLogger(__name__)
CYCLE_HOUR = 16
HISTORY_DAYS = 220  # before the first cycle: enough for 26 weekly candles and the screen


@dataclass
class DayReport:
    at: pd.Timestamp
    outcomes: list[Outcome]
    automatic_closes: int
    seconds: float


@dataclass
class SeasonReport:
    start: pd.Timestamp
    days: list[DayReport] = field(default_factory=list)

    @property
    def trades(self) -> int:
        return sum(o.fills for d in self.days for o in d.outcomes) + \
            sum(d.automatic_closes for d in self.days)


def cycle_times(start: object, days: int) -> list[pd.Timestamp]:
    """The season's cycle times: ``days`` consecutive days at 16:00 UTC from ``start``."""
    first = utc(start).normalize() + pd.Timedelta(hours=CYCLE_HOUR)
    return [first + pd.Timedelta(days=i) for i in range(days)]


def monitor_day(lake: Lake, ledger: Ledger, provider: str, universe: Universe,
                contestants: Sequence[Contestant], start: pd.Timestamp, end: pd.Timestamp) -> int:
    """Record every contestant's automatic closes in ``(start, end]``; returns how many."""
    closes = 0
    for contestant in contestants:
        def build(name: str = contestant.name) -> MonitorRecord:
            portfolio = ledger.portfolio(name)
            bars = {s: lake.read_bars(PartitionKey(provider, "15m", s), start, end)
                    for s in portfolio.positions}
            result = check_invalidations(portfolio, bars, universe, start, end)
            return MonitorRecord(name, start, end, result.fills, result.checked, result.unobserved)

        ledger.record_monitor(start, end, contestant.name, build)
        # windows never overlap: this window's closes are the rows of its own fills file
        closes += pq.read_metadata(ledger.monitor_dir(start, end, contestant.name)
                                   / "fills.parquet").num_rows
    return closes


def replay_season(provider: Provider, universe: Universe, contestants: Sequence[Contestant],
                  start: object, days: int, *, lake: Lake, ledger: Ledger | None = None,
                  progress: Callable[[DayReport, int, int], None] | None = None) -> SeasonReport:
    """Replay ``days`` cycles from ``start`` (see the module docstring)."""
    ledger = ledger or Ledger(lake)
    times = cycle_times(start, days)
    report = SeasonReport(times[0])
    previous = None
    history_start = times[0].normalize() - pd.Timedelta(days=HISTORY_DAYS)
    for i, at in enumerate(times, start=1):
        t0 = time.perf_counter()
        try:
            run_ingest(provider, universe, start=previous or history_start, end=at, lake=lake,
                       now=at)
        except IngestError as exc:
            raise IngestError(f"season day {at.date()}: {exc}", exc.manifest) from exc
        closes = 0
        if previous is not None:
            closes = monitor_day(lake, ledger, provider.name, universe, contestants, previous, at)
        outcomes = run_cycle(lake, provider.name, universe, contestants, at, ledger=ledger)
        day = DayReport(at, outcomes, closes, time.perf_counter() - t0)
        report.days.append(day)
        if progress:
            progress(day, i, len(times))
        previous = at
    return report
