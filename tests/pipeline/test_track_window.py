"""When a single-asset track's returns start, and when a position starts (issue 45, item 1).

A hand-built lake holds three hourly ETH bars from the season's first cycle, Monday 24 November
2025 16:00 UTC: opens 100, 101, 103 and closes 101, 103, 102. The window's path is 100 (the
first bar's open, at 16:00), 101 (17:00), 103 (18:00), 102 (19:00): returns start an hour after
the open, with the first bar's own move, as the contest's documents say - not a bar later.

A position starts at the first point of that path at or after its receipt, to the nanosecond:
received exactly at a close it is held from that close; a nanosecond later, from the next.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.data.lake import Lake, PartitionKey
from arena.pipeline.season_tables import asset_tracks
from arena.scoring.asset_luck import luck
from arena.scoring.scorer import COST_RATES
from tests.conftest import ts

START = ts("2025-11-24 16:00")
HOUR = pd.Timedelta(hours=1)
NS = pd.Timedelta(1, "ns")
END = START + 3 * HOUR
RATE = COST_RATES["crypto"]
OPENS, CLOSES = [100.0, 101.0, 103.0], [101.0, 103.0, 102.0]


@pytest.fixture(scope="module")
def hand_built(tmp_path_factory) -> Lake:
    """The three bars, written through the lake's own staging and publication."""
    lake = Lake(tmp_path_factory.mktemp("track_window"))
    times = pd.date_range(START, periods=3, freq="1h").as_unit("us")
    frame = pd.DataFrame({"timestamp": times, "open": OPENS, "high": [101.5, 103.5, 103.5],
                          "low": [99.5, 100.5, 101.5], "close": CLOSES, "volume": 1.0})
    key = PartitionKey("synthetic", "1h", "ETH")
    lake.publish("hand", lake.stage("hand", {key: frame}))
    return lake


def _rows(lake: Lake, universe, tracks: dict) -> dict[str, dict]:
    return {r["entrant"]: r for r in asset_tracks(lake, "synthetic", universe["ETH"], START,
                                                  END, tracks)}


def test_returns_start_with_the_first_bars_move(hand_built, universe):
    """Long 1.0 from before the season: 102 / 100 - 1 = +2% less the one entry fee, paid at
    the opening; the first bar's close alone would give 102 / 101 - 1."""
    rows = _rows(hand_built, universe, {"early": [(START - HOUR, {"ETH": 1.0})],
                                        "short": [(START - HOUR, {"ETH": -1.0})]})
    early, short = rows["early"], rows["short"]
    assert (early["status"], early["grid"], early["bars"]) == ("scored", "1h", 3)
    assert early["return"] == pytest.approx(0.9994 * 1.02 - 1, rel=1e-12)  # +1.9388%
    assert early["return"] == pytest.approx(0.019388, abs=1e-9)
    assert (early["turnover"], early["coverage"]) == (1.0, 1.0)
    assert early["fees"] == pytest.approx(RATE, rel=1e-12)
    # short: -1% over the first hour, then -1.98%, then +0.97% (each on the equity so far)
    by_hand = (1 - RATE) * (1 - 1 / 100) * (1 - 2 / 101) * (1 + 1 / 103) - 1
    assert short["return"] == pytest.approx(by_hand, rel=1e-12)
    # the zero-skill players are on the same path: the same opening, one draw for the day
    players = luck(pd.Series(CLOSES, index=pd.date_range(START, periods=3, freq="1h")),
                   players=early["players"], cost_rate=RATE, opening=OPENS[0])
    assert early["ceiling"] == pytest.approx(players.ceiling, rel=1e-12)
    assert (early["percentile"], early["rank_score"]) == players.place(early["return"])
    below = np.count_nonzero(players.returns < early["return"]) / players.players
    assert below <= early["percentile"] <= below + 1 / players.players


@pytest.mark.parametrize(("received", "moves", "expected"), [
    # at or before the opening: all three moves
    (START, 3, 0.9994 * 102 / 100 - 1),
    # a nanosecond after the opening, and a nanosecond before the first close: from 17:00
    (START + NS, 2, 0.9994 * 102 / 101 - 1),
    (START + HOUR - NS, 2, 0.9994 * 102 / 101 - 1),
    # exactly at the first close (17:00): held from that close, it knows nothing after it
    (START + HOUR, 2, 0.9994 * 102 / 101 - 1),
    # a nanosecond after it: from the next close (18:00)
    (START + HOUR + NS, 1, 0.9994 * 102 / 103 - 1),
])
def test_a_position_starts_at_the_first_close_at_or_after_its_receipt(
        hand_built, universe, received, moves, expected):
    [row] = _rows(hand_built, universe, {"alice": [(received, {"ETH": 1.0})]}).values()
    assert row["status"] == "scored"
    assert row["coverage"] == pytest.approx(moves / 3)
    assert row["return"] == pytest.approx(expected, rel=1e-12)


def test_a_position_received_at_the_last_close_but_one_earns_the_last_move_and_later_none(
        hand_built, universe):
    rows = _rows(hand_built, universe, {"on-time": [(START + 2 * HOUR, {"ETH": -1.0})],
                                        "late": [(START + 2 * HOUR + NS, {"ETH": -1.0})]})
    assert rows["on-time"]["return"] == pytest.approx(0.9994 * (1 + 1 / 103) - 1, rel=1e-12)
    assert (rows["late"]["status"], rows["late"]["return"]) == ("no_position", None)
