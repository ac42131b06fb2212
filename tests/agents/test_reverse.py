"""The reverse contestant mirrors what its target's book executed, both rounds, and repairs its
own rejections: played through real cycles (the synthetic lake, the ledger, the engine's turn),
and its parts (mirroring, folding, the duplicate rule) against the engine's own."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from types import MappingProxyType

import pytest

from arena.agents.base import Reply
from arena.agents.reverse import (
    ReverseContestant,
    fold,
    mirror_decision,
    mirror_executed,
    refused_as_duplicates,
)
from arena.agents.roster import ContestantSpec
from arena.core.types import Briefing, CallRecord, Message
from arena.engine.broker import execute_answer
from arena.engine.contract import Answer, parse_answer
from arena.engine.portfolio import LONG, SHORT, Portfolio, Position
from arena.engine.rules import DUPLICATE_SYMBOL, CycleState
from arena.ledger.store import Ledger
from arena.pipeline.cycle import run_cycle
from tests.conftest import ts
from tests.market_lakes import PROVIDER, market_lakes

PRICES = {"ETH": 2_000.0, "SOL": 100.0}
MON, TUE = ts("2025-11-24 16:00"), ts("2025-11-25 16:00")

Script = Callable[[Briefing], list[dict]]


class Scripted:
    """A contestant that answers and repairs from a script (functions of the briefing)."""

    kind = "scripted"

    def __init__(self, name: str, answer: Script, repair: Script | None = None) -> None:
        self.name, self._answer, self._repair = name, answer, repair or (lambda b: [])

    def _reply(self, role: str, decisions: list[dict], before: tuple[Message, ...]) -> Reply:
        text = json.dumps({"reasoning": role, "decisions": decisions})
        return Reply(text, (CallRecord(self.name, role, "scripted"),),
                     (*before, Message("assistant", text)))

    def answer(self, briefing: Briefing) -> Reply:
        return self._reply("decision", self._answer(briefing), briefing.messages)

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        return self._reply("repair", self._repair(briefing),
                           (*previous.transcript, Message("user", follow_up)))


def _price(briefing: Briefing, symbol: str) -> float:
    return next(r["price"] for r in briefing.data["market"]["table"] if r["symbol"] == symbol)


def _open(symbol: str, pct: float = 30, confidence: float = 0.9, stop: float = 0.1) -> Script:
    return lambda b: [{"action": "open_long", "symbol": symbol, "percent_of_equity": pct,
                       "confidence": confidence, "thesis": "t", "invalidation": "i",
                       "invalidation_price": round(_price(b, symbol) * (1 - stop), 8)}]


def _reverse(target: str = "target") -> ReverseContestant:
    return ReverseContestant(ContestantSpec(name="anti", kind="reverse", mirror_of=target))


@pytest.fixture
def lake(tmp_path_factory, universe):
    return market_lakes(tmp_path_factory, universe).full


@pytest.fixture
def ledger(tmp_path):
    return Ledger(tmp_path / "ledger-root")


def _book(ledger: Ledger, name: str) -> dict[str, tuple[str, float, float | None]]:
    return {s: (p.side, p.quantity, p.invalidation_price)
            for s, p in ledger.portfolio(name).positions.items()}


def _fills(ledger: Ledger, name: str, at) -> list[tuple[str, str, str, str]]:
    return [(r["round"], r["kind"], r["side"], r["symbol"])
            for r in ledger.record_rows("fills", at, name)]


def test_a_target_that_trades_only_after_its_repair_is_mirrored(lake, ledger, universe):
    """The target's first answer is refused (confidence below the minimum); its repair opens
    ETH. The mirror opens the opposite side, same size, its level reflected around the price."""
    target = Scripted("target", _open("ETH", confidence=0.5), _open("ETH"))
    run_cycle(lake, PROVIDER, universe, [target, _reverse()], MON, ledger=ledger)
    assert _fills(ledger, "target", MON) == [("repair", "open", LONG, "ETH")]
    assert _fills(ledger, "anti", MON) == [("answer", "open", SHORT, "ETH")]
    [(side, quantity, level)] = _book(ledger, "target").values()
    [(mirror_side, mirror_quantity, mirror_level)] = _book(ledger, "anti").values()
    price = ledger.record_rows("fills", MON, "target")[0]["price"]
    assert (side, mirror_side) == (LONG, SHORT)
    assert mirror_quantity == pytest.approx(quantity, rel=1e-12)
    assert mirror_level == pytest.approx(2 * price - level, abs=1e-8)
    assert ledger.responses("anti", MON).keys() == {"answer"}  # nothing refused: no repair


def test_a_level_moved_in_the_repair_goes_into_the_mirrored_open(lake, ledger, universe):
    """Opened in the first answer (beside a refused close), the level moved by a hold in the
    repair: the mirror opens once, with the level the target's book ended with, reflected."""
    def first(b):
        return [*_open("ETH", stop=0.1)(b), {"action": "close", "symbol": "SOL"}]

    def second(b):
        return [{"action": "hold", "symbol": "ETH",
                 "invalidation_price": round(_price(b, "ETH") * 0.8, 8)}]

    run_cycle(lake, PROVIDER, universe, [Scripted("target", first, second), _reverse()], MON,
              ledger=ledger)
    [(_, quantity, level)] = _book(ledger, "target").values()
    [(side, mirror_quantity, mirror_level)] = _book(ledger, "anti").values()
    price = ledger.record_rows("fills", MON, "target")[0]["price"]
    assert side == SHORT and mirror_quantity == pytest.approx(quantity, rel=1e-12)
    assert level == pytest.approx(price * 0.8) and mirror_level == pytest.approx(price * 1.2)
    assert ledger.record_rows("rejections", MON, "anti") == []


