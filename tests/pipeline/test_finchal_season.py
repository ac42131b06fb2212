"""FINCHAL's contest end to end, offline on the synthetic market (issue 45): ``arena contest
init`` of the four documented assets (its correlation check passed and kept), an agent entering
through ``arena mcp`` as the documents' client does (``X-Finchal-Key``, ``get_rules``,
``get_data``, ``submit_position``, ``check_score``), a person through the site's entry page,
three cycles, the publication, and the contest's marts and page: who cleared the luck ceiling
on which asset, and who is paid."""

from __future__ import annotations

import duckdb
import httpx
import pandas as pd
import pytest

from arena.cli import main
from arena.data.lake import Lake
from arena.doors.mcp_server import app
from arena.doors.web import server_config
from arena.pipeline.contest import FINCHAL_FEES
from arena.pipeline.entrants import add_entrant
from arena.pipeline.season_config import load_season
from arena.pipeline.warehouse import WAREHOUSE_STORAGE_NUMBER, storage_number
from tests import serving
from tests.conftest import ts
from tests.doors.test_mcp_contest_client import contest_client
from tests.doors.test_mcp_server import Clock, Served, call, run

START, DAYS = "2025-11-24", 3
MON = ts("2025-11-24 16:00")
BEFORE = MON - pd.Timedelta(hours=3)
HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"
AGENT = {"NVDA": 0.5, "BTC": -0.4, "GLD": 1.0, "USO": -1.0}


@pytest.fixture(scope="module")
def finchal(tmp_path_factory):
    """The contest made and its market ingested, the two entrants and their keys."""
    root = tmp_path_factory.mktemp("finchal")
    roster = root / "roster.yaml"
    roster.write_text(HOUSE, encoding="utf-8")
    lake = Lake(root / "lake")
    assert main(["contest", "init", "--start", START, "--days", str(DAYS), "--roster",
                 str(roster), "--lake", str(lake.root)]) == 0
    assert main(["ingest", "--end", "2025-11-27", "--lake", str(lake.root)]) == 0
    config = load_season(lake)
    keys = {name: add_entrant(lake, config, name, BEFORE - pd.Timedelta(days=1))[1]
            for name in ("agent", "walk-in")}
    return lake, keys


def test_a_finchal_season_plays_end_to_end(finchal, capsys):
    lake, keys = finchal
    config = load_season(lake)
    assert config.symbols == ("NVDA", "BTC", "GLD", "USO")
    assert config.contest.fees == FINCHAL_FEES
    assert all(abs(c) <= 0.7 for c in config.contest.correlations.values())
    clock = Clock(BEFORE)

    async def agent(url: str) -> None:
        async with contest_client(url, keys["agent"]) as client:
            rules = await call(client, "get_rules")
            assert rules["contest"]["name"] == "FINCHAL"
            assert rules["contest"]["prizes"] == {s: [500.0] for s in FINCHAL_FEES}
            assert {a["symbol"]: a["track_cost_rate"] for a in rules["assets"]} == FINCHAL_FEES
            bars = await call(client, "get_data", asset="GLD", bars=3)
            assert len(bars["bars"]) == 3
            for n, (symbol, position) in enumerate(AGENT.items()):
                clock.at = BEFORE + pd.Timedelta(minutes=n)
                kept = await call(client, "submit_position", asset=symbol, position=position)
                assert kept["positions"] == {symbol: position}

    with Served(app(lake, now=clock)) as url:
        run(lambda: agent(url))
    clock.at = BEFORE + pd.Timedelta(minutes=10)
    with serving.Served(server_config(lake.root, "127.0.0.1", 0, entries_open=True,
                                      now=clock)) as url:
        posted = httpx.post(f"{url}/seasons/{config.id}/enter/GLD",
                            data={"key": keys["walk-in"], "position": "-0.5"}, timeout=30)
        assert posted.status_code == 200, posted.text[:300]
    for day in ("2025-11-24", "2025-11-25"):  # then the last, the current cycle
        assert main(["season", "backfill", day, "--no-publish", "--lake", str(lake.root)]) == 0
    assert main(["cycle", "--no-publish", "--lake", str(lake.root)]) == 0
    assert main(["season", "publish", "--players", "2000", "--lake", str(lake.root)]) == 0
    capsys.readouterr()

    standings = pd.read_parquet(lake.root / "marts" / "contest_standings.parquet")
    boundary = pd.read_parquet(lake.root / "marts" / "contest_boundary.parquet")
    tracks = pd.read_parquet(lake.root / "marts" / "asset_tracks.parquet")
    assert sorted(boundary["symbol"]) == sorted(FINCHAL_FEES)
    assert dict(zip(boundary["symbol"], boundary["fee_rate"], strict=True)) == FINCHAL_FEES
    assert dict(zip(tracks["symbol"] + "/" + tracks["entrant"], tracks["cost_rate"],
                    strict=True)) == {**{f"{s}/agent": r for s, r in FINCHAL_FEES.items()},
                                      "GLD/walk-in": FINCHAL_FEES["GLD"]}
    assert set(zip(standings["entrant"], standings["symbol"], strict=True)) == {
        *(("agent", s) for s in FINCHAL_FEES), ("walk-in", "GLD")}
    assert standings["eligible"].all()  # both held their positions from the season's open
    gld = standings[standings["symbol"] == "GLD"].set_index("entrant")
    # opposite positions on one path: the better return takes the place and the prize
    better = "agent" if gld.loc["agent", "total_return"] > gld.loc["walk-in", "total_return"] \
        else "walk-in"
    assert gld.loc[better, "place"] == 1 and gld.loc[better, "prize"] == 500.0
    assert gld["prize"].sum() == 500.0
    for row in standings.itertuples():
        assert row.cleared == (row.total_return > row.luck_ceiling)
    nvda = boundary.set_index("symbol").loc["NVDA"]
    assert (nvda["entrants"], nvda["eligible_tracks"], nvda["leaders"]) == (1, 1, "agent")
    # the warehouse in the storage DuckDB 1.2 and later read, opened read-only as analysts do
    assert storage_number(lake.root / "warehouse.duckdb") == WAREHOUSE_STORAGE_NUMBER
    with duckdb.connect(str(lake.root / "warehouse.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from marts.contest_boundary").fetchone() == (4,)
    with serving.Served(server_config(lake.root, "127.0.0.1", 0)) as url:
        page = httpx.get(f"{url}/contest", timeout=30)
    assert page.status_code == 200
    assert all(symbol in page.text for symbol in FINCHAL_FEES) and "walk-in" in page.text
