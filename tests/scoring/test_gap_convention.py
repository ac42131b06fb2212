"""Which moves a zero-skill player's daily position earns (issue 45, item 1): the overnight and
weekend gaps go to the position of the day before - the day's draw is held from the close of
the day's first bar, and no bar of the new day has closed when its gap is printed.

The paths are tiny and hand-built, so each player's return is written out by hand from its own
draws (:func:`~arena.scoring.asset_luck.player_positions`): a stock's last two hourly bars of
Friday 21 November 2025 and its first two of Monday 24 November, flat on Friday, +10% from
Friday's last close to Monday's first close (the weekend gap and Monday's first hour: Monday's
open is not a close of the grid), +10% again in Monday's second hour.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.scoring.asset_luck import (
    decision_steps,
    luck,
    opening_path,
    player_positions,
    zero_skill_returns,
)
from tests.conftest import ts

PLAYERS = 64
# bar open times (UTC): Friday 19:30 and 20:30 (closes with the session at 21:00), Monday
# 14:30 and 15:30
OPENS = pd.DatetimeIndex([ts("2025-11-21 19:30"), ts("2025-11-21 20:30"),
                          ts("2025-11-24 14:30"), ts("2025-11-24 15:30")])
CLOSES = pd.Series([100.0, 100.0, 110.0, 121.0], index=OPENS)


def _draws(steps: np.ndarray) -> np.ndarray:
    """Every player's position at each point of the path (players x points)."""
    return np.stack([player_positions(steps, i) for i in range(PLAYERS)])


def test_the_weekend_gap_is_earned_by_fridays_position():
    steps = decision_steps(OPENS, "1d", "XNYS")
    assert steps.tolist() == [0, 0, 1, 1]  # Friday's session, then Monday's
    got = luck(CLOSES, players=PLAYERS, calendar="XNYS").returns
    w = _draws(steps)
    friday, monday = w[:, 1], w[:, 3]  # the draws held at Friday's last close and Monday's
    np.testing.assert_allclose(got, (1 + 0.1 * friday) * (1 + 0.1 * monday) - 1,
                               rtol=0, atol=1e-13)
    # the other reading - Monday's draw held from Friday's last close - gives other numbers
    other = (1 + 0.1 * monday) * (1 + 0.1 * monday) - 1
    assert not np.allclose(got, other, rtol=0, atol=1e-6)


def test_a_path_that_opens_at_its_first_bar_holds_the_first_draw_from_the_open():
    """A single-asset track's window starts at its first bar's open (95 here): the first day's
    draw earns that bar's own move too, and the gap still goes to Friday's draw."""
    prices, steps = opening_path(CLOSES, "1d", "XNYS", opening=95.0)
    assert prices.tolist() == [95.0, 100.0, 100.0, 110.0, 121.0]
    assert steps.tolist() == [0, 0, 0, 1, 1]
    got = luck(CLOSES, players=PLAYERS, calendar="XNYS", opening=95.0)
    assert (got.bars, got.steps) == (4, 2)
    w = _draws(steps)
    friday, monday = w[:, 0], w[:, 3]
    expected = (1 + friday * (100 / 95 - 1)) * (1 + 0.1 * friday) * (1 + 0.1 * monday) - 1
    np.testing.assert_allclose(got.returns, expected, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(
        got.returns, zero_skill_returns(prices, steps, players=PLAYERS))


def test_a_player_stepped_by_the_bar_decides_at_the_opening_too():
    prices, steps = opening_path(CLOSES, "bar", "XNYS", opening=95.0)
    assert steps.tolist() == [0, 1, 2, 3, 4] and prices[0] == 95.0
    assert luck(CLOSES, players=PLAYERS, step="bar", opening=95.0).steps == 5
    with pytest.raises(ValueError, match="unknown step"):
        opening_path(CLOSES, "1w", "XNYS", opening=95.0)
