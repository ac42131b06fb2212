"""The debate server's analysts as a committee prompted in its own words answers them: a lean
and a strength in prose, a risk level in words; one repair round for an analyst that cannot be
read, and no judge (no call, no cost) when the panel still cannot be; ``signal: hold`` on every
error answer; a line after STOP answered, not dropped. Real WebSocket clients against a server
on 127.0.0.1, the models on the loopback model server."""

from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from arena.doors.judge import (
    OPINION_LINE,
    RISK_LINE,
    Lean,
    Risk,
    VerdictError,
    analyst_repair,
    parse_opinion,
    parse_risk,
)
from arena.doors.signal_server import MAX_MESSAGE, Budget, SignalServer
from arena.doors.signal_store import SignalStore
from tests.agents.openai_stub import OpenAIStub, StubResponse
from tests.doors.test_signal_server import OPINIONS, RISING, Running, ask, model_panel, role_of

B, S, N = Lean.BULLISH, Lean.BEARISH, Lean.NEUTRAL
L, M, H = Risk.LOW, Risk.MEDIUM, Risk.HIGH

# a committee prompted to "reply in a few sentences, no JSON": its answers in its own words
IN_WORDS = {
    "bull": "The close holds above its 20- and 50-bar averages and the 9-bar EMA leads the "
            "21-bar. Momentum is positive on every horizon. Bullish, strength 7/10.",
    "bear": "RSI(7) is close to 70 and the last candle left a long upper wick.\n"
            "Lean: bearish (moderate)",
    "risk": "MEDIUM RISK: ATR14 normal, the band width is steady and the last body is small.",
    "judge": '{"signal": "buy", "comment": "the bull argues harder at medium risk"}',
}


# ----------------------------------------------------------------------------- the reader
@pytest.mark.parametrize(("text", "lean", "strength"), [
    ("Above every average. Bullish, strength 7/10.", B, 7),
    ("Upper wick, fading RSI.\nlean: bearish (moderate)", S, 5),
    ("I am bullish, strength 7.", B, 7),
    ("Overall **bearish** with a strength of 8 out of 10.", S, 8),
    ("Moderately bullish: the trend is intact.", B, 5),
    ("Strongly bearish.", S, 8),
    ("Neutral (weak): nothing stands out.", N, 3),
    ("bullish, 4 out of 5", B, 8),
    ("BEARISH (6/10)", S, 6),
    ("I'm not bullish (strong) here; bearish, strength 6", S, 6),
    ("Bearish, strength 4.\nLEAN: BULLISH STRENGTH: 7", B, 7),  # the product's line wins
])
def test_a_lean_and_a_strength_in_words_are_read(text, lean, strength):
    opinion = parse_opinion("bull", text)
    assert (opinion.lean, opinion.strength, opinion.text) == (lean, strength, text)


@pytest.mark.parametrize(("text", "level"), [
    ("MEDIUM RISK: ATR14 normal, BB width stable.", M),
    ("HIGH RISK", H),
    ("Low risk: the ATR is a third of its average.", L),
    ("This is a high-risk hour (news).", H),
    ("The risk is moderate.", M),
    ("Risk verdict: LOW RISK", L),
    ("MEDIUM RISK - not a high risk setup unless the ATR doubles.", M),
    ("Levels: LOW RISK / MEDIUM RISK / HIGH RISK\nHIGH RISK", H),
    ("HIGH RISK: low liquidity", H),
])
def test_a_risk_level_in_words_is_read(text, level):
    assert parse_risk(text).level is level


@pytest.mark.parametrize(("text", "problem"), [
    ("The bullish case is strong.", "names a lean (bullish) but no strength"),
    ("bullish 5-bar momentum", "names a lean (bullish) but no strength"),
    ("bearish (strength 3/10) at first; bullish, strength 7/10 now",
     "more than one lean (bearish 3, bullish 7)"),
    ("bearish (strength 12)", "STRENGTH must be a whole number from 1 to 10, got 12"),
    ("I argue for BUY.", OPINION_LINE),
])
def test_prose_is_never_guessed(text, problem):
    with pytest.raises(VerdictError, match=r"^bear: ") as info:
        parse_opinion("bear", text)
    assert problem in str(info.value)


@pytest.mark.parametrize(("text", "problem"), [
    ("MEDIUM RISK today; a high-risk week ahead.", "more than one level (MEDIUM, HIGH)"),
    ("High ATR, wide bands.", RISK_LINE),
])
def test_a_risk_view_naming_no_single_level_is_unreadable(text, problem):
    with pytest.raises(VerdictError, match=r"^risk: ") as info:
        parse_risk(text)
    assert problem in str(info.value)


def test_the_repair_names_the_problem_and_the_line_of_the_role():
    opinion = analyst_repair("bull", "it names a lean (bullish) but no strength from 1 to 10")
    assert opinion.startswith("Your answer could not be read: it names a lean (bullish)")
    assert OPINION_LINE in opinion and RISK_LINE not in opinion
    assert parse_opinion("bull", opinion).strength == 6  # its example is a line the reader takes
    risk = analyst_repair("risk", "it names no level")
    assert RISK_LINE in risk and parse_risk(risk).level is M


# ----------------------------------------------------------------------------- the server
def test_a_committee_answering_in_its_own_words_gets_a_decision(tmp_path):
    """Bull 7 against bear 5 at MEDIUM risk: the stronger argument, buy - four calls, no
    repair."""
    store = SignalStore(tmp_path / "store")
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(IN_WORDS[role_of(r)])
        with Running(SignalServer(store, model_panel(stub))) as url:
            [got] = ask(url, f"DEBATE#w:EURUSD:{RISING}")
        roles = [role_of(r) for r in stub.chat_requests]
    assert "error" not in got, got
    assert (got["signal"], got["comment"]) == ("buy", "the bull argues harder at medium risk")
    assert got["debate"] == IN_WORDS
    assert sorted(roles[:3]) == ["bear", "bull", "risk"] and roles[3:] == ["judge"]
    row = store.debates().iloc[0]
    assert (row["bull_lean"], row["bull_strength"], row["bear_lean"], row["bear_strength"],
            row["risk"], row["rule"]) == ("BULLISH", 7, "BEARISH", 5, "MEDIUM", "split-stronger")
    assert row["model_calls"] == 4


