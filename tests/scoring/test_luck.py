"""Zero-skill players: agreement with the plain scorer, chunk invariance, calibration, clocks."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.data.ingest import run_ingest
from arena.data.lake import PartitionKey
from arena.market.clocks import asset_clock, infer_grid
from arena.scoring.asset_luck import BLOCK, decision_steps, luck, score_player, zero_skill_returns
from arena.scoring.scorer import ScorerInputError, percentile
from tests.conftest import ts
from tests.data.published import remove_partitions

GOOG = Path(__file__).resolve().parents[1] / "fixtures" / "prices" / "GOOG.csv"


@pytest.fixture(scope="module")
def eth_hourly(synthetic, universe):
    bars = synthetic.fetch_bars(universe["ETH"], "1h", ts("2025-06-01"), ts("2025-10-01"))
    return bars.set_index("timestamp")["close"]


@pytest.fixture(scope="module")
def goog_daily():
    goog = pd.read_csv(GOOG, parse_dates=["timestamp"])
    return pd.Series(goog["close"].to_numpy(), index=pd.DatetimeIndex(goog["timestamp"]).tz_localize("UTC"))


def test_vectorised_players_equal_the_plain_scorer(eth_hourly):
    steps = decision_steps(eth_hourly.index, "1d")
    returns = zero_skill_returns(eth_hourly.to_numpy(), steps, players=3000, seed=11,
                                 cost_rate=0.0006)
    for player in (0, 1, BLOCK - 1, BLOCK, 2999):
        assert np.isclose(returns[player], score_player(eth_hourly.to_numpy(), steps, player,
                                                        seed=11, cost_rate=0.0006), rtol=1e-11)


def test_deterministic_whatever_the_chunk_size(eth_hourly):
    steps = decision_steps(eth_hourly.index, "1d")
    runs = [zero_skill_returns(eth_hourly.to_numpy(), steps, players=5000, seed=3,
                               cost_rate=0.0006, chunk_players=c) for c in (BLOCK, 3 * BLOCK, 10**6)]
    assert all(np.array_equal(runs[0], r) for r in runs[1:])
    fewer = zero_skill_returns(eth_hourly.to_numpy(), steps, players=1500, seed=3, cost_rate=0.0006)
    assert np.array_equal(fewer, runs[0][:1500])  # player i is player i, however many play


@pytest.mark.parametrize("path", ["eth_hourly", "goog_daily"])
def test_calibration_fresh_players_land_at_the_median(path, request):
    closes = request.getfixturevalue(path)
    ruler = luck(closes, players=20_000, seed=1, cost_rate=0.0006)
    fresh = luck(closes, players=2_000, seed=2, cost_rate=0.0006).returns
    median_p = float(np.median([percentile(x, ruler.returns) for x in fresh]))
    assert 0.47 <= median_p <= 0.54
    assert ruler.quantile(0.05) < ruler.quantile(0.5) < ruler.ceiling


def test_daily_steps_follow_the_calendars():
    hours = pd.date_range("2025-11-03 21:00", periods=6, freq="1h", tz="UTC")
    assert list(decision_steps(hours, "1d")) == [0, 0, 0, 1, 1, 1]  # new UTC day at 00:00
    sessions = pd.DatetimeIndex([ts("2025-11-03 19:30"), ts("2025-11-03 20:30"),
                                 ts("2025-11-04 14:30")])
    assert list(decision_steps(sessions, "1d", "XNYS")) == [0, 0, 1]
    assert list(decision_steps(sessions, "bar", "XNYS")) == [0, 1, 2]


def test_costs_and_draws():
    closes = np.full(50, 100.0)
    steps = np.arange(50)
    flat = zero_skill_returns(closes, steps, players=100, seed=0, cost_rate=0.001)
    assert (flat < 0).all()  # a flat path only costs
    signs = zero_skill_returns(closes, steps, players=100, seed=0, draw="sign")
    assert (signs == 0).all()


def test_clock_prefers_hourly_bars_and_falls_back_to_daily(lake, universe, synthetic):
    run_ingest(synthetic, universe.select(["ETH", "AAPL"]), start=ts("2025-10-06"),
               end=ts("2025-10-20"), lake=lake)
    clock = asset_clock(lake, "synthetic", universe["AAPL"], ts("2025-10-06"), ts("2025-10-18"))
    assert clock.grid == "1h" and len(clock.bars) == 10 * 7 and clock.periods_per_year == 1764
    remove_partitions(lake, [PartitionKey("synthetic", "1h", "ETH")])
    daily = asset_clock(lake, "synthetic", universe["ETH"], ts("2025-10-06"), ts("2025-10-18"))
    assert daily.grid == "1d" and len(daily.bars) == 12
    assert infer_grid(pd.DatetimeIndex(clock.bars.timestamp)) == ("XNYS", "1h")
    assert infer_grid(pd.DatetimeIndex(daily.bars.timestamp)) == ("24/7", "1d")


def test_negative_step_numbers_are_refused():
    with pytest.raises(ScorerInputError, match="non-negative"):
        zero_skill_returns(np.full(5, 100.0), np.array([0, 0, -1, 1, 1]), players=10)
