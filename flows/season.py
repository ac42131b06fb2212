"""Prefect flow: a whole season replayed on a simulated clock, then the luck tables, the dbt marts
and the season report.

The flow runs :func:`arena.pipeline.season.replay_season` and
:func:`arena.pipeline.season.finish_season` - the same steps as ``arena replay`` - with a
:class:`~arena.flows.tasks.PrefectRunner`: the season's ingest is a task, then each simulated
day (monitor window, cycle, daily report; and its ingest when ``ingest="daily"``), published as a
markdown artifact; then the season's tables, ``dbt build``
through prefect-dbt's runner (every model, seed and test a task of its own in the UI; a failing
dbt test fails the flow), the publication for analysts and the season report; the leaderboard
becomes a table artifact. Every artifact names the season's market (SYNTHETIC on the embedded
default, whose prices are invented). The flow logs its progress (days done, trades, elapsed).
Re-running it resumes: recorded cycles are skipped by the ledger, nothing twice.
"""

from __future__ import annotations

import os
import time
from typing import Literal

import pandas as pd
from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from arena import DEMO_START
from arena.agents.factory import contestants_from_roster
from arena.core.sessions import utc
from arena.core.settings import prepare_process
from arena.core.universe import load_universe
from arena.data.lake import Lake, default_root
from arena.data.providers import make_provider, provider_note
from arena.flows.tasks import PrefectRunner, prefect_dbt_invoke, run_name
from arena.pipeline.season import DayReport, cycle_times, finish_season, replay_season
from arena.pipeline.season_tables import ARENA_PLAYERS
from arena.scoring.asset_luck import DEFAULT_PLAYERS

LEADERBOARD_COLUMNS = ["place", "contestant", "market", "total_return", "zero_skill_percentile",
                       "rank_score", "sharpe", "max_drawdown", "trades", "cost_usd"]


@flow(name="season", flow_run_name=run_name("season"), log_prints=True)
def season_flow(start: str = DEMO_START, days: int = 28, roster: str | None = None,
                lake_root: str | None = None, symbols: list[str] | None = None,
                seed: int | None = None, players: int = DEFAULT_PLAYERS,
                arena_players: int = ARENA_PLAYERS,
                ingest: Literal["season", "daily"] = "season") -> dict:
    """Replay ``days`` cycles from ``start`` on the synthetic market into ``lake_root`` (default:
    the demo's lake, ``data_lake/demo``), then build the luck tables, marts and report.
    ``ingest``: ``"season"`` (the market in one run first) or ``"daily"`` (a run before each
    day)."""
    prepare_process()
    logger = get_run_logger()
    began = time.perf_counter()
    universe = load_universe().select(symbols)
    contestants, skipped = contestants_from_roster(roster, os.environ)
    for item in skipped:
        logger.warning("contestant %s", item)
    provider = make_provider("synthetic", seed=seed)
    lake = Lake(lake_root or default_root() / "demo")  # a lake holds one season
    note = provider_note(provider.name)
    trades = 0

    def day_done(day: DayReport, done: int, total: int) -> None:
        nonlocal trades
        trades += sum(o.fills for o in day.outcomes) + day.automatic_closes
        create_markdown_artifact(day.daily_report, key="daily-report",
                                 description=f"daily report {day.at:%Y-%m-%d} ({note})")
        logger.info("day %d/%d %s: %d trades so far, %.0f s elapsed", done, total,
                    day.at.date(), trades, time.perf_counter() - began)

    runner = PrefectRunner()
    start_ts = utc(start)
    replay_season(provider, universe, contestants, start_ts, days, lake=lake, runner=runner,
                  ingest=ingest, progress=day_done, say=logger.info)
    times = cycle_times(start_ts, days)
    done = finish_season(lake, provider.name, universe, times, invoke=prefect_dbt_invoke(lake),
                         players=players, arena_players=arena_players, runner=runner,
                         progress=logger.info)
    board = pd.read_parquet(done.marts.marts / "leaderboard.parquet").sort_values(
        ["place", "contestant"])[LEADERBOARD_COLUMNS]
    create_table_artifact(board.astype(object).where(board.notna(), None).to_dict(orient="records"),
                          key="season-leaderboard",
                          description=f"season {times[0]:%Y-%m-%d}, {len(times)} cycles ({note})")
    logger.info("season done in %.0f s: %d dbt nodes, report %s", time.perf_counter() - began,
                len(done.marts.nodes), done.report)
    return {"report": str(done.report), "warehouse": str(done.marts.warehouse),
            "marts": str(done.marts.marts), "trades": trades, "dbt_nodes": len(done.marts.nodes)}


if __name__ == "__main__":
    print(season_flow())
