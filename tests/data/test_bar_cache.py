"""The lake's cache of decoded bar partitions (:mod:`arena.data.bar_cache`): a file is opened once
per publication of it, and every read returns exactly what reading the file again returns -
after an ingest through the same lake, a publication by another process, a file replaced by a
damaged one, a rewrite in place, on local disk and on object storage."""

from __future__ import annotations

import os
import pickle

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from arena.data.bar_cache import BarCache
from arena.data.errors import DamagedFile
from arena.data.ingest import run_ingest
from arena.data.lake import Lake, PartitionKey
from arena.data.market_store import ObjectMarket, set_market
from arena.market.asof import BarRead, scan_closed_bars
from tests.conftest import ts
from tests.data.published import forget_digests

START, END, LATER = ts("2025-10-06"), ts("2025-10-20"), ts("2025-10-24")
ETH_15M = PartitionKey("synthetic", "15m", "ETH")
ETH_1D = PartitionKey("synthetic", "1d", "ETH")


@pytest.fixture
def lake(tmp_path, universe, synthetic) -> Lake:
    lake = Lake(tmp_path / "lake")
    run_ingest(synthetic, universe.select(["ETH", "AAPL"]), start=START, end=END, lake=lake)
    return lake


def _fresh(lake: Lake, key: PartitionKey) -> pd.DataFrame:
    """The partition as a lake that keeps nothing reads it (the file opened now)."""
    return Lake(lake.root, bar_cache_bytes=0).read_bars(key)


def test_a_file_is_opened_once_per_publication_through_the_lake(lake, universe, synthetic):
    opened = lake.bar_cache.stats.files_read
    first = lake.read_bars(ETH_15M)
    for _ in range(3):
        pd.testing.assert_frame_equal(lake.read_bars(ETH_15M), first, check_exact=True)
    assert lake.bar_cache.stats.files_read == opened + 1
    pd.testing.assert_frame_equal(first, _fresh(lake, ETH_15M), check_exact=True)
    # a later ingest publishes new files: the next read opens the new one and sees its bars
    run_ingest(synthetic, universe.select(["ETH"]), start=END, end=LATER, lake=lake)
    opened = lake.bar_cache.stats.files_read
    after = lake.read_bars(ETH_15M)
    assert lake.bar_cache.stats.files_read == opened + 1
    assert after["timestamp"].iloc[-1] > first["timestamp"].iloc[-1]
    pd.testing.assert_frame_equal(after, _fresh(lake, ETH_15M), check_exact=True)


def test_a_publication_by_another_process_is_seen(lake, universe, synthetic):
    before = lake.read_bars(ETH_1D)
    writer = Lake(lake.root)  # another process's lake: this one is never told
    run_ingest(synthetic, universe.select(["ETH"]), start=END, end=LATER, lake=writer)
    after = lake.read_bars(ETH_1D)
    assert len(after) > len(before)
    pd.testing.assert_frame_equal(after, _fresh(lake, ETH_1D), check_exact=True)


def test_columns_are_decoded_once_and_served_as_a_file_read_returns_them(lake):
    fresh = Lake(lake.root, bar_cache_bytes=0)
    opened = lake.bar_cache.stats.files_read
    price = lake.read_bar_table(ETH_15M, ("timestamp", "close"))
    assert lake.bar_cache.stats.files_read == opened + 1
    whole = lake.read_bar_table(ETH_15M)  # only the other four columns are decoded
    assert lake.bar_cache.stats.files_read == opened + 2
    for columns in (("timestamp", "close"), ("timestamp", "open", "close"), None):
        got = lake.read_bar_table(ETH_15M, columns) if columns else lake.read_bar_table(ETH_15M)
        want = fresh.read_bar_table(ETH_15M, columns) if columns else fresh.read_bar_table(ETH_15M)
        assert got.equals(want, check_metadata=True) and got.schema == want.schema
    assert price.equals(fresh.read_bar_table(ETH_15M, ("timestamp", "close")))
    assert whole.equals(fresh.read_bar_table(ETH_15M))
    assert lake.bar_cache.stats.files_read == opened + 2


def test_a_file_replaced_by_a_damaged_one_is_damage_not_the_bars_read_before(lake):
    lake.read_bars(ETH_1D)
    path = lake.path(ETH_1D)
    junk = path.with_name("junk.parquet")
    junk.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # a cut copy
    os.replace(junk, path)
    with pytest.raises(DamagedFile) as cut:
        lake.read_bars(ETH_1D)
    with pytest.raises(DamagedFile) as uncached:
        _fresh(lake, ETH_1D)
    assert cut.value.problem == uncached.value.problem


