"""``arena season status`` lists the contestants first and the house rules apart, as rulers (their
roster kind says so), and names the leading contestant - never a ruler, even one with more
equity; a season of house rules only says it has no contestant."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from arena.app.effects import Effects
from arena.app.handle import SeasonHandle, fixed_clock
from arena.app.status import status
from arena.cli import main
from arena.core.types import CallRecord
from arena.engine.outcomes import CycleOutcome
from arena.ledger.records import CycleRecord
from arena.ledger.store import Ledger
from tests.market_lakes import season_lake

AT = pd.Timestamp("2025-11-26 16:00", tz="UTC")  # the season's one cycle
ROSTER = ("contestants:\n"
          "  - {name: momentum, kind: house, strategy: momentum}\n"
          "  - {name: alpha, kind: llm, model: openai/alpha, api_base: 'http://127.0.0.1:9/v1'}\n"
          "  - {name: equal-weight, kind: house, strategy: equal_weight}\n"
          "  - {name: beta, kind: llm, model: openai/beta, api_base: 'http://127.0.0.1:9/v1'}\n")
EQUITY = {"momentum": 10_400.0, "alpha": 10_100.0, "equal-weight": 10_600.0, "beta": 9_900.0}


def _record(ledger: Ledger, name: str, model: str) -> None:
    snapshot = {"cash": EQUITY[name], "equity": EQUITY[name], "fees_paid": 0.0,
                "realised_pnl": 0.0, "positions": 0}
    ledger.record_cycle(AT, name, lambda: CycleRecord(
        name, AT, CycleOutcome.NO_TRADE, responses={"answer": '{"decisions": []}'},
        calls=(CallRecord(name, "decision", model, 0, 0, 0.0, 0.0),), equity=snapshot))


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe):
    """The season's cycle recorded: both house rules ahead of both contestants."""
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", ROSTER)
    ledger = Ledger(lake)
    for name, model in (("momentum", "house/momentum"), ("alpha", "openai/alpha"),
                        ("equal-weight", "house/equal_weight"), ("beta", "openai/beta")):
        _record(ledger, name, model)
    return lake


def test_the_status_lists_the_contestants_first_and_names_the_leading_contestant(season,
                                                                                  capsys):
    got = status(SeasonHandle.open(season.root),
                 Effects(clock=fixed_clock(AT + pd.Timedelta(hours=1))))
    assert [(c.contestant, c.role) for c in got.contestants] == [
        ("alpha", "contestant"), ("beta", "contestant"),
        ("momentum", "ruler"), ("equal-weight", "ruler")]
    assert got.leader is not None and got.leader.contestant == "alpha"
    assert main(["season", "status", "--lake", str(season.root), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["leader"] == "alpha"
    assert [(c["contestant"], c["role"], c["equity"]) for c in shown["contestants"]] == [
        ("alpha", "contestant", 10_100.0), ("beta", "contestant", 9_900.0),
        ("momentum", "ruler", 10_400.0), ("equal-weight", "ruler", 10_600.0)]
    assert main(["season", "status", "--lake", str(season.root)]) == 0
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert "leading contestant: alpha, $10,100.00" in lines
    contestants = lines.index(next(ln for ln in lines if ln.startswith("contestant ")))
    title = lines.index("rulers: the house rules, the yardstick beside the contestants "
                        "(not ranked)")
    assert lines[title + 1].startswith("ruler ")
    assert [ln.split()[0] for ln in lines[contestants + 1:contestants + 3]] == ["alpha", "beta"]
    assert [ln.split()[0] for ln in lines[title + 2:title + 4]] == ["momentum", "equal-weight"]


def test_a_season_of_house_rules_only_has_no_leading_contestant(tmp_path_factory, tmp_path,
                                                                universe, capsys):
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake",
                       "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n")
    _record(Ledger(lake), "momentum", "house/momentum")
    assert main(["season", "status", "--lake", str(lake.root), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["leader"] is None and [c["role"] for c in shown["contestants"]] == ["ruler"]
    assert main(["season", "status", "--lake", str(lake.root)]) == 0
    assert "no contestant in this season, only the house rules (rulers)" in \
        capsys.readouterr().out
