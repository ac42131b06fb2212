"""Parameters of the house strategies: defaults that answer exactly as before, variants of one
strategy playing side by side through a real cycle, and every bad parameter refused at load."""

from __future__ import annotations

import json
import textwrap

import pandas as pd
import pytest

from arena.agents.factory import build_contestant
from arena.agents.house import (
    LOOKBACKS,
    PARAMETERS,
    SIZE_PCT,
    HouseContestant,
    HouseParamsError,
    MomentumParams,
    house_label,
)
from arena.agents.roster import RosterError, parse_roster
from arena.engine.portfolio import Portfolio
from arena.engine.rules import ARENA_RULES, CycleState
from arena.ledger.store import Ledger
from arena.market.briefing import build_briefing, portfolio_snapshot
from arena.market.types import TABLE_COLUMNS
from arena.pipeline.cycle import run_cycle
from arena.pipeline.turn import take_turn
from tests.agents import house_answers
from tests.market_lakes import PROVIDER, market_lakes

MON = house_answers.CYCLES[0]
DEFAULTS = {  # every number each strategy used before it took parameters
    "momentum": {"entry_lookback": 30, "entry_min_return_pct": 0, "exit_lookback": 10,
                 "exit_below_return_pct": 0, "size_pct": 20, "stop_pct": 10},
    "mean_reversion": {"entry_rsi_below": 30, "exit_rsi_above": 50, "size_pct": 15,
                       "stop_pct": 8},
    "trend_following": {"pullback_pct": 5, "trend_lookback": 30, "trend_min_return_pct": 0,
                        "size_pct": 20, "stop_pct": 7},
    "equal_weight": {"basket_size": 10, "size_pct": 10, "stop_pct": 50},
}


@pytest.fixture(scope="module")
def lake(tmp_path_factory, universe):
    return market_lakes(tmp_path_factory, universe).full


@pytest.fixture(scope="module")
def by_cycle(lake, universe):
    return house_answers.markets(lake, universe)


def roster_of(body: str):
    return parse_roster("contestants:\n" + textwrap.indent(textwrap.dedent(body), "  "),
                        "test.yaml")


def problems_of(body: str) -> list[str]:
    with pytest.raises(RosterError) as info:
        roster_of(body)
    return list(info.value.problems)


# -- the defaults are today's behaviour ----------------------------------------------------------


def test_the_defaults_are_the_numbers_the_strategies_always_used():
    assert {s: p().model_dump() for s, p in PARAMETERS.items() if p} == DEFAULTS
    assert PARAMETERS["random"] is None


@pytest.mark.parametrize("strategy", house_answers.STRATEGIES)
def test_default_answers_are_byte_identical_to_the_recorded_ones(strategy, by_cycle, universe):
    """The answers (text and call label) of an entry without parameters, and of one that spells
    out every default, are the ones recorded before strategies took parameters."""
    recorded = json.loads(house_answers.RECORDED.read_text(encoding="utf-8"))[strategy]
    plain = HouseContestant(f"house-{strategy}", strategy)
    assert house_answers.answers(plain, by_cycle, universe) == recorded
    if strategy != "random":
        [spec] = roster_of(f"- {{name: spelled-out, kind: house, strategy: {strategy}, "
                           f"strategy_params: {json.dumps(DEFAULTS[strategy])}}}\n")
        spelled = build_contestant(spec)
        assert spelled.label == f"house/{strategy}"
        assert house_answers.answers(spelled, by_cycle, universe) == recorded


# -- variants side by side -----------------------------------------------------------------------

VARIANTS = """\
- {name: momentum, kind: house, strategy: momentum}
- name: momentum-fast
  kind: house
  strategy: momentum
  strategy_params: {entry_lookback: 1, exit_lookback: 1, size_pct: 35, stop_pct: 4.5}
"""


