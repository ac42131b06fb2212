"""The researcher's tools serve what its prompt promises: candles and indicators (RSI, MACD, EMA,
Bollinger, ATR) of any asset of the universe table, screened or not, from bars closed by the
cycle time only, at most ten calls.

Known answers from hand-made bars (:mod:`tests.agents.chart_lake`: ramps and a flat line, with
bars after the cycle time that would change every value if they were read); then a real cycle on
the synthetic lake whose researcher calls every tool for an asset neither screened nor held,
through the loopback model server, and whose prompt is read against the tools' schemas.
"""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

from arena.agents.llm import RetryPolicy
from arena.agents.researcher import (
    INDICATOR_BARS,
    INDICATOR_KEYS,
    MAX_TOOL_CALLS,
    TOOLS,
    ResearcherContestant,
    indicator_values,
    run_tool,
)
from arena.agents.roster import ContestantSpec, Params
from arena.core.types import Briefing, Message
from arena.data.lake import PartitionKey
from arena.ledger.store import Ledger
from arena.market.briefing import build_market
from arena.market.types import DEPTH
from arena.pipeline.cycle import run_cycle
from tests.agents.chart_lake import AT, CLOSED, LAST_OPEN, chart_lake, ramp_closes
from tests.agents.chart_lake import PROVIDER as CHART_PROVIDER  # the hand-made lake's
from tests.agents.openai_stub import StubResponse
from tests.conftest import ts
from tests.market_lakes import PROVIDER, market_lakes

SIGMA_20 = math.sqrt((20 ** 2 - 1) / 12)  # population std of 20 consecutive integers


@pytest.fixture(scope="module")
def charts(tmp_path_factory, universe):
    return chart_lake(tmp_path_factory.mktemp("charts") / "lake", universe)[1]


def _briefing(charts, **market) -> Briefing:
    """A briefing in which nothing is screened or held (no asset shown in full)."""
    data = {"table": [{"symbol": "ETH", "price": 249.0, "return_1d": 0.004, "rsi_14d": 100.0},
                      {"symbol": "SOL", "price": 10.0}],
            "assets": [], "benchmarks": [{"symbol": "BTC"}], "stale": {}, "damaged": {}, **market}
    return Briefing(AT, "researcher", {"market": data, "sections": {}},
                    (Message("system", "s"), Message("user", "u")), {"cash": 10_000.0},
                    charts=charts)


def _expected(interval: str) -> dict[str, float]:
    """Every indicator at the last closed bar, in closed form: an up ramp by 1 (1d), a down ramp
    by 1 (4h), a flat line (1w); every bar's true range is 2."""
    c = ramp_closes(interval)[-1]
    slope = {"1d": 1.0, "4h": -1.0, "1w": 0.0}[interval]
    # an SMA-seeded EMA(n) of a ramp lags it by (n - 1) / 2 bars from its seed on
    ema = {n: c - slope * (n - 1) / 2 for n in (12, 20, 26, 50)}
    sigma = SIGMA_20 * abs(slope)
    middle = ema[20]  # the SMA(20) of a ramp: the same lag
    line = ema[12] - ema[26]  # constant (7 x slope), so its signal is the same constant
    return {"rsi_14": {1.0: 100.0, -1.0: 0.0, 0.0: 50.0}[slope], "ema_20": ema[20],
            "ema_50": ema[50], "macd_line": line, "macd_signal": line, "macd_histogram": 0.0,
            "bb_lower": middle - 2 * sigma, "bb_middle": middle, "bb_upper": middle + 2 * sigma,
            "bb_position": 0.5 if sigma == 0 else (c - (middle - 2 * sigma)) / (4 * sigma),
            "atr_14": 2.0}


