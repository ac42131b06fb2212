"""The golden season replays with identical values (see :mod:`tests.golden`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.agents.factory import build_contestant
from arena.agents.roster import load_roster
from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.ledger.store import Ledger
from arena.pipeline.season import replay_season
from tests.agents.openai_stub import OpenAIStub
from tests.golden import GOLDEN_SEASON, scripted_model, season_values

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "golden"


def replay_golden_season(folder: Path) -> dict:
    with OpenAIStub() as stub:
        stub.handler = scripted_model
        roster = folder / "roster.yaml"
        roster.write_text((FIXTURE / "roster.yaml").read_text(encoding="utf-8")
                          .replace("http://127.0.0.1:1/v1", stub.url), encoding="utf-8")
        runnable, skipped = load_roster(roster).available({})
        assert not skipped
        universe = load_universe().select(GOLDEN_SEASON["symbols"])
        lake = Lake(folder / "lake")
        replay_season(SyntheticProvider(), universe, [build_contestant(s) for s in runnable],
                      GOLDEN_SEASON["start"], GOLDEN_SEASON["days"], lake=lake)
        return season_values(Ledger(lake))


@pytest.mark.slow
def test_the_golden_season_replays_with_identical_values(tmp_path):
    recorded = json.loads((FIXTURE / "season.json").read_text(encoding="utf-8"))
    replayed = replay_golden_season(tmp_path)
    assert replayed.keys() == recorded.keys()
    for table, rows in recorded.items():
        assert replayed[table] == rows, table
