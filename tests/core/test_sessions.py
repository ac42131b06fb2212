import numpy as np
import pandas as pd
import pytest

from arena.core.sessions import (
    FX,
    NYSE,
    CalendarError,
    bar_close_times,
    expected_bars,
    is_open,
    is_trading_day,
    regular_session,
)
from tests.conftest import ts


def test_thanksgiving_and_the_day_after():
    assert not is_trading_day("2025-11-27")  # Thanksgiving
    friday = regular_session("2025-11-28")
    assert friday is not None and friday.early_close
    assert friday.open == ts("2025-11-28 14:30") and friday.close == ts("2025-11-28 18:00")
    # 1h bars: 9:30, 10:30, 11:30, 12:30 ET (the last one half an hour, to the 13:00 close)
    assert list(expected_bars("XNYS", "1h", "2025-11-28", "2025-11-29")) == [
        ts("2025-11-28 14:30"), ts("2025-11-28 15:30"), ts("2025-11-28 16:30"), ts("2025-11-28 17:30")]
    assert len(expected_bars("XNYS", "15m", "2025-11-28", "2025-11-29")) == 14
    assert len(expected_bars("XNYS", "4h", "2025-11-28", "2025-11-29")) == 1
    assert len(expected_bars("XNYS", "1h", "2025-11-27", "2025-11-28")) == 0


def test_christmas_eve_and_christmas():
    eve = regular_session("2025-12-24")
    assert eve is not None and eve.early_close and eve.close == ts("2025-12-24 18:00")
    assert regular_session("2025-12-25") is None
    assert is_trading_day("2025-12-25", "24/7")
    assert len(expected_bars("24/7", "1h", "2025-12-25", "2025-12-26")) == 24


def test_normal_day_has_seven_hourly_bars_and_two_4h_bars():
    bars = expected_bars("XNYS", "1h", "2025-11-25", "2025-11-26")
    assert len(bars) == 7 and bars[0] == ts("2025-11-25 14:30") and bars[-1] == ts("2025-11-25 20:30")
    closes = bar_close_times("XNYS", "1h", bars)
    assert closes[-1] == ts("2025-11-25 21:00")  # 15:30-16:00 ET, cut at the close
    four = expected_bars("XNYS", "4h", "2025-11-25", "2025-11-26")
    assert list(four) == [ts("2025-11-25 14:30"), ts("2025-11-25 18:30")]
    assert list(bar_close_times("XNYS", "4h", four)) == [ts("2025-11-25 18:30"), ts("2025-11-25 21:00")]


def test_dst_switch_week_moves_the_utc_open():
    # US clocks went forward on Sunday 2025-03-09: the open moves from 14:30 to 13:30 UTC
    days = expected_bars("XNYS", "1d", "2025-03-03", "2025-03-15")
    assert [d.strftime("%m-%d %H:%M") for d in days] == [
        "03-03 14:30", "03-04 14:30", "03-05 14:30", "03-06 14:30", "03-07 14:30",
        "03-10 13:30", "03-11 13:30", "03-12 13:30", "03-13 13:30", "03-14 13:30"]
    assert len(expected_bars("XNYS", "1h", "2025-03-10", "2025-03-11")) == 7


def test_weekly_bars_open_at_the_first_session_of_the_week():
    # the week of 2025-01-20 starts on a holiday (MLK day): its weekly bar opens Tuesday
    weeks = expected_bars("XNYS", "1w", "2025-01-13", "2025-01-27")
    assert list(weeks) == [ts("2025-01-13 14:30"), ts("2025-01-21 14:30")]
    assert list(expected_bars("24/7", "1w", "2025-01-13", "2025-01-27")) == [
        ts("2025-01-13"), ts("2025-01-20")]


def test_crypto_grid_is_aligned_to_utc():
    bars = expected_bars("24/7", "4h", "2025-11-01 01:00", "2025-11-02")
    assert bars[0] == ts("2025-11-01 04:00") and len(bars) == 5
    assert len(expected_bars("24/7", "15m", "2025-11-01", "2025-11-02")) == 96


def test_market_open_instants():
    assert is_open("XNYS", "2025-11-28 17:59") and not is_open("XNYS", "2025-11-28 18:00")
    assert not is_open("XNYS", "2025-11-29 15:00")  # Saturday
    assert is_open("24/7", "2025-11-29 15:00")


def test_bad_arguments_are_named():
    with pytest.raises(CalendarError, match="unknown interval '2h'"):
        expected_bars("XNYS", "2h", "2025-01-01", "2025-01-02")
    with pytest.raises(CalendarError, match="unknown calendar 'LSE'"):
        is_trading_day("2025-01-02", "LSE")
    assert expected_bars("XNYS", "1h", "2025-01-02", "2025-01-01").empty
    assert isinstance(expected_bars("24/7", "1h", "2025-01-01", "2025-01-02"), pd.DatetimeIndex)


