"""A live season: its config in the lake, and every cycle that is not sound refused before
anything is recorded (one test per refusal), with the command line's exit and message."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from arena.cli import main
from arena.data.lake import Lake
from arena.ledger.store import Ledger
from arena.pipeline.live.check import CycleRefused, check_cycle, freshness
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.season_config import (
    REPLAY,
    SeasonConfigError,
    init_season,
    load_season,
    make_season,
    season_contestants,
)
from tests.conftest import ts
from tests.market_lakes import market_lakes, season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: random, kind: house, strategy: random}\n")
MON, TUE, WED = ts("2025-11-24 16:00"), ts("2025-11-25 16:00"), ts("2025-11-26 16:00")
LATER = ts("2026-06-01")  # a wall clock after the season


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe) -> Lake:
    """Three days, Monday to Wednesday, on the full synthetic lake (bars to 2025-12-02)."""
    return season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)


def _nothing_recorded(lake: Lake) -> None:
    assert Ledger(lake).records() == [] and Ledger(lake).monitor_records() == []


def _refused(capsys, *args: str) -> str:
    assert main(list(args)) == 2
    err = capsys.readouterr().err
    assert "nothing recorded" in err and "Traceback" not in err
    return err


def test_a_lake_that_does_not_exist_is_refused(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "dir"
    err = _refused(capsys, "cycle", "--lake", str(missing))
    assert f"the lake {missing} does not exist" in err and "arena season init" in err
    assert not missing.exists()


def test_a_lake_without_a_season_is_refused(tmp_path_factory, tmp_path, universe, capsys):
    lake = Lake(tmp_path / "lake")
    shutil.copytree(market_lakes(tmp_path_factory, universe).full.root, lake.root)
    err = _refused(capsys, "cycle", "--at", WED.isoformat(), "--lake", str(lake.root))
    assert "holds no season" in err
    _nothing_recorded(lake)


def test_a_time_off_the_schedule_is_refused_unless_forced(season, capsys):
    err = _refused(capsys, "cycle", "--at", "2025-11-26T03:17:00Z", "--lake", str(season.root))
    assert "is not a cycle time of season" in err and "16:00 UTC" in err
    assert "--force-time" in err
    _nothing_recorded(season)
    outside = _refused(capsys, "cycle", "--at", "2025-12-01T16:00:00Z", "--force-time",
                       "--lake", str(season.root))
    assert "outside the season" in outside
    _nothing_recorded(season)


def test_a_forced_time_inside_the_season_runs(season, capsys):
    """Off the schedule, but not before the current cycle: --force-time is no backfill (the
    cycles it passes - Monday, Tuesday and Wednesday's own 16:00 - are skipped: recorded as
    forfeited, by name)."""
    _refused(capsys, "cycle", "--at", "2025-11-25T20:00:00Z", "--force-time", "--lake",
             str(season.root))
    assert main(["cycle", "--at", "2025-11-26T20:00:00Z", "--force-time", "--skip-missed",
                 "--no-publish", "--lake", str(season.root)]) == 0
    assert {k.cycle_at for k in Ledger(season).records()} == {MON, TUE, WED,
                                                              ts("2025-11-26 20:00")}
    [outcome] = Ledger(season).record_rows("outcome", TUE, "momentum")
    assert outcome["status"] == "forfeited"


def test_a_cycle_in_the_future_is_refused(season):
    config = load_season(season)
    with pytest.raises(CycleRefused, match="in the future"):
        check_cycle(season, config, Ledger(season), config.universe(), WED,
                    now=WED - pd.Timedelta(minutes=1))
    _nothing_recorded(season)


def test_a_past_cycle_needs_a_backfill(season, capsys):
    err = _refused(capsys, "cycle", "--at", MON.isoformat(), "--lake", str(season.root))
    assert "is not the current cycle of season" in err
    assert "arena season backfill 2025-11-24" in err
    _nothing_recorded(season)
    assert main(["season", "backfill", "2025-11-24", "--no-publish", "--lake",
                 str(season.root)]) == 0
    assert {k.cycle_at for k in Ledger(season).records()} == {MON}


def test_the_current_cycle_is_no_backfill(season, capsys):
    err = _refused(capsys, "season", "backfill", "2025-11-26", "--lake", str(season.root))
    assert "is the current cycle" in err and "arena cycle" in err
    _nothing_recorded(season)


def test_a_cycle_forfeited_by_the_operator_is_recorded_already(season, capsys):
    # the current one, Wednesday, the missed Monday and Tuesday skipped (forfeited)
    assert main(["cycle", "--skip-missed", "--no-publish", "--lake", str(season.root)]) == 0
    assert {k.cycle_at for k in Ledger(season).records()} == {MON, TUE, WED}
    assert main(["season", "backfill", "2025-11-25", "--lake", str(season.root)]) == 0
    assert "already recorded: every contestant has its record" in capsys.readouterr().out
    [outcome] = Ledger(season).record_rows("outcome", TUE, "momentum")
    assert outcome["status"] == "forfeited"


def test_a_back_dated_cycle_nobody_played_after_a_later_one_is_refused(season, capsys):
    """Wednesday played while Monday and Tuesday were missed (the season's cycle itself, not a
    command, which refuses that): they can no longer be played."""
    config = load_season(season)
    contestants, _ = season_contestants(season, {})
    play_season_cycle(season, config, contestants, WED, now=LATER)
    err = _refused(capsys, "season", "backfill", "2025-11-25", "--lake", str(season.root))
    assert "already has a later cycle (2025-11-26T16:00:00+00:00)" in err
    assert {k.cycle_at for k in Ledger(season).records()} == {WED}


def test_a_cycle_on_a_stale_market_is_refused(tmp_path_factory, tmp_path, universe, capsys):
    """The Friday lake holds no bar after Friday 16:00: on Monday every asset is stale."""
    lake = Lake(tmp_path / "lake")
    shutil.copytree(market_lakes(tmp_path_factory, universe).cut_fri.root, lake.root)
    roster = tmp_path / "roster.yaml"
    roster.write_text(HOUSE)
    init_season(lake, make_season("2025-11-24", 1, universe.symbols), roster=roster)
    err = _refused(capsys, "cycle", "--lake", str(lake.root))
    assert "is not fresh" in err and "stale" in err and "arena ingest" in err
    _nothing_recorded(lake)


def test_a_stale_benchmark_refuses_the_cycle_while_stocks_keep_fridays_close(
        tmp_path_factory, tmp_path, universe):
    """The Saturday lake on Sunday: a stock's Friday close is fresh (no session since), but the
    crypto bars stopped on Saturday, so BTC - a benchmark - is stale and the cycle refuses."""
    lake = Lake(tmp_path / "lake")
    shutil.copytree(market_lakes(tmp_path_factory, universe).cut_sat.root, lake.root)
    roster = tmp_path / "roster.yaml"
    roster.write_text(HOUSE)
    config = init_season(lake, make_season("2025-11-23", 1, universe.symbols), roster=roster)
    sunday = config.first
    by_symbol = {f.symbol: f for f in freshness(lake, config, config.universe(), sunday)}
    assert by_symbol["AAPL"].state == by_symbol["SPY"].state == "fresh"
    assert by_symbol["BTC"].state == by_symbol["ETH"].state == "stale"
    contestants, _ = season_contestants(lake, {})
    with pytest.raises(CycleRefused, match="the benchmark is stale - BTC"):
        play_season_cycle(lake, config, contestants, sunday, now=LATER)
    _nothing_recorded(lake)


def test_the_cycle_watches_its_monitor_window_first(season):
    config = load_season(season)
    contestants, _ = season_contestants(season, {})
    first = play_season_cycle(season, config, contestants, MON, now=MON)
    assert first.plan.monitor_from is None  # the season's first cycle has no window before it
    second = play_season_cycle(season, config, contestants, TUE, now=TUE)
    assert second.plan.monitor_from == MON
    # the window (MON, TUE] was watched before the cycle: recorded when it closed something
    assert {(k.start, k.end) for k in Ledger(season).monitor_records()} <= {(MON, TUE)}
    assert {k.cycle_at for k in Ledger(season).records()} == {MON, TUE}


def test_a_lake_holds_one_season(season, tmp_path, capsys):
    assert main(["season", "init", "--start", "2026-01-05", "--lake", str(season.root)]) == 2
    err = capsys.readouterr().err
    assert "holds season '2025-11-24-synthetic'" in err and "in a new lake (--lake)" in err
    # the same season again is a no-op
    config = load_season(season)
    roster = tmp_path / "same.yaml"
    roster.write_text(HOUSE)
    assert init_season(season, make_season("2025-11-24", 3, config.symbols), roster=roster) \
        == config
    other = tmp_path / "other.yaml"
    other.write_text("contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n")
    with pytest.raises(SeasonConfigError, match="its own roster"):
        init_season(season, make_season("2025-11-24", 3, config.symbols), roster=other)


def test_season_init_writes_the_config_and_the_roster(tmp_path, capsys):
    lake = tmp_path / "live"
    assert main(["season", "init", "--start", "2026-12-01", "--days", "20", "--crypto", "ccxt",
                 "--stocks", "yfinance", "--symbols", "BTC,ETH,AAPL,SPY", "--lake", str(lake),
                 "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    config = load_season(Lake(lake))
    assert shown["id"] == config.id == "2026-12-01-ccxt+yfinance"
    assert config.providers == {"crypto": "ccxt", "stock": "yfinance", "etf": "yfinance"}
    assert config.symbols == ("BTC", "ETH", "AAPL", "SPY") or set(config.symbols) == {
        "BTC", "ETH", "AAPL", "SPY"}
    assert config.times[0] == ts("2026-12-01 16:00") and len(config.times) == 20
    assert (lake / "season" / "roster.yaml").is_file()
    assert main(["season", "init", "--start", "2026-12-01", "--roster", str(tmp_path / "none.yaml"),
                 "--lake", str(tmp_path / "other")]) == 2
    assert "cannot read the roster" in capsys.readouterr().err


def test_season_status_shows_cycles_data_and_contestants(season, capsys):
    assert main(["season", "backfill", "2025-11-24", "--no-publish", "--lake",
                 str(season.root)]) == 0
    capsys.readouterr()
    assert main(["season", "status", "--lake", str(season.root), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    states = {c["at"][:10]: c["state"] for c in status["cycles"]}
    assert states == {"2025-11-24": "done", "2025-11-25": "missed (backfill allowed)",
                      "2025-11-26": "due"}
    assert {c["contestant"]: c["cycles"] for c in status["contestants"]} == {
        "momentum": 1, "random": 1}
    assert {a["symbol"] for a in status["assets"]} >= {"BTC", "SPY", "AAPL"}
    assert main(["season", "status", "--lake", str(season.root)]) == 0
    out = capsys.readouterr().out
    assert "1 done" in out and "1 due" in out and "momentum" in out and "BTC" in out


def test_a_replay_is_a_synthetic_season_of_its_lake(tmp_path):
    lake = Lake(tmp_path / "replay")
    assert main(["replay", "--start", "2026-10-01", "--days", "2", "--symbols", "BTC,ETH,SPY",
                 "--players", "200", "--lake", str(lake.root), "--json"]) == 0
    config = load_season(lake)
    assert config.mode == REPLAY and config.synthetic and config.days == 2


def test_ingest_into_a_season_takes_its_providers(tmp_path, capsys):
    lake = tmp_path / "live"
    assert main(["season", "init", "--start", "2026-12-01", "--crypto", "ccxt", "--stocks",
                 "yfinance", "--lake", str(lake)]) == 0
    capsys.readouterr()
    assert main(["ingest", "--lake", str(lake)]) == 2
    assert "takes bars from ccxt and yfinance: name one with --source" in capsys.readouterr().err
    assert main(["ingest", "--source", "synthetic", "--lake", str(lake)]) == 2
    assert "takes no bars from synthetic" in capsys.readouterr().err
    assert main(["ingest", "--source", "ccxt", "--symbols", "BTC,AAPL", "--lake",
                 str(lake)]) == 2
    assert "takes AAPL from another provider" in capsys.readouterr().err
    assert not (lake / "bars").exists() and not (lake / "manifests").exists()


def test_ingest_into_a_synthetic_season_takes_its_assets(tmp_path, capsys):
    lake = Lake(tmp_path / "season")
    assert main(["season", "init", "--start", "2026-10-01", "--symbols", "BTC,ETH,SPY",
                 "--lake", str(lake.root)]) == 0
    assert main(["ingest", "--start", "2026-09-01", "--end", "2026-09-03", "--lake",
                 str(lake.root), "--json"]) == 0
    manifest = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert manifest["provider"] == "synthetic" and set(manifest["published"]) == {
        "BTC", "ETH", "SPY"}


def test_a_live_season_publishes_its_marts_and_closes_after_its_last_cycle(season, capsys):
    """Three cycles (two backfilled), then the final publication: the marts agree with the
    ledger's fold, the report and the daily reports exist, and the season takes no cycle."""
    root = str(season.root)
    assert main(["season", "publish", "--lake", root]) == 2
    assert "has no recorded cycle yet" in capsys.readouterr().err
    assert main(["season", "backfill", "2025-11-24", "--no-publish", "--lake", root]) == 0
    assert main(["season", "backfill", "2025-11-25", "--no-publish", "--lake", root]) == 0
    capsys.readouterr()
    assert main(["season", "publish", "--final", "--lake", root]) == 2
    assert "cannot close before its last cycle" in capsys.readouterr().err
    assert main(["cycle", "--no-publish", "--lake", root]) == 0
    capsys.readouterr()
    assert main(["season", "publish", "--final", "--players", "500", "--lake", root,
                 "--json"]) == 0
    published = json.loads(capsys.readouterr().out)
    assert published["closed"] is True
    board = pd.read_parquet(season.root / "marts" / "leaderboard.parquet").set_index("contestant")
    ledger = Ledger(season)
    for name in ("momentum", "random"):
        [equity] = ledger.record_rows("equity", WED, name)
        assert board.loc[name, "total_return"] == pytest.approx(equity["equity"] / 10_000 - 1,
                                                                abs=1e-9)
    assert sorted(p.name for p in (season.root / "reports" / "daily").glob("*.md")) == [
        "2025-11-24.md", "2025-11-25.md", "2025-11-26.md"]
    assert main(["report", "--lake", root]) == 0
    capsys.readouterr()
    err = _refused(capsys, "season", "retry", "2025-11-26", "--lake", root)
    assert "was closed" in err and "new lake" in err
    assert main(["season", "status", "--lake", root, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["closed_at"] is not None
