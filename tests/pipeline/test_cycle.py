"""A whole daily cycle over the house roster, recorded once per contestant in the ledger."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from arena.agents.base import Reply
from arena.agents.factory import build_contestant
from arena.agents.reverse import ReverseContestant
from arena.agents.roster import ContestantSpec, load_roster
from arena.ledger.store import Ledger
from arena.pipeline.cycle import run_cycle
from tests.conftest import ts
from tests.market_lakes import PROVIDER, market_lakes

MON, TUE = ts("2025-11-24 16:00"), ts("2025-11-25 16:00")


@pytest.fixture
def setup(tmp_path_factory, universe, tmp_path):
    lake = market_lakes(tmp_path_factory, universe).full
    ledger = Ledger(tmp_path / "ledger-root")
    runnable, _ = load_roster().available({})
    contestants = [build_contestant(s) for s in runnable]
    contestants.append(ReverseContestant(ContestantSpec(name="anti-momentum", kind="reverse",
                                                        mirror_of="momentum")))
    return lake, ledger, contestants


def test_a_cycle_records_every_contestant_once(setup, universe):
    lake, ledger, contestants = setup
    first = run_cycle(lake, PROVIDER, universe, contestants, MON, ledger=ledger)
    assert {o.recorded for o in first} == {"recorded"}
    assert {o.status for o in first} <= {"traded", "no_trade"}, [o.as_dict() for o in first]
    assert {o.status for o in first if o.fills} == {"traded"}
    fills_before = {c.name: len(ledger.fills(c.name)) for c in contestants}
    again = run_cycle(lake, PROVIDER, universe, contestants, MON, ledger=ledger)
    assert {o.recorded for o in again} == {"already recorded"}
    assert {c.name: len(ledger.fills(c.name)) for c in contestants} == fills_before
    assert [o.fills for o in again] == [o.fills for o in first]


def test_two_runs_at_the_same_time_execute_once(setup, universe):
    lake, ledger, contestants = setup
    results = []
    threads = [threading.Thread(target=lambda: results.append(
        run_cycle(lake, PROVIDER, universe, contestants, TUE, ledger=Ledger(ledger.dir.parent))))
        for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    by_name = {}
    for outcome in (o for run in results for o in run):
        by_name.setdefault(outcome.contestant, []).append(outcome.recorded)
    assert all(sorted(v) == ["already recorded", "recorded"] for v in by_name.values()), by_name
    assert len(ledger.records()) == len(contestants)


def test_the_reverse_mirrors_its_target(setup, universe):
    lake, ledger, contestants = setup
    run_cycle(lake, PROVIDER, universe, contestants, MON, ledger=ledger)
    source = ledger.fills("momentum")
    mirror = ledger.fills("anti-momentum")
    assert [(f.symbol, f.side) for f in mirror] == [
        (f.symbol, "short" if f.side == "long" else "long") for f in source]


class Copycat:
    """A contestant - not a house rule - that answers what a house rule answers: its calls are
    recorded as its own model's, so it is ranked among the contestants."""

    kind = "llm"

    def __init__(self, name: str, rule) -> None:
        self.name, self.rule = name, rule

    def _own(self, reply: Reply) -> Reply:
        calls = tuple(replace(c, contestant=self.name, model=f"copy/{self.rule.name}")
                      for c in reply.calls)
        return replace(reply, calls=calls)

    def answer(self, briefing):
        return self._own(self.rule.answer(briefing))

    def repair(self, briefing, previous, follow_up):
        return self._own(self.rule.repair(briefing, previous, follow_up))