def test_two_variants_of_one_strategy_play_side_by_side_in_one_cycle(lake, universe, tmp_path,
                                                                     by_cycle):
    """One cycle through the pipeline: each variant opens what its own parameters pick, sized
    and levelled as they say, and the ledger's call records tell the two apart."""
    roster = roster_of(VARIANTS)
    assert roster["momentum-fast"].strategy_params == MomentumParams(
        entry_lookback=1, exit_lookback=1, size_pct=35, stop_pct=4.5)
    ledger = Ledger(tmp_path / "ledger-root")
    outcomes = run_cycle(lake, PROVIDER, universe, [build_contestant(s) for s in roster], MON,
                         ledger=ledger)
    assert {(o.contestant, o.status) for o in outcomes} == {("momentum", "traded"),
                                                            ("momentum-fast", "traded")}

    rows = [r for r in by_cycle[MON].table if r.tradeable_today and r.price is not None]
    expected = {"momentum": (max((r for r in rows if r.return_30d is not None),
                                 key=lambda r: r.return_30d), 20, 0.90),
                "momentum-fast": (max((r for r in rows if r.return_1d is not None),
                                      key=lambda r: r.return_1d), 35, 0.955)}
    opened = {}
    for name, (row, pct, level) in expected.items():
        assert (row.return_30d if name == "momentum" else row.return_1d) > 0
        [position] = ledger.portfolio(name).positions.values()
        [fill] = ledger.fills(name)
        assert (position.symbol, position.side, fill.kind) == (row.symbol, "long", "open")
        assert fill.price == row.price
        assert fill.quantity * fill.price == pytest.approx(10_000 * pct / 100, abs=1e-6)
        assert position.invalidation_price == round(row.price * level, 8)
        opened[name] = (position.symbol, fill.quantity)
    assert opened["momentum"] != opened["momentum-fast"]  # the same briefing, two decisions

    answers = {name: json.loads(ledger.responses(name, MON)["answer"]) for name in expected}
    assert answers["momentum-fast"]["decisions"][0]["invalidation"] == "a close 4.5% below entry"
    assert answers["momentum"]["reasoning"] != answers["momentum-fast"]["reasoning"]
    calls = ledger.table("calls")
    assert dict(zip(calls.contestant, calls.model, strict=True)) == {
        "momentum": "house/momentum",
        "momentum-fast": "house/momentum(entry_lookback=1,exit_lookback=1,size_pct=35,"
                         "stop_pct=4.5)"}


def _answer(agent: HouseContestant, market, book: Portfolio) -> dict:
    state = CycleState(book, market.at)
    briefing = build_briefing(market, agent.name, portfolio_snapshot(state, market.prices))
    return json.loads(agent.answer(briefing).text)


def _moves(answer: dict) -> list[tuple[str, str]]:
    return [(d["action"], d["symbol"]) for d in answer["decisions"]]


