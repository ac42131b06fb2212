"""The splice check on real daily indices validated alone (no market series): what follows a
jump and what the jump's own bar traded tell a crash from a splice.

A crash starts the volatility that follows it; a splice is a level shift the series then
carries calmly. A genuine move is made in the session; a splice stitched at a bar boundary
shifts a whole, ordinary bar. Fixtures: ``tests/fixtures/prices/SP500_1d.csv.gz`` and
``NASDAQ_1d.csv.gz`` (1999-2018, from the ``arch`` package: see the README beside them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.core.sessions import CRYPTO, NYSE
from arena.data.validation import stats as cs
from arena.data.validation.checks import (
    ValidationConfig,
    Window,
    load_price_file,
    validate_bars,
    validate_file,
)
from tests.data.test_validation import (
    ETH_AS_OF,
    ETH_TIMES,
    check,
    flagged,
    make_bars,
    run,
    scale_prices,
    shift_from,
    splice_frame,
    ts,
)

PRICES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
INDICES = {"SP500": PRICES / "SP500_1d.csv.gz", "NASDAQ": PRICES / "NASDAQ_1d.csv.gz"}
CONFIG = ValidationConfig()
# the regimes the check must let through: the 2008 crash, the flash crash, August 2015,
# February 2018 (and the rest of 1999-2018)
CRISIS_DAYS = ("2008-09-29", "2008-10-09", "2008-10-13", "2008-10-15", "2008-12-01",
               "2010-05-06", "2010-05-20", "2011-08-08", "2015-08-24", "2015-08-26",
               "2018-02-05", "2018-02-08", "2018-10-10")


def index_bars(name: str) -> pd.DataFrame:
    return load_price_file(INDICES[name]).assign(symbol=name, interval="1d")


@pytest.fixture(scope="module")
def judged() -> dict[str, pd.DataFrame]:
    """Each index's judged frame (by bar time), validated alone."""
    return {name: splice_frame(index_bars(name), [Window(name, "1d", NYSE)]).set_index("timestamp")
            for name in INDICES}


@pytest.mark.parametrize("name", list(INDICES))
def test_real_index_days_pass_alone_across_regimes(capsys, judged, name):
    day = judged[name]
    rejected = flagged(day.reset_index())
    with capsys.disabled():
        print(f"\n[splice] {name} 1d alone: {int(day[cs.JUMP_SIGMAS].notna().sum())} bars judged, "
              f"{int(rejected.sum())} rejected")
    assert day[cs.JUMP_SIGMAS].notna().sum() == 5010
    assert not rejected.any(), day.index[rejected.to_numpy()].tolist()
    for date in CRISIS_DAYS:
        assert not flagged(day.loc[[ts(date)]].reset_index()).any(), date


def test_the_crash_days_of_2018_are_explained_by_what_follows_and_their_own_trading(judged):
    sp = judged["SP500"]
    # -4.1% after a calm year: 7.3 local sigmas on 1.45x volume, not reverted - rejected before;
    # the five sessions after it move 3.8 of its sigmas on average (over 40% of the move)
    crash = sp.loc[ts("2018-02-05")]
    assert crash[cs.JUMP_SIGMAS] > 7 and crash[cs.VOLUME_RATIO] < 1.5
    assert crash[cs.JUMP_REVERTED] == 0
    assert np.isclose(crash[cs.JUMP_FOLLOWED], 3.785, atol=1e-3)
    assert crash[cs.JUMP_FOLLOWED] >= CONFIG.follow_share * crash[cs.JUMP_SIGMAS]
    assert crash[cs.JUMP_TRADED] > 0.8  # the index fell during the session, not between bars
    october = sp.loc[ts("2018-10-10")]  # -3.3%, 6.9 sigmas, 1.35x: 3.2 sigmas follow
    assert np.isclose(october[cs.JUMP_FOLLOWED], 3.219, atol=1e-3)
    # NASDAQ 2017-10-27: +2.2% on big tech earnings, 6.5 sigmas, 1.3x volume, calm after (1.1
    # sigmas): nothing follows, but 46% of the move was made from the open to the close
    rally = judged["NASDAQ"].loc[ts("2017-10-27")]
    assert rally[cs.JUMP_SIGMAS] > 6 and rally[cs.VOLUME_RATIO] < 1.5
    assert rally[cs.JUMP_FOLLOWED] < CONFIG.follow_sigmas
    assert np.isclose(rally[cs.JUMP_TRADED], 0.456, atol=1e-3)


@pytest.mark.parametrize("factor", [1.05, 0.5, 10.0], ids=["5% shift", "2:1 split", "10x unit"])
@pytest.mark.parametrize(("name", "when"), [("SP500", "2017-07-06"), ("NASDAQ", "2017-06-21")])
def test_a_level_shift_in_a_calm_index_month_still_fails(name, when, factor):
    result = check(run(shift_from(index_bars(name), ts(when), factor), NYSE, as_of=None), "splice")
    assert not result.success and not result.suspect
    assert f"first at {when} 00:00 UTC" in result.message and result.observed["jumps"] == 1


def test_the_index_files_pass_every_check():
    for name, path in INDICES.items():
        report = validate_file(path, symbol=name)
        assert report.success, report.summary()


