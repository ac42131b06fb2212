"""Incremental ingest: a run judges what it adds as the whole series would, sees restatements
in the re-fetched overlap, holds suspects at the newest bar, and uses the lake's benchmark."""

import json

import numpy as np
import pandas as pd
import pytest

from arena.data.ingest import (
    HELD,
    RESTATEMENT_OVERLAP,
    IngestError,
    build_partitions,
    fetch_asset,
    run_ingest,
)
from arena.data.lake import PartitionKey
from arena.data.providers.synthetic import SyntheticProvider
from arena.data.validation import stats as cs
from arena.data.validation.config import ValidationConfig, Window
from tests.conftest import ts
from tests.data.test_ingest import _bytes

START = ts("2025-08-01")
STORED_END = ts("2025-10-01")
PRICES = ["open", "high", "low", "close"]


class _Edited(SyntheticProvider):
    """The synthetic market as a vendor serving it edited: ``edit(symbol, bars)`` -> bars."""

    def __init__(self, edit, served_from: pd.Timestamp | None = None) -> None:
        super().__init__()
        self.edit, self.served_from = edit, served_from

    def fetch_bars(self, asset, interval, start, end):
        if self.served_from is not None:  # a vendor whose history starts late
            start = max(start, self.served_from)
        return self.edit(asset.symbol, super().fetch_bars(asset, interval, start, end))


def _scaled(symbol: str, factor: float, when=None, until=None):
    """Prices of ``symbol`` times ``factor`` in ``[when, until)``; the bar at ``when`` trades
    its trailing median volume (an ordinary bar: no volume escape)."""
    def edit(sym, bars):
        if sym != symbol:
            return bars
        bars = bars.copy()
        rows = np.ones(len(bars), dtype=bool)
        if when is not None:
            rows &= (bars["timestamp"] >= when).to_numpy()
        if until is not None:
            rows &= (bars["timestamp"] < until).to_numpy()
        bars.loc[rows, PRICES] *= factor
        at = np.flatnonzero((bars["timestamp"] == when).to_numpy())
        if len(at) and at[0] >= 20:
            bars.loc[at[0], "volume"] = bars["volume"].iloc[at[0] - 20:at[0]].median()
        return bars
    return edit


def test_an_incremental_run_judges_its_bars_as_the_whole_series_would(lake, universe, synthetic):
    sub = universe.select(["ETH", "AAPL", "BTC", "SPY"])
    run_ingest(synthetic, sub, start=START, end=STORED_END, lake=lake, now=STORED_END)
    end = STORED_END + pd.Timedelta(days=1, hours=16)
    config = ValidationConfig()
    for symbol in ("ETH", "AAPL"):
        asset = universe[symbol]
        fetched = fetch_asset(synthetic, asset, "15m", STORED_END, end, lake=lake)
        assert fetched.fetched_from <= STORED_END - RESTATEMENT_OVERLAP
        assert fetched.restatement is None
        part = build_partitions(lake, "synthetic", asset, fetched, "15m")
        for key, (judged, since) in part.judge.items():
            whole = part.frames[key]
            if asset.is_crypto and key.interval in ("15m", "1h"):  # a short slice
                assert len(judged) < len(whole) / 5, key
            window = Window(symbol, key.interval, asset.calendar, judged_from=since)
            inc = cs.prepare(judged.assign(symbol=symbol, interval=key.interval), [window],
                             as_of=None, config=config)[0]
            full = cs.prepare(whole.assign(symbol=symbol, interval=key.interval),
                              [Window(symbol, key.interval, asset.calendar)], as_of=None,
                              config=config)[0]
            assert inc[cs.JUMP_SIGMAS].notna().sum() > 0 or key.interval in ("1d", "1w")
            mine = inc[inc["timestamp"] >= since].reset_index(drop=True)
            theirs = full[full["timestamp"] >= since].reset_index(drop=True)
            for column in (cs.JUMP_SIGMAS, cs.VOLUME_RATIO, cs.JUMP_REVERTED, cs.OVERNIGHT):
                pd.testing.assert_series_equal(mine[column], theirs[column], obj=f"{key} {column}")
            # the context before the first new bar is not judged again
            assert inc.loc[inc["timestamp"] < since, cs.JUMP_SIGMAS].isna().all()