def test_an_open_closed_again_in_the_repair_leaves_the_mirror_flat(lake, ledger, universe):
    def first(b):
        return [*_open("ETH")(b), {"action": "close", "symbol": "SOL"}]

    run_cycle(lake, PROVIDER, universe, [
        Scripted("target", first, lambda b: [{"action": "close", "symbol": "ETH"}]),
        _reverse()], MON, ledger=ledger)
    assert [k for _, k, _, _ in _fills(ledger, "target", MON)] == ["open", "close"]
    assert _book(ledger, "target") == _book(ledger, "anti") == {}
    assert _fills(ledger, "anti", MON) == [] and ledger.record_rows("rejections", MON, "anti") == []


def test_the_mirror_repairs_its_own_rejections(lake, ledger, universe):
    """The target halves ETH in each round (and opens SOL in its repair): one answer cannot close
    ETH twice, so the engine refuses the mirror's second close; its repair sends that close
    again, and the mirror's book ends where the target's does, mirrored."""
    half = {"action": "close", "symbol": "ETH", "percent_of_position": 50}
    run_cycle(lake, PROVIDER, universe, [Scripted("target", _open("ETH", pct=40)), _reverse()],
              MON, ledger=ledger)
    monday = _book(ledger, "target")["ETH"][1]
    assert _book(ledger, "anti")["ETH"][:2] == (SHORT, pytest.approx(monday, rel=1e-12))
    target = Scripted("target", lambda b: [half, *_open("SOL", confidence=0.5)(b)],
                      lambda b: [half, *_open("SOL")(b)])
    run_cycle(lake, PROVIDER, universe, [target, _reverse()], TUE, ledger=ledger)
    assert _fills(ledger, "target", TUE) == [("answer", "close", LONG, "ETH"),
                                             ("repair", "close", LONG, "ETH"),
                                             ("repair", "open", LONG, "SOL")]
    assert _fills(ledger, "anti", TUE) == [("answer", "close", SHORT, "ETH"),
                                           ("answer", "open", SHORT, "SOL"),
                                           ("repair", "close", SHORT, "ETH")]
    assert [(r["round"], r["code"]) for r in ledger.record_rows("rejections", TUE, "anti")] == [
        ("answer", DUPLICATE_SYMBOL)]
    book, mirror = _book(ledger, "target"), _book(ledger, "anti")
    assert book["ETH"][1] == pytest.approx(monday / 4, rel=1e-12)
    assert mirror["ETH"][:2] == (SHORT, pytest.approx(monday / 4, rel=1e-12))
    assert (book["SOL"][0], mirror["SOL"][0]) == (LONG, SHORT)


def test_a_target_that_executed_nothing_leaves_the_mirror_holding(lake, ledger, universe):
    run_cycle(lake, PROVIDER, universe, [
        Scripted("target", _open("ETH", confidence=0.5), _open("ETH", confidence=0.6)),
        _reverse()], MON, ledger=ledger)
    [outcome] = ledger.record_rows("outcome", MON, "anti")
    assert (outcome["status"], outcome["n_fills"], outcome["n_rejections"]) == ("no_trade", 0, 0)
    assert json.loads(ledger.responses("anti", MON)["answer"])["decisions"] == []


# ------------------------------------------------------------------------------ the parts


def test_mirrors_sides_and_reflects_levels():
    eth, sol, ada = mirror_executed([
        {"action": "open_long", "symbol": "ETH", "percent_of_equity": 20, "confidence": 0.9,
         "invalidation_price": 1_900, "thesis": "t", "invalidation": "i", "round": "repair"},
        {"action": "hold", "symbol": "SOL", "invalidation_price": 120, "round": "answer"},
        {"action": "close", "symbol": "ADA", "percent_of_position": None}], PRICES)
    assert (eth["action"], eth["invalidation_price"], eth["percent_of_equity"]) == (
        "open_short", 2_100, 20)
    assert (sol["action"], sol["invalidation_price"]) == ("hold", 80)
    assert ada == {"action": "close", "symbol": "ADA"}  # unset fields and rounds are left out
    assert all("round" not in d for d in (eth, sol, ada))