@pytest.mark.parametrize("interval", ["1d", "4h", "1w"])
def test_indicators_have_their_known_values_and_see_no_later_bar(charts, interval):
    got = run_tool(_briefing(charts), "get_indicators", {"symbol": "ETH", "interval": interval})
    assert "error" not in got, got
    assert got["last_candle"] == LAST_OPEN[interval].isoformat()  # the last bar closed by AT
    assert (got["close"], got["candles_used"]) == (ramp_closes(interval)[-1], INDICATOR_BARS)
    expected = _expected(interval)
    assert set(expected) == set(INDICATOR_KEYS)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-9), key
    assert expected["macd_line"] == pytest.approx(7.0 * {"1d": 1, "4h": -1, "1w": 0}[interval])


def test_each_indicator_starts_at_the_bar_its_definition_needs():
    """Read on the first t + 1 bars of a series (as the tool reads the bars closed by a cycle),
    an indicator is ``None`` until there are bars enough for it: RSI 14 and ATR 14 from the
    15th, the SMA-seeded EMAs and the bands from their n-th, the MACD line from the 26th, its
    signal from the 34th."""
    closes = [100 * math.exp(0.03 * math.sin(k / 3) + 0.001 * k) for k in range(60)]
    bars = pd.DataFrame({"high": [c * 1.01 for c in closes], "low": [c * 0.99 for c in closes],
                         "close": closes})
    full = {k: [] for k in INDICATOR_KEYS}
    for t in range(1, len(bars) + 1):
        for k, v in indicator_values(bars.iloc[:t]).items():
            full[k].append(v)
    first = {k: next(i for i, v in enumerate(vs) if v is not None) for k, vs in full.items()}
    assert first == {"rsi_14": 14, "ema_20": 19, "ema_50": 49, "macd_line": 25,
                     "macd_signal": 33, "macd_histogram": 33, "bb_lower": 19, "bb_middle": 19,
                     "bb_upper": 19, "bb_position": 19, "atr_14": 14}


def test_candles_of_an_asset_neither_screened_nor_held(charts):
    briefing = _briefing(charts)
    got = run_tool(briefing, "get_candles", {"symbol": "ETH", "interval": "1d"})
    assert got["columns"] == ["open_time", "open", "high", "low", "close", "volume"]
    assert [r[4] for r in got["rows"]] == ramp_closes("1d")[-DEPTH["1d"]:]
    assert got["rows"][-1][0] == LAST_OPEN["1d"].isoformat() and got["closed_by"] == AT.isoformat()
    five = run_tool(briefing, "get_candles", {"symbol": "ETH", "interval": "4h", "count": 5})
    assert [r[4] for r in five["rows"]] == ramp_closes("4h")[-5:]
    most = run_tool(briefing, "get_candles", {"symbol": "ETH", "interval": "1w", "count": 100})
    assert len(most["rows"]) == 100 < CLOSED
    summary = run_tool(briefing, "indicator_summary", {"symbol": "ETH"})
    assert (summary["return_1d"], summary["rsi_14d"]) == (0.004, 100.0)
    assert (summary["rsi_4h"], summary["rsi_1d"], summary["rsi_1w"]) == (0.0, 100.0, 50.0)


def test_a_stale_price_is_flagged(charts):
    got = run_tool(_briefing(charts, stale={"ETH": "2025-03-01T00:00:00+00:00"}), "get_candles",
                   {"symbol": "ETH", "interval": "1d", "count": 1})
    assert got["stale_since"] == "2025-03-01T00:00:00+00:00"


@pytest.mark.parametrize(("tool", "arguments", "error"), [
    ("get_candles", {"symbol": "DOGE", "interval": "1d"}, "no data for 'DOGE'"),
    ("get_indicators", {"interval": "1d"}, "no data for None"),
    ("get_candles", {"symbol": "ETH", "interval": "15m"}, "interval '15m' is not served"),
    ("get_indicators", {"symbol": "ETH", "interval": "1h"}, "interval '1h' is not served"),
    ("get_candles", {"symbol": "ETH", "interval": "1d", "count": 0}, "count must be"),
    ("get_candles", {"symbol": "ETH", "interval": "1d", "count": 101}, "from 1 to 100"),
    ("get_candles", {"symbol": "ETH", "interval": "1d", "count": "5"}, "not '5'"),
    ("get_candles", {"symbol": "SOL", "interval": "1d"}, "no closed 1d candles of SOL"),
    ("indicator_summary", {"symbol": "XRP"}, "no data for 'XRP'"),
    ("get_volume", {"symbol": "ETH"}, "unknown tool 'get_volume'"),
])
def test_the_tools_refuse_what_they_cannot_serve(charts, tool, arguments, error):
    got = run_tool(_briefing(charts), tool, arguments)
    assert set(got) == {"error"} and error in got["error"], got