def test_each_parameter_moves_its_strategy_as_stated(by_cycle):
    """Known answers on one briefing, worked out from its universe table."""
    market = by_cycle[MON]
    rows = [r for r in market.table if r.tradeable_today and r.price is not None]
    empty, longs = Portfolio(), house_answers.four_longs(market, 0)
    held = {r.symbol: r for r in market.table if r.symbol in longs.positions}

    best_10d = max((r for r in rows if r.return_10d is not None), key=lambda r: r.return_10d)
    fast = HouseContestant("m", "momentum", params={"entry_lookback": 10})
    assert _moves(_answer(fast, market, empty)) == [("open_long", best_10d.symbol)]
    picky = HouseContestant("m", "momentum", params={
        "entry_min_return_pct": best_10d.return_10d * 100 + 0.01, "entry_lookback": 10})
    assert _moves(_answer(picky, market, empty)) == []  # the best return must beat the floor
    assert sorted(held) == ["BNB", "ETH", "SOL", "XRP"]  # 30-day returns 26%, 12%, 38%, -2.6%
    assert [a for a, _ in _moves(_answer(fast, market, longs))] == ["open_long"]  # 10-day: all up
    patient = HouseContestant("m", "momentum", params={"exit_lookback": 30,
                                                       "exit_below_return_pct": -2})
    closes = [s for a, s in _moves(_answer(patient, market, longs)) if a == "close"]
    assert closes == [s for s in sorted(held) if held[s].return_30d < -0.02] == ["XRP"]

    rsi = sorted((r for r in rows if r.rsi_14d is not None), key=lambda r: r.rsi_14d)
    lowest = rsi[0]
    loose = HouseContestant("r", "mean_reversion", params={
        "entry_rsi_below": lowest.rsi_14d + 0.5, "exit_rsi_above": 99, "size_pct": 25})
    [open_] = _answer(loose, market, empty)["decisions"]
    assert (open_["symbol"], open_["percent_of_equity"]) == (lowest.symbol, 25)
    tight = HouseContestant("r", "mean_reversion", params={"entry_rsi_below": lowest.rsi_14d})
    assert _moves(_answer(tight, market, empty)) == []  # strictly below the threshold

    def trend_closes(params: dict) -> list[str]:
        agent = HouseContestant("t", "trend_following", params=params)
        return [s for a, s in _moves(_answer(agent, market, longs)) if a == "close"]

    # below their 30-day highs: ETH 2.2%, BNB 7.9%, SOL 4.2%, XRP 14.2%
    assert trend_closes({}) == ["BNB", "XRP"]
    assert trend_closes({"pullback_pct": 3}) == ["BNB", "SOL", "XRP"] == [
        s for s in sorted(held) if held[s].distance_from_30d_high < -0.03]
    assert trend_closes({"pullback_pct": 99}) == []

    four = HouseContestant("e", "equal_weight", params={"basket_size": 4})
    assert _moves(_answer(four, market, longs)) == []  # the basket is full
    five = HouseContestant("e", "equal_weight", params={"basket_size": 5, "size_pct": 12.5})
    [open_] = _answer(five, market, longs)["decisions"]
    assert open_["percent_of_equity"] == 12.5 and open_["invalidation"] == "a close 50% below entry"


@pytest.mark.parametrize("size", SIZE_PCT)
def test_the_extreme_sizes_a_roster_accepts_are_sizes_the_engine_executes(size, by_cycle,
                                                                          universe):
    rules = (max(ARENA_RULES.equity_percent[0], 100 * ARENA_RULES.min_open_share),
             ARENA_RULES.equity_percent[1])
    assert rules == SIZE_PCT  # an open's size within the rules: its percent, its minimum share
    [spec] = roster_of(f"- {{name: m, kind: house, strategy: momentum, "
                       f"strategy_params: {{size_pct: {size}, stop_pct: 0.1}}}}\n")
    agent = build_contestant(spec)
    market = by_cycle[MON]
    state = CycleState(Portfolio(), MON)
    briefing = build_briefing(market, agent.name, portfolio_snapshot(state, market.prices))
    outcome = take_turn(agent, briefing, state, market.prices, universe)
    assert outcome.rejections == () and [f.kind for f in outcome.fills] == ["open"]
    expected = min(10_000 * size / 100, 10_000 / (1 + ARENA_RULES.fee_rate))  # the cash cap
    assert outcome.fills[0].quantity * outcome.fills[0].price == pytest.approx(expected)


# -- refused at load -----------------------------------------------------------------------------


def _entry(strategy: str, params: str) -> str:
    return f"- {{name: variant, kind: house, strategy: {strategy}, strategy_params: {params}}}\n"


WHERE = "test.yaml: contestant 'variant' (#1): strategy_params"


