"""TradeRank's prompt as this arena words it: the system message gives the model its role, the
investor prompt states the candle depths it shows (the numbers the layout really shows), and
each benchmark carries one trend line read from its own candles, pinned by hand on a synthetic
path."""

from __future__ import annotations

import pytest

from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.market.sections import trend_direction, trend_figures, trend_line
from arena.market.types import DEPTH, AssetDetail, Candle, MarketData
from tests.market_lakes import FRI, PROVIDER, book_state, market_lakes


@pytest.fixture(scope="module")
def case(tmp_path_factory, universe) -> tuple[MarketData, dict]:
    lakes = market_lakes(tmp_path_factory, universe)
    market = build_market(lakes.full, PROVIDER, universe, FRI)
    return market, portfolio_snapshot(book_state(market.prices, (), FRI), market.prices)


def test_the_system_message_gives_the_model_its_role(case):
    market, snapshot = case
    system, investor = build_briefing(market, "tester", snapshot).messages
    assert system.role == "system" and investor.role == "user"
    assert system.content.startswith("You are a portfolio manager in a live investing league.")
    for needle in ("language models, the agents built on them and the arena's own rule-based "
                   "players each run a portfolio of their own",
                   "measured against the other managers, the benchmarks and thousands of "
                   "zero-skill players", "medium-term investor", "held for weeks"):
        assert needle in system.content, needle


def test_the_prompt_states_the_candle_depths_it_shows(case):
    market, snapshot = case
    prompt = build_briefing(market, "tester", snapshot).prompt_text
    assert ("Each asset shows its last 26 weekly (1w), 30 daily (1d) and 24 four-hour (4h) "
            "candles, completed bars only") in prompt
    assert DEPTH == {"1w": 26, "1d": 30, "4h": 24}
    for d in (*market.assets, *market.benchmarks):  # the depths stated are those shown
        assert {iv: len(d.candles(iv)) for iv in DEPTH} == DEPTH, d.symbol


def _candle(close: float) -> Candle:
    return Candle("2026-01-01T00:00:00+00:00", close, close, close, close, 1.0)


def _benchmark(price: float | None, weekly_last: float, weeks: int = 26) -> AssetDetail:
    """A synthetic path: 29 daily closes at 100 and one at 130 (average 101); weekly closes at
    200 but the last (``weekly_last``)."""
    daily = tuple(_candle(c) for c in [100.0] * 29 + [130.0])
    weekly = tuple(_candle(c) for c in [200.0] * (weeks - 1) + [weekly_last])
    return AssetDetail("BTC", "crypto", "benchmark", price, None, 50.0, 50.0, 50.0, None, None,
                       weekly, daily, tuple(_candle(100.0) for _ in range(24)))


@pytest.mark.parametrize(("price", "weekly_last", "figures", "line"), [
    (111.1, 210.0, (0.1, 0.05),
     "trend up: price +10.0% against the average of its 30 daily closes shown; 4-week change "
     "+5.0% (last weekly close against the one 4 weeks earlier)"),
    (90.9, 190.0, (-0.1, -0.05),
     "trend down: price -10.0% against the average of its 30 daily closes shown; 4-week change "
     "-5.0% (last weekly close against the one 4 weeks earlier)"),
    (111.1, 190.0, (0.1, -0.05),
     "trend mixed: price +10.0% against the average of its 30 daily closes shown; 4-week "
     "change -5.0% (last weekly close against the one 4 weeks earlier)"),
    (None, 190.0, (None, -0.05),
     "trend NA: price NA against the average of its 30 daily closes shown; 4-week change "
     "-5.0% (last weekly close against the one 4 weeks earlier)"),
])
def test_a_benchmarks_trend_line_by_hand(price, weekly_last, figures, line):
    d = _benchmark(price, weekly_last)
    assert trend_figures(d) == tuple(None if f is None else pytest.approx(f) for f in figures)
    assert trend_direction(*trend_figures(d)) == line.split(":")[0].removeprefix("trend ")
    assert trend_line(d) == line


def test_a_benchmark_without_five_weekly_closes_has_no_4_week_change():
    d = _benchmark(111.1, 210.0, weeks=4)
    assert trend_figures(d) == (pytest.approx(0.1), None)
    assert trend_line(d).startswith("trend NA: price +10.0% ")


def test_each_benchmark_shows_one_trend_line_under_its_summary(case):
    market, snapshot = case
    prompt = build_briefing(market, "tester", snapshot).prompt_text
    benchmarks = prompt.split("## Benchmarks (context only, never tradable)", 1)[1]
    benchmarks = benchmarks.split("## Your portfolio", 1)[0]
    assert "trend line reads its own candles" in benchmarks
    lines = benchmarks.splitlines()
    assert sum(line.startswith("trend ") for line in lines) == len(market.benchmarks) == 2
    for b in market.benchmarks:
        at = next(i for i, x in enumerate(lines) if x.startswith(f"### {b.symbol} price "))
        assert lines[at + 1] == trend_line(b)
    # the screened assets' blocks carry none: the trend line is the benchmarks' own
    assert "\ntrend " not in prompt.split("## Benchmarks (context only", 1)[0]
