"""A derived interval that disagrees with its base bars is found, named and derived again.

The lake a torn publication left before journals existed: BTC's 15m bars of the next run (ten
days more) in place, its 1h, 4h, 1d and 1w bars of the previous one (they stop ten days short:
more than the eight days of base bars a run derives again, so a later run left a hole). The check names
each stale interval and changes nothing; a repair, or the next ingest run over the same window
(no new base bar: before, it derived nothing), derives them again from the base bars.
"""

from __future__ import annotations

import os
import shutil

import pandas as pd
import pytest

from arena.data.ingest import build_partitions, fetch_asset, run_ingest
from arena.data.lake import Lake, PartitionKey
from arena.data.providers.synthetic import SyntheticProvider
from arena.data.recovery import DERIVED, UNCHECKED, check_publications
from tests.conftest import ts
from tests.data.published import forget_digests, publish_frames

STORED = (ts("2025-10-15"), ts("2025-11-03"))
NEXT = (ts("2025-11-03"), ts("2025-11-13"))  # longer than the 8 days a run derives again
NOW = ts("2026-01-01")
FOUR = PartitionKey("synthetic", "4h", "BTC")


@pytest.fixture(scope="module")
def torn_lake(tmp_path_factory, universe) -> Lake:
    """BTC over ``STORED``, then only the 15m file of the next run's publication moved into
    place (what a kill after the first rename left before journals, and before digests: no
    record names BTC's files)."""
    lake = Lake(tmp_path_factory.mktemp("torn") / "template")
    run_ingest(SyntheticProvider(), universe.select(["BTC"]), start=STORED[0], end=STORED[1],
               lake=lake, now=NOW)
    fetched = fetch_asset(SyntheticProvider(), universe["BTC"], "15m", *NEXT, lake=lake)
    part = build_partitions(lake, "synthetic", universe["BTC"], fetched, "15m")
    base = PartitionKey("synthetic", "15m", "BTC")
    staged = lake.stage("killed", {base: part.frames[base]}, group="BTC")
    os.replace(staged[base], lake.path(base))
    shutil.rmtree(lake.root / "staging")
    forget_digests(lake, lake.partitions())
    return lake


def _copy(lake: Lake, dest) -> Lake:
    shutil.copytree(lake.root, dest, symlinks=True)
    return Lake(dest)


def _market_bytes(lake: Lake) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted((lake.root / "bars").rglob("*.parquet"))}


def _oracle_4h(base: pd.DataFrame) -> pd.DataFrame:
    """4h bars of 24/7 15m bars by plain pandas: complete groups of 16 only."""
    groups = base.set_index("timestamp").resample("4h")
    bars = groups.agg({"open": "first", "high": "max", "low": "min", "close": "last",
                       "volume": "sum"})
    return bars[groups.size() == 16].reset_index()


def _assert_4h_agrees(lake: Lake) -> None:
    base = lake.read_bars(PartitionKey("synthetic", "15m", "BTC"))
    pd.testing.assert_frame_equal(lake.read_bars(FOUR), _oracle_4h(base), check_dtype=False)


def test_the_check_names_each_stale_interval_and_changes_nothing(torn_lake, tmp_path, universe):
    lake = _copy(torn_lake, tmp_path / "lake")
    before = _market_bytes(lake)
    problems = check_publications(lake, universe=universe)
    tail = "bars missing from 2025-11-03 00:00 UTC on (its 15m bars hold them); repair: " \
        "derive it again from its 15m bars"
    assert [p.describe() for p in problems] == [
        f"synthetic/{interval}/BTC: derived interval: {n} {tail}"
        for interval, n in (("1h", 240), ("4h", 60), ("1d", 10), ("1w", 1))]
    assert _market_bytes(lake) == before


def test_a_repair_derives_each_stale_interval_again(torn_lake, tmp_path, universe):
    lake = _copy(torn_lake, tmp_path / "lake")
    repaired = check_publications(lake, repair=True, universe=universe)
    assert [p.subject for p in repaired if p.repaired] == [
        "synthetic/1h/BTC", "synthetic/4h/BTC", "synthetic/1d/BTC", "synthetic/1w/BTC"]
    assert "repaired: derived again from its base bars and published" in repaired[0].describe()
    _assert_4h_agrees(lake)
    assert check_publications(lake, universe=universe) == []
    assert not (lake.root / "staging").exists() or not any((lake.root / "staging").iterdir())


def test_the_next_run_over_the_same_window_derives_the_stale_tail_again(torn_lake, tmp_path,
                                                                        universe):
    """Before, the run derived the last eight days again and left a two-day hole in 4h."""
    lake = _copy(torn_lake, tmp_path / "lake")
    run_ingest(SyntheticProvider(), universe.select(["BTC"]), start=NEXT[0], end=NEXT[1],
               lake=lake, now=NOW)
    _assert_4h_agrees(lake)
    assert check_publications(lake, universe=universe) == []


def test_a_derived_bar_with_other_values_is_named_and_derived_again(torn_lake, tmp_path,
                                                                   universe):
    lake = _copy(torn_lake, tmp_path / "lake")
    check_publications(lake, repair=True, universe=universe)
    four = lake.read_bars(FOUR)
    four.loc[3, "close"] = (four.loc[3, "low"] + four.loc[3, "high"]) / 2  # still a bar
    assert four.loc[3, "close"] != lake.read_bars(FOUR).loc[3, "close"]
    publish_frames(lake, {FOUR: four})  # published so: its digest names these bars
    problems = check_publications(lake, universe=universe)
    assert [p.describe() for p in problems] == [
        f"synthetic/4h/BTC: derived interval: 1 bars differ from their 15m bars, first "
        f"{four.timestamp[3]:%Y-%m-%d %H:%M} UTC; repair: derive it again from its 15m bars"]
    check_publications(lake, repair=True, universe=universe)
    _assert_4h_agrees(lake)


def test_a_series_whose_base_no_manifest_names_is_reported_not_checked(torn_lake, tmp_path,
                                                                      universe):
    lake = _copy(torn_lake, tmp_path / "lake")
    shutil.rmtree(lake.root / "manifests")
    problems = check_publications(lake, universe=universe)
    assert [(p.kind, p.subject) for p in problems] == [(UNCHECKED, "synthetic/BTC")]
    assert "no ingest manifest names the base interval" in problems[0].describe()
    given = check_publications(lake, universe=universe, bases={"synthetic": "15m"})
    assert {p.kind for p in given} == {DERIVED}


def test_a_healthy_lake_of_stocks_and_crypto_has_no_problem(lake, universe):
    sub = universe.select(["ETH", "AAPL", "SPY"])
    run_ingest(SyntheticProvider(), sub, start=ts("2025-10-06"), end=ts("2025-10-20"),
               lake=lake, now=NOW)
    run_ingest(SyntheticProvider(), sub, start=ts("2025-10-20"), end=ts("2025-10-24 18:00"),
               lake=lake, now=NOW)
    assert check_publications(lake, universe=universe) == []
