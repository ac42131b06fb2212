"""A live season's ingest fetches the history its reference rules need (12-month momentum, on
each calendar) the first time, without being asked: afterwards, once every asset reaches back
that far, the hourly runs take the usual window and the early bars stay."""

from __future__ import annotations

import pandas as pd

from arena.app.effects import Effects
from arena.app.handle import SeasonHandle, fixed_clock
from arena.app.ingest import ingest
from arena.data.ingest import default_window
from arena.data.lake import Lake, PartitionKey
from arena.pipeline.season_config import init_season, make_season
from arena.pipeline.season_ingest import history_start

FIRST = "2025-11-24"
NOW = pd.Timestamp("2025-11-21 12:00", tz="UTC")  # before the first cycle


def test_a_season_ingest_reaches_back_to_the_rules_history_once(tmp_path):
    lake = Lake(tmp_path / "lake")
    config = init_season(lake, make_season(FIRST, 3, ["ETH"]))
    season = SeasonHandle.open(lake)
    calendars = {a.calendar for a in season.universe}
    needed = history_start(config.first, calendars)
    assert needed < default_window(NOW)[0]  # the usual 200 days would not do
    first = ingest(lake, season=season, effects=Effects(clock=fixed_clock(NOW)))
    assert first.ok and first.summary.start == needed
    eth = lake.read_bars(PartitionKey("synthetic", "15m", "ETH"))
    assert eth["timestamp"].iloc[0] == needed
    later = NOW + pd.Timedelta(hours=1)
    again = ingest(lake, season=season, effects=Effects(clock=fixed_clock(later)))
    assert again.ok and again.summary.start == default_window(later)[0]
    assert lake.read_bars(PartitionKey("synthetic", "15m", "ETH"))["timestamp"].iloc[0] == needed


def test_a_listing_younger_than_the_history_is_fetched_from_there_once(tmp_path):
    """The vendor has less history than the season's start asks for (a new listing): after one
    run from the history start, the runs take the usual window - not a year every hour."""
    from tests.data.published import publish_frames

    lake = Lake(tmp_path / "lake")
    init_season(lake, make_season(FIRST, 3, ["ETH"]))
    season = SeasonHandle.open(lake)
    first = ingest(lake, season=season, effects=Effects(clock=fixed_clock(NOW)))
    needed = first.summary.start
    key = PartitionKey("synthetic", "15m", "ETH")
    young = lake.read_bars(key, start=needed + pd.Timedelta(days=100))  # as a young listing
    publish_frames(lake, {key: young})
    later = NOW + pd.Timedelta(hours=1)
    again = ingest(lake, season=season, effects=Effects(clock=fixed_clock(later)))
    assert again.summary.start == default_window(later)[0]  # tried once: not again
    assert lake.read_bars(key)["timestamp"].iloc[0] == young["timestamp"].iloc[0]
