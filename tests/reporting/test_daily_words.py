"""The daily report's day in words, on a hand-built day: a contestant that opened a position, one
that held (after the invalidation monitor closed one of its positions), one whose decision the
engine rejected, and a ruler - each paragraph pinned word for word, built from the ledger's
records alone (no model is called), its reasoning cut at a sentence and escaped."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from arena.core.types import CallRecord
from arena.engine.outcomes import CycleOutcome
from arena.engine.portfolio import LONG, Fill
from arena.engine.rules import Rejection
from arena.ledger.records import CycleRecord, MonitorRecord
from arena.ledger.store import Ledger
from arena.reporting.daily import daily_report, render_daily_html
from tests.market_lakes import FRI, PROVIDER, market_lakes

DAY = pd.Timedelta(days=1)
ALPHA_REASONING = ("ETH broke *above* its 30-day high on rising volume <b>x</b> & kept it. "
                   "The 4-hour trend agrees and RSI is 61, not stretched. A close under 1,150 "
                   "would prove me wrong, so the invalidation sits there. Funding is flat and "
                   "the weekly candle is the strongest in months.")


def _answer(reasoning: str, decisions: list[dict]) -> str:
    return json.dumps({"reasoning": reasoning, "decisions": decisions})


def _open(symbol: str, percent: float, confidence: float = 0.9) -> dict:
    return {"action": "open_long", "symbol": symbol, "percent_of_equity": percent,
            "confidence": confidence, "invalidation_price": 1.0, "thesis": "it rises",
            "invalidation": "it falls"}


def _equity(value: float, positions: int = 0) -> dict[str, float | int | None]:
    return {"cash": 10_000.0, "equity": value, "fees_paid": 0.0, "realised_pnl": 0.0,
            "positions": positions}


@pytest.fixture(scope="module")
def day(tmp_path_factory, universe) -> str:
    """The report of the hand-built day at Friday's cycle."""
    lake = market_lakes(tmp_path_factory, universe).full
    ledger = Ledger(tmp_path_factory.mktemp("words") / "lake")

    def record(name: str, at: pd.Timestamp, status: CycleOutcome, answer: str, *,
               decisions=(), fills=(), rejections=(), equity: float = 10_000.0,
               model: str | None = None) -> None:
        calls = () if model is None else (CallRecord(name, "decision", model, 0, 0, 0.0, 0.0),)
        ledger.record_cycle(at, name, lambda: CycleRecord(
            name, at, status, responses={"answer": answer},
            decisions={"answer": list(decisions)} if decisions else {},
            fills={"answer": list(fills)} if fills else {},
            rejections={"answer": list(rejections)} if rejections else {},
            calls=calls, equity=_equity(equity, len(fills))))

    before = FRI - DAY
    record("alpha", before, CycleOutcome.NO_TRADE, _answer("Waiting.", []))
    eth = _open("ETH", 20)
    record("alpha", FRI, CycleOutcome.TRADED, _answer(ALPHA_REASONING, [eth]), decisions=[eth],
           fills=[Fill(FRI, "ETH", LONG, "open", 2.5, 1_234.5, 3.09, decision_index=0,
                       invalidation_price=1_150.0, thesis="it rises")],
           equity=10_150.0)
    sol, doge = _open("SOL", 30), _open("ETH", 10)
    record("beta", before, CycleOutcome.TRADED, _answer("Two longs.", [sol, doge]),
           decisions=[sol, doge],
           fills=[Fill(before, "SOL", LONG, "open", 20.0, 150.0, 3.0, decision_index=0),
                  Fill(before, "ETH", LONG, "open", 1.0, 1_000.0, 1.0, decision_index=1)])
    ledger.record_monitor(before, FRI, "beta", lambda: MonitorRecord(
        "beta", before, FRI, fills=(Fill(FRI - pd.Timedelta(hours=2), "ETH", LONG, "close",
                                         1.0, 990.0, 0.99, -10.0, automatic=True),)))
    record("beta", FRI, CycleOutcome.NO_TRADE,
           _answer("SOL's thesis holds;   nothing new clears the bar.", []), equity=9_900.0)
    dogecoin = _open("DOGE", 15, confidence=0.5)
    record("gamma", FRI, CycleOutcome.NO_TRADE, _answer("DOGE looks cheap | [buy](x)", [dogecoin]),
           decisions=[dogecoin],
           rejections=[Rejection(0, "open_long", "DOGE", "low_confidence",
                                 "confidence 0.5 is below the minimum 0.8")])
    btc = _open("BTC", 25)
    record("momentum", FRI, CycleOutcome.TRADED, _answer("BTC leads on 20-day returns.", [btc]),
           decisions=[btc], model="house/momentum", equity=10_020.0,
           fills=[Fill(FRI, "BTC", LONG, "open", 0.05, 50_000.0, 2.5, decision_index=0)])
    return daily_report(ledger, lake, PROVIDER, universe, FRI)


def test_the_day_in_words_tells_each_contestant_what_it_did_and_why(day):
    """In the standings' order (by equity), above the tables, which stay."""
    words = day.split("## The day in words\n\n", 1)[1].split("\n\n## ", 1)[0]
    assert words.split("\n\n") == [
        # opened: size, price and share of equity; its reasoning cut at the last sentence that
        # fits in 200 characters, its markup escaped
        "**alpha** opened a long position in ETH (2.5 at 1,234.50, $3,086, 20% of its equity). "
        "In its words: \"ETH broke \\*above\\* its 30-day high on rising volume \\<b\\>x\\</b\\> "
        "\\& kept it. The 4-hour trend agrees and RSI is 61, not stretched. A close under 1,150 "
        "would prove me wrong, so the invalidation sits there.\" Its equity rose "
        "150.00 to 10,150.00 (+1.50%) since its previous cycle.",
        # rejected: what and why, in the engine's words
        "**gamma** traded nothing: the engine rejected open\\_long DOGE (confidence 0.5 is below "
        "the minimum 0.8). In its words: \"DOGE looks cheap \\| \\[buy\\](x)\" Its equity stayed "
        "at 10,000.00.",
        # held, after the monitor closed one of its positions before the cycle
        "Before the cycle the invalidation monitor closed its long position in ETH at 990.00 "
        "(2025-11-21 14:00), realising -10.00. **beta** made no trade and held long SOL. In its "
        "words: \"SOL's thesis holds; nothing new clears the bar.\" Its equity fell 100.00 to "
        "9,900.00 (-1.00%) since its previous cycle.",
        "The rulers, not ranked: momentum traded (open long BTC), equity 10,020.00 (+20.00)."]
    # above the tables, which stay
    assert day.index("## The day in words") < day.index("## Standings") < day.index(
        "## Key trades")


def test_the_day_in_words_renders_as_text_on_the_page(day):
    """The escaped reasoning reads as written on the HTML page: no markup, no link, no tag."""
    page = render_daily_html(day)
    assert "rising volume &lt;b&gt;x&lt;/b&gt; &amp; kept it." in page
    assert "ETH broke *above* its 30-day high" in page
    assert "DOGE looks cheap | [buy](x)" in page and "<b>x" not in page
    assert "<em>above</em>" not in page and 'href="x"' not in page
