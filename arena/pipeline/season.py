"""A season: one simulated day after another on a replay clock, then the season's tables, the
marts and the report - the same steps for the command line and the Prefect flow.

The season's market comes first (:func:`ingest_season`): one validated ingest run from
:data:`HISTORY_DAYS` before the first cycle up to the last, all-or-nothing per asset. A replay
plays history, so its market is known in advance; what each day may see is decided by the reads,
which are as-of the day's time (a briefing is the same whether or not the lake holds later bars,
tested), and ingesting day by day publishes the same bars (tested too). ``ingest="daily"``
ingests before each day instead, as a live season's cadence does (see :func:`ingest_day`): a
vendor failure then strikes one day rather than the whole season.

A season day (:func:`play_day`), in order: the day's ingest when daily; the invalidation monitor
over the 15-minute bars since the previous cycle (automatic closes recorded before the cycle, as
the ledger's ordering requires); the decision cycle (:func:`arena.pipeline.cycle.run_cycle`); the
daily report (``<lake>/reports/daily/<date>.md``). Assets that did not publish keep their last
bars, which the cycle marks stale; when no asset publishes, the replay fails. Every step is
idempotent - the ingest merges, the ledger records each (window, contestant) and (cycle,
contestant) once - so a replay interrupted half-way resumes where it stopped when run again,
duplicating nothing.

The end of a season (:func:`finish_season`): the luck and reference-rules tables, ``dbt build``
(its runner injectable: prefect-dbt's in the flow, one task per dbt node), the marts published
for analysts, the season report. A lake holds one season: its ledger is the season's books.

Each step runs through a :class:`~arena.pipeline.runner.Runner`: in this process for the command
line, as a Prefect task in the flow. Times are UTC timestamps (the edge converts its input once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pandas as pd
import pyarrow.parquet as pq

from arena.agents.base import Contestant
from arena.core.sessions import CYCLE_HOUR
from arena.core.universe import Universe
from arena.data.ingest import IngestError, LakeWriteError, run_ingest
from arena.data.lake import Lake, PartitionKey
from arena.data.providers.base import Provider
from arena.engine.monitor import check_invalidations
from arena.ledger.records import MonitorRecord
from arena.ledger.store import Ledger
from arena.market.asof import Providers, provider_of
from arena.pipeline.cycle import Outcome, run_cycle, secret_names
from arena.pipeline.runner import INLINE, Runner, step
from arena.pipeline.season_tables import ARENA_PLAYERS, build_analytics, write_analytics
from arena.pipeline.warehouse import BuildResult, Invoke, build_marts
from arena.reporting.daily import daily_report, write_daily_report
from arena.reporting.season import write_season_report
from arena.scoring.asset_luck import DEFAULT_PLAYERS

log = logging.getLogger(__name__)
HISTORY_DAYS = 220  # before the first cycle: enough for 26 weekly candles and the screen


@dataclass
class DayReport:
    at: pd.Timestamp
    outcomes: list[Outcome]
    automatic_closes: int
    seconds: float
    daily_report: str = ""
    timings: dict[str, float] = field(default_factory=dict)  # ingest, validation, monitor, ...
    not_published: dict[str, str] = field(default_factory=dict)  # the day's ingest: symbol -> why


@dataclass
class SeasonReport:
    start: pd.Timestamp
    days: list[DayReport] = field(default_factory=list)
    ingest: dict[str, object] = field(default_factory=dict)  # the season's ingest manifest
    timings: dict[str, float] = field(default_factory=dict)  # the season's ingest, validation

    @property
    def trades(self) -> int:
        return sum(o.fills for d in self.days for o in d.outcomes) + \
            sum(d.automatic_closes for d in self.days)


def cycle_times(start: pd.Timestamp, days: int) -> list[pd.Timestamp]:
    """The season's cycle times: ``days`` consecutive days at 16:00 UTC from ``start``."""
    first = start.normalize() + pd.Timedelta(hours=CYCLE_HOUR)
    return [first + pd.Timedelta(days=i) for i in range(days)]


