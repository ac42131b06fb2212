import json

import pandas as pd
import pytest

from arena.core.runner import Inline
from arena.data.ingest import IngestError, derive_complete, run_ingest
from arena.data.lake import PartitionKey, TableKey, staged_name
from arena.data.providers.files import FilesProvider
from arena.data.providers.synthetic import SyntheticProvider
from tests.conftest import ts
from tests.data.test_yahoo import FakeYahoo, fresh_yfinance, html, provider_for  # noqa: F401

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


def _bytes(lake, symbol):
    return {k: lake.path(k).read_bytes() for k in lake.partitions() if k.symbol == symbol}


def test_a_failed_expectation_quarantines_only_its_asset(tmp_path, lake, universe, synthetic):
    """A splice in SOL: SOL keeps its partitions byte-for-byte and is quarantined with the
    reason; ETH publishes; the run fails naming SOL and saying ETH published."""
    drop = tmp_path / "drop"
    sub = universe.select(["ETH", "SOL"])
    for a in sub:
        _write_drop(drop, a.symbol, synthetic.fetch_bars(a, "1h", START, END))
    run_ingest(FilesProvider(drop), sub, start=START, end=END, lake=lake)
    sol_before, eth_before = _bytes(lake, "SOL"), _bytes(lake, "ETH")
    assert len(sol_before) == len(eth_before) == 4  # 1h base + 4h, 1d, 1w

    spliced = synthetic.fetch_bars(universe["SOL"], "1h", START, ts("2025-10-28"))
    cut = spliced.timestamp >= ts("2025-10-20 05:00")
    spliced.loc[cut, ["open", "high", "low", "close"]] *= 1.4  # a splice with ordinary volume
    _write_drop(drop, "SOL", spliced)
    _write_drop(drop, "ETH", synthetic.fetch_bars(universe["ETH"], "1h", START, ts("2025-10-28")))
    with pytest.raises(IngestError, match=r"failed for SOL \(published ETH\)") as err:
        run_ingest(FilesProvider(drop), sub, start=START, end=ts("2025-10-28"), lake=lake)
    assert _bytes(lake, "SOL") == sol_before
    eth_after = _bytes(lake, "ETH")
    assert eth_after.keys() == eth_before.keys()
    for interval in ("1h", "4h", "1d"):  # updated (the week of 10-27 is not complete yet)
        key = PartitionKey("files", interval, "ETH")
        assert eth_after[key] != eth_before[key]
    assert lake.read_bars(PartitionKey("files", "1h", "ETH")).timestamp.iloc[-1] == ts("2025-10-27 23:00")
    assert err.value.published == ["ETH"]
    manifest = err.value.manifest
    assert manifest["status"] == "partial" and manifest["published"] == ["ETH"]
    assert manifest["bars_published"] == manifest["assets"]["ETH"]["bars_published"] > 0
    sol = manifest["assets"]["SOL"]
    assert sol["status"] == "quarantined" and "SOL 1h" in sol["reason"]
    assert manifest["assets"]["ETH"] == {**manifest["assets"]["ETH"], "status": "published",
                                         "reason": None}
    assert manifest["not_published"] == {"SOL": sol["reason"]}
    kept = lake.root / "quarantine" / manifest["run_id"] / "SOL"
    assert sol["quarantine"] == str(kept) and manifest["quarantine"] == str(kept.parent)
    assert (kept / staged_name(PartitionKey("files", "1h", "SOL"))).is_file()
    assert "jumps" in (kept / "reason.txt").read_text()
    assert not (lake.root / "staging" / manifest["run_id"]).exists()


def test_the_command_exits_non_zero_and_says_which_published(tmp_path, lake, universe, synthetic,
                                                             capsys):
    from arena.cli import main

    drop = tmp_path / "drop"
    _write_drop(drop, "ETH", synthetic.fetch_bars(universe["ETH"], "1h", START, END))
    code = main(["ingest", "--source", "files", "--drop", str(drop), "--symbols", "ETH,SOL",
                 "--start", "2025-10-06", "--end", "2025-10-27", "--lake", str(lake.root)])
    err = capsys.readouterr().err
    assert code == 1
    assert "failed for SOL (published ETH)" in err
    assert "ETH      published" in err and "SOL      fetch_failed: NoDataError" in err
    assert len(lake.partitions()) == 4


