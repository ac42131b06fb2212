"""A season: one simulated day after another on a replay clock, then the season's tables, the
marts and the report - the same steps for the command line and the Prefect flow.

The season's market comes first (:func:`ingest_season`): one validated ingest run from
:func:`~arena.pipeline.day.history_start` (rules' longest window) up to the last, all-or-nothing
per asset. A replay plays history, so its market is known in advance; what each day may see is
decided by the reads, which are as-of the day's time (a briefing is the same whether or not the
lake holds later bars, tested), and ingesting day by day publishes the same bars (tested too).
``ingest="daily"`` ingests before each day instead, as a live season's cadence does: a vendor
failure then strikes one day rather than the whole season.

Each day is :func:`arena.pipeline.day.play_day`, the same day a live season plays: the monitor
window since the previous cycle, the decision cycle, the daily report. Assets that did not
publish keep their last bars, which the cycle marks stale; when no asset publishes, the replay
fails. Every step is idempotent, so a replay interrupted half-way resumes where it stopped when
run again, duplicating nothing.

The end of a season (:func:`finish_season`): the luck and reference-rules tables, ``dbt build``
(its runner injectable: prefect-dbt's in the flow, one task per dbt node), the marts published
for analysts, the season report. A lake holds one season: its ledger is the season's books.

Each step runs through a :class:`~arena.core.runner.Runner`: in this process for the command
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

from arena.agents.base import Contestant
from arena.core.errors import UnusableInput
from arena.core.runner import INLINE, Runner, step
from arena.core.universe import Universe
from arena.data.lake import Lake
from arena.data.manifest import IngestSummary
from arena.data.providers.base import Provider
from arena.ledger.store import Ledger
from arena.market.asof import Providers, provider_of
from arena.market.blind import Blinding
from arena.market.sections import DEFAULT_LAYOUT
from arena.pipeline.blind_reveal import blinding_frame
from arena.pipeline.cycle import secret_names
from arena.pipeline.day import (
    DayIngest,
    DayReport,
    history_start,
    ingest_window,
    play_day,
)
from arena.pipeline.knowledge import knowledge_frame
from arena.pipeline.season_config import find_season, season_roster
from arena.pipeline.season_tables import ARENA_PLAYERS, build_analytics, write_analytics
from arena.pipeline.warehouse import BuildResult, Invoke, build_marts
from arena.reporting.season import write_season_report
from arena.scoring.asset_luck import DEFAULT_PLAYERS

log = logging.getLogger(__name__)


@dataclass
class SeasonReport:
    start: pd.Timestamp
    days: list[DayReport] = field(default_factory=list)
    # the season's ingest by provider (empty: a daily ingest)
    ingests: dict[str, IngestSummary] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # the season's ingest, validation

    @property
    def ingest(self) -> IngestSummary | None:
        """The season's ingest when it read one provider (None: a daily ingest; a season of
        several providers has one each: :attr:`ingests`)."""
        return next(iter(self.ingests.values())) if len(self.ingests) == 1 else None

    @property
    def fills(self) -> int:
        """Fills of the season: every executed open, add and close, automatic closes included."""
        return sum(o.fills for d in self.days for o in d.outcomes) + \
            sum(d.automatic_closes for d in self.days)


@step("ingest-season")
def ingest_season(provider: Provider, universe: Universe, times: Sequence[pd.Timestamp],
                  lake: Lake, runner: Runner = INLINE) -> IngestSummary:
    """The season's market in one ingest run, from :func:`history_start` up to the last cycle
    ``times[-1]``; returns its manifest, typed. Assets that did not publish are its ``not_published``
    (symbol -> reason): they keep their last bars, if any, and are stale at every cycle. When no
    asset published, :class:`IngestError` is raised: there is no market to play."""
    return ingest_window(provider, universe, history_start(times[0]), times[-1], lake,
                         f"season {times[0].date()} to {times[-1].date()}", runner=runner)


def _shares(providers: Sequence[Provider], universe: Universe, market: Providers
            ) -> list[tuple[Provider, Universe]]:
    """Each provider with the assets it gives the season (``market``: each asset's provider)."""
    return [(p, Universe(tuple(a for a in universe if provider_of(market, a) == p.name)))
            for p in providers]


def replay_season(provider: Provider | Sequence[Provider], universe: Universe,
                  contestants: Sequence[Contestant], times: Sequence[pd.Timestamp], *,
                  lake: Lake, ledger: Ledger | None = None, runner: Runner = INLINE,
                  ingest: Literal["season", "daily"] = "season",
                  progress: Callable[[DayReport, int, int], None] | None = None,
                  say: Callable[[str], None] | None = None,
                  candles: str = DEFAULT_LAYOUT, blinding: Blinding | None = None,
                  market: Providers | None = None) -> SeasonReport:
    """Replay the cycles ``times`` (the season's schedule, :attr:`SeasonConfig.times`): the
    season's market (:func:`ingest_season`, or a day's ingest before each day when
    ``ingest="daily"``), then one :func:`~arena.pipeline.day.play_day` after another (see the
    module docstring), the prompts' candles in the layout ``candles``, shown blind under
    ``blinding`` when the season is blind; ``progress`` hears of every day played, ``say`` of
    the season's ingest. ``provider``: one, or several, each giving the assets ``market``
    (the season's :attr:`SeasonConfig.market`) names it for - crypto from one vendor's
    history, stocks from another's."""
    if ingest not in ("season", "daily"):
        raise ValueError(f"ingest must be 'season' or 'daily', not {ingest!r}")
    ledger = ledger or Ledger(lake, secret_names=secret_names(contestants))
    times = sorted(times)
    check_season_ledger(ledger, times)
    report = SeasonReport(times[0])
    providers = list(provider) if isinstance(provider, list | tuple) else [provider]
    market = market if market is not None else providers[0].name
    shares = _shares(providers, universe, market)
    if ingest == "season":
        _ingest_season(report, shares, times, lake, runner, say)
    # the assets the season's ingest could not publish are ingested day by day, as a daily
    # ingest would: a bad bar on day k then costs them day k on, not the whole season
    previous = None
    for i, at in enumerate(times, start=1):
        day_ingest = _day_ingests(report, shares, previous, ingest)
        day = runner.run(play_day, lake, market, universe, contestants, at,
                         ledger=ledger, runner=runner, ingest=day_ingest, candles=candles,
                         blinding=blinding)
        report.days.append(day)
        if progress:
            progress(day, i, len(times))
        previous = at
    return report


def _ingest_season(report: SeasonReport, shares: Sequence[tuple[Provider, Universe]],
                   times: Sequence[pd.Timestamp], lake: Lake, runner: Runner,
                   say: Callable[[str], None] | None) -> None:
    """The season's market, one validated ingest run per provider, into ``report``."""
    t0 = time.perf_counter()
    for provider, share in shares:
        if say:
            say(f"ingest: {len(share)} assets from {history_start(times[0]).date()} to "
                f"{times[-1]:%Y-%m-%d %H:%M}" + (f" from {provider.name}" if len(shares) > 1
                                                 else "") + ", validated in one run")
        report.ingests[provider.name] = runner.run(ingest_season, provider, share, times, lake)
    validation = sum(summary.validation_seconds for summary in report.ingests.values())
    report.timings = {"ingest": time.perf_counter() - t0 - validation, "validation": validation}
    if say:
        missing = [s for summary in report.ingests.values() for s in summary.not_published]
        said = (f"; not published in one run, so ingested day by day: {', '.join(missing)}"
                if missing else "")
        say(f"ingest: done in {time.perf_counter() - t0:.1f} s{said}")


def _day_ingests(report: SeasonReport, shares: Sequence[tuple[Provider, Universe]],
                 previous: pd.Timestamp | None, ingest: str) -> list[DayIngest]:
    """What to ingest before a day: every asset of each provider (a daily ingest), or the
    assets its season's ingest could not publish (none: nothing)."""
    if ingest == "daily":
        return [DayIngest(p, previous, tuple(share.symbols), some=True) for p, share in shares]
    return [DayIngest(p, previous, missing) for p, _ in shares
            if (missing := tuple(sorted(report.ingests[p.name].not_published)))]


class SeasonError(UnusableInput, RuntimeError):
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
    distributes its work (``runner.distributes``: a Dask cluster) computes the assets' tables.
    A season that is a contest (its config in the lake says so) builds them by its rules; the
    ``knowledge`` table says for which contestants the season is contaminated
    (:mod:`arena.pipeline.knowledge`), and the ``blinding`` table reveals a blind season's
    names, price factors and calendar shift once it has ended (:mod:`arena.pipeline.blind_reveal`:
    no rows before)."""
    fan_out = runner.map if getattr(runner, "distributes", False) else None
    config = find_season(lake)  # None: a lake replayed without a season config
    analytics = build_analytics(lake, provider, universe, times, players=players,
                                arena_players=arena_players, seed=seed, progress=progress,
                                fan_out=fan_out,
                                contest=None if config is None else config.contest)
    analytics.tables["knowledge"] = knowledge_frame(config, season_roster(lake) if config else ())
    analytics.tables["blinding"] = blinding_frame(lake, config)
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