def monitor_day(lake: Lake, ledger: Ledger, provider: Providers, universe: Universe,
                contestants: Sequence[Contestant], end: pd.Timestamp) -> int:
    """Record every contestant's automatic closes up to ``end`` from the 15-minute bars of
    ``provider`` (one, or one per asset class); returns how many.

    Each contestant's window starts where its watch stopped: at its last cycle record before
    ``end`` or the end of its last monitor window, whichever is later (a replay's day: the
    previous cycle; a live cycle: the live monitor's last tick, or the contestant's own last
    cycle when a cycle was missed). So windows never overlap or leave a gap, and running the
    monitor tick by tick records the same closes as one window. A contestant that never played
    holds nothing and is left alone, as is one monitored up to ``end`` already (a re-run
    records nothing twice)."""
    closes = 0
    for contestant in contestants:
        marks = [k.cycle_at for k in ledger.records(contestant.name) if k.cycle_at < end]
        marks += [k.end for k in ledger.monitor_records(contestant.name) if k.end <= end]
        if not marks or max(marks) >= end:
            continue
        since = max(marks)

        def build(name: str = contestant.name, since: pd.Timestamp = since) -> MonitorRecord:
            portfolio = ledger.portfolio(name)
            bars = {s: lake.read_bars(PartitionKey(provider if isinstance(provider, str)
                                                   else provider_of(provider, universe[s]),
                                                   "15m", s), since, end)
                    for s in portfolio.positions}
            result = check_invalidations(portfolio, bars, universe, since, end)
            return MonitorRecord(name, since, end, result.fills, result.checked, result.unobserved)

        ledger.record_monitor(since, end, contestant.name, build)
        # windows never overlap: this window's closes are the rows of its own fills file
        closes += pq.read_metadata(ledger.monitor_dir(since, end, contestant.name)
                                   / "fills.parquet").num_rows
    return closes


def history_start(first_cycle: pd.Timestamp) -> pd.Timestamp:
    """Where a season's market starts: :data:`HISTORY_DAYS` before its first cycle's day."""
    return first_cycle.normalize() - pd.Timedelta(days=HISTORY_DAYS)


def _ingest(provider: Provider, universe: Universe, start: pd.Timestamp, end: pd.Timestamp,
            lake: Lake, what: str, *, some: bool = True) -> dict[str, object]:
    """One ingest run; ``some``: at least one asset must publish (else :class:`IngestError`)."""
    try:
        return run_ingest(provider, universe, start=start, end=end, lake=lake, now=end).manifest
    except LakeWriteError:  # a full or read-only disk: the replay stops, whatever published
        raise
    except IngestError as exc:
        if some and not exc.published:
            raise IngestError(f"{what}: {exc}", exc.manifest) from exc
        log.warning("%s: playing on without %s (their last bars stay, the cycle marks them "
                    "stale): %s", what, ", ".join(exc.manifest.get("not_published") or {}), exc)
        return exc.manifest


def _ingest_timings(manifest: dict[str, object], started: float) -> dict[str, float]:
    """An ingest's seconds since ``started``, its validation (from its manifest) apart."""
    validation = float(manifest["timings_seconds"].get("validate", 0.0))  # type: ignore[union-attr]
    return {"ingest": time.perf_counter() - started - validation, "validation": validation}


@step("ingest-season")
def ingest_season(provider: Provider, universe: Universe, times: Sequence[pd.Timestamp],
                  lake: Lake) -> dict[str, object]:
    """The season's market in one ingest run, from :func:`history_start` up to the last cycle
    ``times[-1]``; returns its manifest. Assets that did not publish are its ``not_published``
    (symbol -> reason): they keep their last bars, if any, and are stale at every cycle. When no
    asset published, :class:`IngestError` is raised: there is no market to play."""
    return _ingest(provider, universe, history_start(times[0]), times[-1], lake,
                   f"season {times[0].date()} to {times[-1].date()}")