class _VendorDownFor:
    """The synthetic market, except one symbol whose vendor is down: its bars come from the
    real Yahoo adapter answering Yahoo's recorded 503 "Will be right back" page."""

    def __init__(self, symbol: str) -> None:
        self.market = SyntheticProvider()
        self.name, self.intervals = self.market.name, self.market.intervals
        self.symbol = symbol
        self.yahoo = provider_for(FakeYahoo({symbol: html("will_be_right_back.html", 503)}))

    def supports(self, asset):
        return self.market.supports(asset)

    def fetch_bars(self, asset, interval, start, end):
        if asset.symbol == self.symbol:
            return self.yahoo.fetch_bars(asset, "1d", start, end)
        return self.market.fetch_bars(asset, interval, start, end)

    def fetch_funding(self, asset, start, end):
        return self.market.fetch_funding(asset, start, end)

    def earnings_dates(self, asset, start, end):
        return self.market.earnings_dates(asset, start, end)

    def fetch_events(self, asset, start, end):
        return self.market.fetch_events(asset, start, end)


def test_a_vendor_outage_on_one_asset_blocks_no_one(lake, universe, synthetic):
    sub = universe.select(["ETH", "AAPL", "SPY"])
    run_ingest(synthetic, sub, start=START, end=ts("2025-10-20"), lake=lake)
    before = {a.symbol: _bytes(lake, a.symbol) for a in sub}
    earnings_before = lake.read_table(TableKey("earnings", "synthetic"))
    waits: list[float] = []  # an outage is transient: fetched again after 2, 10 and 30 s
    with pytest.raises(IngestError, match=r"failed for AAPL \(published ETH, SPY\)") as err:
        run_ingest(_VendorDownFor("AAPL"), sub, start=START, end=END, lake=lake,
                   runner=Inline(sleep=waits.append))
    assert _bytes(lake, "AAPL") == before["AAPL"]
    for symbol in ("ETH", "SPY"):
        after = _bytes(lake, symbol)
        assert after.keys() == before[symbol].keys()
        assert all(after[k] != before[symbol][k] for k in after)
        assert lake.read_bars(PartitionKey("synthetic", "1h", symbol)).timestamp.iloc[-1] > ts("2025-10-24")
    manifest = err.value.manifest
    aapl = manifest["assets"]["AAPL"]
    assert aapl["status"] == "fetch_failed" and "UnavailableError" in aapl["reason"]
    assert waits == [2.0, 10.0, 30.0]
    assert manifest["fetch_errors"] == {"AAPL": aapl["reason"]}
    assert [manifest["assets"][s]["status"] for s in ("ETH", "SPY")] == ["published"] * 2
    # AAPL's earnings dates were not fetched: the stored ones are kept
    pd.testing.assert_frame_equal(lake.read_table(TableKey("earnings", "synthetic")),
                                  earnings_before)


def test_fetch_failure_of_every_asset_publishes_nothing(tmp_path, lake, universe, synthetic):
    drop = tmp_path / "drop"
    (drop / "1h").mkdir(parents=True)
    with pytest.raises(IngestError, match=r"nothing published.*SOL: NoDataError") as err:
        run_ingest(FilesProvider(drop), universe.select(["SOL"]), start=START, end=END,
                   lake=lake)
    assert lake.partitions() == []
    assert err.value.manifest["fetch_errors"].keys() == {"SOL"}
    assert err.value.manifest["status"] == "failed"
    assert len(lake.manifests()) == 1


def test_empty_and_future_windows_are_refused(lake, universe, synthetic):
    with pytest.raises(ValueError, match="is empty"):
        run_ingest(synthetic, universe.select(["ETH"]), start=END, end=START, lake=lake)
    with pytest.raises(ValueError, match="starts in the future"):
        run_ingest(synthetic, universe.select(["ETH"]), start=END, end=END + pd.Timedelta(days=3),
                   lake=lake, now=START)


