"""A season day, written once for a replay and a live season: :func:`play_day`.

In order: the day's ingest (a replay ingesting day by day; a live season ingests on its own
schedule); the contestants still without a record in an earlier cycle where their model failed
recorded as forfeited (a live season: :func:`record_forfeits`); the invalidation monitor over
the 15-minute bars since each contestant's last window (:func:`monitor_day`: the automatic
closes come first, as the ledger's order requires); the decision cycle
(:func:`arena.pipeline.cycle.run_cycle`), played again for the contestants whose model failed
while the :class:`Retries` allow (a live season's deadline; a replay plays once); the daily
report (``<lake>/reports/daily/<date>.md`` and its HTML page).

Every step is idempotent - the ingest merges, the ledger records each (window, contestant) and
(cycle, contestant) once - so a day interrupted half-way resumes where it stopped when played
again, duplicating nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd
import pyarrow.parquet as pq

from arena.agents.base import Contestant
from arena.core.runner import INLINE, Runner, step
from arena.core.universe import Universe
from arena.data.errors import DamagedFile
from arena.data.ingest import IngestError, LakeWriteError, run_ingest
from arena.data.lake import Lake, PartitionKey
from arena.data.manifest import IngestSummary
from arena.data.providers.base import Provider
from arena.engine.monitor import check_invalidations
from arena.engine.outcomes import FAILED, CycleOutcome
from arena.engine.rules import ARENA_RULES, Rules
from arena.ledger.attempts import Attempts
from arena.ledger.records import CycleRecord, MonitorRecord, equity_snapshot
from arena.ledger.store import BrokenChain, Ledger, LedgerError
from arena.market.asof import NoPrices, Providers, cycle_prices, provider_of
from arena.market.blind import Blinding
from arena.market.sections import DEFAULT_LAYOUT
from arena.pipeline.cycle import Outcome, Slot, run_cycle
from arena.pipeline.season_ingest import history_start as season_history_start
from arena.reporting.daily import daily_report, write_daily_report

log = logging.getLogger(__name__)
RETRY_WAIT = 2.0  # seconds before the first retry of the failed contestants; doubled each time


@dataclass
class DayReport:
    """What one season day did, and the seconds each step took."""

    at: pd.Timestamp
    outcomes: list[Outcome]
    automatic_closes: int
    seconds: float
    daily_report: str = ""
    timings: dict[str, float] = field(default_factory=dict)  # ingest, validation, monitor, ...
    not_published: dict[str, str] = field(default_factory=dict)  # the day's ingest: symbol -> why
    forfeits: list[tuple[pd.Timestamp, str]] = field(default_factory=list)  # recorded first
    rounds: int = 1  # rounds the cycle was played in (1: no contestant was played again)


@dataclass(frozen=True)
class Retries:
    """How long a live cycle plays its failed contestants again: until ``deadline_s`` seconds
    after it started, waiting 2, 4, 8... seconds between rounds, never starting a round that a
    call of ``call_timeout_s`` could not finish in time."""

    deadline_s: float
    call_timeout_s: float
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


@dataclass(frozen=True)
class DayIngest:
    """A replay's ingest before its day: the bars of ``provider`` from ``previous`` (the
    previous cycle; None: :func:`history_start` of the day) up to the day's cycle, of every
    asset or of ``symbols`` only (the assets the season's own ingest could not publish, or a
    provider's share of a season of several); ``some``: at least one asset must publish, as
    it must when every asset is asked."""

    provider: Provider
    previous: pd.Timestamp | None
    symbols: tuple[str, ...] | None = None
    some: bool = False

    @property
    def required(self) -> bool:
        return self.some or self.symbols is None


def history_start(first_cycle: pd.Timestamp) -> pd.Timestamp:
    """Where a season's market starts: early enough for the reference rules' longest window and
    the briefing's indicators on every calendar (:func:`arena.pipeline.season_ingest.history_start`)."""
    return season_history_start(first_cycle)


def ingest_window(provider: Provider, universe: Universe, start: pd.Timestamp,
                  end: pd.Timestamp, lake: Lake, what: str, *, some: bool = True,
                  runner: Runner = INLINE) -> IngestSummary:
    """One ingest run up to ``end`` (the replay's clock: ``now`` is ``end``); ``some``: at
    least one asset must publish (else :class:`IngestError`, naming ``what``). A run some assets
    of which did not publish is returned too (its ``not_published``): they keep their last bars,
    which the cycle marks stale."""
    try:
        return run_ingest(provider, universe, start=start, end=end, lake=lake, now=end,
                          runner=runner).summary
    except LakeWriteError:  # a full or read-only disk: the replay stops, whatever published
        raise
    except IngestError as exc:
        if some and not exc.published:
            raise IngestError(f"{what}: {exc}", exc.manifest) from exc
        summary = exc.summary
        if summary is None:
            raise
        log.warning("%s: playing on without %s (their last bars stay, the cycle marks them "
                    "stale): %s", what, ", ".join(summary.not_published), exc)
        return summary


def ingest_timings(summary: IngestSummary, started: float) -> dict[str, float]:
    """An ingest's seconds since ``started``, its validation apart."""
    validation = summary.validation_seconds
    return {"ingest": time.perf_counter() - started - validation, "validation": validation}


def monitor_day(lake: Lake, ledger: Ledger, provider: Providers, universe: Universe,
                contestants: Sequence[Contestant | str], end: pd.Timestamp) -> int:
    """Record every contestant's (or named contestant's) automatic closes up to ``end`` from
    the 15-minute bars of ``provider`` (one, or one per asset class); returns how many.

    Each contestant's window starts where its book last changed: at its last cycle record
    before ``end`` or the end of its last recorded monitor window, whichever is later. A window
    is recorded only when it closed something: one that closed nothing left the book as it
    was, so the next window starts where this one started and watches its bars again (a tick
    every 15 minutes of a live season writes a record when a level is reached, not 96 a day;
    a bar ingested late is still watched). So recorded windows never overlap or leave a gap,
    and running the monitor tick by tick records the same closes as one window. A contestant
    that never played, or holds nothing, is left alone, as is one monitored up to ``end``
    already (a re-run records nothing twice)."""
    with ledger.reading():  # one listing of each kind for the whole roster's reads
        return _monitor_day(lake, ledger, provider, universe, contestants, end)


def _monitor_day(lake: Lake, ledger: Ledger, provider: Providers, universe: Universe,
                 contestants: Sequence[Contestant | str], end: pd.Timestamp) -> int:
    closes = 0
    # where each book last changed
    last: dict[str, pd.Timestamp] = {}
    for who, at in [*((k.contestant, k.cycle_at) for k in ledger.records() if k.cycle_at < end),
                    *((k.contestant, k.end) for k in ledger.monitor_records() if k.end <= end)]:
        last[who] = max(at, last.get(who, at))
    for who in (c if isinstance(c, str) else c.name for c in contestants):
        since = last.get(who)
        if since is None or since >= end:
            continue

        def watch(name: str = who, since: pd.Timestamp = since) -> MonitorRecord:
            portfolio = ledger.portfolio(name)
            bars = {s: lake.read_bars(PartitionKey(provider if isinstance(provider, str)
                                                   else provider_of(provider, universe[s]),
                                                   "15m", s), since, end)
                    for s in portfolio.positions}
            result = check_invalidations(portfolio, bars, universe, since, end)
            return MonitorRecord(name, since, end, result.fills, result.checked, result.unobserved)

        try:
            if not watch().fills:  # the book stays as it is: nothing to record
                continue
            ledger.record_monitor(since, end, who, watch)  # watched again under its lock
        except (BrokenChain, DamagedFile) as exc:  # its cycle refuses it too, by name
            log.error("the monitor cannot watch %s up to %s: %s", who, end, exc)
            continue
        # windows never overlap: this window's closes are the rows of its own fills file
        closes += pq.read_metadata(ledger.monitor_dir(since, end, who)
                                   / "fills.parquet").num_rows
    return closes


def cycle_prices_at(lake: Lake, market: Providers, universe: Universe, at: pd.Timestamp
                    ) -> dict[str, float]:
    """Every symbol's price at the cycle ``at`` (none: an empty mapping, so a book is valued at
    its cash)."""
    try:
        frame = cycle_prices(lake, market, universe, [at])
    except NoPrices:
        return {}
    return dict(zip(frame["symbol"], frame["price"], strict=True))


def record_forfeit(ledger: Ledger, cycle: pd.Timestamp, name: str, reason: str,
                   prices: dict[str, float]) -> bool:
    """Record ``name`` as forfeited at ``cycle`` with ``reason``, its book valued at ``prices``;
    False (logged) when the ledger refuses (a later record of that contestant exists)."""

    def build() -> CycleRecord:
        return CycleRecord(contestant=name, cycle_at=cycle, status=CycleOutcome.FORFEITED.value,
                           errors=(reason,), equity=equity_snapshot(ledger.portfolio(name), prices))

    try:
        ledger.record_cycle(cycle, name, build)
    except LedgerError as exc:
        log.error("cannot record %s as forfeited at %s: %s", name, cycle, exc)
        return False
    return True


def record_forfeits(lake: Lake, market: Providers, ledger: Ledger, attempts: Attempts,
                    names: Sequence[str], universe: Universe, at: pd.Timestamp
                    ) -> list[tuple[pd.Timestamp, str]]:
    """Before the cycle at ``at``: every earlier cycle's contestant of ``names`` that failed
    there (the attempts log) and still has no record is recorded as forfeited, with the last
    reason."""
    out = []
    for cycle in (t for t in attempts.cycles() if t < at):
        failed = {n: tries for n, tries in attempts.of(cycle).items()
                  if n in names and not ledger.has(cycle, n)}
        if not failed:
            continue
        prices = cycle_prices_at(lake, market, universe, cycle)
        for name, tries in sorted(failed.items()):
            reason = (f"forfeited: no answer by the next cycle after {len(tries)} failed "
                      f"attempt(s); last: {tries[-1].error}")
            if record_forfeit(ledger, cycle, name, reason, prices):
                out.append((cycle, name))
    return out


def play_rounds(lake: Lake, market: Providers, universe: Universe,
               contestants: Sequence[Contestant], at: pd.Timestamp, *, ledger: Ledger,
               rules: Rules, runner: Runner, slot: Slot | None, attempts: Attempts | None,
               retries: Retries | None, candles: str = DEFAULT_LAYOUT,
               blinding: Blinding | None = None) -> tuple[list[Outcome], int]:
    """The cycle at ``at``, played again for the contestants whose model failed while
    ``retries`` allow; each failed attempt goes to ``attempts`` (never to the ledger). Returns
    the outcomes (one per contestant, in order) and the rounds played."""
    deadline = retries.clock() + retries.deadline_s if retries is not None else None
    playing, done, rounds, wait = list(contestants), {}, 0, RETRY_WAIT
    while playing:
        rounds += 1
        # the whole roster each round: the recorded ones only answer "already recorded" (no
        # call), and a follower retried still sees the others' answers
        names = {c.name for c in playing}
        for outcome in run_cycle(lake, market, universe, contestants, at, ledger=ledger,
                                 runner=runner, rules=rules, slot=slot, candles=candles,
                                 blinding=blinding):
            if outcome.contestant not in names:
                continue
            done[outcome.contestant] = outcome
            if outcome.status == FAILED and attempts is not None:
                attempts.add(at, outcome.contestant, outcome.error or "failed")
        # a refused record (not a lock held by another run) would be refused again
        playing = [c for c in playing if done[c.name].status == FAILED and done[c.name].transient]
        if not playing or retries is None or deadline is None or \
                retries.clock() + wait + retries.call_timeout_s >= deadline:
            break  # another round could not finish before the deadline
        log.warning("cycle %s: retrying %s in %.0f s (deadline in %.0f s)", at,
                    ", ".join(c.name for c in playing), wait, deadline - retries.clock())
        retries.sleep(wait)
        wait *= 2
    return [done[c.name] for c in contestants], rounds


@step("day-{at:%Y-%m-%d}")
def play_day(lake: Lake, market: Providers, universe: Universe,
             contestants: Sequence[Contestant], at: pd.Timestamp, *, ledger: Ledger,
             rules: Rules = ARENA_RULES, runner: Runner = INLINE, slot: Slot | None = None,
             ingest: Sequence[DayIngest] = (), attempts: Attempts | None = None,
             forfeit_names: Sequence[str] = (), retries: Retries | None = None,
             candles: str = DEFAULT_LAYOUT, blinding: Blinding | None = None) -> DayReport:
    """One season day ending at the cycle ``at`` (see the module docstring). ``ingest``: the
    day's ingests first (a replay's, one per provider); ``attempts``: the attempts log failed
    contestants go to,
    and where the earlier cycles' failures of ``forfeit_names`` are read from to record them
    as forfeited first; ``retries``: how long failed contestants are played again;
    ``candles``: the season's candle layout; ``blinding``: a blind season's
    (:mod:`arena.market.blind`)."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    not_published: dict[str, str] = {}
    for one in ingest:
        if one.symbols is not None and not one.symbols:
            continue
        t = time.perf_counter()
        subset = universe.select(list(one.symbols)) if one.symbols else universe
        summary = ingest_window(one.provider, subset, one.previous or history_start(at), at,
                                lake, f"season day {at.date()}", some=one.required,
                                runner=runner)
        for key, seconds in ingest_timings(summary, t).items():
            timings[key] = timings.get(key, 0.0) + seconds
        not_published.update(summary.not_published)
    forfeits: list[tuple[pd.Timestamp, str]] = []
    if attempts is not None:
        forfeits = record_forfeits(lake, market, ledger, attempts, forfeit_names, universe, at)
    t = time.perf_counter()
    closes = monitor_day(lake, ledger, market, universe, contestants, at)
    timings["monitor"] = time.perf_counter() - t
    t = time.perf_counter()
    outcomes, rounds = play_rounds(lake, market, universe, contestants, at, ledger=ledger,
                                  rules=rules, runner=runner, slot=slot, attempts=attempts,
                                  retries=retries, candles=candles, blinding=blinding)
    timings["cycle"] = time.perf_counter() - t
    t = time.perf_counter()
    text = daily_report(ledger, lake, market, universe, at)
    write_daily_report(lake, text, at)
    timings["daily_report"] = time.perf_counter() - t
    return DayReport(at, outcomes, closes, time.perf_counter() - t0, text, timings,
                     not_published, forfeits, rounds)