def test_a_restatement_republishes_the_whole_series(lake, universe, synthetic):
    """A 2:1 split the vendor applied to the history it serves: the overlap shows it, the run
    fetches the vendor's whole series, which passes on its own, and replaces the stored one."""
    sub = universe.select(["AAPL", "SPY"])
    run_ingest(synthetic, sub, start=START, end=STORED_END, lake=lake, now=STORED_END)
    end = STORED_END + pd.Timedelta(days=3)
    result = run_ingest(_Edited(_scaled("AAPL", 0.5)), sub, start=STORED_END, end=end,
                        lake=lake, now=end)
    restated = result.manifest["restated"]
    assert set(restated) == {"AAPL"}
    assert restated["AAPL"]["outcome"] == "published"
    assert restated["AAPL"]["close_ratio_min"] == pytest.approx(0.5)
    assert restated["AAPL"]["close_ratio_max"] == pytest.approx(0.5)
    assert restated["AAPL"]["first"] >= STORED_END - RESTATEMENT_OVERLAP
    for interval in ("15m", "1d"):
        stored = lake.read_bars(PartitionKey("synthetic", interval, "AAPL"))
        direct = synthetic.fetch_bars(universe["AAPL"], interval, START, end)
        direct = direct[direct.timestamp.isin(stored.timestamp)].reset_index(drop=True)
        assert stored.timestamp.iloc[0] < STORED_END - pd.Timedelta(days=30)  # whole history
        np.testing.assert_allclose(stored["close"], 0.5 * direct["close"], rtol=1e-12)
    on_disk = json.loads(result.manifest_path.read_text())
    assert on_disk["restated"]["AAPL"]["bars_differing"] > 0


def test_a_restatement_the_vendor_cannot_serve_whole_is_quarantined(lake, universe, synthetic):
    sub = universe.select(["AAPL", "SPY"])
    run_ingest(synthetic, sub, start=START, end=STORED_END, lake=lake, now=STORED_END)
    before = _bytes(lake, "AAPL")
    end = STORED_END + pd.Timedelta(days=3)
    short_history = _Edited(_scaled("AAPL", 0.5), served_from=STORED_END - pd.Timedelta(days=20))
    with pytest.raises(IngestError, match=r"failed for AAPL \(published SPY\)") as err:
        run_ingest(short_history, sub, start=STORED_END, end=end, lake=lake, now=end)
    assert _bytes(lake, "AAPL") == before
    aapl = err.value.manifest["assets"]["AAPL"]
    assert aapl["status"] == "quarantined"
    assert "restated by the vendor" in aapl["reason"] and "serves bars from" in aapl["reason"]
    assert err.value.manifest["restated"]["AAPL"]["outcome"] == "quarantined"


def test_only_a_full_run_sees_a_correction_older_than_the_overlap(lake, universe, synthetic):
    sub = universe.select(["ETH", "BTC"])
    run_ingest(synthetic, sub, start=START, end=STORED_END, lake=lake, now=STORED_END)
    corrected = ts("2025-09-10 12:00")
    vendor = _Edited(_scaled("ETH", 1.001, corrected, corrected + pd.Timedelta(minutes=15)))
    end = STORED_END + pd.Timedelta(days=1)
    quick = run_ingest(vendor, sub, start=STORED_END, end=end, lake=lake, now=end)
    assert quick.manifest["restated"] == {}
    full = run_ingest(vendor, sub, start=end, end=end + pd.Timedelta(days=1), lake=lake,
                      now=end + pd.Timedelta(days=1), full=True)
    assert full.manifest["asked"]["full"] is True
    eth = full.manifest["restated"]["ETH"]
    assert eth["bars_differing"] == 1 and eth["first"] == corrected
    assert eth["outcome"] == "published"
    bars = lake.read_bars(PartitionKey("synthetic", "15m", "ETH")).set_index("timestamp")
    direct = synthetic.fetch_bars(universe["ETH"], "15m", corrected, corrected + pd.Timedelta(hours=1))
    assert bars.loc[corrected, "close"] == pytest.approx(1.001 * direct["close"].iloc[0], rel=1e-12)


