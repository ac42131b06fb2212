"""A recorded cycle run again is a no-op, whatever was recorded after it, and a backfill never
skips a missed day.

* ``arena season backfill|retry DAY`` and ``arena cycle --at T`` of a cycle every contestant is
  recorded at say "already recorded" and exit 0, writing nothing, though later cycles exist (a
  retried flow run or a re-run script must not fail on a day that is fine); a cycle recorded
  for some contestants only is played for the others while it still can be.
* ``arena season backfill DAY`` while an earlier day is still missed refuses (exit 2), naming
  the missed days and the command that plays the oldest: played later, they would be lost for
  good (cycles are recorded in order). A day before DAY that is forfeited already (an operator
  skipped it) or that failed (its contestants are forfeited by the next cycle) is no missed day.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import pandas as pd
import pytest

from arena.app.cycle import CycleRequest, Kind, Missed, MissedCycles, cycle
from arena.app.effects import Effects
from arena.app.handle import SeasonHandle, fixed_clock
from arena.cli import main
from arena.data.lake import Lake
from arena.ledger.attempts import Attempts
from arena.ledger.store import Ledger
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.live.missed import forfeit_missed
from arena.pipeline.season_config import load_season, season_contestants
from tests.conftest import ts
from tests.market_lakes import season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: random, kind: house, strategy: random}\n")
MON, TUE, WED = ts("2025-11-24 16:00"), ts("2025-11-25 16:00"), ts("2025-11-26 16:00")
LATER = ts("2026-06-01")  # a wall clock after the season: Wednesday is its current cycle
WRITTEN = ("ledger", "attempts", "reports", "analytics", "marts")  # what a cycle may write


@pytest.fixture(scope="module")
def played_once(tmp_path_factory, universe) -> Lake:
    """Monday to Wednesday, Monday and Tuesday played (backfilled in order); read only."""
    lake = season_lake(tmp_path_factory, universe, tmp_path_factory.mktemp("played") / "lake",
                       HOUSE, start="2025-11-24", days=3)
    for day in ("2025-11-24", "2025-11-25"):
        assert main(["season", "backfill", day, "--no-publish", "--lake", str(lake.root)]) == 0
    return lake


@pytest.fixture
def played(played_once, tmp_path, capsys) -> Lake:
    """A copy of :func:`played_once`'s lake for one test to run commands on."""
    capsys.readouterr()
    lake = Lake(tmp_path / "lake")
    shutil.copytree(played_once.root, lake.root)
    return lake


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe) -> Lake:
    """Monday to Wednesday, nothing played: Monday and Tuesday missed, Wednesday due."""
    return season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)


