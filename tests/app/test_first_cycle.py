"""A live season is read like a replay from its first cycle on: the cycle publishes its tables,
marts, season report and daily report, and ``arena report`` on a live lake not published yet
names the command that publishes it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from arena.cli import main
from arena.ledger.store import Ledger
from tests.conftest import ts
from tests.market_lakes import season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: equal-weight, kind: house, strategy: equal_weight}\n")


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe):
    return season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)


def test_arena_report_on_a_live_lake_names_the_command_that_publishes_it(season, capsys):
    assert main(["report", "--lake", str(season.root)]) == 2
    err = capsys.readouterr().err
    assert f"arena season publish --lake {season.root}" in err and "arena demo" not in err


def test_the_first_cycle_publishes_the_marts_and_the_reports(season, capsys):
    root = season.root
    assert main(["season", "backfill", "2025-11-24", "--lake", str(root), "--json"]) == 0
    published = json.loads(capsys.readouterr().out)["published"]
    assert published["not_yet"] is None and published["closed"] is False
    board = pd.read_parquet(root / "marts" / "leaderboard.parquet").set_index("contestant")
    assert set(board.index) == {"momentum", "equal-weight"}
    for name in board.index:  # the marts fold the ledger's one cycle to the cent
        [equity] = Ledger(season).record_rows("equity", ts("2025-11-24 16:00"), name)
        assert board.loc[name, "total_return"] == pytest.approx(equity["equity"] / 10_000 - 1,
                                                                abs=1e-9)
    assert (root / "reports" / "season.html").stat().st_size > 10_000
    assert (root / "reports" / "daily" / "2025-11-24.html").is_file()
    assert main(["report", "--lake", str(root)]) == 0


def test_a_failed_publication_leaves_the_cycle_recorded_and_shown(season, capsys, monkeypatch):
    """The build fails after the cycle was recorded: the cycle's table is printed, the command
    exits 1 naming the publication and how to build it again - no traceback, nothing lost."""
    import duckdb

    import arena.app.publish as publish

    def locked(*args, **kwargs):
        raise duckdb.IOException('Could not set lock on file "warehouse.duckdb"')

    monkeypatch.setattr(publish, "publish_season", locked)
    assert main(["season", "backfill", "2025-11-24", "--lake", str(season.root)]) == 1
    out, err = capsys.readouterr()
    assert "backfilled cycle 2025-11-24T16:00:00+00:00" in out and "momentum" in out
    assert "the cycle is recorded, but its publication failed: DuckDB: IOException" in err
    assert "arena season publish" in err and "Traceback" not in err
    assert {k.cycle_at for k in Ledger(season).records()} == {ts("2025-11-24 16:00")}
