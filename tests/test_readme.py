"""The commands and queries the READMEs show still work."""

import re
from pathlib import Path

import duckdb
import pytest

from arena.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _sql_blocks(path: Path) -> list[str]:
    return re.findall(r"```sql\n(.*?)```", path.read_text(), flags=re.S)


@pytest.fixture(scope="module")
def small_lake(tmp_path_factory):
    lake = tmp_path_factory.mktemp("lake")
    assert main(["ingest", "--symbols", "ETH,AAPL,SPY", "--start", "2025-10-01", "--end",
                 "2025-10-20", "--lake", str(lake)]) == 0
    return lake


@pytest.fixture(scope="module")
def season_lake(tmp_path_factory):
    lake = tmp_path_factory.mktemp("season") / "lake"
    assert main(["replay", "--start", "2026-10-01", "--days", "3", "--symbols", "BTC,SPY,ETH,AAPL",
                 "--players", "500", "--lake", str(lake), "--json"]) == 0
    return lake


def test_readme_analyst_queries_run_on_the_warehouse_and_the_marts(season_lake, capsys):
    capsys.readouterr()
    blocks = [b for b in _sql_blocks(ROOT / "README.md") if b.startswith("-- warehouse")]
    assert len(blocks) == 3
    with duckdb.connect(str(season_lake / "warehouse.duckdb"), read_only=True) as con:
        for sql in blocks:
            rows = con.execute(sql).fetchall()
            assert rows or "closed_by = 'automatic'" in sql, sql  # 3 days may have no such close
    text = (ROOT / "README.md").read_text()
    parquet = re.search(r"`(select \* from 'data_lake/demo/marts/leaderboard.parquet')`", text)
    with duckdb.connect() as con:
        rows = con.execute(parquet.group(1).replace("data_lake/demo/", f"{season_lake.as_posix()}/"))
        assert len(rows.fetchall()) == 5


@pytest.mark.parametrize("readme", ["README.md", "data_lake/README.md"])
def test_readme_queries_run_on_a_lake(readme, small_lake):
    blocks = [b for b in _sql_blocks(ROOT / readme) if not b.startswith("-- warehouse")]
    assert blocks, f"{readme} shows no query"
    with duckdb.connect() as con:
        for sql in blocks:
            rows = con.execute(sql.replace("data_lake/", f"{small_lake.as_posix()}/")).fetchall()
            assert {r[0] for r in rows} >= {"AAPL", "SPY"}


def test_readme_validate_example_passes():
    text = (ROOT / "README.md").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("arena validate tests/fixtures"))
    args = line.split("#")[0].split()[1:]
    assert main(args) == 0


def test_readme_reason_codes_are_the_engines():
    from arena.engine.rules import REASON_CODES

    text = (ROOT / "README.md").read_text()
    listed = re.findall(r"`([a-z_]+)`", text.split("every rejection carries one of these codes:")[1]
                        .split("\n\n")[0])
    assert listed == list(REASON_CODES)


def test_readme_luck_example_runs(capsys):
    text = (ROOT / "README.md").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("$ arena luck "))
    assert main(line.split()[2:]) == 0
    shown = text.split(line, 1)[1].split("```", 1)[0].strip().splitlines()
    assert capsys.readouterr().out.strip().splitlines() == shown