def test_damaged_bars_and_a_briefing_without_charts_are_refused(charts):
    damaged = _briefing(charts, damaged={"ETH": "the lake holds no synthetic price bars of ETH"})
    assert "cannot be used this cycle: the lake holds no" in run_tool(
        damaged, "get_indicators", {"symbol": "ETH", "interval": "1d"})["error"]
    bare = _briefing(None)
    assert "no charts" in run_tool(bare, "get_candles", {"symbol": "ETH", "interval": "1d"})["error"]
    assert run_tool(bare, "portfolio_state", {}) == {"cash": 10_000.0}


def test_a_partition_the_lake_cannot_read_is_refused_by_name(tmp_path, universe):
    lake, charts = chart_lake(tmp_path / "lake", universe)
    path = lake.path(PartitionKey(CHART_PROVIDER, "4h", "ETH"))
    path.write_bytes(b"not a bar file")
    got = run_tool(_briefing(charts), "get_indicators", {"symbol": "ETH", "interval": "4h"})
    assert set(got) == {"error"} and str(path) in got["error"] and "damaged" in got["error"]
    assert "error" not in run_tool(_briefing(charts), "get_indicators",
                                   {"symbol": "ETH", "interval": "1d"})


# ------------------------------------------------------------- a real cycle and its prompt

MON = ts("2025-11-24 16:00")
DECISION = json.dumps({"reasoning": "nothing convinces", "decisions": []})


def _calls(symbol: str, shown: str) -> StubResponse:
    asks = [("get_candles", {"symbol": symbol, "interval": "4h", "count": 7}),
            ("get_indicators", {"symbol": symbol, "interval": "1d"}),
            ("indicator_summary", {"symbol": symbol}),
            ("indicator_summary", {"symbol": shown}),
            ("portfolio_state", {})]
    return StubResponse.tool_calls(asks)


@pytest.fixture(scope="module")
def cycle(tmp_path_factory, universe):
    """One cycle of a researcher on the synthetic lake: its first call asks every tool about an
    asset the screen did not pick (and the summary of one it did); what it was served is read
    back from the ledger."""
    from tests.agents.openai_stub import OpenAIStub

    lake = market_lakes(tmp_path_factory, universe).full
    market = build_market(lake, PROVIDER, universe, MON)
    shown = market.assets[0]
    unseen = next(r.symbol for r in market.table if r.symbol not in market.screen.selected
                  and r.price is not None and r.symbol not in market.stale)
    with OpenAIStub() as stub:
        stub.script(_calls(unseen, shown.symbol),
                    StubResponse.answer(json.dumps({"packages": []})),
                    StubResponse.answer(DECISION))
        spec = ContestantSpec(name="researcher-stub", kind="researcher",
                              model="openai/stub-model", api_base=stub.url,
                              params=Params(temperature=0.3, max_tokens=400, timeout=5,
                                            num_retries=1))
        ledger = Ledger(tmp_path_factory.mktemp("ledger") / "root")
        contestant = ResearcherContestant(spec, retry=RetryPolicy(backoff_s=0.01,
                                                                  max_backoff_s=0.02))
        [outcome] = run_cycle(lake, PROVIDER, universe, [contestant], MON, ledger=ledger)
        first_prompt = stub.chat_requests[0].messages[-1]["content"]
        first_body = stub.chat_requests[0].body
    assert outcome.status == "no_trade", outcome
    [row] = [r for r in ledger.record_rows("responses", MON, "researcher-stub")
             if r["round"] == "answer"]
    served = json.loads(row["extra"])["tool_calls"]
    return market, shown, unseen, served, first_prompt, first_body


