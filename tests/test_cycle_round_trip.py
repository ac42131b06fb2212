"""The engine round trip of one contestant: answer, execute, exactly one repair round."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from arena.agents.base import Briefing, Message, Reply
from arena.cycle import EXECUTED, FORFEITED, NO_ANSWER, REPAIRED, run_contestant_cycle
from arena.engine.portfolio import Portfolio
from arena.engine.rules import CycleState
from tests.conftest import ts

AT = ts("2025-11-26 16:00")
PRICES = {"ETH": 2_000.0, "SOL": 100.0, "AAPL": 200.0}
BRIEFING = Briefing(AT, "scripted", {}, (Message("user", "briefing"),))


def answer(*decisions: dict) -> str:
    return json.dumps({"reasoning": "r", "decisions": list(decisions)})


def open_long(symbol: str, level: float, pct: float = 20) -> dict:
    return {"action": "open_long", "symbol": symbol, "percent_of_equity": pct, "confidence": 0.9,
            "invalidation_price": level, "thesis": "t", "invalidation": "i"}


@dataclass
class Scripted:
    """A contestant that answers from a script and records what the engine sent it."""

    script: list[str | None]
    name: str = "scripted"
    kind: str = "test"
    follow_ups: list[str] = field(default_factory=list)

    def answer(self, briefing: Briefing) -> Reply:
        return Reply(self.script.pop(0), error=None)

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        self.follow_ups.append(follow_up)
        return Reply(self.script.pop(0))


def run(script, state=None, universe=None):
    contestant = Scripted(list(script))
    state = state or CycleState(Portfolio(), AT)
    return contestant, run_contestant_cycle(contestant, BRIEFING, state, PRICES, universe)


def test_a_clean_answer_executes_without_a_repair(universe):
    contestant, out = run([answer(open_long("ETH", 1_900))], universe=universe)
    assert out.status == EXECUTED and len(out.rounds) == 1 and contestant.follow_ups == []
    assert np.isclose(out.state.portfolio.cash, 7_998.0)


def test_a_rejection_gets_exactly_one_follow_up_naming_the_reason(universe):
    contestant, out = run([answer(open_long("ETH", 2_100)), answer(open_long("ETH", 1_900))],
                          universe=universe)
    assert out.status == REPAIRED and len(contestant.follow_ups) == 1
    assert "level_wrong_side" in contestant.follow_ups[0]
    assert [f.symbol for f in out.fills] == ["ETH"] and out.repair.new_position_slots == 1


def test_a_second_failure_stays_failed(universe):
    contestant, out = run([answer(open_long("ETH", 2_100)), answer(open_long("ETH", 2_200))],
                          universe=universe)
    assert out.status == REPAIRED and len(out.rounds) == 2 and len(contestant.follow_ups) == 1
    assert out.fills == ()
    assert [(r, x.code) for r, x in out.rejections] == [("answer", "level_wrong_side"),
                                                        ("repair", "level_wrong_side")]


def test_unparseable_twice_forfeits(universe):
    contestant, out = run(["I would buy ETH.", "Still prose, sorry."], universe=universe)
    assert out.status == FORFEITED and out.fills == () and len(contestant.follow_ups) == 1
    assert "could not be read" in contestant.follow_ups[0]
    assert out.state.portfolio.cash == 10_000.0


def test_unparseable_then_valid_executes(universe):
    _, out = run(["prose", f"```json\n{answer(open_long('SOL', 90))}\n```"], universe=universe)
    assert out.status == REPAIRED and [f.symbol for f in out.fills] == ["SOL"]


def test_the_repair_cannot_open_a_second_position(universe):
    """One new position per cycle, repair included."""
    first = answer(open_long("ETH", 1_900), {"action": "close", "symbol": "SOL"})
    contestant, out = run([first, answer(open_long("SOL", 90))], universe=universe)
    assert "New positions you may still open this cycle: 0" in contestant.follow_ups[0]
    assert [(r, x.code) for r, x in out.rejections] == [("answer", "no_position"),
                                                        ("repair", "new_position_limit")]
    assert [f.symbol for f in out.fills] == ["ETH"]


def test_a_failed_call_is_no_answer_and_no_repair(universe):
    contestant, out = run([None], universe=universe)
    assert out.status == NO_ANSWER and contestant.follow_ups == [] and out.fills == ()