@pytest.mark.parametrize("spike", [True, False], ids=["spike reverts", "level shift stays"])
def test_a_jump_at_the_newest_bar_is_held_and_judged_again(lake, universe, synthetic, spike):
    """An 8% move on ordinary volume at the newest 15m bar: reversion cannot be seen yet, so
    ETH's new bars wait in quarantine ("held"); the next run judges them with later bars."""
    sub = universe.select(["ETH", "BTC", "SOL"])
    run_ingest(synthetic, sub, start=START, end=STORED_END, lake=lake, now=STORED_END)
    when = STORED_END + pd.Timedelta(hours=10)
    vendor = _Edited(_scaled("ETH", 1.08, when, when + pd.Timedelta(minutes=15) if spike else None))
    first_end = when + pd.Timedelta(minutes=15)  # the shifted bar is the newest
    before = _bytes(lake, "ETH")
    with pytest.raises(IngestError, match=r"failed for ETH") as err:
        run_ingest(vendor, sub, start=STORED_END, end=first_end, lake=lake, now=first_end)
    eth = err.value.manifest["assets"]["ETH"]
    assert eth["status"] == HELD and "suspect at the newest bar" in eth["reason"]
    assert err.value.manifest["held"] == ["ETH"]
    assert _bytes(lake, "ETH") == before
    # the next run fetches from the last stored bar, so the held bars are judged again
    later = when + pd.Timedelta(hours=4)
    if spike:
        result = run_ingest(vendor, sub, start=first_end, end=later, lake=lake, now=later)
        assert result.manifest["assets"]["ETH"]["status"] == "published"
        stored = lake.read_bars(PartitionKey("synthetic", "15m", "ETH"))
        assert stored.timestamp.iloc[-1] == later - pd.Timedelta(minutes=15)
    else:
        with pytest.raises(IngestError) as err:
            run_ingest(vendor, sub, start=first_end, end=later, lake=lake, now=later)
        eth = err.value.manifest["assets"]["ETH"]
        assert eth["status"] == "quarantined" and "ETH 15m: suspect" not in eth["reason"]
        assert f"first at {when:%Y-%m-%d %H:%M} UTC" in eth["reason"]
        assert _bytes(lake, "ETH") == before


def test_a_run_of_one_symbol_judges_it_against_the_stored_benchmark(lake, universe, synthetic):
    run_ingest(synthetic, universe.select(["BTC", "ETH"]), start=START, end=STORED_END,
               lake=lake, now=STORED_END)
    end = STORED_END + pd.Timedelta(days=1)
    run_ingest(synthetic, universe.select(["BTC"]), start=STORED_END, end=end, lake=lake, now=end)
    result = run_ingest(synthetic, universe.select(["ETH"]), start=STORED_END, end=end,
                        lake=lake, now=end)
    report = json.loads((lake.root / "validation" / result.run_id /
                         "candle_validation.json").read_text())
    splice = [r for r in report["results"] if r["check"] == "splice" and r["interval"] == "15m"]
    assert splice and splice[0]["observed"]["market"] == "market series"


class _Dividends(SyntheticProvider):
    """The synthetic market with a vendor reporting one AAPL dividend and one split."""

    def fetch_events(self, asset, start, end):
        rows = [(ts("2025-09-29"), "dividend", 0.26), (ts("2025-09-30"), "split", 4.0)]
        frame = pd.DataFrame(rows, columns=["timestamp", "kind", "value"])
        frame["timestamp"] = frame["timestamp"].dt.as_unit("us")
        keep = (frame["timestamp"] >= start) & (frame["timestamp"] < end)
        return frame[keep & (asset.symbol == "AAPL")].reset_index(drop=True)


def test_splits_and_dividends_are_stored_as_events_once(lake, universe):
    from arena.data.lake import TableKey

    sub = universe.select(["AAPL", "SPY"])
    run_ingest(_Dividends(), sub, start=START, end=STORED_END, lake=lake, now=STORED_END)
    end = STORED_END + pd.Timedelta(days=1)
    run_ingest(_Dividends(), sub, start=STORED_END, end=end, lake=lake, now=end)  # overlaps
    events = lake.read_table(TableKey("events", "synthetic", "AAPL"))
    assert events[["kind", "value"]].to_dict("records") == [
        {"kind": "dividend", "value": 0.26}, {"kind": "split", "value": 4.0}]
    assert not lake.path(TableKey("events", "synthetic", "SPY")).exists()
