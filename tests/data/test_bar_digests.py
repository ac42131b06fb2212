"""Every bar file the lake publishes is proven whole where it is read (:mod:`arena.data.digests`):
its SHA-256 is recorded with its publication and checked once per version of the file, and its
Parquet pages carry checksums verified on every decode. A file whose bytes changed, or a
recorded partition whose file is gone, is damage named by its partition; a file published
before digests were recorded is unrecorded, read as before, and recorded by its next
publication. On local disk and on object storage."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import boto3
import pandas as pd
import pytest

from arena.data.digests import CHANGED, MISSING, UNRECORDED, WHOLE, record_relative
from arena.data.errors import DamagedFile
from arena.data.ingest import run_ingest
from arena.data.lake import MISSING_PROBLEM, Lake, PartitionKey
from arena.data.market_store import POINTER, set_market
from arena.data.providers.synthetic import SyntheticProvider
from arena.data.recovery import (
    CHANGED_FILE,
    MISSING_FILE,
    RECORD,
    RESTORE,
    check_bar_digests,
    copy_problem,
    unrecorded_partitions,
)
from arena.market.asof import LAST_PRINT, BarRead, cycle_prices, price_intervals, scan_closed_bars
from tests.conftest import ts
from tests.data.published import flip_in_a_float, forget_digests, publish_frames

START, END, LATER = ts("2025-10-06"), ts("2025-10-20"), ts("2025-10-24")
NOW = ts("2026-01-01")
ETH_1D = PartitionKey("synthetic", "1d", "ETH")
ETH_15M = PartitionKey("synthetic", "15m", "ETH")


@pytest.fixture(scope="module")
def published(tmp_path_factory, universe) -> Lake:
    """ETH and AAPL ingested over two weeks (every interval published, its digest recorded)."""
    lake = Lake(tmp_path_factory.mktemp("digests") / "template")
    run_ingest(SyntheticProvider(), universe.select(["ETH", "AAPL"]), start=START, end=END,
               lake=lake, now=NOW)
    return lake


@pytest.fixture
def lake(published, tmp_path) -> Lake:
    shutil.copytree(published.root, tmp_path / "lake", symlinks=True)
    return Lake(tmp_path / "lake")


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_published_bar_file_is_recorded_and_its_pages_carry_checksums(lake):
    keys = lake.partitions()
    assert len(keys) == 10  # five intervals of two assets
    assert sorted(lake.recorded_partitions()) == sorted(keys)
    for key in keys:
        assert lake.market.recorded(key.relative.as_posix()) == (_sha(lake.path(key)),)
        assert Lake(lake.root).digest_verdict(key).state == WHOLE
    assert (lake.root / record_relative(ETH_1D.relative.as_posix())).is_file()
    assert check_bar_digests(lake) == [] and unrecorded_partitions(lake) == []
    # with no digest to compare against, the pages' own checksums refuse a flipped byte
    forget_digests(lake, [ETH_1D])
    _, before, after = flip_in_a_float(lake, ETH_1D, "high", 4)
    assert after != before  # read silently by a reader that verifies nothing
    with pytest.raises(DamagedFile, match="CRC checksum verification failed"):
        Lake(lake.root).read_bars(ETH_1D)


def test_a_flipped_byte_in_a_daily_low_is_damage_named_by_its_partition(lake, universe):
    good = lake.read_bars(ETH_1D)
    row, before, after = flip_in_a_float(lake, ETH_1D, "low", 5)
    assert before == good["low"].iloc[row] and after != before
    assert abs(after / before - 1) < 0.01  # a plausible low: nothing but the digest sees it
    for reader in (lake, Lake(lake.root)):  # the lake that read it before, and a new process
        with pytest.raises(DamagedFile, match="its bytes changed since it was published"):
            reader.read_bars(ETH_1D)
        damage: dict[str, str] = {}
        got = scan_closed_bars(reader, [BarRead(universe["ETH"], "synthetic", "1d", 5)], END,
                               damage=damage)
        assert got[0].empty
        assert damage["ETH"].startswith("synthetic/1d/ETH cannot be read (its bytes changed "
                                        "since it was published (SHA-256 ")
        assert str(lake.root) not in damage["ETH"]  # never this machine's path
    [problem] = check_bar_digests(lake)
    assert (problem.kind, problem.subject, problem.key) == (CHANGED_FILE, "synthetic/1d/ETH",
                                                            ETH_1D)
    assert problem.describe().startswith("synthetic/1d/ETH: changed file: its bytes changed ")
    assert problem.repair == f"derive it again from its 15m bars (arena season verify " \
                             f"--repair), or {RESTORE}"


@pytest.mark.parametrize("how", ["deleted", "changed"])
def test_a_deleted_or_changed_15m_partition_is_damage_to_every_reader(lake, universe, how):
    if how == "deleted":
        lake.path(ETH_15M).unlink()
    else:
        flip_in_a_float(lake, ETH_15M, "low", 100)
    fresh = Lake(lake.root)
    # the monitor's read of a window of 15-minute bars
    problem = MISSING_PROBLEM if how == "deleted" else "its bytes changed since it was published"
    with pytest.raises(DamagedFile, match=problem):
        fresh.read_bars(ETH_15M, END - pd.Timedelta(days=1), END)
    # the cycle's price still comes from the 15-minute bars: damaged, never a coarser price
    assert price_intervals(fresh, "synthetic") == {"ETH": "15m", "AAPL": "15m"}
    damage: dict[str, str] = {}
    prices = cycle_prices(fresh, "synthetic", universe.select(["ETH", "AAPL"]), [END],
                          damage=damage)
    assert list(prices["symbol"]) == ["AAPL"]
    assert list(damage) == ["ETH"] and damage["ETH"].startswith("synthetic/15m/ETH ")
    with pytest.raises(DamagedFile):  # a reader with no damage map
        cycle_prices(fresh, "synthetic", universe.select(["ETH"]), [END])
    scanned: dict[str, str] = {}
    scan_closed_bars(fresh, [BarRead(universe["ETH"], "synthetic", "15m", 1, columns=LAST_PRINT)],
                     END, damage=scanned)
    assert scanned == damage
    [found] = check_bar_digests(fresh)
    assert found.kind == (MISSING_FILE if how == "deleted" else CHANGED_FILE)
    assert found.subject == "synthetic/15m/ETH" and found.repair == RESTORE  # the base interval
    assert fresh.digest_verdict(ETH_15M).state == (MISSING if how == "deleted" else CHANGED)


def test_a_partition_without_a_digest_is_unrecorded_read_as_before_and_recorded_next(
        lake, universe):
    eth = [k for k in lake.partitions() if k.symbol == "ETH"]
    bars = {k: lake.read_bars(k) for k in eth}
    forget_digests(lake, eth)  # a lake published before digests were recorded
    fresh = Lake(lake.root)
    for key in eth:
        pd.testing.assert_frame_equal(fresh.read_bars(key), bars[key], check_exact=True)
        assert fresh.digest_verdict(key).state == UNRECORDED
    assert fresh.bar_cache.stats.hashed == 0  # nothing to compare: nothing hashed
    assert unrecorded_partitions(fresh) == sorted(eth)
    assert check_bar_digests(fresh) == []  # unrecorded is not damage
    assert copy_problem(fresh, ETH_1D, lake.path(ETH_1D)) is None
    result = run_ingest(SyntheticProvider(), universe.select(["ETH"]), start=END, end=LATER,
                        lake=fresh, now=NOW)
    again = [k for k in eth if str(k) in result.manifest["partitions"]]
    assert {k.interval for k in again} >= {"15m", "1h", "4h", "1d"}
    for key in again:  # each partition the ingest published is recorded again
        assert Lake(lake.root).digest_verdict(key).state == WHOLE
    assert unrecorded_partitions(fresh) == sorted(set(eth) - set(again))


def test_a_partition_the_lake_never_held_is_no_damage(lake):
    forget_digests(lake, [ETH_1D])
    lake.path(ETH_1D).unlink()
    assert lake.read_bars(ETH_1D).empty and not lake.recorded(ETH_1D)
    assert check_bar_digests(lake) == []


def test_a_file_is_hashed_once_per_version_of_it(lake, universe):
    reader = Lake(lake.root, bar_cache_bytes=0)  # keeps no columns: every read opens its file
    for _ in range(3):
        reader.read_bars(ETH_1D)
        reader.read_bar_table(ETH_1D, ("timestamp", "close"))
    assert reader.bar_cache.stats.files_read == 6 and reader.bar_cache.stats.hashed == 1
    reads = [BarRead(universe[s], "synthetic", iv, 20) for s in ("ETH", "AAPL")
             for iv in ("15m", "1h", "1d")]
    for at in (END, END - pd.Timedelta(days=2)):
        scan_closed_bars(reader, reads, at, damage={})
    assert reader.bar_cache.stats.hashed == 6  # each file once, ETH's 1d not again
    # a publication through the lake knows the digests of the files it put in place (the
    # ingest itself hashes only the stored files it reads first: ETH's 4h bars)
    run_ingest(SyntheticProvider(), universe.select(["ETH"]), start=END, end=LATER, lake=reader,
               now=NOW)
    assert reader.bar_cache.stats.hashed == 7
    opened = reader.bar_cache.stats.files_read
    scan_closed_bars(reader, reads, LATER, damage={})
    assert reader.bar_cache.stats.files_read == opened + 6 and reader.bar_cache.stats.hashed == 7
    # a file changed in place is a new version: hashed once more, refused, then not read again
    flip_in_a_float(lake, ETH_1D, "high", 2)
    for _ in range(2):
        with pytest.raises(DamagedFile, match="changed since it was published"):
            reader.read_bars(ETH_1D)
    assert reader.bar_cache.stats.hashed == 8


def test_a_reader_during_a_publication_sees_every_file_whole(lake, monkeypatch):
    """Between two moves of one asset's publication the records accept the previous and the new
    file of each key; after it, the new one alone; a publication that fails puts them back."""
    keys = [k for k in lake.partitions() if k.symbol == "ETH" and k.interval != "1w"]
    newer = {k: lake.read_bars(k).iloc[:-1] for k in keys}  # other bytes, still bars
    records = lake.root / record_relative(ETH_1D.relative.as_posix())
    before = records.read_text(encoding="utf-8")
    real, seen = os.replace, []

    def between_moves(src, dst):
        real(src, dst)
        if "/bars/" in str(dst) and "/digests/" not in str(dst):
            seen.append(check_bar_digests(Lake(lake.root)))

    monkeypatch.setattr(os, "replace", between_moves)
    publish_frames(lake, newer)
    monkeypatch.setattr(os, "replace", real)
    assert seen == [[]] * len(keys)
    for key in keys:
        assert lake.market.recorded(key.relative.as_posix()) == (_sha(lake.path(key)),)
    after = records.read_text(encoding="utf-8")

    def failing_third(src, dst):
        if "/bars/" in str(dst) and "/digests/" not in str(dst):
            failing_third.moves += 1
            if failing_third.moves == 3:
                raise OSError("disk full")
        real(src, dst)

    failing_third.moves = 0
    monkeypatch.setattr(os, "replace", failing_third)
    with pytest.raises(OSError, match="disk full"):
        publish_frames(lake, {k: f.iloc[:-1] for k, f in newer.items()})
    monkeypatch.setattr(os, "replace", real)
    assert records.read_text(encoding="utf-8") == after != before
    assert check_bar_digests(Lake(lake.root)) == []


def test_a_record_that_cannot_be_read_is_named_until_the_next_publication(lake, universe):
    """A damaged record proves nothing: its series' files are read as unrecorded (their pages
    and rows still checked), verify names the record, the next ingest writes it again."""
    record = record_relative(ETH_1D.relative.as_posix())
    (lake.root / record).write_text("{not json", encoding="utf-8")
    fresh = Lake(lake.root)
    pd.testing.assert_frame_equal(fresh.read_bars(ETH_1D), lake.read_bars(ETH_1D))
    assert fresh.digest_verdict(ETH_1D).state == UNRECORDED
    assert price_intervals(fresh, "synthetic") == {"ETH": "15m", "AAPL": "15m"}
    [problem] = check_bar_digests(fresh)
    assert (problem.kind, problem.subject) == (RECORD, record)
    assert "it cannot be read (not a digest record (JSONDecodeError))" in problem.describe()
    run_ingest(SyntheticProvider(), universe.select(["ETH"]), start=END, end=LATER,
               lake=Lake(lake.root), now=NOW)
    assert Lake(lake.root).digest_verdict(ETH_15M).state == WHOLE
    assert check_bar_digests(Lake(lake.root)) == []


def test_a_mirrors_copy_is_judged_against_the_lakes_record(lake, tmp_path):
    good = tmp_path / "good.parquet"
    shutil.copy(lake.path(ETH_1D), good)
    assert copy_problem(lake, ETH_1D, good) is None
    flip_in_a_float(lake, ETH_1D, "high", 3)
    assert "changed since it was published" in str(copy_problem(lake, ETH_1D, lake.path(ETH_1D)))


def test_on_object_storage_the_pointer_records_each_digest(tmp_path, universe, s3_bucket):
    root = tmp_path / "remote"
    set_market(root, f"s3://{s3_bucket}/market")
    remote = Lake(root)
    run_ingest(SyntheticProvider(), universe.select(["ETH"]), start=START, end=END, lake=remote,
               now=NOW)
    s3 = boto3.client("s3")
    pointer = json.loads(s3.get_object(Bucket=s3_bucket, Key=f"market/{POINTER}")["Body"].read())
    assert sorted(pointer["sha256"]) == sorted(k.relative.as_posix() for k in remote.partitions())
    version = pointer["files"][ETH_1D.relative.as_posix()]
    body = s3.get_object(Bucket=s3_bucket, Key=f"market/{version}")["Body"].read()
    assert hashlib.sha256(body).hexdigest() == pointer["sha256"][ETH_1D.relative.as_posix()]
    good = Lake(root).read_bars(ETH_1D)
    assert check_bar_digests(Lake(root)) == []
    # one byte of the stored object changed: every new reader refuses it, by its partition
    changed = bytearray(body)
    changed[len(changed) // 3] ^= 0x01
    s3.put_object(Bucket=s3_bucket, Key=f"market/{version}", Body=bytes(changed))
    with pytest.raises(DamagedFile, match="its bytes changed since it was published"):
        Lake(root).read_bars(ETH_1D)
    damage: dict[str, str] = {}
    scan_closed_bars(Lake(root), [BarRead(universe["ETH"], "synthetic", "1d", 3)], END,
                     damage=damage)
    assert damage["ETH"].startswith("synthetic/1d/ETH cannot be read (its bytes changed")
    assert [p.subject for p in check_bar_digests(Lake(root))] == ["synthetic/1d/ETH"]
    # a pointer written before digests were recorded: unrecorded, read as before
    s3.put_object(Bucket=s3_bucket, Key=f"market/{version}", Body=body)
    del pointer["sha256"]
    s3.put_object(Bucket=s3_bucket, Key=f"market/{POINTER}", Body=json.dumps(pointer).encode())
    legacy = Lake(root)
    pd.testing.assert_frame_equal(legacy.read_bars(ETH_1D), good, check_exact=True)
    assert legacy.digest_verdict(ETH_1D).state == UNRECORDED
    assert len(unrecorded_partitions(legacy)) == 5
    run_ingest(SyntheticProvider(), universe.select(["ETH"]), start=END, end=LATER, lake=legacy,
               now=NOW)
    assert Lake(root).digest_verdict(ETH_15M).state == WHOLE
