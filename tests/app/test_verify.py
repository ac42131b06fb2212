"""Damage an operator meets, end to end through the ``arena`` command: a deleted ledger record
refuses its contestant's next cycle by name (no fresh book), ``arena season verify`` names every
damaged record and partition and how to restore it, and ``--restore-from`` the mirror puts the
season back so the contestant plays on from its real book."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from arena.cli import main
from arena.data.lake import Lake, PartitionKey
from arena.data.persistence import upload_lake
from arena.ledger.store import Ledger
from tests.conftest import ts
from tests.market_lakes import season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: equal-weight, kind: house, strategy: equal_weight}\n")
DAY1, DAY2, DAY3 = "2025-11-24", "2025-11-25", "2025-11-26"


@pytest.fixture(scope="module")
def played_once(tmp_path_factory, universe):
    """A season of three days whose first two are played, mirrored after the second."""
    root = tmp_path_factory.mktemp("played")
    lake = season_lake(tmp_path_factory, universe, root / "lake", HOUSE, start=DAY1, days=3)
    for day in (DAY1, DAY2):
        assert main(["season", "backfill", day, "--no-publish", "--lake", str(lake.root)]) == 0
    upload_lake(lake, str(root / "mirror"))
    return root


@pytest.fixture
def played(played_once, tmp_path, capsys):
    """A copy of :func:`played_once`'s lake and mirror for one test to damage."""
    for name in ("lake", "mirror"):
        shutil.copytree(played_once / name, tmp_path / name, symlinks=True)
    capsys.readouterr()
    return Lake(tmp_path / "lake"), tmp_path / "mirror"


def _verify(lake, capsys, *extra):
    code = main(["season", "verify", "--lake", str(lake.root), *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_a_whole_season_verifies(played, capsys):
    lake, _ = played
    ledger = Ledger(lake)
    records = sum(len(ledger.chain_keys(n)) for n in ("momentum", "equal-weight"))
    # two cycles each, and the monitor window between them of whoever's level was reached
    assert records == 4 + len(ledger.monitor_records())
    code, out, _ = _verify(lake, capsys)
    assert code == 0
    assert f"whole: 2 contestants ({records} chained records), " in out
    code = main(["season", "verify", "--lake", str(lake.root), "--json"])
    got = json.loads(capsys.readouterr().out)
    assert code == 0 and got["whole"] and got["records"] == records and got["findings"] == []
    assert got["partitions"] == len(lake.partitions()) > 0


def test_a_deleted_record_refuses_its_contestant_until_it_is_restored(played, capsys):
    lake, mirror = played
    ledger = Ledger(lake)
    book = ledger.portfolio("momentum")
    deleted = ledger.record_dir(ts(f"{DAY2} 16:00"), "momentum")
    shutil.rmtree(deleted)

    # the next cycle refuses momentum by name, records the other, exits 1
    assert main(["cycle", "--no-publish", "--json", "--lake", str(lake.root)]) == 1  # DAY3
    out, err = capsys.readouterr()
    assert f"{deleted} is missing: it is momentum's last record" in out
    assert "Traceback" not in out + err
    at = ts(f"{DAY3} 16:00")
    assert Ledger(lake).has(at, "equal-weight") and not Ledger(lake).has(at, "momentum")

    code, out, err = _verify(lake, capsys)
    assert code == 1
    assert f"ledger: {deleted} is missing" in out
    assert f"copy <mirror>/ledger/{deleted.relative_to(lake.root / 'ledger')} back" in out
    assert "1 damaged in" in err

    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and "restored from" in out and "whole:" in out
    assert Ledger(lake).portfolio("momentum") == book  # the real book, not $10,000

    assert main(["cycle", "--no-publish", "--lake", str(lake.root)]) == 0
    capsys.readouterr()
    assert Ledger(lake).has(at, "momentum")
    assert _verify(lake, capsys)[0] == 0


def test_a_changed_ledger_file_is_named_and_restored_from_the_mirror(played, capsys):
    lake, mirror = played
    fills = Ledger(lake).record_dir(ts(f"{DAY1} 16:00"), "momentum") / "fills.parquet"
    fills.write_bytes(b"")
    code, out, _ = _verify(lake, capsys)
    assert code == 1 and f"ledger: {fills} has changed since it was recorded" in out
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0
    quarantined = list((lake.root / "quarantine").glob("verify-*/ledger/cycles/*/*/fills.parquet"))
    assert [q.stat().st_size for q in quarantined] == [0]  # the damaged copy is kept aside


def test_a_damaged_bar_partition_is_named_and_restored(played, capsys):
    lake, mirror = played
    key = PartitionKey("synthetic", "1d", "SOL")
    path = lake.root / key.relative
    good = path.read_bytes()
    rng = np.random.default_rng(7)
    body = bytearray(good)
    middle = len(body) // 2
    body[middle:middle + 64] = rng.integers(0, 256, 64, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(body))
    code, out, _ = _verify(lake, capsys)
    assert code == 1 and f"bars: {path} is damaged" in out
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and path.read_bytes() == good


def test_a_mirror_without_a_good_copy_restores_nothing(played, capsys, tmp_path):
    lake, _ = played
    deleted = Ledger(lake).record_dir(ts(f"{DAY1} 16:00"), "equal-weight")
    shutil.rmtree(deleted)
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    code, out, _ = _verify(lake, capsys, "--restore-from", str(empty))
    assert code == 1 and f"ledger: {deleted} is missing" in out
    assert not deleted.exists()
