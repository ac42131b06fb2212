"""A short blind season shared by the reveal's tests (``tests/pipeline/test_blind_reveal.py``,
``tests/reporting/test_blind_reveal.py``): the replay job over two days of four synthetic
assets, two house rules trading, 50 zero-skill players an asset, played blind (its blinding
drawn and sealed by ``arena season init --blind``'s own path), then its tables, a real
``dbt build``, the publication and the season report. Built once per test run (about 15 s):
the first pytest-xdist worker to need it builds it in the run's shared base folder, the others
wait for it and read the same lake; the tests read it, and copy what they change."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from dataclasses import dataclass

import pytest
from filelock import FileLock

from arena.app.replay import ReplayPlan, replay
from arena.data.lake import Lake
from arena.market.blind import Blinding
from arena.pipeline.season_config import SeasonConfig, find_season, season_blinding

START, DAYS = dt.date(2026, 10, 1), 2
SYMBOLS = ["BTC", "SPY", "ETH", "SOL"]
ROSTER = ("contestants:\n"
          "  - {name: equal-weight, kind: house, strategy: equal_weight}\n"
          "  - {name: momentum, kind: house, strategy: momentum}\n")


@dataclass(frozen=True)
class BlindSeason:
    """The replayed blind season: its lake, its config and its sealed blinding."""

    lake: Lake
    config: SeasonConfig
    blinding: Blinding


def _build(lake: Lake) -> None:
    roster = lake.root.parent / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    replay(lake, ReplayPlan(START, DAYS, str(roster), SYMBOLS, seed=7, players=50,
                            arena_players=50, blind=True), env={})


@pytest.fixture(scope="session")
def blind_season(tmp_path_factory) -> BlindSeason:
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root, done = shared / "blind-season", shared / "blind-season.done"
    lake = Lake(root / "lake")
    with FileLock(str(shared / "blind-season.lock")):
        if not done.is_file():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            _build(lake)
            done.write_text("built\n", encoding="utf-8")
    config = find_season(lake)
    assert config is not None and config.blind
    blinding = season_blinding(lake, config)
    assert blinding is not None
    return BlindSeason(lake, config, blinding)