def _written(lake: Lake) -> dict[str, str]:
    """Every file a cycle writes, by its digest."""
    return {str(p.relative_to(lake.root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for top in WRITTEN for p in sorted((lake.root / top).rglob("*")) if p.is_file()}


def _cycles(lake: Lake) -> list[pd.Timestamp]:
    return sorted({k.cycle_at for k in Ledger(lake).records()})


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("command", [
    ["season", "backfill", "2025-11-24"],
    ["season", "retry", "2025-11-24"],
    ["cycle", "--at", "2025-11-24T16:00:00Z"],
    ["cycle", "--at", "2025-11-25T16:00:00Z"],
    ["season", "backfill", "2025-11-25"],
], ids=["backfill-first", "retry-first", "cycle-at-first", "cycle-at-latest", "backfill-latest"])
def test_a_recorded_cycle_run_again_is_a_no_op_whatever_was_recorded_after_it(
        played, capsys, command):
    before = _written(played)
    code, out, err = _run(capsys, *command, "--no-publish", "--lake", str(played.root))
    assert code == 0, err
    assert "already recorded: every contestant has its record at this cycle" in out
    assert "0 played, 2 already recorded, 0 skipped, 0 failed" in out
    assert _written(played) == before  # nothing played, watched, forfeited or reported again
    code, out, _ = _run(capsys, *command, "--no-publish", "--json", "--lake", str(played.root))
    shown = json.loads(out)
    assert code == 0 and shown["already_recorded"] is True
    assert {o["recorded"] for o in shown["outcomes"]} == {"already recorded"}
    assert {o["contestant"] for o in shown["outcomes"]} == {"momentum", "random"}


def test_the_job_publishes_no_older_cycle_again(played):
    """A no-op of a cycle with later ones after it publishes nothing: the later cycle's run
    did (a re-run of the latest one publishes again, so a publication that failed is built)."""
    result = cycle(SeasonHandle.open(played.root), CycleRequest(Kind.BACKFILL, MON),
                   Effects(clock=fixed_clock(LATER)))
    assert result.run.already_recorded and result.publication is None
    assert [o.recorded for o in result.outcomes] == ["already recorded"] * 2
    assert _cycles(played) == [MON, TUE]


def test_a_cycle_recorded_for_some_contestants_only_is_played_for_the_others(season, capsys):
    """Monday recorded for momentum only: its backfill plays random there; once a later cycle
    exists, a cycle random has no record at can no longer be played for it, and says so."""
    config = load_season(season)
    contestants, _ = season_contestants(season, {})
    momentum = [c for c in contestants if c.name == "momentum"]
    play_season_cycle(season, config, momentum, MON, now=LATER, backfill=True)
    code, out, _ = _run(capsys, "season", "backfill", "2025-11-24", "--no-publish", "--json",
                        "--lake", str(season.root))
    shown = json.loads(out)
    assert code == 0 and shown["already_recorded"] is False
    assert {o["contestant"]: o["recorded"] for o in shown["outcomes"]} == {
        "momentum": "already recorded", "random": "recorded"}
    play_season_cycle(season, config, momentum, TUE, now=LATER, backfill=True)
    play_season_cycle(season, config, momentum, WED, now=LATER)
    code, _, err = _run(capsys, "season", "backfill", "2025-11-25", "--no-publish",
                        "--lake", str(season.root))
    assert code == 2 and "already has a later cycle (2025-11-26T16:00:00+00:00)" in err
    assert not Ledger(season).has(TUE, "random")


def test_a_backfill_refuses_while_an_earlier_day_is_missed(season, capsys):
    """Tuesday asked for while Monday is missed: played first, Monday would be lost for good."""
    code, _, err = _run(capsys, "season", "backfill", "2025-11-25", "--no-publish",
                        "--lake", str(season.root))
    assert code == 2
    assert "1 missed cycle(s) before 2025-11-25: 2025-11-24" in err
    assert f"arena season backfill 2025-11-24 --lake {season.root}" in err
    assert "nothing recorded" in err and _cycles(season) == []
    assert main(["season", "backfill", "2025-11-24", "--no-publish", "--lake",
                 str(season.root)]) == 0
    assert main(["season", "backfill", "2025-11-25", "--no-publish", "--lake",
                 str(season.root)]) == 0
    assert _cycles(season) == [MON, TUE]


@pytest.mark.parametrize("missed", [Missed.BACKFILL, Missed.SKIP])
def test_a_backfill_job_may_play_or_skip_the_missed_days_first(season, missed):
    """A flow's backfill (``missed="backfill"``, its default) plays the missed days first, in
    order; ``missed="skip"`` records them as forfeited, by name; the command line refuses."""
    handle = SeasonHandle.open(season.root)
    with pytest.raises(MissedCycles):
        cycle(handle, CycleRequest(Kind.BACKFILL, TUE, publish=False),
              Effects(clock=fixed_clock(LATER)))
    result = cycle(handle, CycleRequest(Kind.BACKFILL, TUE, missed, publish=False),
                   Effects(clock=fixed_clock(LATER)))
    assert result.at == TUE and len(result.played) == 2 and _cycles(season) == [MON, TUE]
    monday = {n: r["status"] for n in ("momentum", "random")
              for r in Ledger(season).record_rows("outcome", MON, n)}
    if missed is Missed.BACKFILL:
        assert [b.at for b in result.backfilled] == [MON] and result.missed_forfeits == []
        assert set(monday.values()) != {"forfeited"}
    else:
        assert result.backfilled == [] and result.missed_forfeits == [(MON, "momentum"),
                                                                      (MON, "random")]
        assert set(monday.values()) == {"forfeited"}


def _skipped(lake: Lake) -> None:
    """Monday recorded as forfeited by the operator (what ``arena cycle --skip-missed`` records
    before it plays: a run cut short after its forfeits leaves this)."""
    config = load_season(lake)
    forfeit_missed(lake, config, Ledger(lake), config.universe(), [MON],
                   "forfeited: the cycle was missed and the operator skipped it")


def _failed(lake: Lake) -> None:
    """Monday played, and every model failed there (the attempts log; nothing recorded)."""
    for name in ("momentum", "random"):
        Attempts(lake).add(MON, name, "the model did not answer")


@pytest.mark.parametrize("gap", [_skipped, _failed], ids=["forfeited", "failed"])
def test_a_backfill_after_a_day_that_is_no_missed_day_plays(season, capsys, gap):
    gap(season)
    code, out, err = _run(capsys, "season", "backfill", "2025-11-25", "--no-publish", "--json",
                          "--lake", str(season.root))
    assert code == 0, err
    shown = json.loads(out)
    assert {o["recorded"] for o in shown["outcomes"]} == {"recorded"}
    assert _cycles(season) == [MON, TUE]
    for name in ("momentum", "random"):
        [row] = Ledger(season).record_rows("outcome", MON, name)
        assert row["status"] == "forfeited"
    if gap is _failed:  # forfeited by the next cycle, with the last error
        assert [(f["cycle_at"][:10], f["contestant"]) for f in shown["forfeits"]] == [
            ("2025-11-24", "momentum"), ("2025-11-24", "random")]


def test_the_missed_days_are_named_by_the_command_that_plays_them():
    refusal = MissedCycles("s1", "/lakes/s1", [MON, TUE], WED)
    assert str(refusal) == (
        "season 's1' has 2 missed cycle(s) before 2025-11-26: 2025-11-24, 2025-11-25; cycles "
        "are recorded in order, so playing 2025-11-26 first would lose them for good: play them "
        "first, oldest first (arena season backfill 2025-11-24 --lake /lakes/s1), then "
        "2025-11-26; or record every missed cycle as forfeited and play the current one (arena "
        "cycle --skip-missed)")
