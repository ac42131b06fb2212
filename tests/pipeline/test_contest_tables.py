"""A contest's season tables: the season's build (the ``season-tables`` step of a season's end
and every publication) reads the contest from the season's config in the lake and builds the
entrants' tracks by its rules - its fees charged, its eligibility share - and writes its assets'
rules as the ``contest_assets`` table; a season that is not a contest writes that table empty
and typed, so dbt always has it.

Known answers on the shared synthetic market (two daily cycles, 24 hourly bars of BTC and ETH
between them): ann goes long ETH during the window's bar 7, so her position earns the 16 moves
after that bar's close, 16/24 = 66.7% of the window - eligible under the contest's 60%, not
under the default 70%; bob is long BTC all season and pays the contest's 0.10% once.
"""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq
import pytest

from arena.data.lake import Lake, PartitionKey
from arena.pipeline.contest import Contest
from arena.pipeline.entrants import add_entrant
from arena.pipeline.outside import Arena, submit_positions
from arena.pipeline.season import season_tables
from arena.pipeline.season_config import init_season, make_season
from arena.pipeline.season_tables import build_analytics, read_analytics, write_analytics
from arena.pipeline.season_tables.store import contest_assets_schema
from tests.conftest import ts
from tests.market_lakes import full_lake_copy

MON, TUE = ts("2025-11-24 16:00"), ts("2025-11-25 16:00")
SYMBOLS = ["BTC", "ETH"]
CONTEST = Contest(name="TEST", fees={"BTC": 0.001, "ETH": 0.0005}, eligibility=0.6,
                  prizes={"BTC": (300.0, 200.0)})
HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"
SMALL = {"players": 50, "arena_players": 20, "seed": 0}


@pytest.fixture(scope="module")
def contest_lake(tmp_path_factory, universe) -> Lake:
    """The market with a contest season of two cycles over BTC and ETH, its tables built by
    the season's step, and two entrants' tracks."""
    root = tmp_path_factory.mktemp("contest")
    lake = full_lake_copy(tmp_path_factory, universe, root / "lake")
    (root / "roster.yaml").write_text(HOUSE, encoding="utf-8")
    season = init_season(lake, make_season("2025-11-24", 2, SYMBOLS, contest=CONTEST),
                         roster=root / "roster.yaml")
    arena = Arena(lake, season)
    ann, bob = (add_entrant(lake, season, n, MON - pd.Timedelta(days=1))[0] for n in ("ann", "bob"))
    submit_positions(arena, ann, {"ETH": 1.0}, MON + pd.Timedelta(hours=7, minutes=30))
    submit_positions(arena, bob, {"BTC": 1.0}, MON - pd.Timedelta(hours=2))
    # the universe as given, without the contest's fees: the build charges them itself
    season_tables(lake, "synthetic", universe.select(SYMBOLS), [MON, TUE], progress=lambda _msg: None,
                  **SMALL)
    return lake


def _tracks(frame: pd.DataFrame) -> dict[tuple[str, str], dict[str, object]]:
    return {(r["entrant"], r["symbol"]): r for r in frame.to_dict("records")}


def test_a_contest_season_builds_its_tracks_by_its_rules(contest_lake):
    tracks = _tracks(read_analytics(contest_lake, "asset_tracks"))
    ann, bob = tracks[("ann", "ETH")], tracks[("bob", "BTC")]
    assert ann["coverage"] == pytest.approx(16 / 24)
    assert ann["eligible"] and ann["rank"] == 1  # 66.7% >= the contest's 60%
    assert (ann["cost_rate"], bob["cost_rate"]) == (0.0005, 0.001)
    bars = contest_lake.read_bars(PartitionKey("synthetic", "1h", "BTC"), MON, TUE)
    held = bars["close"].iloc[-1] / bars["open"].iloc[0]  # from the window's first open
    assert bob["return"] == pytest.approx((1 - 0.001) * held - 1, rel=1e-12, abs=1e-15)
    assert bob["fees"] == pytest.approx(0.001, rel=1e-12)


def test_a_contest_season_writes_its_assets_rules(contest_lake):
    assets = read_analytics(contest_lake, "contest_assets")
    rows = assets.to_dict("records")
    assert [(r["contest"], r["symbol"], r["name"], r["ordinal"]) for r in rows] == [
        ("TEST", "BTC", "Bitcoin", 1), ("TEST", "ETH", "Ethereum", 2)]
    assert [(r["fee_rate"], r["eligibility"], list(r["prizes"]), r["prize_pool"])
            for r in rows] == [(0.001, 0.6, [300.0, 200.0], 500.0), (0.0005, 0.6, [], 0.0)]
    assert {(r["currency"], r["max_correlation"]) for r in rows} == {("USD", 0.7)}


def test_a_season_that_is_not_a_contest_keeps_the_default_rules_and_an_empty_table(
        contest_lake, universe, tmp_path):
    built = build_analytics(contest_lake, "synthetic", universe.select(SYMBOLS), [MON, TUE],
                            **SMALL)
    tracks = _tracks(built.tables["asset_tracks"])
    ann = tracks[("ann", "ETH")]
    assert ann["coverage"] == pytest.approx(16 / 24)
    assert not ann["eligible"] and pd.isna(ann["rank"])  # below the default 70%
    assert (ann["cost_rate"], tracks[("bob", "BTC")]["cost_rate"]) == (0.0006, 0.0006)
    assert len(built.tables["contest_assets"]) == 0
    written = write_analytics(Lake(tmp_path / "lake"), built) / "contest_assets.parquet"
    # typed, the list of prizes included, and read back as the season's other tables are
    assert pq.read_schema(written).remove_metadata().equals(contest_assets_schema())
    assert pd.read_parquet(written).empty
