"""Prompt templates: loud rendering errors, every rule number and contract field in the prompt,
the synthetic label, and the prompt size in tokens (offline tiktoken)."""

from __future__ import annotations

import dataclasses

import pytest

from arena.core.types import Message
from arena.engine.contract import ACTIONS
from arena.engine.repair import RepairContext
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot, repair_prompt
from arena.market.prompts import (
    PROMPTS_DIR,
    PromptError,
    Prompts,
    load_template,
    prompt_tokens,
    render,
)
from arena.market.screener import screen
from arena.market.sections import asset_block, sections
from arena.market.types import MarketData
from tests.market_lakes import FRI, PROVIDER, book_state, market_lakes

TEMPLATES = ("system", "investor", "rules", "contract", "repair", "debate_bull", "debate_bear",
             "debate_risk", "debate_judge", "researcher", "strategist",
             # the signal server's (arena/doors/signal_server.py): a symbol and its brief
             "signal_bull", "signal_bear", "signal_risk", "signal_judge", "signal_chat",
             "signal_analyst", "signal_repair")
EXTRA_FIELDS = {"repair_context", "bull", "bear", "risk", "packages", "max_tool_calls",
                "min_package_confidence", "symbol", "brief", "judge_rules", "problem"}


@pytest.fixture(scope="module")
def lakes(tmp_path_factory, universe):
    return market_lakes(tmp_path_factory, universe)


@pytest.fixture(scope="module")
def case(lakes, universe) -> tuple[MarketData, dict]:
    """Friday: 10 screened assets plus three held ones that the screen did not pick."""
    picked = screen(lakes.full, PROVIDER, universe, FRI).selected
    held = tuple([a.symbol for a in universe.tradable if a.symbol not in picked][::20][:3])
    market = build_market(lakes.full, PROVIDER, universe, FRI, held=held)
    snapshot = portfolio_snapshot(book_state(market.prices, held, FRI), market.prices)
    assert len(market.screen.selected) == 10 and len(snapshot["positions"]) == 3
    assert not set(held) & set(picked)
    return market, snapshot


@pytest.fixture(scope="module")
def prompt(case) -> str:
    market, snapshot = case
    return build_briefing(market, "tester", snapshot).prompt_text


def test_every_template_exists_and_needs_only_known_fields(case):
    market, snapshot = case
    from arena.engine.rules import ARENA_RULES
    from arena.market.sections import rule_fields

    known = set(sections(market, snapshot, ARENA_RULES, Prompts())) | EXTRA_FIELDS
    known |= set(rule_fields(ARENA_RULES, ["BTC", "SPY"]))
    assert sorted(p.stem for p in PROMPTS_DIR.glob("*.md")) == sorted(TEMPLATES)
    for name in TEMPLATES:
        text = load_template(name)
        assert "{#" not in text and text.strip()
        assert set(Prompts().fields(name)) <= known, name


def test_missing_field_is_named(tmp_path):
    with pytest.raises(PromptError, match="repair_context"):
        render("repair")
    (tmp_path / "two.md").write_text("{# a comment #}\nHello {{ name }}, {{ place }}!\n")
    prompts = Prompts(tmp_path)
    assert prompts.render("two", name="Ada", place="Paris") == "Hello Ada, Paris!\n"
    with pytest.raises(PromptError, match=r"needs field\(s\) place; given: name"):
        prompts.render("two", name="Ada")
    (tmp_path / "bad.md").write_text("Hello {{ first name }}")
    with pytest.raises(PromptError, match="malformed placeholder"):
        prompts.render("bad")
    with pytest.raises(PromptError, match="no prompt template 'nope'"):
        prompts.load("nope")


def test_braces_and_dollars_pass_through(tmp_path):
    (tmp_path / "json.md").write_text('{"cash": "$10,000", "x": {{ x }}}')
    assert Prompts(tmp_path).render("json", x=1) == '{"cash": "$10,000", "x": 1}'


