"""The cycle job: the season's decision cycle, a backfill of a missed one, or a retry - then,
once every contestant played, the season published.

What is played (:func:`cycle`):

* ``kind="cycle"``: the season's current cycle (the one due at the clock's time; ``at`` and
  ``force_time`` name another time inside the season).
* ``kind="backfill"``: a missed cycle, only while no later cycle exists.
* ``kind="retry"``: a cycle played before, for the contestants without a record.

Cycles are recorded in order, so playing one while an earlier cycle is still missed would lose
that one for good, whichever the kind. ``missed`` says what happens then: ``refuse`` (the command
line's default) refuses, naming the missed days and the command that plays the oldest;
``skip`` (``arena cycle --skip-missed``) records every contestant as forfeited there, by name,
then plays; ``backfill`` (a scheduled run) plays the missed cycles first, in order, within the
season's cycle deadline, or fails naming those it could not play.

A cycle every contestant of it is recorded at already (played, or forfeited) is a no-op
whatever the kind and whatever was recorded after it: its lines say "already recorded", nothing
is played, checked or written (:func:`arena.pipeline.live.cycle.recorded_run`; a closed season
refuses it as it refuses any cycle), and only the season's latest cycle is published again. A
cycle recorded for some contestants only is played for the others, while no later cycle
exists.

Each cycle is checked before anything is recorded (:func:`arena.pipeline.live.check_cycle`) and
played as a season day (:func:`arena.pipeline.live.play_season_cycle`). ``publish``: after a
cycle every contestant played, the season's tables, marts and report are rebuilt from the
cycles so far (:func:`arena.app.publish.publish`); after the season's last cycle at full size,
and the season closes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

import pandas as pd

from arena.agents.roster import Skipped
from arena.app.effects import INLINE, Effects
from arena.app.handle import SeasonHandle
from arena.app.publish import Publication, publish_after_cycle
from arena.core.errors import Failed
from arena.engine.outcomes import FAILED
from arena.pipeline.cycle import Outcome
from arena.pipeline.live.check import CycleRefused, check_cycle, current_cycle
from arena.pipeline.live.cycle import CycleRun, play_season_cycle, recorded_run
from arena.pipeline.live.missed import forfeit_missed, missed_cycles


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
    """The cycle was not played: earlier cycles are still missed, and playing it first would
    lose them for good. The message names them and the commands that play or skip them; a
    backfill's or a retry's (``asked``: its day) names the day asked for too."""

    def __init__(self, season: str, lake: str, missed: Sequence[pd.Timestamp],
                 asked: pd.Timestamp | None = None) -> None:
        self.missed = list(missed)
        first = self.missed[0]
        play = f"arena season backfill {first:%Y-%m-%d} --lake {lake}"
        if asked is None:
            super().__init__(
                f"season {season!r} has {len(self.missed)} missed cycle(s) before the current "
                f"one: {_days(self.missed)}; play them first, in order ({play}), or record them "
                "as forfeited and play on (arena cycle --skip-missed)")
            return
        super().__init__(
            f"season {season!r} has {len(self.missed)} missed cycle(s) before {asked:%Y-%m-%d}: "
            f"{_days(self.missed)}; cycles are recorded in order, so playing {asked:%Y-%m-%d} "
            f"first would lose them for good: play them first, oldest first ({play}), then "
            f"{asked:%Y-%m-%d}; or record every missed cycle as forfeited and play the current "
            "one (arena cycle --skip-missed)")


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


@dataclass(frozen=True)
class CycleRequest:
    """Which cycle a run plays and what follows it (see the module docstring): ``kind``, the
    time ``at`` (a cycle: default the current one; a backfill or a retry: its day), what to do
    with ``missed`` cycles before it, ``force_time`` (a time off the schedule, inside the
    season), whether to ``publish`` after it and with how many zero-skill ``players`` per
    asset (None: the publication's default)."""

    kind: Kind = Kind.CYCLE
    at: pd.Timestamp | None = None
    missed: Missed = Missed.REFUSE
    force_time: bool = False
    publish: bool = True
    players: int | None = None


def cycle_time(handle: SeasonHandle, request: CycleRequest, now: pd.Timestamp) -> pd.Timestamp:
    """The cycle a run plays: ``at`` for a backfill or a retry (snapped to the season's cycle
    hour of its day), ``at`` or the current cycle for a cycle."""
    if request.kind is Kind.CYCLE:
        return request.at if request.at is not None else current_cycle(handle.config, now)
    if request.at is None:
        raise CycleRefused(f"a {request.kind} needs the cycle's day")
    return handle.config.cycle_time(request.at)


def cycle(handle: SeasonHandle, request: CycleRequest = CycleRequest(),
          effects: Effects = INLINE) -> CycleResult:
    """Play the cycle (see the module docstring); refused before anything is recorded when it
    is not sound (:class:`~arena.pipeline.live.CycleRefused`, an unusable input); a no-op when
    it is recorded already. The effects' ``hold`` is held while the cycle records (a flow's
    ledger slot), not while it publishes. The missed cycles a scheduled run backfills first and
    the cycle itself share one deadline, the season's ``cycle_deadline_s``. A publication that
    fails leaves the cycle recorded: the result says so (:attr:`Publication.error`)."""
    now = effects.clock()
    target = cycle_time(handle, request, now)
    deadline = effects.monotonic() + handle.config.cycle_deadline_s
    with effects.hold():  # the ledger's writers: a monitor tick never records beside the cycle
        result = _recorded(handle, request.kind, target)
        if result is None:
            result = _checked_and_played(handle, request, target, now, deadline, effects)
    if request.publish and not result.failed and _publishes(handle, result):
        result.publication = publish_after_cycle(handle, target, request.players, effects)
    return result


def _recorded(handle: SeasonHandle, kind: Kind, target: pd.Timestamp) -> CycleResult | None:
    """The cycle at ``target`` as recorded already, when every contestant of it has its record
    there (:func:`~arena.pipeline.live.cycle.recorded_run`); None when it is still to play."""
    if not any(k.cycle_at == target for k in handle.ledger.records()):
        return None
    contestants = handle.contestants(target)
    run = recorded_run(handle.lake, handle.config, handle.ledger, contestants.playing, target)
    return None if run is None else CycleResult(handle.id, kind, target, run,
                                                contestants.skipped)


def _checked_and_played(handle: SeasonHandle, request: CycleRequest, target: pd.Timestamp,
                        now: pd.Timestamp, deadline: float, effects: Effects) -> CycleResult:
    """The cycle at ``target`` checked, the missed cycles before it refused, skipped or played
    first, then the cycle played."""
    # the cycle asked for is checked first: a time that is wrong is refused as such, before the
    # missed cycles before it are named (play_season_cycle checks it again, once they are
    # played or skipped)
    check_cycle(handle.lake, handle.config, handle.ledger, handle.universe, target, now=now,
                force_time=request.force_time, backfill=request.kind is Kind.BACKFILL,
                retry=request.kind is Kind.RETRY)
    backfilled, forfeits = _missed_first(handle, request, target, now, deadline, effects)
    result = _play_at(handle, replace(request, at=target), now,
                      max(0.0, deadline - effects.monotonic()), effects)
    result.backfilled, result.missed_forfeits = backfilled, forfeits
    return result


def _publishes(handle: SeasonHandle, result: CycleResult) -> bool:
    """Whether the season is published after ``result``: after a cycle played; after a cycle
    recorded already only when it is the season's latest (a retried run whose publication
    failed builds it again; an older cycle changes nothing)."""
    if not result.run.already_recorded:
        return True
    return result.at == max(k.cycle_at for k in handle.ledger.records())


def _missed_first(handle: SeasonHandle, request: CycleRequest, target: pd.Timestamp,
                  now: pd.Timestamp, deadline: float, effects: Effects
                  ) -> tuple[list[CycleResult], list[tuple[pd.Timestamp, str]]]:
    """The missed cycles before ``target``, refused, skipped or backfilled as the request says
    (see the module docstring), whatever its kind: the cycles played and the forfeits recorded.
    A cycle forced to a time after the due one counts the due one as missed too."""
    earlier = missed_cycles(handle.config, handle.ledger, handle.attempts, now, before=target)
    if not earlier:
        return [], []
    current = request.kind is Kind.CYCLE
    if request.missed is Missed.REFUSE:
        raise MissedCycles(handle.id, str(handle.lake.root), earlier,
                           None if current else target)
    if request.missed is Missed.SKIP:
        how = "arena cycle --skip-missed" if current else \
            f"the {request.kind} of {target:%Y-%m-%d} skipping them"
        return [], forfeit_missed(
            handle.lake, handle.config, handle.ledger, handle.universe, earlier,
            f"forfeited: the cycle was missed and the operator skipped it ({now:%Y-%m-%d %H:%M} "
            f"UTC, {how})")
    played: list[CycleResult] = []
    for i, day in enumerate(earlier):
        left = deadline - effects.monotonic()
        if left < handle.config.call_timeout_s:  # no model call could finish in time
            raise BackfillIncomplete(
                f"season {handle.id!r}: the cycle deadline passed while backfilling the missed "
                f"cycles; not played yet: {_days(earlier[i:])} (arena season backfill "
                f"{earlier[i]:%Y-%m-%d}, or arena cycle --skip-missed to record them as "
                "forfeited)", played)
        try:
            played.append(_play_at(handle, CycleRequest(Kind.BACKFILL, day), now, left,
                                   effects))
        except CycleRefused as exc:  # e.g. its market stays stale: it can never be backfilled
            raise BackfillIncomplete(
                f"season {handle.id!r}: the missed cycle {day:%Y-%m-%d} could not be "
                f"backfilled: {exc}; not played yet: {_days(earlier[i:])} (arena cycle "
                "--skip-missed records them as forfeited and plays on)", played) from exc
    return played, []


def _play_at(handle: SeasonHandle, request: CycleRequest, now: pd.Timestamp, deadline_s: float,
             effects: Effects) -> CycleResult:
    """The season's cycle at ``request.at``, played by the roster of that time."""
    at = request.at
    assert at is not None
    contestants = handle.contestants(at)
    run = play_season_cycle(handle.lake, handle.config, contestants.playing, at, now=now,
                            universe=handle.universe, force_time=request.force_time,
                            backfill=request.kind is Kind.BACKFILL,
                            retry=request.kind is Kind.RETRY, runner=effects.runner,
                            slot=effects.slot, ledger=handle.ledger, attempts=handle.attempts,
                            clock=effects.monotonic, sleep=effects.sleep, deadline_s=deadline_s)
    return CycleResult(handle.id, request.kind, at, run, contestants.skipped)
