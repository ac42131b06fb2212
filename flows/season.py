"""Prefect flow: a whole season replayed on a simulated clock, then the luck tables, the dbt marts
and the season report.

Each simulated day is one task (ingest, monitor window, cycle, daily report: the same
:func:`arena.pipeline.season.play_day` the command line runs) and publishes its daily report as a markdown
artifact. After the last day: the season's luck and reference-rules tables (a task), then
``dbt build`` through prefect-dbt's runner, so every model, seed and test shows as a task of its
own in the UI and a failing dbt test fails the flow; then the marts are published for analysts
and the season report is written (tasks); the leaderboard becomes a table artifact. Every
artifact names the season's market (SYNTHETIC on the embedded default, whose prices are
invented). The flow logs its progress (days done, trades, elapsed). Re-running it resumes:
recorded cycles are skipped by the ledger, nothing twice.
"""

from __future__ import annotations

import os
import time

import pandas as pd
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from arena import DEMO_START
from arena.agents.base import Contestant
from arena.agents.factory import build_contestant
from arena.agents.roster import load_roster
from arena.core.sessions import utc
from arena.core.universe import Universe, load_universe
from arena.data.lake import Lake, default_root
from arena.data.providers import make_provider, provider_note
from arena.data.providers.base import Provider
from arena.ledger.store import Ledger
from arena.pipeline.cycle import secret_names
from arena.pipeline.season import DayReport, check_season_ledger, cycle_times, play_day
from arena.pipeline.season_tables import ARENA_PLAYERS, build_analytics, write_analytics
from arena.pipeline.warehouse import DBT_PROJECT, BuildResult, publish, run_dbt
from arena.reporting.reports import write_season_report
from arena.scoring.asset_luck import DEFAULT_PLAYERS


@task(cache_policy=NO_CACHE, task_run_name="day-{at:%Y-%m-%d}")
def season_day(provider: Provider, universe: Universe, contestants: list[Contestant],
               at: pd.Timestamp, previous: pd.Timestamp | None, lake: Lake,
               ledger: Ledger) -> DayReport:
    """One simulated day: ingest, monitor window, cycle, daily report (artifact)."""
    day = play_day(provider, universe, contestants, at, previous, lake=lake, ledger=ledger)
    create_markdown_artifact(day.daily_report, key="daily-report",
                             description=f"daily report {at:%Y-%m-%d} "
                                         f"({provider_note(provider.name)})")
    return day


@task(cache_policy=NO_CACHE)
def luck_tables(lake: Lake, provider: str, universe: Universe, times: list[pd.Timestamp],
                players: int, arena_players: int) -> dict[str, float]:
    """The season's luck and reference-rules tables, into the lake."""
    logger = get_run_logger()
    analytics = build_analytics(lake, provider, universe, times, players=players,
                                arena_players=arena_players, progress=logger.info)
    write_analytics(lake, analytics)
    return analytics.seconds


def build_marts_in_flow(lake: Lake) -> BuildResult:
    """``dbt build`` through prefect-dbt's runner: each dbt node becomes a task of the flow run;
    a failed model or test raises (:class:`arena.pipeline.warehouse.MartsError`) and fails the flow."""
    from dbt_common.events.base_types import EventLevel
    from prefect_dbt import PrefectDbtRunner, PrefectDbtSettings

    # explicit settings: by default the runner derives dbt's log level from Prefect's, and
    # Prefect's "WARNING" is not a level dbt knows ("warn")
    settings = PrefectDbtSettings(project_dir=DBT_PROJECT, profiles_dir=DBT_PROJECT,
                                  log_level=EventLevel.INFO)
    return run_dbt(lake, PrefectDbtRunner(settings=settings, raise_on_failure=True).invoke)


@task(cache_policy=NO_CACHE)
def publish_marts(lake: Lake) -> tuple[str, str]:
    warehouse, marts = publish(lake)
    return str(warehouse), str(marts)


@task(cache_policy=NO_CACHE)
def season_report(lake: Lake) -> str:
    return str(write_season_report(lake))


@flow(name="season", log_prints=True)
def season_flow(start: str = DEMO_START, days: int = 28, roster: str | None = None,
                lake_root: str | None = None, symbols: list[str] | None = None,
                seed: int | None = None, players: int = DEFAULT_PLAYERS,
                arena_players: int = ARENA_PLAYERS) -> dict:
    """Replay ``days`` cycles from ``start`` on the synthetic market into ``lake_root`` (default:
    the demo's lake, ``data_lake/demo``), then build the luck tables, marts and report."""
    logger = get_run_logger()
    began = time.perf_counter()
    universe = load_universe().select(symbols)
    runnable, skipped = load_roster(roster).available(os.environ)
    for item in skipped:
        logger.warning("contestant %s", item)
    contestants = [build_contestant(spec) for spec in runnable]
    provider = make_provider("synthetic", seed=seed)
    lake = Lake(lake_root or default_root() / "demo")  # a lake holds one season
    ledger = Ledger(lake, secret_names=secret_names(contestants))
    times = cycle_times(utc(start), days)
    check_season_ledger(ledger, times)
    trades, previous = 0, None
    for i, at in enumerate(times, start=1):
        day = season_day(provider, universe, contestants, at, previous, lake, ledger)
        trades += sum(o.fills for o in day.outcomes) + day.automatic_closes
        logger.info("day %d/%d %s: %d trades so far, %.0f s elapsed", i, len(times),
                    at.date(), trades, time.perf_counter() - began)
        previous = at
    luck_tables(lake, provider.name, universe, times, players, arena_players)
    build = build_marts_in_flow(lake)
    warehouse, marts = publish_marts(lake)
    report = season_report(lake)
    board = pd.read_parquet(os.path.join(marts, "leaderboard.parquet")).sort_values(
        ["place", "contestant"])
    columns = ["place", "contestant", "market", "total_return", "zero_skill_percentile",
               "rank_score", "sharpe", "max_drawdown", "trades", "cost_usd"]
    create_table_artifact(board[columns].astype(object).where(board[columns].notna(), None)
                          .to_dict(orient="records"), key="season-leaderboard",
                          description=f"season {times[0]:%Y-%m-%d}, {len(times)} cycles "
                                      f"({provider_note(provider.name)})")
    logger.info("season done in %.0f s: %d dbt nodes, report %s", time.perf_counter() - began,
                len(build.nodes), report)
    return {"report": report, "warehouse": warehouse, "marts": marts, "trades": trades,
            "dbt_nodes": len(build.nodes)}


if __name__ == "__main__":
    print(season_flow())
