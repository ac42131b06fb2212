"""The monitor flow under a real Prefect server: it ingests the held symbols' bars up to the
tick (synthetic season), records each contestant's window once, and a refused tick fails."""

from __future__ import annotations

import pytest

from arena.ledger.store import Ledger
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.live.monitor import MonitorRefused
from arena.pipeline.season_config import load_season, season_contestants
from tests.conftest import ts
from tests.market_lakes import season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: random, kind: house, strategy: random}\n")


def test_the_monitor_flow_ingests_and_records_a_window(prefect_server, local_storage,
                                                       tmp_path_factory, tmp_path, universe):
    from arena.flows.monitor import monitor_flow

    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE,
                       start="2025-11-24", days=3)
    first = ts("2025-11-24 16:00")
    contestants, _ = season_contestants(lake, {})
    play_season_cycle(lake, load_season(lake), contestants, first, now=first)
    out = monitor_flow(lake_root=str(lake.root), at="2025-11-24T18:10:00Z",
                       now="2025-11-24T18:10:00Z")
    assert out["end"] == "2025-11-24T18:00:00+00:00"
    assert out["contestants"] == ["momentum", "random"]  # both watched since their cycle
    # a window is recorded when it closed something: from the cycle, up to the tick
    assert {(k.start, k.end) for k in Ledger(lake).monitor_records()} <= {
        (first, ts("2025-11-24 18:00"))}
    assert out["automatic_closes"] == len(Ledger(lake).table("fills", monitor=True))
    with pytest.raises(MonitorRefused, match="in the future"):
        monitor_flow(lake_root=str(lake.root), at="2025-11-24T19:00:00Z",
                     now="2025-11-24T18:30:00Z")
