import numpy as np
import pandas as pd
import pytest

from arena.data.lake import PartitionKey, TableKey, key_of_staged, merge_bars, staged_name
from tests.conftest import ts
from tests.data.published import forget_digests


def _bars(start: str, n: int, close0: float = 100.0) -> pd.DataFrame:
    t = pd.date_range(start, periods=n, freq="1h", tz="UTC").as_unit("us")
    c = close0 + np.arange(n, dtype=float)
    return pd.DataFrame({"timestamp": t, "open": c, "high": c + 1, "low": c - 1, "close": c,
                         "volume": np.ones(n)})


def test_partition_layout_is_hive_style(lake):
    key = PartitionKey("synthetic", "1h", "BRK.B")
    assert lake.path(key) == lake.root / "bars/provider=synthetic/interval=1h/symbol=BRK.B/data.parquet"
    assert TableKey("funding", "ccxt", "ETH").relative.as_posix() == "funding/provider=ccxt/symbol=ETH/data.parquet"


def test_stage_publish_roundtrip_and_listing(lake):
    key = PartitionKey("synthetic", "1h", "ETH")
    frame = _bars("2025-11-01", 5)
    staged = lake.stage("run-1", {key: frame})
    assert not lake.path(key).exists()  # staged, not published
    lake.publish("run-1", staged)
    pd.testing.assert_frame_equal(lake.read_bars(key), frame)
    assert lake.partitions() == [key]
    assert not (lake.root / "staging" / "run-1").exists()
    window = lake.read_bars(key, start=ts("2025-11-01 01:00"), end=ts("2025-11-01 03:00"))
    assert list(window.close) == [101.0, 102.0]
    assert lake.read_bars(PartitionKey("synthetic", "1h", "SOL")).empty


def test_staged_files_lie_flat_in_one_folder_and_name_their_keys(lake):
    keys = [PartitionKey("synthetic", "15m", "BRK.B"), PartitionKey("files", "1w", "BTC"),
            TableKey("funding", "synthetic", "BTC"), TableKey("earnings", "synthetic")]
    staged = lake.stage("run-3", {k: _bars("2025-11-01", 3) for k in keys}, group="X")
    folder = lake.root / "staging" / "run-3" / "X"
    assert {p.parent for p in staged.values()} == {folder}  # no folder per level of a key
    assert staged_name(keys[0]) == "bars~provider=synthetic~interval=15m~symbol=BRK.B.parquet"
    assert [key_of_staged(staged_name(k)) for k in keys] == keys
    assert lake.staged("run-3", "X") == staged and lake.staged("run-4") == {}
    with pytest.raises(ValueError, match=r"not the name of a staged file: 'data\.parquet'"):
        key_of_staged("data.parquet")


def test_quarantine_leaves_published_partition_byte_for_byte(lake):
    key = PartitionKey("synthetic", "1h", "ETH")
    lake.publish("good", lake.stage("good", {key: _bars("2025-11-01", 5)}))
    before = lake.path(key).read_bytes()
    lake.stage("bad", {key: _bars("2025-11-01", 8, close0=1.0)})
    moved = lake.quarantine("bad")
    assert lake.path(key).read_bytes() == before
    assert moved is not None and (moved / staged_name(key)).is_file()


def test_merge_fetched_wins_and_counts_revisions():
    old = _bars("2025-11-01", 4)
    new = _bars("2025-11-01 02:00", 4, close0=102.0)
    new.loc[0, "close"] = 555.0  # the vendor revised one stored bar
    merged, revised = merge_bars(old, new)
    assert len(merged) == 6 and revised == 1
    assert merged.set_index("timestamp").close.loc[ts("2025-11-01 02:00")] == 555.0
    assert merge_bars(old.iloc[0:0], new)[1] == 0


def test_one_assets_files_are_published_or_quarantined_with_their_reason(lake):
    eth, sol = PartitionKey("synthetic", "1h", "ETH"), PartitionKey("synthetic", "1h", "SOL")
    with lake.run_lock("run-2"):
        lake.publish("run-2", lake.stage("run-2", {eth: _bars("2025-11-01", 5)}, group="ETH"),
                     group="ETH")
        lake.stage("run-2", {sol: _bars("2025-11-01", 5)}, group="SOL")
        moved = lake.quarantine("run-2", "SOL", reason="validation: SOL 1h: a splice")
    assert lake.partitions() == [eth]
    assert moved == lake.root / "quarantine" / "run-2" / "SOL"
    assert (moved / staged_name(sol)).is_file()
    assert (moved / "reason.txt").read_text() == "validation: SOL 1h: a splice\n"
    assert not (lake.root / "staging" / "run-2").exists()


