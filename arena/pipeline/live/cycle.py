"""A season's cycle played on its own config: :func:`play_season_cycle` checks it again
(:func:`arena.pipeline.live.check.check_cycle`), then plays its day
(:func:`arena.pipeline.day.play_day`: the forfeits, the monitor window that ends at the cycle -
the automatic closes since the previous cycle come first, as the ledger's order requires -, the
cycle with its retries, the daily report) on the season's providers, roster and rules.

A cycle every contestant is recorded at already is not played again, whatever was recorded
after it (:func:`recorded_run`): a retried flow run or a re-run script finds it "already
recorded", with nothing checked, watched, asked or written (a closed season still refuses it,
as it refuses any cycle)."""

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
from arena.pipeline.cycle import Outcome, Slot, recorded_outcome, secret_names
from arena.pipeline.day import (
    DayReport,
    Retries,
    play_day,
)
from arena.pipeline.live.check import (
    CyclePlan,
    check_cycle,
    check_open,
)
from arena.pipeline.season_config import (
    SeasonConfig,
    season_blinding,
    season_roster,
)


@dataclass
class CycleRun:
    """A cycle played: the plan it was checked against, and its day; ``already_recorded``: every
    contestant was recorded there before (nothing was played, checked or written)."""

    plan: CyclePlan
    day: DayReport
    already_recorded: bool = False

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


def recorded_run(lake: Lake, season: SeasonConfig, ledger: Ledger,
                 contestants: Sequence[Contestant], at: pd.Timestamp) -> CycleRun | None:
    """The cycle at ``at`` when every one of ``contestants`` has its record there already: each
    one's line read back from its record ("already recorded"), whatever was recorded after it
    - nothing is played, checked or written. None when one of them has none (it is played for
    them while it still can be) or there is no contestant. A closed season refuses it as any
    cycle (:func:`~arena.pipeline.live.check.check_open`)."""
    check_open(lake, season)
    names = [c.name for c in contestants]
    if not names or not all(ledger.has(at, n) for n in names):
        return None
    previous = [k.cycle_at for k in ledger.records() if k.cycle_at < at]
    outcomes = [recorded_outcome(n, "already recorded", ledger, at) for n in names]
    return CycleRun(CyclePlan(at, [], max(previous, default=None)),
                    DayReport(at, outcomes, 0, 0.0), already_recorded=True)


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
    ``deadline_s``: the seconds left to retry in (default: the season's cycle deadline). A
    cycle every contestant is recorded at already is not played again (:func:`recorded_run`)."""
    universe = universe or season.universe()
    secrets = secret_names(contestants)
    ledger = ledger or Ledger(lake, secret_names=secrets)
    done = recorded_run(lake, season, ledger, contestants, at)
    if done is not None:
        return done
    attempts = attempts or Attempts(lake, secret_names=secrets)
    plan = check_cycle(lake, season, ledger, universe, at, now=now, force_time=force_time,
                       backfill=backfill, retry=retry)
    # a contestant retired since it failed is still forfeited where it played
    names = () if retry else tuple(sorted({c.name for c in contestants}
                                          | set(season_roster(lake).names)))
    day = play_day(lake, season.market, universe, contestants, at, ledger=ledger,
                   rules=season_rules(season), runner=runner, slot=slot, attempts=attempts,
                   forfeit_names=names, candles=season.candles,
                   blinding=season_blinding(lake, season),
                   retries=Retries(season.cycle_deadline_s if deadline_s is None else deadline_s,
                                   season.call_timeout_s, clock, sleep))
    return CycleRun(plan, day)