# --- known answers on a small series -------------------------------------------------------

def _gap_crash(bars: pd.DataFrame, at: int, drop: float, after: list[float]) -> pd.DataFrame:
    """``bars`` falling by ``drop`` at ``at`` between two bars (the bar opens at the new level,
    on ordinary volume), then moving by ``after`` (one factor per later bar)."""
    out = scale_prices(bars.assign(volume=100.0), slice(at, None), drop)
    for k, factor in enumerate(after, start=1):
        out = scale_prices(out, slice(at + k, None), factor)
    return out


SWINGS = [1 / 1.013, 1.013] * 2 + [1 / 1.013]  # -+1.3% a bar after it


def test_volatility_after_a_gap_crash_explains_it_calm_does_not(eth):
    crash = _gap_crash(eth, 40, 0.97, SWINGS)  # -3%: 11 local sigmas, no volume, a gap
    frame = splice_frame(crash, [Window("ETH", "1h", CRYPTO)])
    jump = frame.loc[40]
    assert jump[cs.JUMP_SIGMAS] > 11 and jump[cs.JUMP_TRADED] < CONFIG.traded_share
    assert jump[cs.JUMP_REVERTED] == 0
    # 1.2533 x the mean |return| after it from its trailing median, over its trailing sigma:
    # 5 sigmas, over 40% of its own 11
    assert 5.0 < jump[cs.JUMP_FOLLOWED] < 5.1
    assert jump[cs.JUMP_FOLLOWED] >= CONFIG.follow_share * jump[cs.JUMP_SIGMAS]
    assert check(run(crash), "splice").success
    calm = _gap_crash(eth, 40, 0.97, [])  # the same drop, carried calmly: a splice
    result = check(run(calm), "splice")
    assert not result.success and not result.suspect
    assert "first at 2025-03-02 16:00 UTC" in result.message
    # a big jump needs volatility in proportion: the same swings after a -15% drop are no crash
    assert not check(run(_gap_crash(eth, 40, 0.85, SWINGS)), "splice").success
    assert not check(run(_gap_crash(eth, 40, 0.5, SWINGS)), "splice").success  # nor a split


def test_a_move_made_within_its_bar_is_traded_a_gap_is_not(eth):
    calm = eth.assign(volume=100.0)
    gap = scale_prices(calm, slice(40, None), 1.05)  # the bar opens 5% up: a splice
    assert not check(run(gap), "splice").success
    traded = gap.copy()
    traded.loc[40, "open"] = calm.loc[40, "open"]  # the same bar opening at the old level
    traded.loc[40, "low"] = min(traded.loc[40, "low"], traded.loc[40, "open"])
    frame = splice_frame(traded, [Window("ETH", "1h", CRYPTO)])
    assert frame.loc[40, cs.JUMP_TRADED] > 0.9 and frame.loc[40, cs.JUMP_SIGMAS] > 6
    assert check(run(traded), "splice").success
    # a split is never excused by its bar, however it traded
    split = scale_prices(calm, slice(40, None), 0.5)
    split.loc[40, "open"] = calm.loc[40, "open"]
    split.loc[40, "high"] = max(split.loc[40, "high"], split.loc[40, "open"])
    assert not check(run(split), "splice").success


def test_a_crash_at_the_newest_bars_is_held_then_judged_by_what_follows(eth):
    # the crash two bars before the end: too few bars after it to see what follows
    newest = _gap_crash(eth.iloc[:43], 40, 0.97, SWINGS[:2])
    report = run(newest, as_of=ETH_TIMES[43])
    result = check(report, "splice")
    assert not result.success and result.suspect
    assert "suspect at the newest bar" in result.message
    assert "whether it reverts or volatility follows: hold and judge again" in result.message
    assert report.suspects() == {("ETH", "1h"): ETH_TIMES[40]}
    # the next run sees the bars after it: volatility followed -> a crash; calm -> a splice
    volatile = _gap_crash(eth, 40, 0.97, SWINGS)
    assert check(run(volatile, as_of=ETH_AS_OF), "splice").success
    calm = _gap_crash(eth, 40, 0.97, [])
    result = check(run(calm, as_of=ETH_AS_OF), "splice")
    assert not result.success and not result.suspect


def test_what_follows_is_measured_the_same_in_a_batch_and_alone(eth):
    crash = _gap_crash(eth, 40, 0.97, SWINGS)
    other = make_bars(ETH_TIMES, symbol="SOL", interval="1h", seed=4)
    both = splice_frame(pd.concat([other, crash], ignore_index=True),
                        [Window("SOL", "1h", CRYPTO), Window("ETH", "1h", CRYPTO)])
    alone = splice_frame(crash, [Window("ETH", "1h", CRYPTO)])
    mine = both[both["symbol"] == "ETH"].reset_index(drop=True)
    for column in (cs.JUMP_FOLLOWED, cs.JUMP_TRADED):
        pd.testing.assert_series_equal(mine[column], alone[column])
    report = validate_bars(crash, [Window("ETH", "1h", CRYPTO)], as_of=None)
    assert report.success, report.summary()


@pytest.fixture
def eth() -> pd.DataFrame:
    return make_bars(ETH_TIMES, symbol="ETH", interval="1h")
