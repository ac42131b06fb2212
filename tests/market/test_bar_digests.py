"""The cycle and the monitor use no bar file they cannot prove whole (:mod:`arena.data.digests`):
a flipped byte in a daily partition, or a 15-minute partition deleted or changed after its
publication, makes its asset damaged in the cycle's market - named in the briefing and the
daily report, its price unused, refused by the engine as stale - and stops the live monitor
naming the file, where each was read silently before."""

from __future__ import annotations

import pandas as pd
import pytest

from arena.data.errors import DamagedFile
from arena.data.lake import MISSING_PROBLEM, Lake, PartitionKey
from arena.ledger.store import Ledger
from arena.market.briefing import build_market, market_damage
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.live.monitor import run_monitor
from arena.pipeline.season_config import load_season, season_contestants
from tests.conftest import ts
from tests.data.published import flip_in_a_float
from tests.market_lakes import (
    FRI,
    PROVIDER,
    flat_prompt,
    full_lake_copy,
    season_lake,
)

SOL_1D = PartitionKey(PROVIDER, "1d", "SOL")
SOL_15M = PartitionKey(PROVIDER, "15m", "SOL")
CHANGED = "its bytes changed since it was published"
HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: random, kind: house, strategy: random}\n")
MON = ts("2025-11-24 16:00")


@pytest.fixture
def lake(tmp_path, tmp_path_factory, universe) -> Lake:
    return full_lake_copy(tmp_path_factory, universe, tmp_path / "lake")


def test_a_flipped_byte_in_a_daily_low_makes_its_asset_damaged(lake, universe):
    assert build_market(lake, PROVIDER, universe, FRI).damaged == {}
    before_fri = len(lake.read_bars(SOL_1D)) - len(lake.read_bars(SOL_1D, start=FRI)) - 3
    _, low, read = flip_in_a_float(lake, SOL_1D, "low", before_fri)
    assert read != low and abs(read / low - 1) < 0.01  # still a plausible low
    market = build_market(lake, PROVIDER, universe, FRI)
    assert list(market.damaged) == ["SOL"]
    assert market.damaged["SOL"].startswith(f"{SOL_1D} cannot be read ({CHANGED} (SHA-256 ")
    assert "SOL" in market.untradeable and "SOL" not in market.screen.selected
    assert f"UNUSABLE market data (treated as stale): SOL ({SOL_1D} cannot be read" \
        in flat_prompt(market)
    assert market_damage(lake, PROVIDER, universe, FRI) == market.damaged  # the daily report's


@pytest.mark.parametrize("how", ["deleted", "changed"])
def test_a_deleted_or_changed_15m_partition_leaves_its_price_unused(lake, universe, how):
    assert "SOL" in build_market(lake, PROVIDER, universe, FRI).prices
    if how == "deleted":
        lake.path(SOL_15M).unlink()
        said = f"{SOL_15M} is damaged: {MISSING_PROBLEM}"
    else:
        flip_in_a_float(lake, SOL_15M, "low", 10)
        said = f"{SOL_15M} cannot be read ({CHANGED}"
    market = build_market(lake, PROVIDER, universe, FRI)
    assert list(market.damaged) == ["SOL"] and market.damaged["SOL"].startswith(said)
    assert "SOL" not in market.prices  # never a price from its hourly bars instead
    assert "SOL" in market.untradeable
    assert market_damage(lake, PROVIDER, universe, FRI) == market.damaged


@pytest.mark.parametrize("how", ["deleted", "changed"])
def test_the_live_monitor_stops_at_a_deleted_or_changed_15m_file_of_a_held_asset(
        tmp_path_factory, tmp_path, universe, how):
    season = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE,
                         start="2025-11-24", days=3)
    contestants, _ = season_contestants(season, {})
    play_season_cycle(season, load_season(season), contestants, MON, now=MON)
    held = sorted({s for c in contestants for s in Ledger(season).portfolio(c.name).positions})
    assert held, "the house contestants opened no position on Monday"
    key = PartitionKey(PROVIDER, "15m", held[0])
    if how == "deleted":
        season.path(key).unlink()
    else:
        flip_in_a_float(season, key, "high", len(season.read_bars(key)) - 8)  # in the window
    with pytest.raises(DamagedFile, match=f"interval=15m/symbol={held[0]}/data.parquet is "
                                          f"damaged: ({MISSING_PROBLEM}|{CHANGED})"):
        run_monitor(season, load_season(season), contestants, MON + pd.Timedelta(hours=3),
                    now=ts("2026-06-01"))
    assert list(Ledger(season).monitor_records()) == []  # nothing recorded from it