def _reference_frame(micros: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame(values, columns=["open", "high", "low", "close", "volume"])
    frame.insert(0, "timestamp", pd.DatetimeIndex(micros.view("datetime64[us]")).tz_localize("UTC"))
    return frame


def test_bar_frame_is_the_frame_the_constructor_builds():
    from arena.data.bars import bar_frame_from_columns

    rng = np.random.default_rng(5)
    for n in (0, 1, 7):
        micros = np.sort(rng.integers(0, 2**50, n))
        values = rng.random((n, 5))
        frame = bar_frame_from_columns(micros, values.T.copy())  # the frame takes it over
        pd.testing.assert_frame_equal(frame, _reference_frame(micros, values), check_exact=True)
        assert frame.columns.dtype == _reference_frame(micros, values).columns.dtype
        frame.loc[frame.index[:1], "close"] = -1.0  # its own, writable arrays
        assert (values >= 0).all()


def test_read_bars_window_is_the_whole_file_clipped(lake):
    key = PartitionKey("synthetic", "1h", "ETH")
    frame = _bars("2025-11-01", 30)
    lake.publish("r", lake.stage("r", {key: frame}))
    whole = lake.read_bars(key)
    pd.testing.assert_frame_equal(whole, frame, check_exact=True)
    stamps = frame["timestamp"]
    for start, end in [(ts("2025-11-01 03:00"), ts("2025-11-01 07:00")),
                       (ts("2025-11-01 03:00:00.0000001"), None),  # finer than a microsecond
                       (None, ts("2025-11-01 05:30")), ("2025-11-01 02:00", "2025-11-01 02:00"),
                       (ts("2026-01-01"), None), (None, ts("2020-01-01"))]:
        lo = pd.Timestamp(start, tz="UTC") if isinstance(start, str) else start
        hi = pd.Timestamp(end, tz="UTC") if isinstance(end, str) else end
        mask = np.ones(len(frame), dtype=bool)
        if lo is not None:
            mask &= (stamps >= lo).to_numpy()
        if hi is not None:
            mask &= (stamps < hi).to_numpy()
        pd.testing.assert_frame_equal(lake.read_bars(key, start, end),
                                      frame[mask].reset_index(drop=True), check_exact=True)


def test_read_bars_of_a_file_in_another_schema_is_converted(lake):
    key = PartitionKey("synthetic", "1h", "SOL")
    frame = _bars("2025-11-01", 4)
    path = lake.path(key)
    path.parent.mkdir(parents=True)
    frame.assign(timestamp=frame["timestamp"].dt.as_unit("ns")).to_parquet(path, index=False)
    pd.testing.assert_frame_equal(lake.read_bars(key), frame, check_exact=True)
    pd.testing.assert_frame_equal(lake.read_bars(key, start=ts("2025-11-01 02:00")),
                                  frame.iloc[2:].reset_index(drop=True), check_exact=True)


def test_the_last_bar_open_is_read_from_the_footer_as_from_the_bars(lake):
    from arena.data.errors import DamagedFile

    key = PartitionKey("synthetic", "1h", "ETH")
    assert lake.last_bar_open(key) is None  # not published
    frame = _bars("2025-11-01", 30)
    lake.publish("r", lake.stage("r", {key: frame}))
    assert lake.last_bar_open(key) == frame["timestamp"].iloc[-1] == ts("2025-11-02 05:00")
    lake.publish("e", lake.stage("e", {key: frame.iloc[:0]}))
    assert lake.last_bar_open(key) is None  # a partition of no bars
    forget_digests(lake, [key])  # a lake of another writer: no digest recorded
    path = lake.path(key)  # another writer's file: nanoseconds, no statistics, two row groups
    frame.assign(timestamp=frame["timestamp"].dt.as_unit("ns")).to_parquet(
        path, index=False, write_statistics=False, row_group_size=7)
    assert lake.last_bar_open(key) == ts("2025-11-02 05:00")
    frame.to_parquet(path, index=False, row_group_size=7)  # statistics of every row group
    assert lake.last_bar_open(key) == ts("2025-11-02 05:00")
    path.write_bytes(b"PAR1 not a footer")
    with pytest.raises(DamagedFile, match=r"data\.parquet"):
        lake.last_bar_open(key)


def _reference_merge(existing: pd.DataFrame, fetched: pd.DataFrame) -> pd.DataFrame:
    both = pd.concat([existing, fetched], ignore_index=True)
    return (both.drop_duplicates("timestamp", keep="last").sort_values("timestamp", kind="stable")
            .reset_index(drop=True))


def test_merge_bars_appends_replaces_and_sorts_like_a_pandas_merge():
    stored = _bars("2025-11-01", 10)
    cases = [_bars("2025-11-01 10:00", 3, close0=500.0),  # newer bars only (the daily case)
             _bars("2025-11-01 08:00", 4, close0=500.0),  # overlap: two revised, two new
             _bars("2025-10-31 20:00", 2, close0=500.0),  # older bars only
             _bars("2025-11-01 08:00", 2, close0=108.0)]  # the same values again
    for fetched in cases:
        merged = merge_bars(stored, fetched)[0]
        pd.testing.assert_frame_equal(merged, _reference_merge(stored, fetched), check_exact=True)
    assert merge_bars(stored, cases[1])[1] == 2
    assert merge_bars(stored, cases[3])[1] == 0
    unsorted = stored.iloc[::-1]
    pd.testing.assert_frame_equal(merge_bars(unsorted, cases[0])[0],
                                  _reference_merge(stored, cases[0]), check_exact=True)
    # nothing stored: the fetch alone, still sorted with its last duplicate winning
    fetched = pd.concat([cases[1].iloc[::-1], cases[1].iloc[[1]].assign(close=7.0)])
    nothing = stored.iloc[0:0]
    pd.testing.assert_frame_equal(merge_bars(nothing, fetched)[0],
                                  _reference_merge(nothing, fetched), check_exact=True)
    assert merge_bars(nothing, fetched)[0].close.tolist()[1] == 7.0


def test_publish_over_stored_files_keeps_no_backup_tree(lake):
    keys = [PartitionKey("synthetic", i, "ETH") for i in ("1h", "4h")]
    lake.publish("a", lake.stage("a", {k: _bars("2025-11-01", 5) for k in keys}, group="ETH"),
                 group="ETH")
    newer = {k: _bars("2025-11-01", 6) for k in keys}
    lake.publish("b", lake.stage("b", newer, group="ETH"), group="ETH")
    for k in keys:
        pd.testing.assert_frame_equal(lake.read_bars(k), newer[k])
    assert not (lake.root / "staging" / "b").exists() or not any(
        (lake.root / "staging" / "b").rglob("*.parquet"))


def test_a_failed_publish_puts_every_previous_file_back(lake, monkeypatch):
    import os

    keys = [PartitionKey("synthetic", i, "ETH") for i in ("1h", "4h", "1d")]
    lake.publish("a", lake.stage("a", {k: _bars("2025-11-01", 5) for k in keys}, group="ETH"),
                 group="ETH")
    before = {k: lake.path(k).read_bytes() for k in keys}
    staged = lake.stage("b", {k: _bars("2025-11-01", 7, close0=9.0) for k in keys}, group="ETH")
    real, calls = os.replace, []

    def failing_third(src, dst):
        calls.append(dst)
        if len(calls) == 3:
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing_third)
    try:
        lake.publish("b", staged, group="ETH")
    except OSError:
        pass
    else:
        raise AssertionError("the publish should have failed")
    monkeypatch.setattr(os, "replace", real)
    assert {k: lake.path(k).read_bytes() for k in keys} == before


