"""Answers and records that are never lost, end to end: a real LLM contestant talking HTTP through
litellm to a loopback OpenAI-compatible server, the real engine and a real ledger on a synthetic
lake. Half an emoji, an empty answer, a 1 MB answer, a model that cannot be reached."""

from __future__ import annotations

import json

import pytest

from arena.agents.llm import LLMContestant, RetryPolicy
from arena.agents.roster import ContestantSpec, Params
from arena.cli import main
from arena.engine.repair import ECHO_CHARS
from arena.ledger.store import Ledger
from arena.pipeline.cycle import cycle_market, play_turn
from tests.agents.openai_stub import OpenAIStub, StubResponse, unreachable_url
from tests.conftest import ts
from tests.market_lakes import PROVIDER, market_lakes, season_lake

MON, TUE = ts("2025-11-24 16:00"), ts("2025-11-25 16:00")
HALF = "\ud83d"  # the first half of a UTF-16 surrogate pair: what a model cut mid-emoji sends
FAST = RetryPolicy(backoff_s=0.01, max_backoff_s=0.02)


def _spec(url: str, name: str = "stub-llm") -> ContestantSpec:
    return ContestantSpec(name=name, kind="llm", model="openai/stub-model", api_base=url,
                          params=Params(temperature=0.2, max_tokens=300, timeout=10,
                                        num_retries=0))


def _answer(*decisions: dict, reasoning: str = "r") -> dict:
    return {"reasoning": reasoning, "decisions": list(decisions)}


OPEN_ETH = {"action": "open_long", "symbol": "ETH", "percent_of_equity": 20, "confidence": 0.9,
            "invalidation_price": 1.0, "thesis": f"to the moon {HALF}", "invalidation": "i"}
CLOSE_HALF = {"action": "close", "symbol": f"SOL{HALF}"}  # unknown symbol: the repair round runs
HOLD_ALL = json.dumps(_answer())


@pytest.fixture
def cycle(tmp_path_factory, tmp_path, universe):
    lake = market_lakes(tmp_path_factory, universe).full
    ledger = Ledger(tmp_path / "ledger-root")

    def play(spec: ContestantSpec, at=MON):
        contestant = LLMContestant(spec, retry=FAST)
        market = cycle_market(lake, PROVIDER, universe, [contestant], at, ledger)
        return play_turn(contestant, market, ledger, universe, at)

    return ledger, play


@pytest.mark.parametrize("escaped", [True, False], ids=["escaped-in-the-json", "raw-character"])
def test_half_an_emoji_is_recorded_and_the_repair_request_is_sent(cycle, escaped):
    """Regression: the answer executed in memory, then the ledger write crashed ("surrogates not
    allowed"): failed / not recorded, and a re-run asked the model again."""
    ledger, play = cycle
    first = json.dumps(_answer(OPEN_ETH, CLOSE_HALF, reasoning=f"bold {HALF}"), ensure_ascii=escaped)
    assert first.isascii() == escaped
    with OpenAIStub() as stub:
        stub.script(StubResponse.answer(first), StubResponse.answer(HOLD_ALL))
        outcome = play(_spec(stub.url))
        assert (outcome.recorded, outcome.status) == ("recorded", "traded"), outcome
        assert len(stub.chat_requests) == 2  # the repair request encoded and went out
        repair = stub.chat_requests[1].messages
        assert repair[-2]["role"] == "assistant" and "to the moon" in repair[-2]["content"]
        again = play(_spec(stub.url))
        assert again.recorded == "already recorded" and len(stub.chat_requests) == 2
    assert ledger.responses("stub-llm", MON)["answer"] == first  # stored losslessly
    [fill] = ledger.fills("stub-llm")
    assert fill.symbol == "ETH" and fill.thesis == "to the moon \ufffd"
    [rejection] = ledger.table("rejections").itertuples()
    assert (rejection.symbol, rejection.code) == ("SOL\ufffd", "unknown_symbol")
    [notes] = ledger.table("responses").query("round == 'answer'").notes
    assert any("U+FFFD" in n for n in notes)


def test_an_empty_answer_gets_the_repair_round_and_forfeits_when_empty_again(cycle):
    ledger, play = cycle
    with OpenAIStub() as stub:
        stub.script(StubResponse.answer(""), StubResponse.answer(None))
        outcome = play(_spec(stub.url))
        assert len(stub.chat_requests) == 2
        assert "empty" in stub.chat_requests[1].messages[-1]["content"]
    assert (outcome.recorded, outcome.status) == ("recorded", "forfeited")
    [row] = ledger.table("outcome").itertuples()
    assert "empty" in row.parse_error_answer and "empty" in row.parse_error_repair