def test_an_analyst_that_cannot_be_read_is_sent_back_once(tmp_path):
    """The bear gives reasons but no lean: its answer goes back once, in its own conversation,
    naming the problem; its second answer is read and only then is the judge asked."""
    store = SignalStore(tmp_path / "store")
    answers = {**OPINIONS, "risk": "Choppy.\nRISK: MEDIUM",
               "bear": "RSI(7) is near 70 and the upper wick is long.",
               "bear-repair": "RSI(7) is near 70.\nLEAN: BEARISH STRENGTH: 4"}
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(answers[role_of(r)])
        with Running(SignalServer(store, model_panel(stub))) as url:
            [got] = ask(url, f"DEBATE:EURUSD:{RISING}")
        roles = [role_of(r) for r in stub.chat_requests]
        repair = next(r.messages for r in stub.chat_requests if role_of(r) == "bear-repair")
    assert sorted(roles[:3]) == ["bear", "bull", "risk"]
    assert roles[3:] == ["bear-repair", "judge"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert repair[1]["content"] == answers["bear"]
    assert repair[2]["content"].startswith("Your answer could not be read: the answer has no "
                                           "final line")
    assert OPINION_LINE in repair[2]["content"]
    assert got["signal"] == "buy" and got["debate"]["bear"] == answers["bear-repair"]
    row = store.debates().iloc[0]  # bull 8 against bear 4 at MEDIUM risk: the stronger
    assert (row["bear_lean"], row["bear_strength"], row["rule"], row["model_calls"]) == \
        ("BEARISH", 4, "split-stronger", 5)


def test_the_judge_is_never_asked_when_the_panel_cannot_be_read(tmp_path):
    """The risk officer names no level, twice: the debate is an error with ``signal: hold``, the
    model server saw four requests (three analysts, one repair) and no judge, and the judge's
    reserved call went back to the day's budget (five calls: the debate's four and a repair,
    less the judge's, leave one for a PRICES)."""
    store = SignalStore(tmp_path / "store")
    answers = {**OPINIONS, "risk": "Volatility is what it is.",
               "risk-repair": "Still hard to say.", "judge": "never asked"}
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(answers[role_of(r)])
        server = SignalServer(store, model_panel(stub), budget=Budget(5))
        with Running(server) as url:
            failed, prices = ask(url, f"DEBATE#d:EURUSD:{RISING}", f"PRICES#p:EURUSD:{RISING}")
        roles = [role_of(r) for r in stub.chat_requests]
    assert sorted(roles[:3]) == ["bear", "bull", "risk"] and roles[3:] == ["risk-repair",
                                                                            "analyst"]
    assert "judge" not in roles and len(stub.chat_requests) == 5
    assert (failed["id"], failed["signal"]) == ("d", "hold")
    assert failed["error"].startswith("the analysts' answers could not be read (risk: after one "
                                      "repair, the answer has no final line")
    assert failed["error"].endswith("the judge was not asked and nothing was decided")
    assert failed["debate"] == {"bull": OPINIONS["bull"], "bear": OPINIONS["bear"],
                                "risk": answers["risk-repair"]}
    assert prices["signal"] == "buy"  # the judge's reserved call was given back
    row = store.debates().set_index("request_id").loc["d"]
    assert row["error"] == failed["error"] and row["model_calls"] == 4
    assert row["risk_text"] == answers["risk-repair"]


def test_every_error_answer_says_hold(tmp_path):
    """A spent budget, an unknown command, a series that cannot be read, a line too long, the
    rate limit, a missing token: each answer carries ``signal: hold``."""
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(OPINIONS[role_of(r)])
        server = SignalServer(SignalStore(tmp_path / "a"), model_panel(stub), budget=Budget(3),
                              rate=4)
        with Running(server) as url:
            answers = ask(url, f"DEBATE#spent:EURUSD:{RISING}", "HELLO", "PRICES:EURUSD:1,x",
                          "P" * (MAX_MESSAGE + 1), f"PRICES#late:EURUSD:{RISING}")
        assert not stub.chat_requests
    with Running(SignalServer(SignalStore(tmp_path / "b")), token="s3cret") as url, \
            connect(url, open_timeout=20) as ws:
        answers.append(json.loads(ws.recv(timeout=20)))
    assert "daily budget of 3 model calls" in answers[0]["error"]
    assert "rate limit" in answers[4]["error"] and "a token is required" in answers[5]["error"]
    assert [(bool(a.get("error")), a.get("signal")) for a in answers] == [(True, "hold")] * 6


def test_a_line_after_stop_is_answered_as_not_served(tmp_path):
    with Running(SignalServer(SignalStore(tmp_path / "store"))) as url, \
            connect(url, open_timeout=20) as ws:
        ws.send("STOP#s")
        ws.send(f"PRICES#late:EURUSD:{RISING}")
        answers = {a["id"]: a for a in (json.loads(ws.recv(timeout=20)) for _ in range(2))}
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=20)
    assert answers["s"] == {"id": "s", "ok": True, "bye": True}
    late = answers["late"]
    assert (late["symbol"], late["signal"]) == ("EURUSD", "hold")
    assert late["error"] == ("the connection is closed: STOP was received, so this line was not "
                             "served; send it on a new connection")
