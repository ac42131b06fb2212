"""Prefect flow: a whole season replayed on a simulated clock, then the luck tables, the dbt marts
and the season report - the replay job (:func:`arena.app.replay.replay`), the same as
``arena replay``, with the season's ingest a task, each simulated day a task (its daily report a
markdown artifact), the luck tables a task and ``dbt build`` through prefect-dbt's runner (every
model, seed and test a task of its own; a failing dbt test fails the flow); the leaderboard
becomes a table artifact. Every artifact names the season's market (SYNTHETIC on the embedded
default). Re-running it resumes: recorded cycles are skipped by the ledger, nothing twice. A run
is named after its season and days (``2026-10-01-synthetic-replay 2026-10-01 to 2026-10-28``)
and tagged ``season:<id>``, ``job:replay``.
"""

from __future__ import annotations

import os
import time
from typing import Literal

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from arena import DEMO_START
from arena.app.params import parse_day, symbol_list
from arena.app.replay import ReplayPlan, replay
from arena.core.errors import ArenaError
from arena.core.sessions import daily_cycles
from arena.core.settings import prepare_process
from arena.data.lake import Lake, default_root
from arena.flows.artifacts import daily_artifact, leaderboard_artifact
from arena.flows.command import run_from_command_line
from arena.flows.tasks import (
    PrefectRunner,
    flow_effects,
    prefect_dbt_invoke,
    season_of,
    tag_run,
    when,
)
from arena.pipeline.day import DayReport
from arena.pipeline.season_config import REPLAY, default_providers, new_season_id
from arena.pipeline.season_tables import ARENA_PLAYERS
from arena.scoring.asset_luck import DEFAULT_PLAYERS


def replay_lake(lake_root: str | None) -> Lake:
    """The lake a replay plays into: ``lake_root``, else the demo's (``data_lake/demo``)."""
    return Lake(lake_root or default_root() / "demo")  # a lake holds one season


def replay_run_name() -> str:
    """A replay named after its season and days: ``2026-10-01-synthetic-replay 2026-10-01 to
    2026-10-28`` (the season its lake holds, else the one the replay starts there); parameters
    that cannot be read name it by its scheduled time (the run itself says why)."""
    p = flow_run.parameters
    try:
        start = parse_day(p.get("start", DEMO_START), "start")
        days = daily_cycles(start, int(p.get("days", 28)))
        season = season_of(replay_lake(p.get("lake_root"))) or \
            new_season_id(start, default_providers(), REPLAY)
    except (ArenaError, TypeError, ValueError):
        days = []
    if not days:
        return f"replay {when(flow_run.scheduled_start_time)}"
    return f"{season} {days[0]:%Y-%m-%d} to {days[-1]:%Y-%m-%d}"


@flow(name="season", flow_run_name=replay_run_name, log_prints=True)
def season_flow(start: str = DEMO_START, days: int = 28, roster: str | None = None,
                lake_root: str | None = None, symbols: list[str] | None = None,
                seed: int | None = None, players: int = DEFAULT_PLAYERS,
                arena_players: int = ARENA_PLAYERS,
                ingest: Literal["season", "daily"] = "season",
                candles: Literal["ohlcv", "close"] = "ohlcv") -> dict:
    """Replay ``days`` cycles from ``start`` on the synthetic market into ``lake_root`` (default:
    the demo's lake, ``data_lake/demo``), the prompts' candles in the layout ``candles``, then
    build the luck tables, marts and report."""
    prepare_process()
    logger = get_run_logger()
    began = time.perf_counter()
    lake = replay_lake(lake_root)
    tag_run("replay", season_of(lake))  # a new lake's season is known once the replay starts
    fills = 0
    season = None

    def day_done(day: DayReport, done: int, total: int) -> None:
        nonlocal fills
        fills += sum(o.fills for o in day.outcomes) + day.automatic_closes
        daily_artifact(day, season)
        logger.info("day %d/%d %s: %d fills so far, %.0f s elapsed", done, total,
                    day.at.date(), fills, time.perf_counter() - began)

    def started(handle, contestants: int) -> None:
        nonlocal season
        season = handle.config
        tag_run("replay", handle.id)

    plan = ReplayPlan(parse_day(start, "start"), days, roster, symbol_list(symbols), seed,
                      players, arena_players, ingest, candles)
    done = replay(lake, plan, env=os.environ,
                  effects=flow_effects(runner=PrefectRunner(), invoke=prefect_dbt_invoke(lake)),
                  on_start=started, on_day=day_done)
    for item in done.skipped:
        logger.warning("contestant %s", item)
    leaderboard_artifact(done)
    logger.info("season done in %.0f s: %d dbt nodes, report %s", time.perf_counter() - began,
                len(done.outputs.marts.nodes), done.outputs.report)
    return {"report": str(done.outputs.report), "warehouse": str(done.outputs.marts.warehouse),
            "marts": str(done.outputs.marts.marts), "fills": fills,
            "dbt_nodes": len(done.outputs.marts.nodes)}


if __name__ == "__main__":
    print(run_from_command_line(season_flow))