def test_an_empty_answer_then_a_valid_one_trades(cycle):
    ledger, play = cycle
    with OpenAIStub() as stub:
        stub.script(StubResponse.answer(""), StubResponse.answer(json.dumps(_answer(OPEN_ETH))))
        outcome = play(_spec(stub.url))
    assert outcome.status == "traded" and [f.symbol for f in ledger.fills("stub-llm")] == ["ETH"]


def test_an_unreachable_model_records_nothing_and_a_later_run_plays(cycle):
    """Connection refused is an operational failure, not the model's answer."""
    ledger, play = cycle
    outcome = play(_spec(unreachable_url()))
    assert (outcome.recorded, outcome.status) == ("not recorded", "failed")
    assert "connection" in outcome.error
    assert ledger.records() == []
    with OpenAIStub() as stub:
        stub.script(StubResponse.answer(HOLD_ALL))
        later = play(_spec(stub.url))
    assert (later.recorded, later.status) == ("recorded", "no_trade")


def test_a_gap_left_by_a_failure_cannot_be_played_behind_a_later_cycle(cycle):
    """Monday failed, Tuesday traded: Monday cannot be played afterwards (its trades would fold
    before Tuesday's, which were made without them); nothing is asked, nothing written."""
    ledger, play = cycle
    assert play(_spec(unreachable_url())).status == "failed"
    with OpenAIStub() as stub:
        stub.script(StubResponse.answer(json.dumps(_answer(OPEN_ETH))))
        assert play(_spec(stub.url), at=TUE).status == "traded"
        monday = play(_spec(stub.url))
        assert len(stub.chat_requests) == 1  # Monday asked nobody
    assert (monday.recorded, monday.status) == ("not recorded", "failed")
    assert "append-only" in monday.error
    assert [k.cycle_at for k in ledger.records()] == [TUE]
    assert list(ledger.portfolio("stub-llm").positions) == ["ETH"]


def test_half_an_emoji_in_tool_call_arguments_goes_back_to_the_model():
    """The researcher sends the model's own tool calls back: their arguments must encode too."""
    from arena.agents.llm import complete

    messages = [{"role": "user", "content": "research"},
                {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "call-1", "type": "function", "function": {
                        "name": "get_candles", "arguments": f'{{"symbol": "ETH{HALF}"}}'}}]},
                {"role": "tool", "tool_call_id": "call-1", "content": f'{{"error": "ETH{HALF}?"}}'}]
    with OpenAIStub() as stub:
        stub.script(StubResponse.answer(HOLD_ALL))
        done = complete(_spec(stub.url), (), role="researcher", raw_messages=messages, retry=FAST)
    assert done.text == HOLD_ALL and done.error is None
    [request] = stub.chat_requests
    sent = request.messages[1]["tool_calls"][0]["function"]["arguments"]
    assert sent == '{"symbol": "ETH\ufffd"}'


def test_a_one_megabyte_answer_makes_a_small_repair_request(cycle):
    ledger, play = cycle
    huge = "I am confident ETH goes up. " * 40_000  # 1.1 MB
    with OpenAIStub() as stub:
        stub.script(StubResponse.answer(huge), StubResponse.answer(HOLD_ALL))
        outcome = play(_spec(stub.url))
        first, repair = (r.body for r in stub.chat_requests)
    assert outcome.status == "no_trade"
    echoed = repair["messages"][-2]
    assert echoed["role"] == "assistant" and len(echoed["content"]) < ECHO_CHARS + 200
    assert len(json.dumps(repair)) - len(json.dumps(first)) < 10_000
    assert ledger.responses("stub-llm", MON)["answer"] == huge  # the record keeps it whole


def test_arena_cycle_records_half_an_emoji_and_exits_0(tmp_path_factory, tmp_path, universe,
                                                        capsys):
    first = json.dumps(_answer(OPEN_ETH, CLOSE_HALF))
    with OpenAIStub() as stub:
        stub.script(StubResponse.answer(first), StubResponse.answer(HOLD_ALL))
        lake = season_lake(tmp_path_factory, universe, tmp_path / "lake",
                           "contestants:\n  - {name: stub-llm, kind: llm, model: openai/stub-model, "
                           f"api_base: '{stub.url}', params: {{timeout: 10, num_retries: 0}}}}\n",
                           start=f"{MON:%Y-%m-%d}").root
        args = ["cycle", "--at", MON.isoformat(), "--no-publish", "--lake", str(lake)]
        assert main(args) == 0
        out = capsys.readouterr().out
        assert "stub-llm" in out and "traded" in out and "Traceback" not in out
        assert main(args) == 0 and "already recorded" in capsys.readouterr().out
        assert len(stub.chat_requests) == 2  # the re-run asked nobody
    assert Ledger(lake).responses("stub-llm", MON)["answer"] == first
