"""A season's cycle played on its own config: :func:`play_season_cycle` checks it again
(:func:`arena.pipeline.live.check.check_cycle`), then plays its day
(:func:`arena.pipeline.day.play_day`: the forfeits, the monitor window that ends at the cycle -
the automatic closes since the previous cycle come first, as the ledger's order requires -, the
cycle with its retries, the daily report) on the season's providers, roster and rules."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from arena.agents.base import Contestant
from arena.core.runner import INLINE, Runner
from arena.core.universe import Universe
from arena.data.lake import Lake
from arena.engine.rules import ARENA_RULES, Rules
from arena.ledger.attempts import Attempts
from arena.ledger.store import Ledger
from arena.pipeline.cycle import Outcome, Slot, secret_names
from arena.pipeline.day import (
    DayReport,
    Retries,
    play_day,
)
from arena.pipeline.live.check import (
    CyclePlan,
    check_cycle,
)
from arena.pipeline.season_config import (
    SeasonConfig,
    season_roster,
)


@dataclass
class CycleRun:
    """A cycle played: the plan it was checked against, and its day."""

    plan: CyclePlan
    day: DayReport

    @property
    def outcomes(self) -> list[Outcome]:
        return self.day.outcomes

    @property
    def automatic_closes(self) -> int:
        return self.day.automatic_closes

    @property
    def forfeits(self) -> list[tuple[pd.Timestamp, str]]:
        """The earlier cycles' contestants recorded as forfeited before this cycle."""
        return self.day.forfeits

    @property
    def attempts(self) -> int:
        """Rounds the failed contestants were played in (1: no retry)."""
        return self.day.rounds


def season_rules(season: SeasonConfig) -> Rules:
    return ARENA_RULES if season.fee_rate == ARENA_RULES.fee_rate else dataclasses.replace(
        ARENA_RULES, fee_rate=season.fee_rate)


def play_season_cycle(lake: Lake, season: SeasonConfig, contestants: Sequence[Contestant],
                      at: pd.Timestamp, *, now: pd.Timestamp, universe: Universe | None = None,
                      force_time: bool = False, backfill: bool = False, retry: bool = False,
                      runner: Runner = INLINE, slot: Slot | None = None,
                      ledger: Ledger | None = None, attempts: Attempts | None = None,
                      deadline_s: float | None = None,
                      clock: Callable[[], float] = time.monotonic,
                      sleep: Callable[[float], None] = time.sleep) -> CycleRun:
    """Check the cycle (:func:`check_cycle`), then play its day
    (:func:`arena.pipeline.day.play_day`): every contestant still without a record in an
    earlier cycle where it failed is recorded as forfeited, with the reason from the attempts
    log; the monitor window ending at the cycle is recorded; the cycle is played. A contestant
    that failed (its model unreachable) is played again - with waits of 2, 4, 8... seconds -
    until the season's cycle deadline (one whose record the ledger refused, e.g. for a secret
    in it, is not); each failed attempt goes to the attempts log
    (:class:`arena.ledger.attempts.Attempts`), never to the ledger. ``retry``: the cycle was
    played before (``arena season retry``): only the contestants without a record play.
    ``deadline_s``: the seconds left to retry in (default: the season's cycle deadline)."""
    universe = universe or season.universe()
    secrets = secret_names(contestants)
    ledger = ledger or Ledger(lake, secret_names=secrets)
    attempts = attempts or Attempts(lake, secret_names=secrets)
    plan = check_cycle(lake, season, ledger, universe, at, now=now, force_time=force_time,
                       backfill=backfill, retry=retry)
    # a contestant retired since it failed is still forfeited where it played
    names = () if retry else tuple(sorted({c.name for c in contestants}
                                          | set(season_roster(lake).names)))
    day = play_day(lake, season.market, universe, contestants, at, ledger=ledger,
                   rules=season_rules(season), runner=runner, slot=slot, attempts=attempts,
                   forfeit_names=names, candles=season.candles,
                   retries=Retries(season.cycle_deadline_s if deadline_s is None else deadline_s,
                                   season.call_timeout_s, clock, sleep))
    return CycleRun(plan, day)
