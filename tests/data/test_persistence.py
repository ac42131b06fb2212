"""Persistence proven: the boot counter's verdicts, and a mirror that a failed restore cannot
overwrite."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import pytest

from arena.data.lake import Lake
from arena.data.persistence import (
    CONFIRMED,
    UNKNOWN,
    VOLATILE,
    MirrorError,
    boot_history,
    boot_verdict,
    lake_checked,
    record_boot,
    restore_failed,
    restore_lake,
    upload_lake,
    volatile_mark,
)

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(("lake", "store", "verdict"), [
    (None, None, UNKNOWN),      # the first start
    (3, 3, CONFIRMED),          # the lake kept every boot
    (None, 3, VOLATILE),        # the lake was wiped
    (1, 3, VOLATILE),           # the lake is an older copy
    (3, None, UNKNOWN),         # a new server: nothing to compare against
    (4, 3, UNKNOWN),            # the server is behind the lake
])
def test_boot_verdicts(lake, store, verdict):
    assert boot_verdict(lake, store) == verdict


def test_boots_count_on_from_the_larger_store_and_are_kept_in_the_lake(tmp_path):
    lake = Lake(tmp_path / "lake")
    first = record_boot(lake, None, NOW)
    assert (first.count, first.verdict) == (1, UNKNOWN)
    second = record_boot(lake, first.count, NOW + dt.timedelta(days=1))
    assert (second.count, second.verdict) == (2, CONFIRMED)
    shutil.rmtree(lake.root / "ops")  # the disk lost the lake
    third = record_boot(lake, second.count, NOW + dt.timedelta(days=2))
    assert (third.count, third.verdict, third.lake_count) == (3, VOLATILE, None)
    assert "lost boots" in third.describe()
    assert [b.count for b in boot_history(lake)] == [3]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _snapshot(root: Path) -> dict[str, object]:
    """Every file's bytes and every link's target under ``root``."""
    return {str(p.relative_to(root)): os.readlink(p) if p.is_symlink() else p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_symlink() or p.is_file()}


def _lake_with_files(root: Path) -> Lake:
    lake = Lake(root)
    for name, text in (("bars/synthetic/1h/BTC.parquet", "bars"), ("ledger/cycles/a.parquet", "l"),
                       ("season/season.json", "{}")):
        path = lake.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return lake


def test_a_lake_goes_to_the_mirror_and_comes_back(tmp_path):
    lake, mirror = _lake_with_files(tmp_path / "lake"), tmp_path / "mirror"
    record_boot(lake, None, NOW)
    assert upload_lake(lake, str(mirror)) == ["ledger", "bars", "ops", "season"]
    (lake.root / "ledger/cycles/b.parquet").write_text("newer")
    upload_lake(lake, str(mirror))  # a folder is replaced whole
    assert _tree(mirror) == {k: v for k, v in _tree(lake.root).items() if not k.startswith("_")}
    fresh = Lake(tmp_path / "new-disk")
    assert restore_lake(fresh, str(mirror), NOW) == ["ledger", "bars", "ops", "season"]
    assert _tree(fresh.root) == _tree(mirror) and restore_failed(fresh) is None
    assert [b.count for b in boot_history(fresh)] == [1]  # the boot history came back too
    with pytest.raises(MirrorError, match="not empty"):
        restore_lake(fresh, str(mirror), NOW)


def test_an_upload_cut_between_its_renames_leaves_a_copy_the_restore_uses(tmp_path):
    """The previous ledger was renamed aside, the new one not yet in: the restore takes the
    previous one; the next upload replaces it whole."""
    lake, mirror = _lake_with_files(tmp_path / "lake"), tmp_path / "mirror"
    upload_lake(lake, str(mirror))
    (mirror / "ledger").rename(mirror / "ledger.old")
    fresh = Lake(tmp_path / "new-disk")
    assert "ledger" in restore_lake(fresh, str(mirror), NOW)
    assert (fresh.root / "ledger/cycles/a.parquet").read_text() == "l"
    upload_lake(lake, str(mirror))
    assert sorted(p.name for p in mirror.iterdir()) == ["bars", "ledger", "season"]


def test_a_mirror_without_its_ledger_is_not_restored(tmp_path):
    lake, mirror = _lake_with_files(tmp_path / "lake"), tmp_path / "mirror"
    upload_lake(lake, str(mirror))
    shutil.rmtree(mirror / "ledger")
    fresh = Lake(tmp_path / "new-disk")
    with pytest.raises(MirrorError, match="has no ledger"):
        restore_lake(fresh, str(mirror), NOW)
    assert restore_failed(fresh)["restored"] == [] and not (fresh.root / "season").exists()


def test_a_volatile_lake_is_not_uploaded_until_it_is_restored_or_checked(tmp_path):
    """A start finds the lake volatile: no upload, not even after a later start agrees with the
    server (both counted that start); the operator's check, or a restore, lifts it."""
    lake, mirror = _lake_with_files(tmp_path / "lake"), tmp_path / "mirror"
    upload_lake(lake, str(mirror))
    record_boot(lake, 7, NOW)  # the server counted 7 boots; this lake remembers none
    (lake.root / "ledger/cycles/a.parquet").write_text("what was left")
    with pytest.raises(MirrorError, match=r"storage volatile at boot 8.*--lake-checked"):
        upload_lake(lake, str(mirror))
    assert record_boot(lake, 8, NOW).verdict == CONFIRMED  # a restart: the counts agree again
    with pytest.raises(MirrorError, match="storage volatile at boot 8"):
        upload_lake(lake, str(mirror))
    assert (mirror / "ledger/cycles/a.parquet").read_text() == "l"
    assert lake_checked(lake) and volatile_mark(lake) is None
    upload_lake(lake, str(mirror))
    assert (mirror / "ledger/cycles/a.parquet").read_text() == "what was left"
    record_boot(lake, 20, NOW)  # volatile again; a restore from the mirror lifts it too
    fresh = Lake(tmp_path / "fresh")
    record_boot(fresh, 30, NOW)
    restore_lake(fresh, str(mirror), NOW)
    assert volatile_mark(fresh) is None