def test_bar_close_times_per_bar_even_with_an_off_session_bar():
    opens = pd.DatetimeIndex([ts("2025-11-28 17:30"), ts("2025-11-29 15:00"), ts("2025-11-25 20:30")])
    assert list(bar_close_times("XNYS", "1h", opens)) == [
        ts("2025-11-28 18:00"), ts("2025-11-29 16:00"), ts("2025-11-25 21:00")]
    weeks = expected_bars("XNYS", "1w", "2025-11-24", "2025-12-06")
    assert list(bar_close_times("XNYS", "1w", weeks)) == [ts("2025-11-28 18:00"), ts("2025-12-05 21:00")]


def test_fx_trades_from_sunday_to_friday_five_pm_new_york():
    # summer (EDT): the week opens Sunday 21:00 UTC and closes Friday 21:00 UTC
    week = expected_bars(FX, "1h", ts("2017-04-21"), ts("2017-04-25"))
    assert week[week.get_loc(ts("2017-04-21 20:00")) + 1] == ts("2017-04-23 21:00")
    assert len(week) == 21 + 3 + 24  # Friday to 17:00 NY, Sunday from 17:00 NY, Monday
    # winter (EST): an hour later in UTC; a 4h bar the open falls inside is expected
    assert is_open(FX, ts("2017-12-24 22:00")) and not is_open(FX, ts("2017-12-24 21:59"))
    assert ts("2017-12-24 20:00") in expected_bars(FX, "4h", ts("2017-12-22"), ts("2017-12-26"))
    assert is_trading_day(ts("2017-12-22"), FX) and not is_trading_day(ts("2017-12-23"), FX)
    assert bar_close_times(FX, "1h", pd.DatetimeIndex([ts("2017-04-21 20:00")]))[0] == \
        ts("2017-04-21 21:00")
    with pytest.raises(CalendarError, match="intraday bars only"):
        expected_bars(FX, "1d", ts("2017-04-21"), ts("2017-04-25"))


def _general_closes(calendar: str, interval: str, opens: pd.DatetimeIndex) -> pd.DatetimeIndex:
    """The pandas route of bar_close_times, taken by nanosecond input (the int64 route takes
    microsecond input only); its answer in microseconds."""
    return bar_close_times(calendar, interval, opens.as_unit("ns"))


@pytest.mark.parametrize("interval", ["15m", "1h", "4h", "1d", "1w"])
def test_bar_close_times_microsecond_route_matches_the_pandas_route(interval):
    rng = np.random.default_rng(7)
    # random instants over 1990-2035 (every DST switch), session opens and the hours around
    # the switches of 2024, in New York and in UTC
    random = pd.to_datetime(rng.integers(ts("1990-01-03").value, ts("2035-12-01").value, 4000),
                            utc=True).floor("min")
    switches = pd.date_range("2024-03-09", "2024-03-12", freq="15min", tz="UTC").append(
        pd.date_range("2024-11-02", "2024-11-05", freq="15min", tz="UTC"))
    opens = expected_bars(NYSE, interval, "2019-12-20", "2021-01-10")
    for idx in (random, switches, opens, switches.tz_convert("America/New_York")):
        idx = idx.as_unit("us")
        fast = bar_close_times(NYSE, interval, idx)
        pd.testing.assert_index_equal(fast, _general_closes(NYSE, interval, idx), exact=True)
        pd.testing.assert_index_equal(bar_close_times(NYSE, interval, pd.Series(idx)), fast)
    assert len(bar_close_times(NYSE, interval, pd.DatetimeIndex([], tz="UTC").as_unit("us"))) == 0


def test_bar_close_times_falls_back_outside_the_offset_table_and_on_missing_times():
    far = pd.DatetimeIndex(["1970-03-02 15:00", "2090-06-01 15:00"], tz="UTC").as_unit("us")
    pd.testing.assert_index_equal(bar_close_times(NYSE, "1h", far), far + pd.Timedelta(hours=1))
    gap = pd.DatetimeIndex(["2024-03-11 14:00", None], tz="UTC").as_unit("us")
    closes = bar_close_times(NYSE, "1h", gap)
    assert closes[0] == ts("2024-03-11 15:00") and closes[1] is pd.NaT
    with pytest.raises(TypeError):
        bar_close_times(NYSE, "1h", pd.DatetimeIndex(["2024-03-11 14:00"]).as_unit("us"))