def ingest_day(provider: Provider, universe: Universe, at: pd.Timestamp,
               previous: pd.Timestamp | None, lake: Lake, *, some: bool = True
               ) -> dict[str, object]:
    """The day's ingest up to ``at`` (from ``previous``, or :func:`history_start` on the first
    day); returns its manifest.

    Ingest publishes all-or-nothing per asset. When some assets failed and others published, the
    day goes on: the failure is logged, the manifest (``not_published``: symbol -> reason) is
    returned for the day's report, and the failed assets keep their last good bars, which the
    cycle's market finds stale (:func:`arena.market.asof.is_stale`). When no asset published,
    :class:`IngestError` is raised (there is no market to play) - unless ``some`` is False: the
    day's ingest is then only of the assets the season's ingest could not publish, and the
    others are there.
    """
    return _ingest(provider, universe, previous or history_start(at), at, lake,
                   f"season day {at.date()}", some=some)


@step("day-{at:%Y-%m-%d}")
def play_day(provider: Provider, universe: Universe, contestants: Sequence[Contestant],
             at: pd.Timestamp, previous: pd.Timestamp | None, *, lake: Lake,
             ledger: Ledger, ingest: bool | Sequence[str] = True) -> DayReport:
    """One season day ending at the cycle ``at``: when ``ingest``, the bars up to ``at``
    (:func:`ingest_day`: the assets that did not publish are in the report's ``not_published``;
    a list of symbols: those assets only, the others being in the lake already); the monitor
    window since ``previous`` (none on the first day), the cycle, then its daily report."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    manifest: dict = {}
    if ingest is True:
        manifest = ingest_day(provider, universe, at, previous, lake)
    elif ingest:
        manifest = ingest_day(provider, universe.select(list(ingest)), at, previous, lake,
                              some=False)
    if manifest:
        timings.update(_ingest_timings(manifest, t0))
    t = time.perf_counter()
    closes = 0
    if previous is not None:
        closes = monitor_day(lake, ledger, provider.name, universe, contestants, at)
    timings["monitor"] = time.perf_counter() - t
    t = time.perf_counter()
    outcomes = run_cycle(lake, provider.name, universe, contestants, at, ledger=ledger)
    timings["cycle"] = time.perf_counter() - t
    t = time.perf_counter()
    text = daily_report(ledger, lake, provider.name, universe, at)
    write_daily_report(lake, text, at)
    timings["daily_report"] = time.perf_counter() - t
    return DayReport(at, outcomes, closes, time.perf_counter() - t0, text, timings,
                     dict(manifest.get("not_published") or {}))


def replay_season(provider: Provider, universe: Universe, contestants: Sequence[Contestant],
                  start: pd.Timestamp, days: int, *, lake: Lake, ledger: Ledger | None = None,
                  runner: Runner = INLINE, ingest: Literal["season", "daily"] = "season",
                  progress: Callable[[DayReport, int, int], None] | None = None,
                  say: Callable[[str], None] | None = None) -> SeasonReport:
    """Replay ``days`` cycles from ``start``: the season's market (:func:`ingest_season`, or a
    day's ingest before each day when ``ingest="daily"``), then one :func:`play_day` after
    another (see the module docstring); ``progress`` hears of every day played, ``say`` of the
    season's ingest."""
    if ingest not in ("season", "daily"):
        raise ValueError(f"ingest must be 'season' or 'daily', not {ingest!r}")
    ledger = ledger or Ledger(lake, secret_names=secret_names(contestants))
    times = cycle_times(start, days)
    check_season_ledger(ledger, times)
    report = SeasonReport(times[0])
    if ingest == "season":
        t0 = time.perf_counter()
        if say:
            say(f"ingest: {len(universe)} assets from {history_start(times[0]).date()} to "
                f"{times[-1]:%Y-%m-%d %H:%M}, validated in one run")
        report.ingest = runner.run(ingest_season, provider, universe, times, lake)
        report.timings = _ingest_timings(report.ingest, t0)
        if say:
            missing = report.ingest.get("not_published") or {}
            said = (f"; not published in one run, so ingested day by day: {', '.join(missing)}"
                    if missing else "")
            say(f"ingest: done in {time.perf_counter() - t0:.1f} s{said}")
    # the assets the season's ingest could not publish are ingested day by day, as a daily
    # ingest would: a bad bar on day k then costs them day k on, not the whole season
    daily: bool | list[str] = True if ingest == "daily" else sorted(
        report.ingest.get("not_published") or {})
    previous = None
    for i, at in enumerate(times, start=1):
        day = runner.run(play_day, provider, universe, contestants, at, previous, lake=lake,
                         ledger=ledger, ingest=daily)
        report.days.append(day)
        if progress:
            progress(day, i, len(times))
        previous = at
    return report