def test_end_is_capped_at_now_no_unclosed_bar(lake, universe, synthetic):
    now = ts("2025-10-20 10:30")
    result = run_ingest(synthetic, universe.select(["ETH"]), start=START, end=END, lake=lake, now=now)
    assert result.manifest["asked"]["end_used"] == now
    hourly = lake.read_bars(PartitionKey("synthetic", "1h", "ETH"))
    assert hourly.timestamp.iloc[-1] == ts("2025-10-20 09:00")  # 10:00-11:00 had not closed


def test_bars_missing_at_the_start_of_the_window_fail(tmp_path, lake, universe, synthetic):
    """A publisher that pushed only the last two of three weeks: the count is short, refused."""
    drop = tmp_path / "drop"
    _write_drop(drop, "ETH", synthetic.fetch_bars(universe["ETH"], "1h", ts("2025-10-13"), END))
    with pytest.raises(IngestError, match="ETH 1h") as err:
        run_ingest(FilesProvider(drop), universe.select(["ETH"]), start=START, end=END, lake=lake)
    assert any("bar" in m for m in err.value.manifest["validation"]["failed"])
    assert lake.partitions() == []


def test_three_daily_runs_in_a_row(lake, universe, synthetic):
    """Regression: hive folder names once came back as columns and broke the third run."""
    sub = universe.select(["ETH", "AAPL"])
    for day in range(3):
        run_ingest(synthetic, sub, start=START + pd.Timedelta(days=7 * day),
                   end=START + pd.Timedelta(days=7 * day + 10), lake=lake)
    funding = lake.read_table(TableKey("funding", "synthetic", "ETH"))
    assert list(funding.columns) == ["timestamp", "funding_rate"]
    assert funding.timestamp.is_unique and len(funding) == 24 * 3
    assert list(lake.read_table(TableKey("earnings", "synthetic")).columns) == ["symbol", "date"]


def test_earnings_history_is_kept_and_the_window_refreshed(lake, universe, synthetic):
    aapl = universe.select(["AAPL"])
    run_ingest(synthetic, aapl, start=ts("2025-01-01"), end=ts("2025-07-01"), lake=lake)
    first = lake.read_table(TableKey("earnings", "synthetic"))
    run_ingest(synthetic, aapl, start=ts("2025-06-01"), end=ts("2025-06-10"), lake=lake)
    second = lake.read_table(TableKey("earnings", "synthetic"))
    pd.testing.assert_frame_equal(first, second)  # nothing lost, nothing duplicated
    expected = synthetic.earnings_dates(universe["AAPL"], ts("2025-01-01"), ts("2025-12-28"))
    assert list(second.date) == expected


def test_failed_publication_rolls_back(monkeypatch, lake, universe, synthetic):
    """The fourth move of a bar partition fails (disk full): the lake shows none of the run,
    and says why."""
    import os

    import arena.data.lake as lake_module

    sub = universe.select(["ETH"])
    run_ingest(synthetic, sub, start=START, end=ts("2025-10-20"), lake=lake)
    before = {k: lake.path(k).read_bytes() for k in lake.partitions()}
    real_replace, calls = os.replace, []

    def flaky_replace(src, dst):
        if "/bars/" in str(dst):  # the run's other files (its validation pages) move as well
            calls.append(dst)
            if len(calls) == 4:
                raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(lake_module.os, "replace", flaky_replace)
    with pytest.raises(IngestError, match="No space left") as err:
        run_ingest(synthetic, sub, start=START, end=END, lake=lake)
    monkeypatch.setattr(lake_module.os, "replace", real_replace)
    assert {k: lake.path(k).read_bytes() for k in lake.partitions()} == before
    assert err.value.manifest["status"] == "failed"
    assert "No space" in err.value.manifest["assets"]["ETH"]["reason"]
    assert not (lake.root / "staging").exists() or not any((lake.root / "staging").iterdir())


def test_no_daily_bar_from_an_incomplete_day(tmp_path, lake, universe, synthetic):
    drop = tmp_path / "drop"
    hours = synthetic.fetch_bars(universe["ETH"], "1h", START, END)
    holey = hours[(hours.timestamp < ts("2025-10-15 06:00")) | (hours.timestamp >= ts("2025-10-15 18:00"))]
    _write_drop(drop, "ETH", holey)
    with pytest.raises(IngestError):  # 12 missing hours fail the count of the base series ...
        run_ingest(FilesProvider(drop), universe.select(["ETH"]), start=START, end=END, lake=lake)
    daily = derive_complete(holey.reset_index(drop=True), "1h", "1d", "24/7")
    assert ts("2025-10-15") not in set(daily.timestamp)  # ... and no daily bar is made of half a day
    assert len(daily) == 20