def test_mirroring_twice_is_the_identity():
    d = {"action": "open_short", "symbol": "SOL", "percent_of_equity": 30, "confidence": 0.85,
         "invalidation_price": 110, "thesis": "t", "invalidation": "i"}
    assert mirror_decision(mirror_decision(d, PRICES), PRICES) == d


def test_a_mirrored_level_is_rounded_once_at_the_source():
    """The cycle price a level is mirrored around may differ in its last bits between CPU
    families (NumPy's vectorised exp): the level written into the answer's text is rounded to
    8 decimals, so the same season writes the same text on any machine."""
    d = {"action": "open_long", "symbol": "ETH", "invalidation_price": 1_900.123456789}
    for price in (2_000.0000000000002, 1_999.9999999999998):  # the same price, last bits apart
        assert mirror_decision(d, {"ETH": price})["invalidation_price"] == 2099.87654321
    # a level the mirror would put below zero goes just above it, never to zero
    deep = {"action": "open_short", "symbol": "SOL", "invalidation_price": 0.5}
    assert mirror_decision(deep, {"SOL": 0.0001}) == {"action": "open_long", "symbol": "SOL",
                                                      "invalidation_price": 1e-8}


def _d(action: str, symbol: str = "ETH", **fields) -> dict:
    return {"action": action, "symbol": symbol, **fields}


@pytest.mark.parametrize(("executed", "folded"), [
    # the last level counts: into the open, or the last hold alone
    ([_d("open_long", percent_of_equity=30, invalidation_price=90), _d("hold", invalidation_price=80)],
     [_d("open_long", percent_of_equity=30, invalidation_price=80)]),
    ([_d("hold", invalidation_price=90), _d("hold", invalidation_price=80)],
     [_d("hold", invalidation_price=80)]),
    ([_d("close", percent_of_position=50), _d("hold", invalidation_price=90),
      _d("close", percent_of_position=50), _d("hold", invalidation_price=80)],
     [_d("close", percent_of_position=50), _d("close", percent_of_position=50),
      _d("hold", invalidation_price=80)]),
    # a full close: nothing after an open of the cycle, else the close alone
    ([_d("open_long", percent_of_equity=30, invalidation_price=90), _d("close")], []),
    ([_d("add", percent_of_equity=10, invalidation_price=90), _d("close", percent_of_position=100)],
     [_d("close", percent_of_position=100)]),
    # a partial close shrinks the open (then dropped) or the add (then kept)
    ([_d("open_long", percent_of_equity=30, invalidation_price=90),
      _d("close", percent_of_position=25)],
     [_d("open_long", percent_of_equity=22.5, invalidation_price=90)]),
    ([_d("add", percent_of_equity=20, invalidation_price=90), _d("close", percent_of_position=50),
      _d("hold", invalidation_price=95)],
     [_d("add", percent_of_equity=10.0, invalidation_price=95), _d("close", percent_of_position=50)]),
    # other symbols are folded apart, in the order they first appear
    ([_d("close", "SOL"), _d("open_short", percent_of_equity=10, invalidation_price=110),
      _d("hold", "SOL")],
     [_d("close", "SOL"), _d("hold", "SOL"),
      _d("open_short", percent_of_equity=10, invalidation_price=110)]),
])
def test_fold(executed, folded):
    assert fold([{**d, "round": "answer"} for d in executed]) == folded


def test_the_duplicate_rule_is_the_engines(universe):
    """Every answer of up to four decisions over two held symbols: the decisions the reverse
    expects to be refused for naming a symbol again are exactly the engine's ``duplicate_symbol``
    rejections."""
    at = ts("2025-11-26 16:00")
    held = {s: Position(s, LONG, 1.0, PRICES[s] * 0.9, at, PRICES[s] * 0.5)
            for s in PRICES}
    state = CycleState(Portfolio(5_000.0, MappingProxyType(held)), at)
    kinds = [_d("close", percent_of_position=50), _d("hold", invalidation_price=1.0),
             _d("add", percent_of_equity=10, confidence=0.9, invalidation_price=1.0, thesis="t",
                invalidation="i")]
    decisions = [{**k, "symbol": s} for k in kinds for s in PRICES]
    checked = 0
    for n in range(1, 5):
        for combo in itertools.product(decisions, repeat=n):
            answer = Answer(parse_answer(json.dumps({"decisions": list(combo)})).answer.decisions)
            result = execute_answer(state, answer, PRICES, universe)
            engine = sorted(r.decision_index for r in result.rejections
                            if r.code == DUPLICATE_SYMBOL)
            assert refused_as_duplicates(combo) == engine, combo
            checked += 1
    assert checked == 6 + 36 + 216 + 1296
