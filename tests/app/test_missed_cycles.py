"""A missed cycle is never lost by an ordinary command: ``arena cycle`` refuses while an earlier
cycle is still missed, naming it and the command that plays it; ``--skip-missed`` records it as
forfeited, by name; a scheduled run plays the missed cycles first, in order, or fails naming
those its deadline left."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from arena.app.cycle import BackfillIncomplete, CycleRequest, Missed, MissedCycles, cycle
from arena.app.effects import Effects
from arena.app.handle import SeasonHandle, fixed_clock
from arena.cli import main
from arena.ledger.store import Ledger
from tests.conftest import ts
from tests.market_lakes import season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: random, kind: house, strategy: random}\n")
MON, TUE, WED = ts("2025-11-24 16:00"), ts("2025-11-25 16:00"), ts("2025-11-26 16:00")
WED_RUN = WED + pd.Timedelta(minutes=10)  # the scheduled run of Wednesday's cycle


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe):
    """Monday to Wednesday; served from Wednesday on: Monday and Tuesday were missed."""
    return season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)


def _cycles(lake) -> list[pd.Timestamp]:
    return sorted({k.cycle_at for k in Ledger(lake).records()})


def test_status_says_the_missed_cycles_can_still_be_backfilled(season, capsys):
    """No cycle recorded yet: every missed one can still be played (none is later), the oldest
    first."""
    assert main(["season", "status", "--lake", str(season.root), "--json"]) == 0
    states = {c["at"][:10]: c["state"] for c in json.loads(capsys.readouterr().out)["cycles"]}
    assert states == {"2025-11-24": "missed (backfill allowed)",
                      "2025-11-25": "missed (backfill after the earlier ones)", "2025-11-26": "due"}
    assert main(["season", "backfill", "2025-11-25", "--lake", str(season.root)]) == 2
    capsys.readouterr()


def test_arena_cycle_refuses_while_an_earlier_cycle_is_missed(season, capsys):
    assert main(["cycle", "--no-publish", "--lake", str(season.root)]) == 2
    err = capsys.readouterr().err
    assert "2 missed cycle(s) before the current one: 2025-11-24, 2025-11-25" in err
    assert f"arena season backfill 2025-11-24 --lake {season.root}" in err
    assert "--skip-missed" in err and "nothing recorded" in err and "Traceback" not in err
    assert _cycles(season) == []
    # played in order, the missed days cost nothing
    for day in ("2025-11-24", "2025-11-25"):
        assert main(["season", "backfill", day, "--no-publish", "--lake", str(season.root)]) == 0
    assert main(["cycle", "--no-publish", "--lake", str(season.root)]) == 0
    assert _cycles(season) == [MON, TUE, WED]
    assert {r["status"] for t in (MON, TUE) for n in ("momentum", "random")
            for r in Ledger(season).record_rows("outcome", t, n)} != {"forfeited"}


def test_skip_missed_records_the_missed_cycles_as_forfeited_by_name(season, capsys):
    assert main(["cycle", "--skip-missed", "--no-publish", "--lake", str(season.root),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(f["cycle_at"][:10], f["contestant"]) for f in out["forfeits"]] == [
        ("2025-11-24", "momentum"), ("2025-11-24", "random"),
        ("2025-11-25", "momentum"), ("2025-11-25", "random")]
    ledger = Ledger(season)
    assert _cycles(season) == [MON, TUE, WED]
    for at in (MON, TUE):
        for name in ("momentum", "random"):
            [row] = ledger.record_rows("outcome", at, name)
            assert row["status"] == "forfeited"
            assert "the operator skipped it" in " ".join(row["errors"])
            [equity] = ledger.record_rows("equity", at, name)
            assert equity["equity"] == pytest.approx(10_000.0)  # a forfeit trades nothing
    assert {o["status"] for o in out["outcomes"]} <= {"traded", "no_trade"}
    assert (season.root / "reports" / "daily" / "2025-11-24.md").is_file()


def test_a_scheduled_cycle_backfills_the_missed_cycles_first_in_order(season):
    handle = SeasonHandle.open(season.root)
    result = cycle(handle, CycleRequest(missed=Missed.BACKFILL, publish=False),
                   Effects(clock=fixed_clock(WED_RUN)))
    assert [b.at for b in result.backfilled] == [MON, TUE] and result.at == WED
    assert all(len(b.played) == 2 for b in result.backfilled) and len(result.played) == 2
    assert _cycles(season) == [MON, TUE, WED]
    # each day's monitor window starts at the cycle before it: the books are a normal season's
    # (a window is recorded when it closed something)
    windows = sorted((k.start, k.end) for k in Ledger(season).monitor_records("momentum"))
    assert set(windows) <= {(MON, TUE), (TUE, WED)}


def test_a_scheduled_cycle_that_runs_out_of_its_deadline_names_the_missed_cycles_left(season):
    handle = SeasonHandle.open(season.root)
    ticks = iter([0.0, 0.0, 595.0])  # the deadline's start, Monday's check, Tuesday's check

    with pytest.raises(BackfillIncomplete, match="not played yet: 2025-11-25") as caught:
        cycle(handle, CycleRequest(missed=Missed.BACKFILL, publish=False),
              Effects(clock=fixed_clock(WED_RUN), monotonic=lambda: next(ticks, 595.0)))
    assert "arena season backfill 2025-11-25" in str(caught.value)
    assert _cycles(season) == [MON]  # Monday backfilled; Wednesday waits for Tuesday


def test_the_job_refuses_as_the_command_does(season):
    with pytest.raises(MissedCycles) as caught:
        cycle(SeasonHandle.open(season.root), CycleRequest(publish=False),
              Effects(clock=fixed_clock(WED_RUN)))
    assert caught.value.missed == [MON, TUE]
    assert _cycles(season) == []


def test_a_time_forced_after_the_due_cycle_counts_it_as_missed(tmp_path_factory, tmp_path,
                                                               universe, capsys):
    """Forcing 20:00 on a day whose 16:00 cycle nobody played would lose 16:00 for good."""
    one_day = season_lake(tmp_path_factory, universe, tmp_path / "one", HOUSE)  # 2025-11-26
    assert main(["cycle", "--at", "2025-11-26T20:00:00Z", "--force-time", "--no-publish",
                 "--lake", str(one_day.root)]) == 2
    assert "1 missed cycle(s) before the current one: 2025-11-26" in capsys.readouterr().err
    assert _cycles(one_day) == []


def test_a_missed_cycle_that_can_never_be_played_stops_the_scheduled_run_by_name(
        season, monkeypatch):
    """Monday's market stays stale (a vendor gap never filled): the scheduled run names it and
    the command that gets past it, instead of refusing Wednesday as "nothing recorded"."""
    import arena.pipeline.live.check as live

    check = live.check_market

    def stale_on_monday(fresh, universe, at, where):
        if at == MON:
            raise live.CycleRefused(f"the market at {at.isoformat()} is not fresh")
        return check(fresh, universe, at, where)

    monkeypatch.setattr(live, "check_market", stale_on_monday)
    handle = SeasonHandle.open(season.root)
    with pytest.raises(BackfillIncomplete) as caught:
        cycle(handle, CycleRequest(missed=Missed.BACKFILL, publish=False),
                   Effects(clock=fixed_clock(WED_RUN)))
    message = caught.value.describe()
    assert "the missed cycle 2025-11-24 could not be backfilled" in message
    assert "not played yet: 2025-11-24, 2025-11-25" in message and "--skip-missed" in message
    assert "the current cycle was not played" in message and _cycles(season) == []
