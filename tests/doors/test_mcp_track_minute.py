"""The MCP ``score`` tool, over the SDK's client on loopback, gives a single-asset track the
same grid and score at any minute of an hour (issue 27, item 2): the server's clock moves
through SOL's 16:00 bar on a live lake holding only the bars closed by then, after the last
cycle of a three-day season; the track is scored over the season from its first cycle to that
one (issue 30, item 5)."""

from __future__ import annotations

import pandas as pd
import pytest

from arena.data.lake import PartitionKey
from arena.doors.mcp_server import app
from arena.pipeline.entrants import add_entrant
from arena.pipeline.season_config import load_season
from arena.scoring.scorer import COST_RATES
from tests.conftest import ts
from tests.doors.test_mcp_server import Clock, Served, call, run, session
from tests.live_lakes import live_lake

SENT = ts("2025-11-21 00:30")
MINUTES = [ts(f"2025-11-21 16:{m:02d}") for m in (0, 10, 30, 59)]


def test_the_score_tool_gives_one_grid_at_every_minute_of_an_hour(tmp_path_factory, tmp_path,
                                                                   universe):
    lake = live_lake(tmp_path_factory, universe, tmp_path / "lake", start="2025-11-19", days=3)
    _, key = add_entrant(lake, load_season(lake), "alice", SENT)
    clock = Clock(SENT)
    tracks: list[dict] = []

    async def scenario(url: str) -> None:
        async with session(url, key) as alice:
            await call(alice, "submit_position", positions={"SOL": 1})
            for now in MINUTES:
                clock.at = now
                [track] = (await call(alice, "score"))["single_asset"]
                tracks.append(track)

    with Served(app(lake, now=clock)) as url:
        run(lambda: scenario(url))
    assert [t.get("grid") for t in tracks] == ["1h"] * 4, tracks
    assert [t["bars"] for t in tracks] == [48] * 4  # Wednesday 16:00 to Friday 15:00
    assert all(t == tracks[0] for t in tracks)
    assert pd.Timestamp(tracks[0]["from"]) == ts("2025-11-19 16:00")  # the season's start
    closes = lake.read_bars(PartitionKey("synthetic", "1h", "SOL")).set_index("timestamp")["close"]
    held = closes[ts("2025-11-21 15:00")] / closes[ts("2025-11-21 00:00")]  # from 00:00's close
    assert tracks[0]["return"] == pytest.approx((1 - COST_RATES["crypto"]) * held - 1, rel=1e-12)
