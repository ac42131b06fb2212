"""Properties of the engine over random action sequences and random raw answers (hypothesis)."""

from __future__ import annotations

import json
from itertools import permutations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.core.universe import load_universe
from arena.engine.broker import execute_answer
from arena.engine.contract import ACTIONS, Answer, parse_answer
from arena.engine.portfolio import Portfolio, fold
from arena.engine.rules import CycleState
from tests.conftest import ts

UNIVERSE = load_universe()
SYMBOLS = ["ETH", "SOL", "ADA", "AAPL", "MSFT"]  # crypto and stocks, all tradable on a Wednesday
BASE = {s: 100.0 for s in SYMBOLS}
DAYS = [ts("2025-11-24 16:00") + np.timedelta64(i, "D") for i in range(3)]  # Mon-Wed

decision = st.fixed_dictionaries({
    "action": st.sampled_from([*ACTIONS, "buy"]),
    "symbol": st.sampled_from([*SYMBOLS, "BTC", "FOO"]),
}, optional={
    "percent_of_equity": st.floats(0, 130),
    "confidence": st.floats(0.5, 1.1),
    "invalidation_price": st.floats(10, 250),
    "percent_of_position": st.floats(0, 120),
    "thesis": st.just("t"),
    "invalidation": st.just("i"),
})
# each symbol gets a base price anywhere in $1-$5,000 and moves within 0.55x-1.04x of it, so a
# short never loses its whole collateral here and cash must stay non-negative
multipliers = st.fixed_dictionaries({s: st.floats(0.55, 1.04) for s in SYMBOLS})
cycles = st.lists(st.tuples(st.lists(decision, max_size=6), multipliers), min_size=1, max_size=3)
bases = st.fixed_dictionaries({s: st.floats(1.0, 5_000.0) for s in SYMBOLS})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cycles, bases, st.floats(1_000.0, 20_000.0))
def test_money_is_only_moved_by_prices_and_fees(plan, base, start_cash):
    portfolio, all_fills = Portfolio(cash=start_cash), []
    for (decisions, moves), at in zip(plan, DAYS, strict=False):
        cycle_prices = {s: base[s] * moves[s] for s in SYMBOLS}
        # sizes in percent of equity and levels relative to the price, so every rule is reachable
        decisions = [{**d, **({"invalidation_price": d["invalidation_price"] / 100 * base.get(
            d["symbol"], 100.0)} if "invalidation_price" in d else {})} for d in decisions]
        answer = Answer.of({"reasoning": "r", "decisions": decisions})
        result = execute_answer(CycleState(portfolio, at), answer, cycle_prices, UNIVERSE)
        portfolio = result.state.portfolio
        all_fills += result.fills
        # cash never negative; fees never negative
        assert portfolio.cash >= 0.0  # the cap never spends a rounding error more than cash
        assert all(f.fee >= 0 for f in result.fills)
        # equity identity: start + realised + unrealised - fees
        unrealised = sum(p.unrealised(cycle_prices[s]) for s, p in portfolio.positions.items())
        expected = start_cash + portfolio.realised_pnl + unrealised - portfolio.fees_paid
        assert np.isclose(portfolio.equity(cycle_prices), expected, rtol=0, atol=1e-6)
        assert np.isclose(portfolio.fees_paid, sum(f.fee for f in all_fills), atol=1e-9)
        assert len(portfolio.positions) <= 10
        assert sum(f.kind == "open" for f in result.fills) <= 1
    # the state is the fold of the fills ...
    refolded = fold(all_fills, Portfolio(cash=start_cash))
    assert np.isclose(refolded.cash, portfolio.cash, atol=1e-6)
    # ... and folding symbol by symbol in any order gives the same end state
    by_symbol: dict[str, list] = {}
    for f in all_fills:
        by_symbol.setdefault(f.symbol, []).append(f)
    for order in list(permutations(by_symbol))[:6]:
        other = fold([f for s in order for f in by_symbol[s]], Portfolio(cash=start_cash))
        assert np.isclose(other.cash, portfolio.cash, atol=1e-6)
        assert np.isclose(other.fees_paid, portfolio.fees_paid, atol=1e-9)
        assert {s: round(p.quantity, 9) for s, p in other.positions.items()} == \
            {s: round(p.quantity, 9) for s, p in portfolio.positions.items()}


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True, allow_infinity=True) | st.integers()
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10),
                                                                      children, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_random_text_never_crashes_the_parser(raw):
    result = parse_answer(raw)
    assert result.ok or result.reason


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from(["", "```json\n", "Sure! "]))
def test_random_json_never_crashes_the_parser(value, prefix):
    raw = prefix + json.dumps(value, allow_nan=True) + ("\n```" if prefix.startswith("```") else "")
    result = parse_answer(raw)
    assert result.ok or result.reason


@settings(max_examples=200, deadline=None)
@given(st.lists(decision, max_size=5))
def test_parsed_decisions_always_execute_without_crashing(decisions):
    raw = json.dumps({"reasoning": "r", "decisions": decisions})
    parsed = parse_answer(raw)
    assert parsed.ok
    result = execute_answer(CycleState(Portfolio(), DAYS[0]), parsed.answer, BASE, UNIVERSE)
    assert len(result.fills) + len(result.rejections) + len(result.holds) == len(decisions)