def test_a_cycle_serves_every_tool_for_an_asset_the_screen_did_not_pick(cycle):
    market, shown, unseen, served, _, _ = cycle
    assert unseen not in {d.symbol for d in market.assets}
    candles, indicators, summary, shown_summary, portfolio = (t["result"] for t in served)
    assert all("error" not in t["result"] for t in served), served
    assert len(candles["rows"]) == 7 and candles["rows"][-1][0] < MON.isoformat()
    assert indicators["candles_used"] == INDICATOR_BARS
    assert all(indicators[k] is not None for k in INDICATOR_KEYS), indicators
    row = next(r for r in market.table if r.symbol == unseen)
    assert (summary["price"], summary["return_30d"], summary["rsi_14d"]) == (
        row.price, row.return_30d, row.rsi_14d)
    assert summary["rsi_1d"] == indicators["rsi_14"] == row.rsi_14d  # one RSI, wherever shown
    assert (shown_summary["rsi_4h"], shown_summary["rsi_1d"], shown_summary["rsi_1w"]) == (
        shown.rsi_4h, shown.rsi_1d, shown.rsi_1w)  # the briefing's own numbers
    assert portfolio["cash"] == 10_000.0


def _promised_tools(prompt: str) -> dict[str, list[str]]:
    return {m[1]: [p.strip() for p in m[2].split(",") if p.strip()]
            for m in re.finditer(r"^- `(\w+)\(([^)]*)\)`", prompt, re.M)}


def test_the_prompt_promises_what_the_tools_serve(cycle):
    """The researcher's prompt, as the model received it, read against the tools it was given:
    the same tools with the same parameters, the intervals, the candle count and its default,
    the indicators and their window, the call budget, and that every tool serves any asset of
    the universe table (the previous test calls each for one the screen left out)."""
    _, _, _, served, prompt, body = cycle
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in body["tools"]}
    assert schemas == {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    promised = _promised_tools(prompt)
    assert promised == {name: list(p["properties"]) for name, p in schemas.items()}
    lines = {name: next(line for line in prompt.splitlines() if line.startswith(f"- `{name}("))
             for name in promised}
    for name, params in schemas.items():
        if "interval" in params["properties"]:
            stated = re.search(r"(\w+), (\w+) or (\w+)", lines[name]).groups()
            assert list(stated) == params["properties"]["interval"]["enum"], name
    count = schemas["get_candles"]["properties"]["count"]
    assert f"count {count['minimum']}-{count['maximum']}" in lines["get_candles"]
    assert (f"default {DEPTH['1w']} weekly, {DEPTH['1d']} daily or {DEPTH['4h']} four-hour"
            in lines["get_candles"])
    indicators = lines["get_indicators"]
    assert f"from its last {INDICATOR_BARS} closed candles" in indicators
    for stated, keys in {"RSI 14": ["rsi_14"], "EMA 20": ["ema_20"], "EMA 50": ["ema_50"],
                         "MACD 12/26/9 (line, signal, histogram)":
                             ["macd_line", "macd_signal", "macd_histogram"],
                         "Bollinger bands 20 with 2 standard deviations (lower, middle, upper, "
                         "and the close's position": ["bb_lower", "bb_middle", "bb_upper",
                                                      "bb_position"],
                         "ATR 14": ["atr_14"]}.items():
        assert stated in indicators, stated
        assert all(served[1]["result"][k] is not None for k in keys), keys
    assert "RSI 14 on 4h, 1d and 1w" in lines["indicator_summary"]
    assert {"rsi_4h", "rsi_1d", "rsi_1w"} <= set(served[2]["result"])
    assert "market tools serve any asset of the universe table" in prompt
    assert f"at most {MAX_TOOL_CALLS} tool calls in total" in prompt
    assert "return only candles closed by the cycle time" in prompt