@pytest.mark.parametrize(("strategy", "params", "expected"), [
    # outside the range (a size the engine would refuse, a level not below the entry)
    ("momentum", "{size_pct: 9.5}", ".size_pct: 9.5 refused: size_pct takes a number from 10 to "
                                    "100: the percent of equity each open puts in (the arena's "
                                    "rules refuse an open outside 10-100% of equity)"),
    ("equal_weight", "{size_pct: 101}", ".size_pct: 101 refused: size_pct takes a number from 10"),
    ("trend_following", "{stop_pct: 0}", ".stop_pct: 0 refused: stop_pct takes a number from 0.1 "
                                         "to 99"),
    ("mean_reversion", "{stop_pct: 100}", ".stop_pct: 100 refused: stop_pct takes a number"),
    ("mean_reversion", "{entry_rsi_below: 0}", ".entry_rsi_below: 0 refused: entry_rsi_below "
                                               "takes a number between 0 and 100 (RSI points)"),
    ("trend_following", "{pullback_pct: 100}", ".pullback_pct: 100 refused: pullback_pct takes"),
    ("momentum", "{exit_below_return_pct: -100}",
     ".exit_below_return_pct: -100 refused: exit_below_return_pct takes a number above -100"),
    ("equal_weight", "{basket_size: 11}", ".basket_size: 11 refused: basket_size takes a whole "
                                          "number from 1 to 10"),
    ("equal_weight", "{basket_size: 0}", ".basket_size: 0 refused: basket_size takes"),
    # a lookback the universe table does not have
    ("momentum", "{entry_lookback: 20}",
     ".entry_lookback: 20 refused: entry_lookback takes 1, 10 or 30 (days): the return that "
     "ranks the assets to open (the universe table's return_1d, return_10d, return_30d; the "
     "briefing has no other return)"),
    ("trend_following", "{trend_lookback: 90}", ".trend_lookback: 90 refused: trend_lookback "
                                                "takes 1, 10 or 30 (days)"),
    # the wrong type
    ("momentum", "{size_pct: '20'}", ".size_pct: '20' refused: size_pct takes a number"),
    ("momentum", "{size_pct: true}", ".size_pct: True refused: size_pct takes a number"),
    ("momentum", "{size_pct: .nan}", ".size_pct: nan refused: size_pct takes a number"),
    ("momentum", "{exit_lookback: 10.0}", ".exit_lookback: 10.0 refused: exit_lookback takes 1, "
                                          "10 or 30"),
    ("equal_weight", "{basket_size: 2.5}", ".basket_size: 2.5 refused: basket_size takes a "
                                           "whole number"),
    ("momentum", "[20, 10]", ": expected a mapping of parameter names to values"),
    ("momentum", "{20: 10}", ".20: not a parameter name (a name is a word such as size_pct)"),
    # unknown to the strategy (what it takes, and what it reads that no parameter changes)
    ("momentum", "{lookback: 10}", ".lookback: not a parameter of strategy momentum (it takes "
                                   "entry_lookback, entry_min_return_pct, exit_lookback, "
                                   "exit_below_return_pct, size_pct, stop_pct)"),
    ("mean_reversion", "{rsi_period: 7}", ".rsi_period: not a parameter of strategy "
                                          "mean_reversion (it takes entry_rsi_below, "
                                          "exit_rsi_above, size_pct, stop_pct; its RSI is the "
                                          "universe table's rsi_14d, the only RSI the briefing "
                                          "gives every asset)"),
    ("trend_following", "{high_lookback: 60}", ".high_lookback: not a parameter of strategy "
                                               "trend_following (it takes pullback_pct"),
    # a rule between parameters
    ("mean_reversion", "{entry_rsi_below: 45, exit_rsi_above: 40}",
     ": exit_rsi_above (40) must be above entry_rsi_below (45)"),
    # a strategy that takes none
    ("random", "{size_pct: 20}", ": strategy random takes no parameters"),
])
def test_each_bad_parameter_is_refused_naming_it_and_what_it_takes(strategy, params, expected):
    [problem] = problems_of(_entry(strategy, params))
    assert problem.startswith(WHERE + expected), problem


