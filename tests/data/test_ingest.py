import json

import pandas as pd
import pytest

from arena.data.ingest import IngestError, derive_complete, run_ingest
from arena.data.lake import PartitionKey
from arena.data.providers.files import FilesProvider
from arena.data.providers.synthetic import SyntheticProvider
from tests.conftest import ts

START, END = ts("2025-10-06"), ts("2025-10-27")
SYMBOLS = ["BTC", "ETH", "AAPL", "SPY"]


def test_synthetic_ingest_publishes_every_interval(lake, universe, synthetic):
    result = run_ingest(synthetic, universe.select(SYMBOLS), start=START, end=END, lake=lake,
                        now=ts("2025-10-27 00:05"))
    assert result.published and result.manifest["status"] == "published"
    assert result.manifest["synthetic"] is True
    keys = set(lake.partitions())
    assert keys == {PartitionKey("synthetic", i, s) for i in ("15m", "1h", "4h", "1d", "1w")
                    for s in SYMBOLS}
    # what the lake holds is exactly what the provider serves for the same (closed) bars
    for sym, interval in [("ETH", "1h"), ("AAPL", "4h"), ("SPY", "1d"), ("BTC", "1w")]:
        stored = lake.read_bars(PartitionKey("synthetic", interval, sym))
        direct = SyntheticProvider().fetch_bars(universe[sym], interval, START, END)
        direct = direct[direct.timestamp >= stored.timestamp.iloc[0]].reset_index(drop=True)
        pd.testing.assert_frame_equal(stored, direct, check_exact=False, rtol=1e-12)
    assert len(lake.read_bars(PartitionKey("synthetic", "1w", "BTC"))) == 3
    manifest = json.loads(result.manifest_path.read_text())
    assert manifest["asked"]["symbols"] == SYMBOLS
    assert manifest["got"]["ETH"]["fetched"] == 21 * 96
    assert manifest["validation"]["success"] is True
    assert set(manifest["timings_seconds"]) >= {"fetch", "validate", "publish"}
    assert (lake.root / "funding/provider=synthetic/symbol=ETH/data.parquet").is_file()
    assert (lake.root / "earnings/provider=synthetic/data.parquet").is_file()


def test_second_ingest_appends_without_revising(lake, universe, synthetic):
    sub = universe.select(["ETH", "MSFT"])
    run_ingest(synthetic, sub, start=START, end=ts("2025-10-15"), lake=lake)
    second = run_ingest(synthetic, sub, start=ts("2025-10-13"), end=END, lake=lake)
    got = second.manifest["got"]
    assert got["ETH"]["revised"] == 0 and got["ETH"]["new"] == 12 * 96
    hourly = lake.read_bars(PartitionKey("synthetic", "1h", "ETH"))
    assert len(hourly) == 21 * 24 and hourly.timestamp.is_unique


def test_derived_bars_only_when_complete(universe, synthetic):
    # Wednesday to Wednesday: neither week is complete, every day is
    hours = synthetic.fetch_bars(universe["ETH"], "1h", ts("2025-10-08"), ts("2025-10-15"))
    assert derive_complete(hours, "1h", "1w", "24/7").empty
    daily = derive_complete(hours, "1h", "1d", "24/7")
    assert len(daily) == 7 and daily.timestamp.iloc[0] == ts("2025-10-08")


def _write_drop(root, symbol, frame):
    folder = root / "1h"
    folder.mkdir(parents=True, exist_ok=True)
    out = frame.copy()
    out["timestamp"] = out["timestamp"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    out.to_csv(folder / f"{symbol}.csv", index=False)


def test_failed_validation_publishes_nothing(tmp_path, lake, universe, synthetic):
    """A splice in one asset: the run fails, every partition stays byte-for-byte as it was."""
    drop = tmp_path / "drop"
    sub = universe.select(["ETH", "SOL"])
    for a in sub:
        _write_drop(drop, a.symbol, synthetic.fetch_bars(a, "1h", START, END))
    run_ingest(FilesProvider(drop), sub, start=START, end=END, lake=lake)
    before = {k: lake.path(k).read_bytes() for k in lake.partitions()}
    assert len(before) == 2 * 4  # 1h base + 4h, 1d, 1w

    spliced = synthetic.fetch_bars(universe["SOL"], "1h", START, ts("2025-10-28"))
    cut = spliced.timestamp >= ts("2025-10-20 05:00")
    spliced.loc[cut, ["open", "high", "low", "close"]] *= 1.4  # a splice with ordinary volume
    _write_drop(drop, "SOL", spliced)
    _write_drop(drop, "ETH", synthetic.fetch_bars(universe["ETH"], "1h", START, ts("2025-10-28")))
    with pytest.raises(IngestError, match="nothing published") as err:
        run_ingest(FilesProvider(drop), sub, start=START, end=ts("2025-10-28"), lake=lake)
    assert {k: lake.path(k).read_bytes() for k in lake.partitions()} == before
    manifest = err.value.manifest
    assert manifest["status"] == "failed" and manifest["bars_published"] == 0
    assert any("SOL" in m for m in manifest["validation"]["failed"])
    assert manifest["quarantine"] and (lake.root / "quarantine").is_dir()


def test_fetch_failure_publishes_nothing(tmp_path, lake, universe, synthetic):
    drop = tmp_path / "drop"
    _write_drop(drop, "ETH", synthetic.fetch_bars(universe["ETH"], "1h", START, END))
    with pytest.raises(IngestError, match="SOL: NoDataError") as err:
        run_ingest(FilesProvider(drop), universe.select(["ETH", "SOL"]), start=START, end=END,
                   lake=lake)
    assert lake.partitions() == []
    assert err.value.manifest["fetch_errors"].keys() == {"SOL"}
    assert len(lake.manifests()) == 1


def test_empty_window_is_refused(lake, universe, synthetic):
    with pytest.raises(ValueError, match="empty window"):
        run_ingest(synthetic, universe.select(["ETH"]), start=END, end=START, lake=lake)


def test_bars_missing_at_the_start_of_the_window_fail(tmp_path, lake, universe, synthetic):
    """A publisher that pushed only the last two of three weeks: the count is short, refused."""
    drop = tmp_path / "drop"
    _write_drop(drop, "ETH", synthetic.fetch_bars(universe["ETH"], "1h", ts("2025-10-13"), END))
    with pytest.raises(IngestError, match="ETH 1h") as err:
        run_ingest(FilesProvider(drop), universe.select(["ETH"]), start=START, end=END, lake=lake)
    assert any("bar" in m for m in err.value.manifest["validation"]["failed"])
    assert lake.partitions() == []
