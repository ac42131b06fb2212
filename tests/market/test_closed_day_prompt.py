"""The prompt says one thing on NYSE-closed days, and it is what the engine does (issue 27,
item 10): the header once said any decision on a stock, even a hold, is rejected, while the
rules section and the engine accept a hold.

The test renders every template that speaks of the day (the investor's system and user
messages, the debate judge's and strategist's, which take the same header and rules) for
Saturday's cycle, plus the repair prompt the engine sends after a refused stock trade. It reads
each clause of every sentence about closed days for a verdict ("rejected"/"refused" or
"accepted") on actions it names, and checks each claim against the engine's dry run of that
action on a stock on that Saturday.
"""

from __future__ import annotations

import json
import re

import pytest

from arena.engine.check import check_answer
from arena.engine.rules import ARENA_RULES, NOT_TRADEABLE_TODAY
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.market.prompts import Prompts
from arena.market.sections import sections
from tests.market_lakes import FRI, PROVIDER, SAT, book_state, market_lakes

HELD = ("DOT", "JPM", "KO")  # book_state: DOT long, JPM short, KO long
STOCK, NEW_STOCK = "KO", "AAPL"  # a held long stock; a stock not held
THESIS = {"thesis": "a long-running trend should carry on for weeks",
          "invalidation": "a close below the last swing low", "rationale": "test"}
CLOSED_DAY = re.compile(r"CLOSED|closed today|NYSE is closed|weekends?\b|holidays?\b")
CLAUSE = re.compile(r";|\(|\bwhile\b|\bbut\b")
ACTION_WORDS = {"open": r"\bopens?\b|\bopen_(long|short)\b", "add": r"\badds?\b",
                "close": r"\bcloses\b", "hold": r"\bholds?\b",
                "any": r"\b(any|every) decision\b"}
VERDICTS = {"rejected": False, "refused": False, "accepted": True}


def decisions(price: float) -> dict[str, list[dict]]:
    """Well-formed decisions of each kind on a stock (accepted on a trading day, see below)."""
    opening = {"percent_of_equity": 20, "confidence": 0.9, **THESIS}
    return {
        "open": [{"action": "open_long", "symbol": NEW_STOCK, "invalidation_price": 1.0,
                  **opening},
                 {"action": "open_short", "symbol": NEW_STOCK, "invalidation_price": 1e6,
                  **opening}],
        "add": [{"action": "add", "symbol": STOCK, "invalidation_price": round(price * 0.8, 2),
                 **{**opening, "percent_of_equity": 5}}],
        "close": [{"action": "close", "symbol": STOCK, "rationale": "test"},
                  {"action": "close", "symbol": STOCK, "percent_of_position": 50,
                   "rationale": "test"}],
        "hold": [{"action": "hold", "symbol": STOCK, "rationale": "test"},
                 {"action": "hold", "symbol": STOCK, "invalidation_price": round(price * 0.85, 2),
                  "rationale": "test"}],
    }


def accepted(market, universe, decision: dict) -> tuple[bool, dict]:
    """The engine's dry run of one decision at ``market``'s cycle: (accepted, the report)."""
    state = book_state(market.prices, HELD, market.at)
    answer = json.dumps({"reasoning": "test", "decisions": [decision]})
    report = check_answer(state, answer, market.prices, universe, ARENA_RULES)
    assert report["parsed"], report["parse_error"]
    return not report["rejections"], report


@pytest.fixture(scope="module")
def markets(tmp_path_factory, universe):
    lakes = market_lakes(tmp_path_factory, universe)
    return {at: build_market(lakes.full, PROVIDER, universe, at, held=HELD) for at in (FRI, SAT)}


def closed_day_texts(market) -> list[str]:
    """Every text a contestant reads on ``market``'s day that speaks of the day."""
    snapshot = portfolio_snapshot(book_state(market.prices, HELD, market.at), market.prices)
    briefing = build_briefing(market, "tester", snapshot)
    prompts = Prompts()
    parts = sections(market.for_holdings(list(HELD)), snapshot, ARENA_RULES, prompts)
    extra = {f: "-" for f in ("bull", "bear", "risk", "packages", "min_package_confidence")}
    texts = [m.content for m in briefing.messages]
    texts += [prompts.render(name, **parts, **extra) for name in ("debate_judge", "strategist")]
    return texts


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def claims(text: str) -> list[tuple[str, bool, str]]:
    """(action, accepted?, clause) for every clause of a closed-day sentence that names
    actions and a verdict ("any decision" names them all)."""
    out = []
    for sentence in sentences(text):
        if not CLOSED_DAY.search(sentence):
            continue
        for clause in CLAUSE.split(sentence):
            said = {VERDICTS[w] for w in re.findall("|".join(VERDICTS), clause)}
            named = {a for a, pattern in ACTION_WORDS.items() if re.search(pattern, clause)}
            if not said or not named:
                continue
            assert len(said) == 1, f"one clause, two verdicts: {clause!r} (in {sentence!r})"
            if "any" in named:
                named = set(ACTION_WORDS) - {"any"}
            verdict = said.pop()
            out += [(action, verdict, clause.strip()) for action in sorted(named)]
    return out


def test_every_closed_day_sentence_says_what_the_engine_does(markets, universe):
    saturday, friday = markets[SAT], markets[FRI]
    assert not saturday.nyse_trading_day and friday.nyse_trading_day
    price = saturday.prices[STOCK]
    kinds = decisions(price)
    # each decision is well-formed: on Friday, a trading day, the engine accepts it
    for action, tried in kinds.items():
        for decision in tried:
            ok, report = accepted(friday, universe, decision)
            assert ok, (action, report["rejections"])
    # what the engine does on Saturday: holds accepted, every stock trade refused for the day
    engine: dict[str, bool] = {}
    repair_texts = []
    for action, tried in kinds.items():
        verdicts = set()
        for decision in tried:
            ok, report = accepted(saturday, universe, decision)
            verdicts.add(ok)
            if not ok:
                assert [r["code"] for r in report["rejections"]] == [NOT_TRADEABLE_TODAY]
                repair_texts.append(report["repair_prompt"])
        assert len(verdicts) == 1, action
        engine[action] = verdicts.pop()
    assert engine == {"open": False, "add": False, "close": False, "hold": True}

    texts = closed_day_texts(saturday) + repair_texts
    said = [c for text in texts for c in claims(text)]
    assert {action for action, _, _ in said} == set(engine)  # the prompt speaks of each
    wrong = [(action, clause) for action, verdict, clause in said if verdict != engine[action]]
    assert not wrong, wrong
    assert "NYSE is CLOSED today" in texts[1]  # the investor prompt's header


def test_a_trading_day_prompt_says_nothing_of_closed_days(markets):
    """Friday's prompt keeps the rules' sentence (it holds on any day) and drops the header's."""
    texts = closed_day_texts(markets[FRI])
    assert all("NYSE is CLOSED today" not in t for t in texts)
    assert any("on weekends and NYSE holidays stock opens" in t for t in texts)