class SeasonError(RuntimeError):
    """A season that cannot be replayed or finished as asked (a lake holding another season)."""


def check_season_ledger(ledger: Ledger, times: Sequence[pd.Timestamp]) -> None:
    """Refuse a ledger with cycles outside the season: every season starts from $10,000, so
    records of another season in the same lake would carry over into its books."""
    season = set(times)
    outside = [k for k in ledger.records() if k.cycle_at not in season]
    if outside:
        raise SeasonError(
            f"the ledger at {ledger.dir} holds cycles of another season (first: {outside[0].contestant}"
            f" at {outside[0].cycle_at}); replay each season into its own lake (--lake)")


@dataclass
class SeasonOutputs:
    """What the end of a season produced, and the seconds each step took."""

    analytics: Path
    marts: BuildResult
    report: Path
    seconds: dict[str, float] = field(default_factory=dict)


@step("season-tables")
def season_tables(lake: Lake, provider: Providers, universe: Universe, times: Sequence[pd.Timestamp],
                  *, players: int, arena_players: int, seed: int,
                  progress: Callable[[str], None], runner: Runner = INLINE
                  ) -> tuple[Path, dict[str, float]]:
    """The season's luck and reference-rules tables, written into the lake; a ``runner`` that
    distributes its work (``runner.distributes``: a Dask cluster) computes the assets' tables."""
    fan_out = runner.map if getattr(runner, "distributes", False) else None
    analytics = build_analytics(lake, provider, universe, times, players=players,
                                arena_players=arena_players, seed=seed, progress=progress,
                                fan_out=fan_out)
    return write_analytics(lake, analytics), analytics.seconds


def finish_season(lake: Lake, provider: Providers, universe: Universe, times: Sequence[pd.Timestamp], *,
                  invoke: Invoke | None = None, players: int = DEFAULT_PLAYERS,
                  arena_players: int = ARENA_PLAYERS, seed: int = 0, quiet: bool = False,
                  runner: Runner = INLINE,
                  progress: Callable[[str], None] | None = None) -> SeasonOutputs:
    """The season's luck and rules tables (Python, into the lake), the dbt marts (built and
    tested by ``invoke``, dbt's own runner by default; published for analysts), the season
    report."""
    say = progress or (lambda _msg: None)
    check_season_ledger(Ledger(lake), times)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    path, luck_seconds = runner.run(season_tables, lake, provider, universe, times,
                                    players=players, arena_players=arena_players, seed=seed,
                                    progress=say, runner=runner)
    seconds.update({f"luck.{k}": v for k, v in luck_seconds.items()})
    seconds["luck"] = time.perf_counter() - t0
    say("dbt build: staging, intermediate, marts and their tests")
    t0 = time.perf_counter()
    marts = build_marts(lake, invoke, quiet=quiet, runner=runner)
    seconds["dbt"] = time.perf_counter() - t0
    seconds["dbt.build"] = marts.seconds
    t0 = time.perf_counter()
    report = runner.run(write_season_report, lake)
    seconds["report"] = time.perf_counter() - t0
    return SeasonOutputs(path, marts, report, seconds)
