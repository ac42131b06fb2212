"""Contestants added or retired while a live season runs: from the next cycle on, never on a
cycle already due or played; a name is never taken twice; the status expects each cycle's own
roster; a retired contestant's book stays as its last record left it."""

from __future__ import annotations

import json

import pytest

from arena.agents.roster import RosterError
from arena.cli import main
from arena.ledger.store import Ledger
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.live.status import season_status
from arena.pipeline.season_config import (
    SeasonConfigError,
    load_season,
    season_contestants,
    season_roster,
)
from arena.pipeline.season_roster import add_contestants, retire_contestants
from tests.agents.openai_stub import OpenAIStub, StubResponse
from tests.conftest import ts
from tests.market_lakes import season_lake

HOLD = json.dumps({"reasoning": "Nothing to do.", "decisions": []})
MON, TUE, WED = ts("2025-11-24 16:00"), ts("2025-11-25 16:00"), ts("2025-11-26 16:00")


@pytest.fixture
def lake(tmp_path_factory, tmp_path, universe):
    """Three days; momentum trades, the stub model only ever holds (so it stays flat)."""
    with OpenAIStub(default=StubResponse.answer(HOLD)) as stub:
        roster = ("contestants:\n"
                  "  - {name: momentum, kind: house, strategy: momentum}\n"
                  f"  - {{name: holder, kind: llm, model: openai/stub-model, api_base: "
                  f"'{stub.url}', params: {{timeout: 20, num_retries: 0}}}}\n")
        yield season_lake(tmp_path_factory, universe, tmp_path / "lake", roster,
                          start="2025-11-24", days=3)


def test_an_added_and_a_retired_contestant_change_the_roster_from_the_next_cycle(lake, tmp_path):
    season = load_season(lake)
    play_season_cycle(lake, season, season_contestants(lake, {}, at=MON)[0], MON, now=MON)
    newcomer = tmp_path / "new.yaml"
    newcomer.write_text("contestants:\n  - {name: equal-weight, kind: house, "
                        "strategy: equal_weight}\n")
    [added] = add_contestants(lake, season, newcomer, ts("2025-11-24 18:00"))
    assert Ledger(lake).portfolio("momentum").positions  # momentum holds: it cannot retire
    with pytest.raises(RosterError, match=r"momentum holds .*retire a contestant once it is flat"):
        retire_contestants(lake, season, ["momentum"], ts("2025-11-24 19:00"))
    [retired] = retire_contestants(lake, season, ["holder"], ts("2025-11-24 19:00"))
    assert (added.contestant, added.change, added.from_cycle) == ("equal-weight", "added",
                                                                  TUE.isoformat())
    assert (retired.contestant, retired.change, retired.from_cycle) == ("holder", "retired",
                                                                        TUE.isoformat())
    assert season_roster(lake, MON).names == ("momentum", "holder")  # the played cycle unchanged
    assert season_roster(lake, TUE).names == ("momentum", "equal-weight")
    assert season_roster(lake).names == ("momentum", "holder", "equal-weight")

    run = play_season_cycle(lake, season, season_contestants(lake, {}, at=TUE)[0], TUE, now=TUE)
    assert [o.contestant for o in run.outcomes] == ["momentum", "equal-weight"]
    ledger = Ledger(lake)
    assert {(k.cycle_at, k.contestant) for k in ledger.records()} == {
        (MON, "momentum"), (MON, "holder"), (TUE, "momentum"), (TUE, "equal-weight")}
    first = ledger.record_rows("equity", TUE, "equal-weight")[0]
    assert first["equity"] == pytest.approx(10_000, rel=0.01)  # its own start
    # the status expects each cycle's own roster: both cycles done, nobody missing
    status = season_status(lake, season, season_roster(lake).names,
                           ts("2025-11-26 04:00")).to_json()
    assert [(c["state"], c["missing"]) for c in status["cycles"][:2]] == [("done", []),
                                                                         ("done", [])]
    roster = {c["contestant"]: c["roster"] for c in status["contestants"]}
    assert roster == {"momentum": [], "holder": [f"retired from {TUE.isoformat()}"],
                      "equal-weight": [f"added from {TUE.isoformat()}"]}


def test_roster_changes_that_would_corrupt_the_season_are_refused(lake, tmp_path, capsys):
    season = load_season(lake)
    play_season_cycle(lake, season, season_contestants(lake, {}, at=MON)[0], MON, now=MON)
    again = tmp_path / "again.yaml"
    again.write_text("contestants:\n  - {name: holder, kind: house, strategy: random}\n")
    with pytest.raises(SeasonConfigError, match="already used the name"):
        add_contestants(lake, season, again, ts("2025-11-24 18:00"))
    with pytest.raises(RosterError, match="no contestant 'ghost'"):
        retire_contestants(lake, season, ["ghost"], ts("2025-11-24 18:00"))
    with pytest.raises(SeasonConfigError, match="no cycle after"):
        retire_contestants(lake, season, ["holder"], ts("2025-11-27 00:00"))
    retire_contestants(lake, season, ["holder"], ts("2025-11-24 18:00"))
    with pytest.raises(RosterError, match="retired already"):
        retire_contestants(lake, season, ["holder"], ts("2025-11-24 19:00"))
    with pytest.raises(SeasonConfigError, match="already used the name"):  # never comes back
        add_contestants(lake, season, again, ts("2025-11-24 19:00"))
    assert season_roster(lake).names == ("momentum", "holder")  # nothing else written
    stray = tmp_path / "stray.yaml"  # a reverse of a retired contestant would never play
    stray.write_text("contestants:\n  - {name: anti-holder, kind: reverse, mirror_of: holder}\n")
    with pytest.raises(RosterError, match="anti-holder mirrors holder, which is not in the season"):
        add_contestants(lake, season, stray, ts("2025-11-24 19:00"))
    nameless = tmp_path / "nameless.yaml"
    nameless.write_text("contestants:\n  - {name: [a, b], kind: house, strategy: random}\n")
    with pytest.raises(RosterError, match="needs a name"):
        add_contestants(lake, season, nameless, ts("2025-11-24 19:00"))
    # the command line (on the wall clock, after this 2025 season): exit 2 and the reason
    assert main(["season", "retire", "momentum", "--lake", str(lake.root)]) == 2
    err = capsys.readouterr().err
    assert "has no cycle after" in err and "would never take effect (nothing changed)" in err
    reverse = tmp_path / "reverse.yaml"
    reverse.write_text("contestants:\n  - {name: anti-momentum, kind: reverse, "
                       "mirror_of: momentum}\n")
    with pytest.raises(SeasonConfigError, match="no cycle after"):  # the wall clock is later
        add_contestants(lake, season, reverse, ts("2026-06-01"))
    add_contestants(lake, season, reverse, ts("2025-11-24 20:00"))
    with pytest.raises(RosterError, match="anti-momentum mirrors momentum: retire both"):
        retire_contestants(lake, season, ["momentum"], ts("2025-11-24 21:00"))
    with pytest.raises(RosterError, match="momentum holds"):  # both named: momentum is not flat
        retire_contestants(lake, season, ["momentum", "anti-momentum"], ts("2025-11-24 21:00"))
    changes = json.loads((lake.root / "season" / "roster_changes.json").read_text())["changes"]
    assert [(c["contestant"], c["change"]) for c in changes] == [("holder", "retired"),
                                                                ("anti-momentum", "added")]
