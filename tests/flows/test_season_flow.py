"""The season flow under a real Prefect server: days as tasks, every dbt node a task of its own
(its log lines plain and under the node's name), artifacts for the daily reports and the
leaderboard (its numbers rounded), the run named and tagged after its season, and a failing dbt
test failing the flow."""

from __future__ import annotations

import json
import shutil
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.parquet as pq

from arena.data.lake import Lake
from arena.flows.artifacts import artifact_key
from arena.pipeline.season_config import load_season
from tests.flows.artifacts import run_artifacts, run_logs

SYMBOLS = ["BTC", "SPY", "ETH", "SOL", "AAPL", "MSFT"]
ROSTER = ("contestants:\n"
          "  - {name: momentum, kind: house, strategy: momentum}\n"
          "  - {name: random, kind: house, strategy: random}\n")


def _task_names(flow_run_id, wanted: set[str], timeout: float = 30.0) -> list[str]:
    """The flow run's task run names, once every ``wanted`` name is there (prefect-dbt names a
    node's task when the node starts, and the server learns the new name a moment later)."""
    import time

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    deadline = time.monotonic() + timeout
    with get_client(sync_client=True) as client:
        while True:
            runs, offset = [], 0
            while batch := client.read_task_runs(
                    flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])),
                    limit=200, offset=offset):
                runs += batch
                offset += len(batch)
            names = [r.name for r in runs]
            if wanted <= set(names) or time.monotonic() > deadline:
                return names
            time.sleep(0.5)


@contextmanager
def _log_records(*loggers: str):
    """The log records the named loggers emit meanwhile (as the console's handler gets them)."""
    import logging

    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep()
    for name in loggers:
        logging.getLogger(name).addHandler(keep)
    try:
        yield records
    finally:
        for name in loggers:
            logging.getLogger(name).removeHandler(keep)


def _logs_until(flow_run_id, needle: str, timeout: float = 30.0) -> list:
    """The run's log lines on the server, once one holds ``needle`` (they arrive in batches)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        logs = run_logs(flow_run_id)
        if any(needle in log.message for log in logs):
            return logs
        assert time.monotonic() < deadline, f"no log line of the run holds {needle!r}"
        time.sleep(0.5)


def test_the_season_flow_builds_marts_as_tasks_and_fails_on_a_failing_dbt_test(
        prefect_server, local_storage, tmp_path):
    from prefect.client.orchestration import get_client

    from arena.flows.season import season_flow

    roster = tmp_path / "roster.yaml"
    roster.write_text(ROSTER)
    lake = tmp_path / "lake"
    kwargs = {"start": "2026-10-01", "days": 2, "roster": str(roster), "lake_root": str(lake),
              "symbols": SYMBOLS, "players": 500, "arena_players": 50}
    with _log_records("prefect.task_runs", "prefect.flow_runs") as records:
        state = season_flow(**kwargs, return_state=True)
    assert state.is_completed(), state
    result = state.result()
    assert (lake / "reports" / "season.html").is_file() and result["dbt_nodes"] >= 60
    # prefect-dbt made a task of every dbt node: models, seeds, data tests and unit tests
    wanted = {"day-2026-10-01", "day-2026-10-02", "model leaderboard", "model int_positions_folded",
              "seed universe", "test equity_matches_the_engines_snapshots",
              "unit_test drawdown_runs_from_the_start_cash_peak"}
    names = _task_names(state.state_details.flow_run_id, wanted)
    assert wanted <= set(names), sorted(set(names))
    # dbt's lines name their node's task, never "Task run None" (a node without a task, an
    # exposure, logs as the flow run), and come without terminal colours
    tasks = [r for r in records if r.name == "prefect.task_runs"]
    assert tasks and all(getattr(r, "task_run_name", None) for r in tasks), {
        r.getMessage() for r in tasks if not getattr(r, "task_run_name", None)}
    assert any(r.task_run_name == "model leaderboard" and "marts.leaderboard" in r.getMessage()
               for r in tasks)
    logs = _logs_until(state.state_details.flow_run_id, "Done. PASS=")
    assert not [log.message for log in logs if "\x1b[" in log.message]
    season = load_season(Lake(lake)).id  # every artifact key carries the season's slug
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(state.state_details.flow_run_id)
    assert run.name == f"{season} 2026-10-01 to 2026-10-02"
    assert sorted(run.tags) == ["job:replay", f"season:{season}"]
    daily_key, board_key = (artifact_key(season, k) for k in ("daily-report", "season-leaderboard"))
    assert daily_key == "2026-10-01-synthetic-replay-daily-report"
    with get_client(sync_client=True) as client:
        keys = {a.key for a in client.read_artifacts()}
    assert {daily_key, board_key} <= keys
    # the run's artifacts say the prices are synthetic: each daily report, the leaderboard
    mine = run_artifacts(state.state_details.flow_run_id)
    daily = [a for a in mine if a.key == daily_key]
    assert len(daily) == 2
    for a in daily:
        assert "> **SYNTHETIC market data: not real prices**" in a.data
        assert "SYNTHETIC" in a.description
    [board] = [a for a in mine if a.key == board_key]
    assert {r["market"] for r in json.loads(board.data)} == {"SYNTHETIC"}
    # its numbers as the report writes them: a return to 0.01% (4 decimals), a percentile to
    # 0.1%, a score to 0.01, never 17 digits of float noise
    numbers = [(k, v) for r in json.loads(board.data) for k, v in r.items()
               if isinstance(v, float)]
    assert numbers and all(len(repr(v).partition(".")[2]) <= 4 for _, v in numbers), numbers
    assert {k for k, v in numbers if repr(v) != repr(round(v, 2))} <= {
        "total_return", "max_drawdown", "excess_vs_btc", "excess_vs_spy", "excess_vs_universe",
        "zero_skill_percentile", "skill_percentile", "win_rate", "cost_usd"}, numbers
    assert "SYNTHETIC market data: not real prices" in board.description
    # the roster's two house rules are rulers: no place, and no best contestant to name
    assert {(r["contestant"], r["role"], r["place"]) for r in json.loads(board.data)} == {
        ("momentum", "ruler", None), ("random", "ruler", None)}
    assert "no contestant played this season, only the house rules (rulers); best ruler: " \
        in board.description

    # the engine's recorded equity no longer matches the fills (a record written that way: its
    # chain link made over the wrong value): the dbt test, and the flow, fail
    from arena.ledger.chain import make_link, read_link

    path = next((lake / "ledger" / "cycles").glob("cycle=*/contestant=momentum/equity.parquet"))
    table = pq.ParquetFile(path).read()
    frame = table.to_pandas()
    frame["equity"] += 1.0
    pq.write_table(pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False), path)
    make_link(path.parent, read_link(path.parent).key, read_link(path.parent).previous)
    shutil.rmtree(lake / "dbt" / "ledger")  # gathered again, the rows carry the bad value to dbt
    failed = season_flow(**kwargs, return_state=True)
    assert failed.is_failed()
    assert "equity_matches_the_engines_snapshots" in str(failed.message) + repr(
        failed.result(raise_on_failure=False))
