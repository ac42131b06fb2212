"""The cycle job: the season's decision cycle, a backfill of a missed one, or a retry - then,
once every contestant played, the season published.

What is played (:func:`cycle`):

* ``kind="cycle"``: the season's current cycle (the one due at the clock's time; ``at`` and
  ``force_time`` name another time inside the season). Cycles are recorded in order, so playing
  it while an earlier cycle is still missed would lose that one for good. ``missed`` says what
  happens then: ``refuse`` (the command line's default) refuses, naming the missed days and the
  command that plays them; ``skip`` (``--skip-missed``) records every contestant as forfeited
  there, by name, then plays; ``backfill`` (a scheduled run) plays the missed cycles first, in
  order, within the season's cycle deadline, or fails naming those it could not play.
* ``kind="backfill"``: a missed cycle, only while no later cycle exists.
* ``kind="retry"``: a cycle played before, for the contestants without a record.

Each cycle is checked before anything is recorded (:func:`arena.pipeline.live.check_cycle`) and
played as a season day (:func:`arena.pipeline.live.play_season_cycle`). ``publish``: after a
cycle every contestant played, the season's tables, marts and report are rebuilt from the
cycles so far (:func:`arena.app.publish.publish`); after the season's last cycle at full size,
and the season closes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from enum import StrEnum

from arena.agents.roster import Skipped
from arena.app.handle import Clock, SeasonHandle, wall_clock
from arena.app.publish import Publication, publish_after_cycle
from arena.core.errors import Failed
from arena.core.lazy import lazy_import
from arena.core.runner import INLINE, Runner
from arena.engine.outcomes import FAILED
from arena.pipeline.cycle import Outcome, Slot
from arena.pipeline.live import (
    CycleRefused,
    CycleRun,
    check_cycle,
    current_cycle,
    forfeit_missed,
    missed_cycles,
    play_season_cycle,
)
from arena.pipeline.warehouse import Invoke

pd = lazy_import("pandas")


class Kind(StrEnum):
    CYCLE = "cycle"
    BACKFILL = "backfill"
    RETRY = "retry"


class Missed(StrEnum):
    """What a cycle does when an earlier cycle of the season is still missed."""

    REFUSE = "refuse"
    SKIP = "skip"
    BACKFILL = "backfill"


def _days(times: Sequence[pd.Timestamp]) -> str:
    return ", ".join(f"{t:%Y-%m-%d}" for t in times)


class MissedCycles(CycleRefused):
    """The current cycle was not played: earlier cycles are still missed, and playing it first
    would lose them for good. The message names them and the commands that play or skip them."""

    def __init__(self, season: str, lake: str, missed: Sequence[pd.Timestamp]) -> None:
        self.missed = list(missed)
        first = self.missed[0]
        super().__init__(
            f"season {season!r} has {len(self.missed)} missed cycle(s) before the current one: "
            f"{_days(self.missed)}; play them first, in order (arena season backfill "
            f"{first:%Y-%m-%d} --lake {lake}), or record them as forfeited and play on "
            "(arena cycle --skip-missed)")


class BackfillIncomplete(Failed):
    """A scheduled cycle could not play every missed cycle first (the season's deadline passed,
    or one of them can never be played); those left are named, the ones backfilled before are
    recorded (``backfilled``), and the current cycle waits."""

    consequence = "the current cycle was not played"

    def __init__(self, message: str, backfilled: Sequence[CycleResult] = ()) -> None:
        super().__init__(message)
        self.backfilled = list(backfilled)


class CycleFailed(Failed):
    """Some contestant could not be played (its model never answered by the deadline); nothing
    was recorded for it, every other contestant was."""

    consequence = "nothing recorded for them"


@dataclass
class CycleResult:
    """One cycle played (and the missed ones played or skipped before it)."""

    season: str
    kind: Kind
    at: pd.Timestamp
    run: CycleRun
    skipped: list[Skipped] = field(default_factory=list)  # roster entries without their key
    backfilled: list[CycleResult] = field(default_factory=list)  # missed cycles played first
    missed_forfeits: list[tuple[pd.Timestamp, str]] = field(default_factory=list)  # skipped
    publication: Publication | None = None

    @property
    def outcomes(self) -> list[Outcome]:
        return self.run.outcomes

    @property
    def played(self) -> list[Outcome]:
        """The contestants recorded by this run."""
        return [o for o in self.outcomes if o.recorded == "recorded"]

    @property
    def already(self) -> list[Outcome]:
        """The contestants another run had recorded already (nothing played again)."""
        return [o for o in self.outcomes if o.recorded == "already recorded"]

    @property
    def failed(self) -> list[Outcome]:
        """The contestants that could not be played (nothing recorded for them), this cycle's
        and the backfilled cycles'."""
        return [o for r in (*self.backfilled, self) for o in r.outcomes if o.status == FAILED]

    def raise_for_failures(self) -> None:
        """:class:`CycleFailed` naming every contestant that could not be played."""
        failed = [(r.at, o) for r in (*self.backfilled, self) for o in r.outcomes
                  if o.status == FAILED]
        if failed:
            raise CycleFailed(f"cycle {self.at.isoformat()}: {len(failed)} contestant(s) failed: "
                              + "; ".join(f"{o.contestant}: {o.error}" if at == self.at else
                                          f"{o.contestant} (missed cycle {at:%Y-%m-%d}): "
                                          f"{o.error}" for at, o in failed))


def cycle_time(handle: SeasonHandle, *, kind: Kind = Kind.CYCLE, at: pd.Timestamp | None = None,
               now: pd.Timestamp) -> pd.Timestamp:
    """The cycle a run plays: ``at`` for a backfill or a retry (snapped to the season's cycle
    hour of its day), ``at`` or the current cycle for a cycle."""
    if kind is Kind.CYCLE:
        return at if at is not None else current_cycle(handle.config, now)
    if at is None:
        raise CycleRefused(f"a {kind} needs the cycle's day")
    return handle.config.cycle_time(at)


