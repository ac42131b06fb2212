"""An unusable benchmark stops the cycle as a stale one does: a bar file of SPY or BTC the cycle's
market reads - deleted, emptied, cut short, holding bars no validated series has, or holding no
daily bar by the cycle - refuses it (exit 2, nothing recorded) with one line naming the
benchmark, the file and how to restore it; restored, the cycle plays."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from arena.cli import main
from arena.data.lake import Lake, PartitionKey
from arena.ledger.store import Ledger
from arena.pipeline.live.check import benchmark_damage
from tests.conftest import ts
from tests.market_lakes import PROVIDER, START, market_lakes, season_lake

HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"
WED = ts("2025-11-26 16:00")  # the one day's cycle, the current one for any clock after it
SPY_1D = PartitionKey(PROVIDER, "1d", "SPY")


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe) -> Lake:
    """The one day 2025-11-26 on a copy of the full synthetic lake, nothing played."""
    return season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE)


def _deleted(path: Path) -> None:
    path.unlink()


def _emptied(path: Path) -> None:
    path.write_bytes(b"")


def _cut_short(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _no_bars(path: Path) -> None:
    """A file whole in itself, with no bar the cycle can use."""
    pq.write_table(pq.read_table(path).slice(0, 0), path)


def _insane(path: Path) -> None:
    """One bar's low below zero, the file still readable."""
    table = pq.read_table(path)
    low = table.column("low").to_numpy().copy()
    low[len(low) // 2] = -6e-33
    pq.write_table(table.set_column(table.schema.get_field_index("low"), "low",
                                    pa.array(low)), path)


@pytest.mark.parametrize("key, damage", [
    (SPY_1D, _deleted),
    (SPY_1D, _emptied),
    (SPY_1D, _cut_short),
    (SPY_1D, _insane),
    (SPY_1D, _no_bars),
    (PartitionKey(PROVIDER, "1w", "BTC"), _deleted),
    (PartitionKey(PROVIDER, "15m", "SPY"), _emptied),  # the file its price comes from
], ids=["deleted", "emptied", "cut-short", "insane-bar", "no-bars", "btc-weekly-deleted",
        "price-file-emptied"])
def test_an_unusable_benchmark_refuses_the_cycle(season, capsys, key, damage):
    path = season.root / key.relative
    damage(path)
    assert main(["cycle", "--no-publish", "--lake", str(season.root)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "nothing recorded" in err
    assert f"the benchmark {key.symbol} cannot be used - " in err
    assert str(path) in err  # the file, on this machine
    assert "arena season verify --restore-from MIRROR" in err and "arena ingest" in err
    assert len(err.strip().splitlines()) == 1
    assert Ledger(season).records() == []


def test_a_benchmark_restored_plays_the_cycle(season, capsys):
    """``arena season status`` names the damage; the refusal's own advice works: the daily file
    derived again from its base bars."""
    (season.root / SPY_1D.relative).unlink()
    assert main(["season", "status", "--json", "--lake", str(season.root)]) == 0
    assets = {a["symbol"]: a["state"] for a in json.loads(capsys.readouterr().out)["assets"]}
    assert assets["SPY"] == "damaged" and assets["BTC"] != "damaged"
    assert main(["cycle", "--no-publish", "--lake", str(season.root)]) == 2
    assert main(["season", "verify", "--repair", "--lake", str(season.root)]) == 0
    capsys.readouterr()
    assert main(["cycle", "--no-publish", "--lake", str(season.root)]) == 0
    assert {k.cycle_at for k in Ledger(season).records()} == {WED}


def test_a_benchmark_without_a_daily_bar_by_the_cycle_is_unusable(tmp_path_factory, universe):
    """Whole files, read as the cycle reads them: none of SPY's daily bars has closed by the
    lake's first day, so its market has no daily line of it."""
    lake = market_lakes(tmp_path_factory, universe).full
    assert benchmark_damage(lake, PROVIDER, universe["SPY"], WED) is None
    assert benchmark_damage(lake, PROVIDER, universe["SPY"], START) == (
        f"{SPY_1D} holds no bar closed by {START.isoformat()} ({lake.root / SPY_1D.relative})")
