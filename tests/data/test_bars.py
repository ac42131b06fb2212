import numpy as np
import pandas as pd
import pytest

from arena.core.sessions import expected_bars
from arena.data.bars import drop_unclosed, resample
from tests.conftest import ts


def _bars(opens: pd.DatetimeIndex) -> pd.DataFrame:
    n = len(opens)
    i = np.arange(n, dtype=float)
    return pd.DataFrame({"timestamp": opens, "open": 100 + i, "high": 101 + i, "low": 99 + i,
                         "close": 100.5 + i, "volume": np.full(n, 10.0)})


def test_stock_4h_from_1h_stays_inside_each_session():
    hours = expected_bars("XNYS", "1h", "2025-11-25", "2025-11-29")  # Tue, Wed, (Thu holiday), Fri
    four = resample(_bars(hours), "1h", "4h", "XNYS")
    assert list(four["timestamp"]) == [ts("2025-11-25 14:30"), ts("2025-11-25 18:30"),
                                       ts("2025-11-26 14:30"), ts("2025-11-26 18:30"),
                                       ts("2025-11-28 14:30")]
    # Tuesday's first 4h bar = hourly bars 0..3, the second = 4..6 (3 bars to the close)
    first, second = four.iloc[0], four.iloc[1]
    assert (first.open, first.high, first.low, first.close, first.volume) == (100, 104, 99, 103.5, 40)
    assert (second.open, second.high, second.low, second.close, second.volume) == (104, 107, 103, 106.5, 30)
    # Wednesday's first 4h bar starts at Wednesday's open, not at Tuesday's last hour
    assert four.iloc[2].open == 107
    # early close: one 4h bar made of the four hourly bars of Friday
    assert four.iloc[4].volume == 40


def test_daily_and_weekly_stock_bars():
    hours = expected_bars("XNYS", "1h", "2025-11-24", "2025-12-02")
    frame = _bars(hours)
    daily = resample(frame, "1h", "1d", "XNYS")
    assert len(daily) == 5  # Mon-Wed, Fri (Thanksgiving closed), next Monday
    assert daily.iloc[3].timestamp == ts("2025-11-28 14:30") and daily.iloc[3].volume == 40
    weekly = resample(frame, "1h", "1w", "XNYS")
    assert list(weekly["timestamp"]) == [ts("2025-11-24 14:30"), ts("2025-12-01 14:30")]
    assert weekly.iloc[0].volume == 10 * (7 * 3 + 4)


def test_crypto_resampling_and_nothing_invented():
    quarter = expected_bars("24/7", "15m", "2025-11-01", "2025-11-02")
    frame = _bars(quarter)
    frame = frame[(frame.timestamp < ts("2025-11-01 05:00")) | (frame.timestamp >= ts("2025-11-01 09:00"))]
    hourly = resample(frame, "15m", "1h", "24/7")
    assert len(hourly) == 24 - 4  # the empty hours stay empty
    assert ts("2025-11-01 06:00") not in set(hourly.timestamp)
    four = resample(frame, "15m", "4h", "24/7")
    assert four.iloc[0].close == frame.iloc[15].close and four.iloc[0].volume == 160
    assert four.iloc[1].timestamp == ts("2025-11-01 04:00") and four.iloc[1].volume == 40
    daily = resample(frame, "15m", "1d", "24/7")
    assert len(daily) == 1 and daily.iloc[0].high == frame.high.max()


def test_refuses_finer_target_and_off_calendar_bars():
    hours = expected_bars("XNYS", "1h", "2025-11-25", "2025-11-26")
    with pytest.raises(ValueError, match="finer"):
        resample(_bars(hours), "1h", "15m", "XNYS")
    saturday = _bars(pd.DatetimeIndex([ts("2025-11-29 15:00")]))
    with pytest.raises(ValueError, match="outside"):
        resample(saturday, "1h", "4h", "XNYS")


def test_drop_unclosed_keeps_only_finished_bars():
    hours = _bars(expected_bars("24/7", "1h", "2025-11-01", "2025-11-01 05:00"))
    assert len(drop_unclosed(hours, "1h", "24/7", ts("2025-11-01 04:30"))) == 4
    assert len(drop_unclosed(hours, "1h", "24/7", ts("2025-11-01 05:00"))) == 5