def test_mirror_of_worst_mirrors_the_worst_contestant_so_far_never_a_ruler(setup, universe):
    """The worst is the contestant with the lowest equity so far; the house rules play as
    rulers and are never mirrored as the worst, even when one of them did worse."""
    lake, ledger, contestants = setup
    worst_mirror = ReverseContestant(ContestantSpec(name="anti-worst", kind="reverse",
                                                    mirror_of="worst"))
    rules = {c.name: c for c in contestants if not isinstance(c, ReverseContestant)}
    # on Monday momentum and trend-following lose the most, the copied rules less
    copies = [Copycat("copy-mean-reversion", rules["mean-reversion"]),
              Copycat("copy-equal-weight", rules["equal-weight"])]
    players = [*rules.values(), *copies]
    first = run_cycle(lake, PROVIDER, universe, [*players, worst_mirror], MON, ledger=ledger)
    assert next(o for o in first if o.contestant == "anti-worst").status == "skipped"  # no past
    run_cycle(lake, PROVIDER, universe, [*players, worst_mirror], TUE, ledger=ledger)
    from arena.pipeline.cycle import standings

    before = standings(ledger, TUE, [p.name for p in players])
    assert sorted(before) == ["copy-equal-weight", "copy-mean-reversion"]  # no ruler
    equity = ledger.table("equity")
    monday = equity[equity["cycle_at"] == MON].set_index("contestant")["equity"]
    worst = monday.loc[[c.name for c in copies]].idxmin()
    assert monday.loc[list(rules)].min() < monday.loc[worst]  # a ruler did worse, unmirrored
    source = ledger.responses(worst, TUE)["answer"]
    mirrored = ledger.responses("anti-worst", TUE)["answer"]
    assert json_actions(mirrored) == [{"open_long": "open_short", "open_short": "open_long"}.get(a, a)
                                      for a in json_actions(source)]


def test_mirror_of_worst_among_house_rules_only_has_no_one_to_mirror(setup, universe):
    lake, ledger, contestants = setup
    worst_mirror = ReverseContestant(ContestantSpec(name="anti-worst", kind="reverse",
                                                    mirror_of="worst"))
    rules = [c for c in contestants if not isinstance(c, ReverseContestant)]
    for at in (MON, TUE):
        outcomes = run_cycle(lake, PROVIDER, universe, [*rules, worst_mirror], at, ledger=ledger)
        assert next(o for o in outcomes if o.contestant == "anti-worst").status == "skipped"


def json_actions(text: str) -> list[str]:
    import json

    return [d["action"] for d in json.loads(text)["decisions"]]


def test_a_reverse_without_a_target_record_is_skipped_and_recorded(setup, universe):
    lake, ledger, _ = setup
    ghost = ReverseContestant(ContestantSpec(name="anti-ghost", kind="reverse", mirror_of="ghost"))
    [outcome] = run_cycle(lake, PROVIDER, universe, [ghost], MON, ledger=ledger)
    assert (outcome.recorded, outcome.status) == ("recorded", "skipped")
    assert "no answer to mirror" in outcome.error
    assert ledger.table("outcome").status.tolist() == ["skipped"]
    assert ledger.table("equity").equity.tolist() == [10_000.0]


def test_the_daily_report_shows_each_contestants_outcome(setup, universe, tmp_path):
    from arena.reporting.daily import daily_report

    lake, ledger, contestants = setup
    ghost = ReverseContestant(ContestantSpec(name="anti-ghost", kind="reverse", mirror_of="ghost"))
    outcomes = run_cycle(lake, PROVIDER, universe, [*contestants, ghost], MON, ledger=ledger)
    text = daily_report(ledger, lake, PROVIDER, universe, MON)
    header = "| # | contestant | equity | change since its previous cycle | outcome |"
    assert any(" ".join(line.split()) == header for line in text.splitlines())
    ranked = {line.split("|")[2].strip(): line.split("|")[5].strip()
              for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()}
    rulers = text.split("\n## Rulers\n")[1].split("\n## ")[0]
    ruled = {line.split("|")[1].strip(): line.split("|")[4].strip()
             for line in rulers.splitlines()
             if line.startswith("| ") and not line.startswith("| ruler ")}
    # the reverses are contestants, ranked; the house rules are rulers, listed apart
    assert ranked == {o.contestant: o.status for o in outcomes if o.contestant.startswith("anti-")}
    assert ruled == {o.contestant: o.status for o in outcomes
                     if not o.contestant.startswith("anti-")}
    assert ranked["anti-ghost"] == "skipped"