@pytest.mark.parametrize("recorded", [True, False])
def test_a_file_rewritten_in_place_is_read_again(lake, recorded):
    lake.read_bars(ETH_1D)
    if not recorded:  # a lake published before digests: the bars' own check sees it
        forget_digests(lake, [ETH_1D])
        lake.read_bars(ETH_1D)
    path = lake.path(ETH_1D)
    inode = path.stat().st_ino
    table = pq.ParquetFile(path).read()
    low = table.column("low").to_numpy().copy()
    low[2] = -6e-33  # bytes that still decode, bars that no validated series has
    pq.write_table(table.set_column(table.schema.get_field_index("low"), "low", pa.array(low)),
                   path)
    assert path.stat().st_ino == inode
    problem = "changed since it was published" if recorded else \
        r"has low -6e-33 \(prices are positive\)"
    with pytest.raises(DamagedFile, match=problem):
        lake.read_bars(ETH_1D)


def test_a_scan_reads_each_file_once_and_again_only_after_a_publication(lake, universe,
                                                                         synthetic):
    reads = [BarRead(universe[s], "synthetic", iv, 50) for s in ("ETH", "AAPL")
             for iv in ("15m", "1h", "1d")]
    fresh = Lake(lake.root, bar_cache_bytes=0)
    opened = lake.bar_cache.stats.files_read
    for at in (ts("2025-10-17 16:00"), END, ts("2025-10-10 16:00")):  # in any order
        got = scan_closed_bars(lake, reads, at)
        for bars, want in zip(got, scan_closed_bars(fresh, reads, at), strict=True):
            pd.testing.assert_frame_equal(bars, want, check_exact=True)
    assert lake.bar_cache.stats.files_read == opened + 6
    run_ingest(synthetic, universe.select(["ETH"]), start=END, end=LATER, lake=lake)
    opened = lake.bar_cache.stats.files_read
    scan_closed_bars(lake, reads, LATER)
    assert lake.bar_cache.stats.files_read == opened + 3  # ETH's three new files


def test_the_cache_is_bounded_and_a_lake_sent_to_a_worker_carries_none(lake):
    for key in lake.partitions():
        lake.read_bars(key)
    assert len(lake.bar_cache) == len(lake.partitions())
    whole = lake.bar_cache.nbytes
    small = Lake(lake.root, bar_cache_bytes=whole // 3)
    for key in lake.partitions():
        pd.testing.assert_frame_equal(small.read_bars(key), lake.read_bars(key), check_exact=True)
    assert 0 < small.bar_cache.nbytes <= whole // 3 and len(small.bar_cache) < len(lake.partitions())
    copy = pickle.loads(pickle.dumps(lake))
    assert len(copy.bar_cache) == 0 and copy.bar_cache.max_bytes == lake.bar_cache.max_bytes
    pd.testing.assert_frame_equal(copy.read_bars(ETH_1D), lake.read_bars(ETH_1D), check_exact=True)
    with pytest.raises(ValueError, match="number of bytes"):
        BarCache(-1)


def test_on_object_storage_a_scan_reads_the_pointer_once_and_each_version_once(
        tmp_path, universe, synthetic, s3_bucket, monkeypatch):
    root = tmp_path / "remote"
    set_market(root, f"s3://{s3_bucket}/market")
    lake = Lake(root)
    run_ingest(synthetic, universe.select(["ETH", "AAPL"]), start=START, end=END, lake=lake)
    gets: list[str] = []
    real = ObjectMarket._get

    def counted(self, relative):
        gets.append(relative)
        return real(self, relative)

    monkeypatch.setattr(ObjectMarket, "_get", counted)
    reads = [BarRead(universe[s], "synthetic", iv, 20) for s in ("ETH", "AAPL")
             for iv in ("1h", "1d")]
    first = scan_closed_bars(lake, reads, END)
    assert len(gets) == 1 + 4  # the pointer, then each partition's current version
    gets.clear()
    again = scan_closed_bars(lake, reads, END)
    assert gets == ["_current.json"]  # every version was read already
    for a, b in zip(first, again, strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    monkeypatch.setattr(ObjectMarket, "_get", real)
    run_ingest(synthetic, universe.select(["ETH"]), start=END, end=LATER, lake=Lake(root))
    later = scan_closed_bars(lake, reads, LATER)  # new versions, read as a new lake reads them
    for bars, want in zip(later, scan_closed_bars(Lake(root, bar_cache_bytes=0), reads, LATER),
                          strict=True):
        pd.testing.assert_frame_equal(bars, want, check_exact=True)
    assert later[0]["timestamp"].iloc[-1] > first[0]["timestamp"].iloc[-1]
