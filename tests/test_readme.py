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


@pytest.mark.parametrize("readme", ["README.md", "data_lake/README.md"])
def test_readme_queries_run_on_a_lake(readme, small_lake):
    blocks = _sql_blocks(ROOT / readme)
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
