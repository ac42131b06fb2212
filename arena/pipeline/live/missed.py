"""The cycles a season missed: the ones nobody played that can still be played (in order), and
the operator's way past them - every contestant recorded there as forfeited."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from arena.core.universe import Universe
from arena.data.lake import Lake
from arena.ledger.attempts import Attempts
from arena.ledger.store import Ledger
from arena.pipeline.day import (
    cycle_prices_at,
    monitor_day,
    record_forfeit,
)
from arena.pipeline.season_config import (
    SeasonConfig,
    season_roster,
)
from arena.reporting.daily import daily_report, write_daily_report


def missed_cycles(season: SeasonConfig, ledger: Ledger, attempts: Attempts, now: pd.Timestamp,
                  *, before: pd.Timestamp | None = None) -> list[pd.Timestamp]:
    """The cycles before the one due at ``now`` (or before ``before``, a time forced after
    it) that nobody played (no record, no failed attempt) and that can still be played: each
    is later than every recorded cycle. Playing a later cycle first would lose them for good
    (cycles are recorded in order)."""
    due = before if before is not None else season.due(now)
    if due is None:
        return []
    recorded = {k.cycle_at for k in ledger.records()}
    tried = set(attempts.cycles())
    last = max(recorded, default=None)
    return [t for t in season.times if t < due and (last is None or t > last)
            and t not in recorded and t not in tried]


def forfeit_missed(lake: Lake, season: SeasonConfig, ledger: Ledger, universe: Universe,
                   missed: Sequence[pd.Timestamp], reason: str) -> list[tuple[pd.Timestamp, str]]:
    """Record every contestant of the season's roster at each missed cycle as forfeited there,
    with ``reason`` (the operator skipped the cycle), in order: first the monitor window up to
    the cycle, then the forfeits (each book valued at the cycle's prices), then its daily
    report. Returns the (cycle, contestant) pairs recorded."""
    out = []
    for at in sorted(missed):
        names = list(season_roster(lake, at).names)
        monitor_day(lake, ledger, season.market, universe, names, at)
        prices = cycle_prices_at(lake, season.market, universe, at)
        out += [(at, n) for n in names if record_forfeit(ledger, at, n, reason, prices)]
        write_daily_report(lake, daily_report(ledger, lake, season.market, universe, at), at)
    return out