def test_every_problem_of_an_entry_is_a_line_of_its_own():
    problems = problems_of(_entry("momentum", "{size_pct: 5, entry_lookback: 7, colour: red}") +
                           "- {name: gpt, kind: llm, model: openai/x, api_base: "
                           "'http://127.0.0.1:1/v1', strategy_params: {size_pct: 20}}\n")
    assert [p.split(": ")[1:3] for p in problems] == [
        ["contestant 'variant' (#1)", "strategy_params.entry_lookback"],
        ["contestant 'variant' (#1)", "strategy_params.size_pct"],
        ["contestant 'variant' (#1)", "strategy_params.colour"],
        ["contestant 'gpt' (#2)", "strategy_params"]]
    assert problems[-1].endswith("strategy_params: not used by kind llm (only by house)")


def test_an_empty_mapping_is_every_default_and_random_may_have_one():
    momentum, random = roster_of("""\
- {name: a, kind: house, strategy: momentum, strategy_params: {}}
- {name: b, kind: house, strategy: random, strategy_params: {}}
""")
    assert build_contestant(momentum).params == MomentumParams()
    assert build_contestant(momentum).label == "house/momentum"
    assert random.strategy_params is None and build_contestant(random).label == "house/random"


def test_a_contestant_built_in_code_is_checked_too():
    with pytest.raises(HouseParamsError, match=r"house strategy momentum: size_pct: 5 refused"):
        HouseContestant("x", "momentum", params={"size_pct": 5})
    with pytest.raises(HouseParamsError, match="the parameters of another strategy"):
        HouseContestant("x", "equal_weight", params=MomentumParams())
    assert HouseContestant("x", "momentum", params=MomentumParams(size_pct=30)).label == \
        "house/momentum(size_pct=30)"


def test_the_label_names_only_the_parameters_that_differ_in_declared_order():
    params = MomentumParams(stop_pct=7.5, entry_lookback=10, size_pct=20)
    assert house_label("momentum", params) == "house/momentum(entry_lookback=10,stop_pct=7.5)"
    assert house_label("random", None) == "house/random"
    assert set(LOOKBACKS.values()) <= set(TABLE_COLUMNS)  # a lookback reads the briefing


def test_the_seasons_roster_copy_keeps_the_parameters(tmp_path_factory, universe, tmp_path):
    """A season's roster copy keeps each variant's parameters: the copy written at the season's
    start, and the copy rewritten when a variant joins while the season runs."""
    from arena.pipeline.season_config import load_season, roster_path, season_contestants
    from arena.pipeline.season_roster import add_contestants
    from tests.market_lakes import season_lake

    roster = "contestants:\n" + textwrap.indent(VARIANTS, "  ")
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", roster, start="2025-11-24",
                       days=3)
    newcomer = tmp_path / "newcomer.yaml"
    newcomer.write_text("contestants:\n  - {name: trend-tight, kind: house, "
                        "strategy: trend_following, strategy_params: {pullback_pct: 2.5}}\n",
                        encoding="utf-8")
    add_contestants(lake, load_season(lake), newcomer, MON + pd.Timedelta(hours=2))
    copy = roster_path(lake).read_text(encoding="utf-8")
    assert "pullback_pct: 2.5" in copy and "stop_pct: 4.5" in copy
    labels = {c.name: c.label for c in season_contestants(lake, {}, at=MON + pd.Timedelta(days=1))[0]}
    assert labels == {
        "momentum": "house/momentum",
        "momentum-fast": "house/momentum(entry_lookback=1,exit_lookback=1,size_pct=35,"
                         "stop_pct=4.5)",
        "trend-tight": "house/trend_following(pullback_pct=2.5)"}
    assert [c.name for c in season_contestants(lake, {}, at=MON)[0]] == ["momentum",
                                                                         "momentum-fast"]