@pytest.mark.parametrize("needle", [
    "$10,000", "0.1% of notional", "0.80", "10% of equity", "at most one new position",
    "10 positions", "16:00 UTC", "every 15 minutes", "9:30-16:00", "9:30-13:00", "28 days",
    "10-100", "1-100", "closes, then holds, then adds, then opens", "exactly one follow-up",
    "notional x (entry - price) / entry", "never tradable", "medium-term investor",
    "held for weeks",
])
def test_prompt_states_every_rule(prompt, needle):
    assert needle in prompt


def test_prompt_states_the_contract(prompt):
    for field in ("reasoning", "market_context", "overall_sentiment", "key_factors", "decisions",
                  "action", "symbol", "percent_of_equity", "invalidation_price", "confidence",
                  "percent_of_position", "thesis", "invalidation", "rationale"):
        assert f'"{field}"' in prompt and f"\n- {field}: " in prompt, field  # shown, explained
    for action in ACTIONS:
        assert action in prompt
    for sentiment in ("bullish", "bearish", "neutral"):
        assert sentiment in prompt


def test_prompt_carries_data_and_portfolio(case, prompt):
    market, snapshot = case
    for d in (*market.assets, *market.benchmarks):
        assert f"### {d.symbol} price " in prompt
        for iv in ("1w", "1d", "4h"):
            first = d.candles(iv)[0].open_time[:10]
            assert f"\n{iv} from {first}, open,high,low,close,volume (volume in " in prompt
    for p in snapshot["positions"]:
        assert f"{p['symbol']} thesis: {p['thesis']}" in prompt
        assert f"{p['symbol']} invalidation: {p['invalidation']}" in prompt
    assert "Cash $" in prompt and "fees paid $" in prompt
    table = prompt.split("earnings_in_days\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(table) == 60 and all(len(row.split(",")) == 13 for row in table)


def test_synthetic_data_is_labelled(case, prompt):
    market, snapshot = case
    assert "SYNTHETIC" in prompt
    real = dataclasses.replace(market, provider="yfinance")
    text = build_briefing(real, "tester", snapshot).prompt_text
    assert "SYNTHETIC" not in text and "Data source: yfinance" in text


def test_repair_and_agent_templates_render(case):
    market, snapshot = case
    from arena.engine.rules import ARENA_RULES

    parts = sections(market, snapshot, ARENA_RULES, Prompts())
    context = RepairContext("the answer is not JSON", (), (), 1, 5000.0, 10_000.0)
    text = repair_prompt(context.render())
    assert "the answer is not JSON" in text and "New positions you may still open" in text
    assert "{{" not in text and text == render("repair", repair_context=context.render())
    judge = render("debate_judge", **parts, bull="BULL-CASE", bear="BEAR-CASE", risk="HIGH RISK")
    assert "BULL-CASE" in judge and "HIGH RISK" in judge and "at least two of the three" in judge
    assert "LOW RISK, MEDIUM RISK or HIGH RISK" in render("debate_risk", **parts)
    assert "at most 7 tool calls" in render("researcher", **parts, max_tool_calls=7,
                                           min_package_confidence=60)
    assert "PKG" in render("strategist", **parts, packages="PKG", min_package_confidence=60)


def test_prompt_tokens_counts_offline():
    one = prompt_tokens([Message("user", "hello world")])
    assert one == prompt_tokens([{"role": "user", "content": "hello world"}])
    assert one == 3 + 3 + 1 + 2  # framing, role, two words
    assert prompt_tokens([]) == 3


def test_full_ohlcv_candles_on_request(case):
    market, _ = case
    block = asset_block(market.detail("ETH"), {"1w": "ohlcv", "1d": "close", "4h": "close"})
    lines = block.splitlines()
    start = lines.index(next(x for x in lines if x.startswith("1w from")))
    rows = lines[start + 1:start + 27]
    assert all(len(r.split(",")) == 5 for r in rows)
    last = market.detail("ETH").weekly[-1]
    assert rows[-1].startswith(f"{last.open:.0f},{last.high:.0f},{last.low:.0f},{last.close:.0f},")
