"""The engine round trip of one contestant: answer, execute, exactly one repair round."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import pytest

from arena.agents.base import Reply
from arena.core.types import Briefing, Message
from arena.engine.outcomes import OUTCOMES, CycleOutcome
from arena.engine.portfolio import LONG, Portfolio, Position
from arena.engine.repair import ECHO_CHARS
from arena.engine.rules import CycleState
from arena.pipeline.turn import ContestantFailed, take_turn
from tests.conftest import ts

AT = ts("2025-11-26 16:00")
PRICES = {"ETH": 2_000.0, "SOL": 100.0, "AAPL": 200.0}
BRIEFING = Briefing(AT, "scripted", {}, (Message("user", "briefing"),))
TRADED, NO_TRADE = CycleOutcome.TRADED, CycleOutcome.NO_TRADE
FORFEITED, SKIPPED = CycleOutcome.FORFEITED, CycleOutcome.SKIPPED


def answer(*decisions: dict) -> str:
    return json.dumps({"reasoning": "r", "decisions": list(decisions)})


def open_long(symbol: str, level: float, pct: float = 20) -> dict:
    return {"action": "open_long", "symbol": symbol, "percent_of_equity": pct, "confidence": 0.9,
            "invalidation_price": level, "thesis": "t", "invalidation": "i"}


@dataclass
class Scripted:
    """A contestant that answers from a script (a text, or a whole :class:`Reply`) and records
    what the engine sent it."""

    script: list[str | Reply | None]
    name: str = "scripted"
    kind: str = "test"
    follow_ups: list[str] = field(default_factory=list)
    previous: list[Reply] = field(default_factory=list)

    def _reply(self, history: tuple[Message, ...]) -> Reply:
        item = self.script.pop(0)
        if isinstance(item, Reply):
            return item
        if item is None:
            return Reply(None, error="connection: refused")
        return Reply(item, transcript=(*history, Message("assistant", item)))

    def answer(self, briefing: Briefing) -> Reply:
        return self._reply(briefing.messages)

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        self.follow_ups.append(follow_up)
        self.previous.append(previous)
        return self._reply((*previous.transcript, Message("user", follow_up)))


def run(script, state=None, universe=None):
    contestant = Scripted(list(script))
    state = state or CycleState(Portfolio(), AT)
    return contestant, take_turn(contestant, BRIEFING, state, PRICES, universe)


def test_a_clean_answer_executes_without_a_repair(universe):
    contestant, out = run([answer(open_long("ETH", 1_900))], universe=universe)
    assert out.status == TRADED and len(out.rounds) == 1 and contestant.follow_ups == []
    assert np.isclose(out.state.portfolio.cash, 7_998.0)


def test_a_rejection_gets_exactly_one_follow_up_naming_the_reason(universe):
    contestant, out = run([answer(open_long("ETH", 2_100)), answer(open_long("ETH", 1_900))],
                          universe=universe)
    assert out.status == TRADED and out.repaired and len(contestant.follow_ups) == 1
    assert "level_wrong_side" in contestant.follow_ups[0]
    assert [f.symbol for f in out.fills] == ["ETH"] and out.repair.new_position_slots == 1


def test_a_second_failure_stays_failed(universe):
    contestant, out = run([answer(open_long("ETH", 2_100)), answer(open_long("ETH", 2_200))],
                          universe=universe)
    assert out.status == NO_TRADE and len(out.rounds) == 2 and len(contestant.follow_ups) == 1
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
    assert out.status == TRADED and [f.symbol for f in out.fills] == ["SOL"]


def test_the_repair_cannot_open_a_second_position(universe):
    """One new position per cycle, repair included."""
    first = answer(open_long("ETH", 1_900), {"action": "close", "symbol": "SOL"})
    contestant, out = run([first, answer(open_long("SOL", 90))], universe=universe)
    assert "New positions you may still open this cycle: 0" in contestant.follow_ups[0]
    assert [(r, x.code) for r, x in out.rejections] == [("answer", "no_position"),
                                                        ("repair", "new_position_limit")]
    assert [f.symbol for f in out.fills] == ["ETH"]


def test_holds_only_is_no_trade(universe):
    _, out = run([answer()], universe=universe)
    assert out.status == NO_TRADE and out.rounds[0].ok and out.repair is None


# -- item: one malformed decision is rejected alone ----------------------------------------------


def test_worked_example_a_malformed_open_does_not_sink_the_close(universe):
    """Cash 8,000, 1 ETH long held at 1,800, ETH at 2,000. Close 50% of ETH and open SOL with a
    percent written as a string: the close fills (notional 1,000, fee 1, cash 8,999) and only the
    SOL decision is rejected, naming the field; the repair round is about that decision only."""
    held = Position("ETH", LONG, 1.0, 1_800.0, ts("2025-11-20 16:00"), 1_700.0, "t", "i")
    state = CycleState(Portfolio(8_000.0, MappingProxyType({"ETH": held})), AT)
    bad_sol = {**open_long("SOL", 90), "percent_of_equity": "20"}
    first = answer({"action": "close", "symbol": "ETH", "percent_of_position": 50}, bad_sol)
    contestant, out = run([first, answer()], state=state, universe=universe)
    [close] = out.fills
    assert (close.symbol, close.kind, close.notional, close.fee) == ("ETH", "close", 1_000.0, 1.0)
    assert out.state.portfolio.cash == 8_999.0
    assert out.state.portfolio.positions["ETH"].quantity == 0.5
    [(rnd, rejection)] = out.rejections
    assert (rnd, rejection.decision_index, rejection.symbol, rejection.code) == \
        ("answer", 1, "SOL", "bad_field_type")
    assert "percent_of_equity" in rejection.message and '"20"' in rejection.message
    assert out.rounds[0].parsed.ok  # the answer as a whole was read
    assert "bad_field_type" in contestant.follow_ups[0]
    assert "could not be read" not in contestant.follow_ups[0]
    assert out.status == TRADED


def test_a_decision_without_a_symbol_is_rejected_alone(universe):
    _, out = run([answer({"action": "close"}, open_long("ETH", 1_900)), answer()],
                 universe=universe)
    assert [f.symbol for f in out.fills] == ["ETH"]
    [(_, rejection)] = out.rejections
    assert (rejection.decision_index, rejection.code) == (0, "missing_field")
    assert "symbol" in rejection.message


# -- item: the empty answer, and answers that never came ----------------------------------------


def test_an_empty_answer_gets_the_repair_follow_up(universe):
    contestant, out = run(["", answer(open_long("SOL", 90))], universe=universe)
    assert len(contestant.follow_ups) == 1 and "empty" in contestant.follow_ups[0]
    assert out.status == TRADED and [f.symbol for f in out.fills] == ["SOL"]
    assert out.rounds[0].reply.text == ""


def test_empty_twice_forfeits(universe):
    contestant, out = run(["", "   "], universe=universe)
    assert out.status == FORFEITED and len(contestant.follow_ups) == 1


def test_a_call_that_never_reached_the_model_is_not_an_outcome(universe):
    """An operational failure: nothing happened in the game, so there is nothing to record."""
    contestant = Scripted([None])
    with pytest.raises(ContestantFailed, match="connection: refused"):
        take_turn(contestant, BRIEFING, CycleState(Portfolio(), AT), PRICES, universe)
    assert contestant.follow_ups == []


def test_a_failed_repair_call_keeps_what_the_answer_executed(universe):
    first = answer(open_long("ETH", 1_900), open_long("SOL", 200))  # SOL: level on the wrong side
    _, out = run([first, None], universe=universe)
    assert out.status == TRADED and [f.symbol for f in out.fills] == ["ETH"]
    assert out.rounds[1].reply.error == "connection: refused" and out.rounds[1].parsed is None


def test_a_skip_is_recorded_as_skipped_without_a_repair(universe):
    contestant, out = run([Reply.skip("skipped: nothing to mirror")], universe=universe)
    assert out.status == SKIPPED and contestant.follow_ups == [] and out.fills == ()


def test_the_marts_accept_exactly_the_outcomes_the_ledger_records():
    import yaml

    from arena.pipeline.warehouse import DBT_PROJECT

    spec = yaml.safe_load((DBT_PROJECT / "models" / "staging" / "stg_ledger__outcomes.yml")
                          .read_text())
    [model] = [m for m in spec["models"] if m["name"] == "stg_ledger__outcomes"]
    [status] = [c for c in model["columns"] if c["name"] == "status"]
    [accepted] = [t["accepted_values"] for t in status["data_tests"] if "accepted_values" in t]
    assert accepted["arguments"]["values"] == list(OUTCOMES)


# -- item: the repair request stays small -------------------------------------------------------


def test_a_huge_answer_is_repeated_once_and_cut(universe):
    huge = "I think ETH will rise. " * 50_000  # 1.15 MB of prose
    contestant, out = run([huge, answer()], universe=universe)
    [previous] = contestant.previous
    repeated = previous.transcript[-1]
    assert repeated.role == "assistant" and repeated.content.startswith(huge[:ECHO_CHARS])
    assert len(repeated.content) < ECHO_CHARS + 200 and f"{len(huge):,}" in repeated.content
    follow_up = contestant.follow_ups[0]
    assert len(follow_up) < 3_000 and huge[:200] not in follow_up  # the answer is not quoted twice
    assert out.rounds[0].reply.text == huge  # the record keeps the whole answer


def test_a_short_answer_is_repeated_whole(universe):
    contestant, _ = run(["not json", answer()], universe=universe)
    assert contestant.previous[0].transcript[-1].content == "not json"


@pytest.mark.parametrize("decisions", [
    [{"action": "close", "symbol": "S" * 99_000}],  # one 99,000-character "symbol"
    [{"action": "A" * 99_000, "symbol": "ETH"}],
    [{"action": "close", "symbol": f"X{i}"} for i in range(2_500)],  # 2,500 rejections
], ids=["huge-symbol", "huge-action", "many-rejections"])
def test_the_follow_up_stays_small_whatever_the_answer(universe, decisions):
    raw = answer(*decisions)
    assert len(raw) > 50_000
    contestant, out = run([raw, answer()], universe=universe)
    assert len(contestant.follow_ups[0]) < 6_000, len(contestant.follow_ups[0])
    assert len(contestant.previous[0].transcript[-1].content) < ECHO_CHARS + 200
    assert len(out.rejections) == len(decisions)  # every rejection is still recorded
