"""One way in: the command line and the flow of each job run the same job, so for the same
inputs they leave the same lake, ledger, manifests and marts (values compared exactly: same
machine, same code; what differs by design - run ids, timings, paths - is left out)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from arena.cli import main
from arena.data.lake import Lake
from arena.ledger.store import Ledger
from tests.golden import season_values
from tests.market_lakes import season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: trend-following, kind: house, strategy: trend_following}\n"
         "  - {name: equal-weight, kind: house, strategy: equal_weight}\n")
# what a run's manifest holds that differs from run to run: its id, its clock, its timings and
# where its pages are
RUN_FIELDS = {"run_id", "started", "timings_seconds", "validation", "market", "quarantine"}


def _manifest(manifest: dict) -> dict:
    kept = {k: v for k, v in manifest.items() if k not in RUN_FIELDS}
    for stats in kept.get("got", {}).values():
        stats.pop("fetch_seconds", None)
    return json.loads(json.dumps(kept, default=str))


def _bars(lake: Lake) -> dict[str, pd.DataFrame]:
    return {str(k): lake.read_bars(k) for k in lake.partitions()}


def _same_bars(a: Lake, b: Lake) -> None:
    left, right = _bars(a), _bars(b)
    assert left.keys() == right.keys() and left
    for key, frame in left.items():
        pd.testing.assert_frame_equal(frame, right[key], check_exact=True, obj=key)


def _board(lake: Lake) -> pd.DataFrame:
    return pd.read_parquet(lake.root / "marts" / "leaderboard.parquet").sort_values(
        "contestant", ignore_index=True)


def test_ingest_from_the_command_line_and_the_flow_publishes_the_same(
        prefect_server, local_storage, tmp_path, capsys):
    from arena.flows.ingest import ingest_flow

    window = {"start": "2025-10-06", "end": "2025-10-20"}
    cli, flow = Lake(tmp_path / "cli"), Lake(tmp_path / "flow")
    assert main(["ingest", "--source", "synthetic", "--symbols", "ETH,AAPL,SPY", "--start",
                 window["start"], "--end", window["end"], "--lake", str(cli.root),
                 "--json"]) == 0
    by_cli = json.loads(capsys.readouterr().out)
    by_flow = ingest_flow(source="synthetic", symbols=["ETH", "AAPL", "SPY"], **window,
                          lake_root=str(flow.root))
    assert _manifest(by_cli) == _manifest(by_flow)
    _same_bars(cli, flow)


@pytest.fixture
def two_lakes(tmp_path_factory, tmp_path, universe) -> tuple[Lake, Lake]:
    """The same one-day season (2025-11-26) in two lakes: one for the command line, one for
    the flows."""
    cli = season_lake(tmp_path_factory, universe, tmp_path / "cli", HOUSE)
    flow = Lake(tmp_path / "flow")
    shutil.copytree(cli.root, flow.root)
    return cli, flow


def test_a_cycle_a_monitor_tick_and_a_publication_leave_the_same_books_and_marts(
        prefect_server, local_storage, two_lakes, capsys):
    from arena.flows.cycle import cycle_flow
    from arena.flows.monitor import monitor_flow
    from arena.flows.publish import publish_flow

    cli, flow = two_lakes
    assert main(["cycle", "--no-publish", "--lake", str(cli.root), "--json"]) == 0
    by_cli = json.loads(capsys.readouterr().out)["outcomes"]
    by_flow = cycle_flow(lake_root=str(flow.root), publish=False)
    assert [{k: o[k] for k in ("contestant", "status", "fills", "rejections")} for o in by_cli] \
        == [{k: o[k] for k in ("contestant", "status", "fills", "rejections")} for o in by_flow]
    tick = "2025-11-27T20:00:00Z"  # Thanksgiving: crypto moves, stocks hold
    assert main(["monitor", "--at", tick, "--lake", str(cli.root)]) == 0
    monitor_flow(lake_root=str(flow.root), at=tick)
    assert season_values(Ledger(cli)) == season_values(Ledger(flow))
    assert Ledger(cli).monitor_records() == Ledger(flow).monitor_records()
    _same_bars(cli, flow)  # the tick's ingest of the held symbols too
    capsys.readouterr()
    assert main(["season", "publish", "--players", "300", "--lake", str(cli.root)]) == 0
    assert publish_flow(lake_root=str(flow.root), players=300)["published"]
    pd.testing.assert_frame_equal(_board(cli), _board(flow), check_exact=False, rtol=1e-9)
    for name in ("luck_ceiling", "reference_rules", "arena_luck"):
        a, b = (pd.read_parquet(lake.root / "analytics" / f"{name}.parquet") for lake in two_lakes)
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=name)


def test_a_replay_from_the_command_line_and_the_season_flow_is_the_same_season(
        prefect_server, local_storage, tmp_path, capsys):
    from arena.flows.season import season_flow
    from arena.pipeline.season_config import load_season

    roster = tmp_path / "roster.yaml"
    roster.write_text(HOUSE)
    cli, flow = Lake(tmp_path / "cli"), Lake(tmp_path / "flow")
    season = {"start": "2026-10-01", "days": 2, "roster": str(roster), "seed": 7,
              "players": 300}
    assert main(["replay", "--start", season["start"], "--days", "2", "--roster", str(roster),
                 "--symbols", "BTC,SPY,ETH,AAPL", "--seed", "7", "--players", "300", "--lake",
                 str(cli.root), "--json"]) == 0
    capsys.readouterr()
    season_flow(**season, symbols=["BTC", "SPY", "ETH", "AAPL"], lake_root=str(flow.root))
    first, second = load_season(cli), load_season(flow)
    assert first.model_dump(exclude={"created"}) == second.model_dump(exclude={"created"})
    assert season_values(Ledger(cli)) == season_values(Ledger(flow))
    pd.testing.assert_frame_equal(_board(cli), _board(flow), check_exact=False, rtol=1e-9)
    assert sorted(p.name for p in (cli.root / "reports" / "daily").iterdir()) == \
        sorted(p.name for p in (flow.root / "reports" / "daily").iterdir())