def test_a_bar_without_a_time_or_a_price_is_never_written(tmp_path):
    from arena.data.lake import write_bars_file

    frame = pd.DataFrame({
        "timestamp": pd.to_datetime(["2026-01-01", None], utc=True).as_unit("us"),
        **{c: [1.0, 2.0] for c in ("open", "high", "low", "volume")}, "close": [1.0, np.nan]})
    with pytest.raises(ValueError, match="null values in timestamp, close"):
        write_bars_file(frame, tmp_path / "data.parquet")
    assert not (tmp_path / "data.parquet").exists()


def test_a_bar_file_stores_times_delta_encoded_and_values_plain(lake):
    """The lake's bar layout: evenly stepping times delta-encoded, prices and volumes as they
    are (no codec, no dictionary), with the timestamp statistics the footer read relies on; a
    zstd file of another writer is read the same."""
    import pyarrow.parquet as pq

    key = PartitionKey("synthetic", "1h", "ETH")
    frame = _bars("2025-11-01", 500)
    lake.publish("r", lake.stage("r", {key: frame}))
    meta = pq.ParquetFile(lake.path(key)).metadata
    time_column = meta.row_group(0).column(0)
    assert time_column.path_in_schema == "timestamp"
    assert "DELTA_BINARY_PACKED" in time_column.encodings
    assert time_column.statistics.has_min_max
    for i in range(meta.num_columns):
        column = meta.row_group(0).column(i)
        assert column.compression == "UNCOMPRESSED"
        assert "PLAIN_DICTIONARY" not in column.encodings and "RLE_DICTIONARY" not in column.encodings
    # 500 evenly spaced times take a few bytes each, not eight
    assert time_column.total_compressed_size < 500
    pd.testing.assert_frame_equal(lake.read_bars(key), frame, check_exact=True)
    forget_digests(lake, [key])  # a lake of another writer: no digest recorded
    frame.to_parquet(lake.path(key), index=False, compression="zstd")  # another writer's codec
    pd.testing.assert_frame_equal(lake.read_bars(key), frame, check_exact=True)