@pytest.mark.parametrize("symbol,target", [("AAPL", "4h"), ("AAPL", "1w"), ("ETH", "4h"), ("ETH", "1d")])
def test_resample_matches_a_plain_groupby(synthetic, universe, symbol, target):
    """The run-length reduction agrees with pandas' groupby on the same grid keys."""
    asset = universe[symbol]
    bars = synthetic.fetch_bars(asset, "15m", ts("2025-03-03"), ts("2025-04-28"))
    got = resample(bars, "15m", target, asset.calendar)
    grid = expected_bars(asset.calendar, target, ts("2025-03-01"), ts("2025-04-28"))
    key = grid[grid.searchsorted(bars.timestamp, side="right") - 1]
    ref = bars.groupby(key).agg(open=("open", "first"), high=("high", "max"), low=("low", "min"),
                                close=("close", "last"), volume=("volume", "sum"))
    ref = ref.rename_axis("timestamp").reset_index()
    ref["timestamp"] = ref["timestamp"].dt.as_unit("us")
    pd.testing.assert_frame_equal(got, ref, check_exact=False, rtol=1e-12)


def _general(bars: pd.DataFrame, source: str, target: str, calendar: str,
             complete_only: bool) -> pd.DataFrame:
    """resample of the frame with an extra column (carried through), then dropped."""
    out = resample(bars.assign(symbol="X"), source, target, calendar, complete_only=complete_only)
    return out.drop(columns="symbol")


@pytest.mark.parametrize("calendar,source,target", [
    ("24/7", "1h", "4h"), ("24/7", "1h", "1d"), ("24/7", "15m", "1w"), ("XNYS", "1h", "4h"),
    ("XNYS", "1h", "1d"), ("XNYS", "15m", "1w")])
@pytest.mark.parametrize("complete_only", [False, True])
def test_resample_of_a_plain_bar_frame_matches_one_with_an_extra_column(calendar, source, target,
                                                                        complete_only):
    opens = expected_bars(calendar, source, "2024-02-26", "2024-03-20")  # over a DST switch
    rng = np.random.default_rng(3)
    keep = rng.random(len(opens)) > 0.05  # a few missing bars: incomplete coarser bars
    n = int(keep.sum())
    close = 100 + rng.standard_normal(n).cumsum()
    bars = pd.DataFrame({"timestamp": opens[keep], "open": close + 0.1, "high": close + 1,
                         "low": close - 1, "close": close, "volume": rng.random(n)})
    fast = resample(bars, source, target, calendar, complete_only=complete_only)
    pd.testing.assert_frame_equal(fast, _general(bars, source, target, calendar, complete_only),
                                  check_exact=True)
    assert fast.index.equals(pd.RangeIndex(len(fast)))
    if calendar == "24/7":  # the UTC floor in int64 against pandas' floor (another zone name)
        other = bars.assign(timestamp=bars["timestamp"].dt.tz_convert("Etc/UTC"))
        pd.testing.assert_frame_equal(
            resample(other, source, target, calendar, complete_only=complete_only), fast,
            check_exact=True)
    shuffled = bars.sample(frac=1.0, random_state=1)  # unsorted input is sorted first
    pd.testing.assert_frame_equal(resample(shuffled, source, target, calendar,
                                           complete_only=complete_only), fast, check_exact=True)


def test_crypto_bars_of_another_time_zone_keep_pandas_local_floor():
    opens = pd.date_range("2024-03-08", "2024-03-12", freq="1h", tz="America/New_York",
                          unit="us")
    bars = pd.DataFrame({"timestamp": opens, "open": 1.0, "high": 2.0, "low": 0.5,
                         "close": 1.5, "volume": 1.0})
    for target in ("4h", "1d"):
        out = resample(bars, "1h", target, "24/7")
        wanted = opens.floor(target).unique().tz_convert("UTC").as_unit("us")
        assert list(out["timestamp"]) == list(wanted)