def cycle(handle: SeasonHandle, *, kind: Kind = Kind.CYCLE, at: pd.Timestamp | None = None,
          missed: Missed = Missed.REFUSE, force_time: bool = False, publish: bool = True,
          players: int | None = None, clock: Clock = wall_clock, runner: Runner = INLINE,
          slot: Slot | None = None, invoke: Invoke | None = None,
          progress: Callable[[str], None] | None = None,
          hold: Callable[[], AbstractContextManager[object]] = nullcontext,
          monotonic: Callable[[], float] = time.monotonic,
          sleep: Callable[[float], None] = time.sleep) -> CycleResult:
    """Play the cycle (see the module docstring); refused before anything is recorded when it
    is not sound (:class:`~arena.pipeline.live.CycleRefused`, an unusable input). ``hold``: a
    context held while the cycle records (a flow's ledger slot), not while it publishes. The
    missed cycles a scheduled run backfills first and the cycle itself share one deadline, the
    season's ``cycle_deadline_s``. A publication that fails leaves the cycle recorded: the
    result says so (:attr:`Publication.error`)."""
    now = clock()
    target = cycle_time(handle, kind=kind, at=at, now=now)
    deadline = monotonic() + handle.config.cycle_deadline_s
    with hold():  # the ledger's writers: a monitor tick never records beside the cycle
        # the cycle asked for is checked first: a time that is wrong is refused as such, before
        # the missed cycles before it are named (play_season_cycle checks it again, once they
        # are played or skipped)
        check_cycle(handle.lake, handle.config, handle.ledger, handle.universe, target, now=now,
                    force_time=force_time, backfill=kind is Kind.BACKFILL,
                    retry=kind is Kind.RETRY)
        backfilled, forfeits = _missed_first(handle, kind, target, missed, now=now,
                                             runner=runner, slot=slot, deadline=deadline,
                                             monotonic=monotonic, sleep=sleep)
        result = _play(handle, kind, target, now=now, force_time=force_time, runner=runner,
                       slot=slot, deadline_s=max(0.0, deadline - monotonic()),
                       monotonic=monotonic, sleep=sleep)
    result.backfilled, result.missed_forfeits = backfilled, forfeits
    if publish and not result.failed:
        result.publication = publish_after_cycle(handle, target, players=players, clock=clock,
                                                 runner=runner, invoke=invoke, progress=progress)
    return result


def _missed_first(handle: SeasonHandle, kind: Kind, target: pd.Timestamp, missed: Missed, *,
                  now: pd.Timestamp, runner: Runner, slot: Slot | None, deadline: float,
                  monotonic: Callable[[], float], sleep: Callable[[float], None]
                  ) -> tuple[list[CycleResult], list[tuple[pd.Timestamp, str]]]:
    """The missed cycles before ``target``, refused, skipped or backfilled as ``missed`` says
    (see the module docstring): the cycles played and the forfeits recorded. A cycle forced to
    a time after the due one counts the due one as missed too."""
    earlier = [] if kind is not Kind.CYCLE else missed_cycles(
        handle.config, handle.ledger, handle.attempts, now, before=target)
    if not earlier:
        return [], []
    if missed is Missed.REFUSE:
        raise MissedCycles(handle.id, str(handle.lake.root), earlier)
    if missed is Missed.SKIP:
        return [], forfeit_missed(
            handle.lake, handle.config, handle.ledger, handle.universe, earlier,
            f"forfeited: the cycle was missed and the operator skipped it ({now:%Y-%m-%d %H:%M} "
            "UTC, arena cycle --skip-missed)")
    played: list[CycleResult] = []
    for i, day in enumerate(earlier):
        left = deadline - monotonic()
        if left < handle.config.call_timeout_s:  # no model call could finish in time
            raise BackfillIncomplete(
                f"season {handle.id!r}: the cycle deadline passed while backfilling the missed "
                f"cycles; not played yet: {_days(earlier[i:])} (arena season backfill "
                f"{earlier[i]:%Y-%m-%d}, or arena cycle --skip-missed to record them as "
                "forfeited)", played)
        try:
            played.append(_play(handle, Kind.BACKFILL, day, now=now, runner=runner, slot=slot,
                                deadline_s=left, monotonic=monotonic, sleep=sleep))
        except CycleRefused as exc:  # e.g. its market stays stale: it can never be backfilled
            raise BackfillIncomplete(
                f"season {handle.id!r}: the missed cycle {day:%Y-%m-%d} could not be "
                f"backfilled: {exc}; not played yet: {_days(earlier[i:])} (arena cycle "
                "--skip-missed records them as forfeited and plays on)", played) from exc
    return played, []


def _play(handle: SeasonHandle, kind: Kind, at: pd.Timestamp, *, now: pd.Timestamp,
          runner: Runner, slot: Slot | None, monotonic: Callable[[], float],
          sleep: Callable[[float], None], force_time: bool = False,
          deadline_s: float | None = None) -> CycleResult:
    contestants = handle.contestants(at)
    run = play_season_cycle(handle.lake, handle.config, contestants.playing, at, now=now,
                            universe=handle.universe, force_time=force_time,
                            backfill=kind is Kind.BACKFILL, retry=kind is Kind.RETRY,
                            runner=runner, slot=slot, ledger=handle.ledger,
                            attempts=handle.attempts, clock=monotonic, sleep=sleep,
                            deadline_s=deadline_s)
    return CycleResult(handle.id, kind, at, run, contestants.skipped)
