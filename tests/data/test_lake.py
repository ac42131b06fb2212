import numpy as np
import pandas as pd

from arena.data.lake import PartitionKey, TableKey, merge_bars
from tests.conftest import ts


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


def test_quarantine_leaves_published_partition_byte_for_byte(lake):
    key = PartitionKey("synthetic", "1h", "ETH")
    lake.publish("good", lake.stage("good", {key: _bars("2025-11-01", 5)}))
    before = lake.path(key).read_bytes()
    lake.stage("bad", {key: _bars("2025-11-01", 8, close0=1.0)})
    moved = lake.quarantine("bad")
    assert lake.path(key).read_bytes() == before
    assert moved is not None and (moved / key.relative).is_file()


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
    assert (moved / sol.relative).is_file()
    assert (moved / "reason.txt").read_text() == "validation: SOL 1h: a splice\n"
    assert not (lake.root / "staging" / "run-2").exists()