def test_a_long_history_does_not_dilute_a_hole_in_new_bars(tmp_path, lake, universe, synthetic):
    eth = universe.select(["ETH"])
    run_ingest(synthetic, eth, start=ts("2024-10-01"), end=START, lake=lake)  # a year of history
    drop = tmp_path / "drop"
    week = synthetic.fetch_bars(universe["ETH"], "1h", START, END)
    _write_drop(drop, "ETH", week[week.timestamp >= ts("2025-10-09")])  # three days missing
    with pytest.raises(IngestError, match="ETH 1h"):
        run_ingest(FilesProvider(drop), eth, start=START, end=END, lake=lake)


def test_off_session_bars_fail_validation_with_a_manifest(tmp_path, lake, universe, synthetic):
    drop = tmp_path / "drop"
    hours = synthetic.fetch_bars(universe["AAPL"], "1h", START, END)
    saturday = hours.iloc[[0]].assign(timestamp=ts("2025-10-11 15:00"))
    _write_drop(drop, "AAPL", pd.concat([hours, saturday]).sort_values("timestamp"))
    with pytest.raises(IngestError, match="AAPL 1h") as err:
        run_ingest(FilesProvider(drop), universe.select(["AAPL"]), start=START, end=END, lake=lake)
    assert err.value.manifest["validation"]["success"] is False
    assert lake.partitions() == []


def test_date_labelled_daily_stock_files(tmp_path, lake, universe, synthetic):
    """A publisher's daily file labelled by date (as vendors export them) ingests cleanly."""
    drop = tmp_path / "drop" / "1d"
    drop.mkdir(parents=True)
    daily = synthetic.fetch_bars(universe["AAPL"], "1d", ts("2025-09-01"), END)
    dated = daily.assign(timestamp=daily.timestamp.dt.strftime("%Y-%m-%d"))
    dated.to_csv(drop / "AAPL.csv", index=False)
    run_ingest(FilesProvider(tmp_path / "drop", "1d"), universe.select(["AAPL"]),
               start=ts("2025-09-01"), end=END, lake=lake)
    pd.testing.assert_frame_equal(lake.read_bars(PartitionKey("files", "1d", "AAPL")), daily)
    weekly = lake.read_bars(PartitionKey("files", "1w", "AAPL"))
    assert weekly.timestamp.iloc[0] == ts("2025-09-02 13:30")  # Labor Day week opens Tuesday


def test_a_short_window_publishes_what_is_complete(lake, universe, synthetic):
    result = run_ingest(synthetic, universe.select(["ETH", "AAPL"]), start=ts("2025-10-06"),
                        end=ts("2025-10-10"), lake=lake)
    assert result.manifest["got"]["ETH"]["no_complete_bar_yet"] == ["1w"]
    assert {k.interval for k in lake.partitions()} == {"15m", "1h", "4h", "1d"}


def test_daily_runs_derive_the_same_bars_as_one_batch(tmp_path, universe, synthetic):
    """Day after day (cycles at 16:00, as a season replays), the lake equals one batch of the
    span: merged base bars, and every coarse bar derived only once complete."""
    from arena.data.lake import Lake

    sub = universe.select(["ETH", "AAPL"])
    end = START + pd.Timedelta(days=20, hours=16)
    batch, daily = Lake(tmp_path / "batch"), Lake(tmp_path / "daily")
    run_ingest(synthetic, sub, start=START, end=end, lake=batch, now=end)
    previous = START
    for at in pd.date_range(START + pd.Timedelta(days=9, hours=16), end, freq="1D"):
        run_ingest(synthetic, sub, start=previous, end=at, lake=daily, now=at)
        previous = at
    keys = batch.partitions()
    assert {k.interval for k in keys} == {"15m", "1h", "4h", "1d", "1w"}
    assert keys == daily.partitions()
    for key in keys:
        pd.testing.assert_frame_equal(daily.read_bars(key), batch.read_bars(key), obj=str(key))