def test_a_failed_restore_never_uploads_over_the_mirror(tmp_path):
    """The mirror's ledger holds a dangling link (a copy interrupted on the mirror's side): the
    restore fails part-way, the lake is marked, and the nightly upload is refused - the mirror
    stays byte for byte as it was. Once the mirror is mended and the restored folders removed,
    a restore clears the mark, the boot history lands beside it (not inside it), and uploads
    resume."""
    good, mirror = _lake_with_files(tmp_path / "good"), tmp_path / "mirror"
    record_boot(good, None, NOW)
    upload_lake(good, str(mirror))
    os.symlink(tmp_path / "gone.parquet", mirror / "bars" / "z.parquet")
    before = _snapshot(mirror)
    lake = Lake(tmp_path / "lake")
    with pytest.raises(MirrorError, match=r"failed after 1 folder.*remove ledger before trying"):
        restore_lake(lake, str(mirror), NOW)
    assert restore_failed(lake)["restored"] == ["ledger"]
    assert not (lake.root / "bars").exists()  # no half-copied folder
    assert not (lake.root / "season").exists()  # the season comes last: serve will not run it
    with pytest.raises(MirrorError, match="refusing to upload"):
        upload_lake(lake, str(mirror))
    assert _snapshot(mirror) == before
    (mirror / "bars" / "z.parquet").unlink()
    shutil.rmtree(lake.root / "ledger")
    assert restore_lake(lake, str(mirror), NOW) == ["ledger", "bars", "ops", "season"]
    assert restore_failed(lake) is None and not (lake.root / "ops" / "ops").exists()
    assert [b.count for b in boot_history(lake)] == [1]
    assert upload_lake(lake, str(mirror)) == ["ledger", "bars", "ops", "season"]
