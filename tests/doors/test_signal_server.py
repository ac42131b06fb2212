"""The debate signal server: a real WebSocket client per command against a server the test
starts on 127.0.0.1, the analysts and judge on a loopback model server (or the rule set)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from arena.agents.llm import load_litellm
from arena.agents.roster import ContestantSpec
from arena.doors.judge import JudgeRules, rules_text
from arena.doors.signal_server import (
    MAX_MESSAGE,
    Budget,
    ModelPanel,
    ProtocolError,
    SignalServer,
    check_bind,
    parse,
    serve_until,
)
from arena.doors.signal_store import HORIZONS, SignalStore, build_signal_marts
from tests.agents.openai_stub import Gate, OpenAIStub, StubResponse

RISING = ",".join(f"{100 * 1.01 ** i:.4f}" for i in range(60))


class Running:
    """The server on a free loopback port, its event loop in a thread of its own."""

    def __init__(self, server: SignalServer, token: str | None = None) -> None:
        self.server, self.token = server, token
        self.port: int | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = self._loop.create_future()
        await serve_until(self.server, self._stopped, port=0, token=self.token,
                          ready=lambda port: (setattr(self, "port", port), self._ready.set()))

    def __enter__(self) -> str:
        self._thread.start()
        assert self._ready.wait(20), "the server did not start"
        return f"ws://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stopped.set_result, None)
        self._thread.join(20)


def ask(url: str, *lines: str, **options) -> list[dict]:
    with connect(url, open_timeout=20, **options) as ws:
        out = []
        for line in lines:
            ws.send(line)
            out.append(json.loads(ws.recv(timeout=60)))
        return out


def role_of(request) -> str:
    """Whose request the model server got: an analyst's, the judge's, the PRICES analyst's, a
    repair of one of the last two ("judge-repair", "analyst-repair"), or a chat."""
    text = " ".join(str(m.get("content")) for m in request.messages)
    for marker, role in (("You are the bullish analyst", "bull"),
                         ("You are the bearish analyst", "bear"),
                         ("You are the risk officer", "risk"),
                         ("You are the impartial judge", "judge"),
                         ("You are the analyst of a trading signal server", "analyst")):
        if marker in text:
            last = str(request.messages[-1].get("content"))
            return f"{role}-repair" if last.startswith("Your answer could not be read") else role
    return "chat"


OPINIONS = {"bull": "Strong trend.\nLEAN: BULLISH STRENGTH: 8",
            "bear": "Little to say.\nLEAN: BULLISH STRENGTH: 3",
            "risk": "Calm market.\nRISK: LOW",
            "judge": '{"signal": "buy", "comment": "the analysts agree on the trend"}',
            "analyst": '{"signal": "buy", "comment": "a steady rise"}'}


def model_panel(stub: OpenAIStub, timeout: float = 60) -> ModelPanel:
    load_litellm()  # its import costs seconds: never inside a gate's window
    spec = ContestantSpec(name="stub-debater", kind="llm", model="openai/stub-model",
                          api_base=stub.url,
                          params={"temperature": 0.2, "max_tokens": 300, "timeout": timeout,
                                  "num_retries": 0})
    return ModelPanel(spec, env={})


def test_the_commands_answer_with_the_rule_based_analysts(tmp_path):
    store = SignalStore(tmp_path / "store")
    with Running(SignalServer(store)) as url:
        prices, debate, chat, clear, stop = ask(
            url, f"PRICES:EURUSD:{RISING}", f"DEBATE:EURUSD:{RISING}", "CHAT:why?", "CLEAR",
            "STOP")
    assert prices["signal"] in ("buy", "sell", "hold") and prices["comment"]
    assert set(prices) == {"symbol", "signal", "comment"} and prices["symbol"] == "EURUSD"
    assert debate["signal"] == "buy"  # a steady rise: both analysts lean up, low risk
    assert set(debate["debate"]) == {"bull", "bear", "risk", "judge"}
    assert "LEAN: BULLISH" in debate["debate"]["bull"]
    assert json.loads(debate["debate"]["judge"])["signal"] == "buy"  # the judge's raw JSON
    assert "--contestant" in chat["reply"] and clear == {"ok": True, "forgotten": 2}
    assert stop == {"ok": True, "bye": True}
    kept = store.debates()
    assert sorted(kept["command"]) == ["DEBATE", "PRICES"]
    assert set(kept["analysts"]) == {"rules"} and kept["bars"].tolist() == [60, 60]


def test_a_debate_asks_the_three_analysts_together_then_the_judge(tmp_path):
    """The loopback model server answers the analysts only once all three are in it at once
    (one after another, its gate breaks and answers 400): parallel, proved without a clock."""
    gate = Gate(parties=3, timeout=20)
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(
            OPINIONS[role_of(r)], gate=gate if role_of(r) != "judge" else None)
        server = SignalServer(SignalStore(tmp_path / "store"), model_panel(stub))
        with Running(server) as url:
            [got] = ask(url, f"DEBATE:EURUSD:{RISING}")
        roles = [role_of(r) for r in stub.chat_requests]
    assert gate.opened, got
    assert sorted(roles[:3]) == ["bear", "bull", "risk"] and roles[3] == "judge"
    assert got["signal"] == "buy" and got["comment"] == "the analysts agree on the trend"
    assert got["debate"]["judge"] == OPINIONS["judge"]  # the judge's raw JSON answer


def test_where_the_judge_breaks_the_rules_the_table_wins_and_says_so(tmp_path):
    answers = {**OPINIONS, "risk": "Wild swings.\nRISK: HIGH"}
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(answers[role_of(r)])
        store = SignalStore(tmp_path / "store")
        with Running(SignalServer(store, model_panel(stub))) as url:
            [got] = ask(url, f"DEBATE:EURUSD:{RISING}")
    assert got["signal"] == "hold"
    assert "the judge said buy; the rules say hold" in got["comment"]
    row = store.debates().iloc[0]
    assert row["rule"] == "high-risk" and bool(row["overruled"]) and row["judge_signal"] == "buy"


def test_eight_debates_at_once(tmp_path):
    """Eight terminals, eight symbols: all 24 analysts are in the model server together."""
    gate = Gate(parties=24, timeout=30)
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(
            OPINIONS[role_of(r)], gate=gate if role_of(r) != "judge" else None)
        with Running(SignalServer(SignalStore(tmp_path / "store"), model_panel(stub))) as url, \
                ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda s: ask(url, f"DEBATE:SYM{s}:{RISING}")[0], range(8)))
    assert gate.opened and [a["signal"] for a in answers] == ["buy"] * 8


def send_all(url: str, *lines: str, answers: int | None = None, **options) -> list[dict]:
    """Send every line at once on one connection, then read ``answers`` answers (one per line
    by default) in the order they come."""
    with connect(url, open_timeout=20, **options) as ws:
        for line in lines:
            ws.send(line)
        return [json.loads(ws.recv(timeout=60)) for _ in range(answers or len(lines))]


def test_eight_debates_on_one_connection_run_at_once(tmp_path):
    """One terminal sends eight DEBATEs back to back on its one connection: all 24 analysts are
    in the model server together (served one after another, the gate breaks and every answer
    is an error), and each answer carries its request's id and symbol."""
    gate = Gate(parties=24, timeout=20)
    symbols = ["EURUSD", "GBPUSD", "USDJPY", "AUDUSD", "USDCAD", "USDCHF", "NZDUSD", "EURJPY"]
    store = SignalStore(tmp_path / "store")
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(
            OPINIONS[role_of(r)], gate=gate if role_of(r) != "judge" else None)
        with Running(SignalServer(store, model_panel(stub))) as url:
            answers = send_all(url, *[f"DEBATE#{i}:{s}:{RISING}" for i, s in enumerate(symbols)])
    assert gate.opened, answers
    assert sorted((a["id"], a["symbol"]) for a in answers) == \
        [(str(i), s) for i, s in enumerate(symbols)]
    assert [a["signal"] for a in answers] == ["buy"] * 8 and "error" not in str(answers)
    kept = store.debates()
    assert dict(zip(kept["request_id"], kept["symbol"], strict=True)) == {
        str(i): s for i, s in enumerate(symbols)}


def test_stop_waits_for_the_answers_under_way_and_closes_only_its_connection(tmp_path):
    """Two DEBATEs and a STOP back to back: the two answers come first (their analysts together
    in the model server with a DEBATE of another connection), then the bye, then this
    connection closes; a PRICES sent after the STOP is answered as not served; the other
    connection goes on."""
    gate = Gate(parties=9, timeout=20)
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(
            OPINIONS[role_of(r)], gate=gate if role_of(r) in ("bull", "bear", "risk") else None)
        with Running(SignalServer(SignalStore(tmp_path / "store"), model_panel(stub))) as url, \
                connect(url, open_timeout=20) as other:
            other.send(f"DEBATE#o:GOLD:{RISING}")
            with connect(url, open_timeout=20) as ws:
                for line in (f"DEBATE#a:EURUSD:{RISING}", f"DEBATE#b:USDJPY:{RISING}",
                             "STOP#bye", f"PRICES#late:EURUSD:{RISING}"):
                    ws.send(line)
                *served, bye = (json.loads(ws.recv(timeout=60)) for _ in range(4))
                with pytest.raises(ConnectionClosed):
                    ws.recv(timeout=20)
            assert json.loads(other.recv(timeout=60))["id"] == "o"
            other.send(f"PRICES#p:GOLD:{RISING}")
            after = json.loads(other.recv(timeout=60))
    assert gate.opened
    by_id = {answer["id"]: answer for answer in served}
    assert sorted(by_id) == ["a", "b", "late"] and by_id["a"]["signal"] == "buy"
    assert by_id["late"]["error"].startswith("the connection is closed: STOP was received")
    assert (by_id["late"]["symbol"], by_id["late"]["signal"]) == ("EURUSD", "hold")
    assert bye == {"id": "bye", "ok": True, "bye": True}
    assert (after["id"], after["symbol"], after["signal"]) == ("p", "GOLD", "buy")


def test_every_answer_carries_what_a_terminal_matches_it_by(tmp_path):
    """Errors too: the id and the symbol as far as the line could be read."""
    store = SignalStore(tmp_path / "store")
    with Running(SignalServer(store)) as url:
        answers = ask(url, "PRICES#p1:EURUSD:", "HELLO#h1", "DEBATE#bad id:EURUSD:1,2",
                      f"DEBATE#{'x' * 65}:EURUSD:1,2", "PRICES#:EURUSD:1,2", "CHAT#c1:why?",
                      "CLEAR#c2", f"prices#q.1-A_b:EURUSD:{RISING}", f"PRICES:EURUSD:{RISING}",
                      f"DEBATE#d1:USDJPY:{RISING}", "STOP")
    empty, hello, spaced, long, blank, chat, clear, named, plain, debate, stop = answers
    assert (empty["id"], empty["symbol"]) == ("p1", "EURUSD")
    assert "series is empty" in empty["error"]
    assert hello["id"] == "h1" and "unknown command" in hello["error"] and "symbol" not in hello
    assert "the request id 'bad id' is not one" in spaced["error"] and "id" not in spaced
    assert spaced["symbol"] == "EURUSD"
    assert "is not one" in long["error"] and "is not one" in blank["error"]
    assert chat["id"] == "c1" and "--contestant" in chat["reply"]
    assert clear == {"id": "c2", "ok": True, "forgotten": 2}
    assert (named["id"], named["symbol"]) == ("q.1-A_b", "EURUSD") and named["signal"]
    assert set(plain) == {"symbol", "signal", "comment"}  # no id sent, none answered
    assert (debate["id"], debate["symbol"], debate["signal"]) == ("d1", "USDJPY", "buy")
    assert stop == {"ok": True, "bye": True}
    assert sorted(store.debates()["request_id"].fillna("-")) == ["-", "d1", "q.1-A_b"]


def test_the_rate_limit_and_the_budget_hold_for_requests_sent_at_once(tmp_path):
    """Counted as they arrive: the fourth of four lines sent at once is over a rate of three;
    two debates at once on a budget of five calls: one is served, the other refused whole."""
    with Running(SignalServer(SignalStore(tmp_path / "a"), rate=3)) as url:
        answers = send_all(url, *[f"PRICES#{i}:EURUSD:{RISING}" for i in range(4)])
    limited = [a["id"] for a in answers if "rate limit" in a.get("error", "")]
    assert limited == ["3"] and sum("error" not in a for a in answers) == 3
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(OPINIONS[role_of(r)])
        server = SignalServer(SignalStore(tmp_path / "b"), model_panel(stub), budget=Budget(5))
        with Running(server) as url:
            both = send_all(url, f"DEBATE#1:EURUSD:{RISING}", f"DEBATE#2:USDJPY:{RISING}")
        served = [a for a in both if "error" not in a]
        refused = [a for a in both if "daily budget of 5 model calls" in a.get("error", "")]
        assert len(served) == len(refused) == 1 and served[0]["signal"] == "buy"
        assert len(stub.chat_requests) == 4  # one debate's calls, none of the other's


def test_a_malformed_judge_answer_is_repaired_once(tmp_path):
    """The judge answers in lines first: it is sent back once, naming the problem, and its
    JSON then decides with the table; the debate keeps the judge's raw JSON."""
    store = SignalStore(tmp_path / "store")
    answers = {**OPINIONS, "judge": "SIGNAL: BUY\nCOMMENT: lines, not JSON",
               "judge-repair": OPINIONS["judge"]}
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(answers[role_of(r)])
        with Running(SignalServer(store, model_panel(stub))) as url:
            [got] = ask(url, f"DEBATE#r:EURUSD:{RISING}")
        roles = [role_of(r) for r in stub.chat_requests]
        repair = stub.chat_requests[-1].messages
    assert sorted(roles[:3]) == ["bear", "bull", "risk"]
    assert roles[3:] == ["judge", "judge-repair"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert repair[1]["content"] == answers["judge"]
    assert repair[2]["content"].startswith("Your answer could not be read: the answer must start "
                                           "with '{'")
    assert got["signal"] == "buy" and got["comment"] == "the analysts agree on the trend"
    assert got["debate"]["judge"] == OPINIONS["judge"]
    row = store.debates().iloc[0]
    assert bool(row["judge_repaired"]) and row["judge_first"] == answers["judge"]
    assert row["judge"] == OPINIONS["judge"] and row["model_calls"] == 5


def test_a_judge_unreadable_twice_leaves_the_rules_to_decide(tmp_path):
    store = SignalStore(tmp_path / "store")
    answers = {**OPINIONS, "bear": "Overbought.\nLEAN: BEARISH STRENGTH: 3",
               "risk": "Choppy.\nRISK: MEDIUM", "judge": "Buy.",
               "judge-repair": '{"signal": "buy"}'}
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(answers[role_of(r)])
        with Running(SignalServer(store, model_panel(stub))) as url:
            [got] = ask(url, f"DEBATE:EURUSD:{RISING}")
    # bull BULLISH 8 against bear BEARISH 3 at MEDIUM risk: the stronger argument
    assert got["signal"] == "buy"
    assert got["comment"] == ("the judge's answer could not be read (after one repair, "
                              "\"comment\" must be text (missing)); the rules say buy (split, "
                              "the stronger argument wins)")
    assert got["debate"]["judge"] == '{"signal": "buy"}'
    row = store.debates().iloc[0]
    assert (row["rule"], bool(row["overruled"])) == ("split-stronger", False)
    assert pd.isna(row["judge_signal"])
    assert row["judge_first"] == "Buy." and row["model_calls"] == 5


def test_a_spent_budget_leaves_no_repair_and_the_rules_decide(tmp_path):
    answers = {**OPINIONS, "judge": "I say buy."}
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(answers[role_of(r)])
        server = SignalServer(SignalStore(tmp_path / "s"), model_panel(stub), budget=Budget(4))
        with Running(server) as url:
            [got] = ask(url, f"DEBATE:EURUSD:{RISING}")
        assert "judge-repair" not in [role_of(r) for r in stub.chat_requests]
    assert got["signal"] == "buy"  # both analysts lean up at LOW risk
    assert "no repair: the server's daily budget of 4 model calls is spent" in got["comment"]


def test_the_prices_analyst_answers_json_and_is_repaired_once(tmp_path):
    store = SignalStore(tmp_path / "store")
    script = iter(['```\n{"signal": "sell", "comment": "fading"}\n```',
                   "SIGNAL: SELL", '{"signal": "sell", "comment": "repaired"}',
                   "no idea", "still none"])
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(next(script))
        with Running(SignalServer(store, model_panel(stub))) as url:
            fenced, repaired, failed = ask(url, *[f"PRICES#{i}:EURUSD:{RISING}"
                                                  for i in range(3)])
        roles = [role_of(r) for r in stub.chat_requests]
    assert roles == ["analyst", "analyst", "analyst-repair", "analyst", "analyst-repair"]
    assert (fenced["signal"], fenced["comment"]) == ("sell", "fading")
    assert (repaired["id"], repaired["signal"], repaired["comment"]) == ("1", "sell", "repaired")
    assert failed["signal"] == "hold" and failed["id"] == "2"
    assert failed["error"].startswith("the analyst's answer could not be read (after one "
                                      "repair, the answer must start with '{'")
    calls = store.debates().set_index("request_id")["model_calls"].to_dict()
    assert calls == {"0": 1, "1": 2, "2": 2}


def test_a_rule_beyond_the_committees_is_off_until_the_server_is_started_with_it(tmp_path):
    """A split at LOW risk: the committee's rules hold; with ``split_at_low`` the judge's
    prompt says so and the stronger argument wins."""
    answers = {**OPINIONS, "bear": "Overbought.\nLEAN: BEARISH STRENGTH: 3",
               "judge": '{"signal": "buy", "comment": "the bull is stronger"}'}
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(answers[role_of(r)])
        plain, extra = SignalStore(tmp_path / "a"), SignalStore(tmp_path / "b")
        with Running(SignalServer(plain, model_panel(stub))) as url:
            [held] = ask(url, f"DEBATE:EURUSD:{RISING}")
        with Running(SignalServer(extra, model_panel(stub),
                                  rules=JudgeRules(split_at_low=True))) as url:
            [followed] = ask(url, f"DEBATE:EURUSD:{RISING}")
        prompts = [str(r.messages[0]["content"]) for r in stub.chat_requests
                   if role_of(r) == "judge"]
    assert held["signal"] == "hold" and held["comment"].startswith(
        "the judge said buy; the rules say hold (split at LOW risk, no two agree)")
    assert (followed["signal"], followed["comment"]) == ("buy", "the bull is stronger")
    assert rules_text() in prompts[0] and rules_text(JudgeRules(split_at_low=True)) in prompts[1]
    assert plain.debates()["judge_rules"].tolist() == [""]
    assert extra.debates()["judge_rules"].tolist() == ["split_at_low"]


def test_a_slow_or_failing_model_gets_an_error_answer_not_a_hung_connection(tmp_path):
    with OpenAIStub() as stub:
        stub.handler = lambda r: (StubResponse.error(500, "model down") if role_of(r) == "bear"
                                  else StubResponse.answer(OPINIONS[role_of(r)]))
        with Running(SignalServer(SignalStore(tmp_path / "a"), model_panel(stub))) as url:
            failed, after = ask(url, f"DEBATE:EURUSD:{RISING}", f"PRICES:EURUSD:{RISING}")
        assert "bear model gave no answer" in failed["error"] and failed["signal"] == "hold"
        assert after["signal"] == "buy"  # the same connection goes on
        stub.handler = lambda r: StubResponse.answer(OPINIONS[role_of(r)], delay=5)
        # the model calls give up soon after the answer did (no thread left waiting a minute)
        server = SignalServer(SignalStore(tmp_path / "b"), model_panel(stub, timeout=2),
                              timeout_s=0.5)
        with Running(server) as url:
            [slow] = ask(url, f"DEBATE:EURUSD:{RISING}")
    assert "did not answer within 0.5 s" in slow["error"]


def test_bad_input_gets_a_clear_answer_and_the_connection_goes_on(tmp_path):
    store = SignalStore(tmp_path / "store")
    with Running(SignalServer(store)) as url:
        answers = ask(url, "HELLO", "PRICES:EURUSD:", "PRICES:EURUSD:1,2,x", "DEBATE:EURUSD",
                      "PRICES:EUR USD:1,2", 'DEBATE:EURUSD:{"close": [1, 2], "time": [1]}',
                      'DEBATE:EURUSD:{"close": 5}', "CHAT:", "P" * (MAX_MESSAGE + 1),
                      f"PRICES:EURUSD:{RISING}")
        with connect(url) as ws:  # a terminal that leaves mid-debate harms no one
            ws.send(f"DEBATE:LEFT:{RISING}")
        [after] = ask(url, f"PRICES:EURUSD:{RISING}")
        odd = ask(url, 'PRICES:EURUSD:{"close": null}', 'PRICES:EURUSD:{"close": [1, "1e400x"]}',
                  "PRICES:EURUSD:" + ",".join(["1e200"] * 30), 'PRICES:X:{"close": [1e999]}',
                  'PRICES:X:{"close": [1, true]}', f"PRICES:EURUSD:{RISING}")
    errors = [a.get("error", "") for a in answers[:-1]]
    assert "unknown command 'HELLO'" in errors[0]
    assert "the series is empty" in errors[1] and "'x' is not a number" in errors[2]
    assert "needs a symbol and a series" in errors[3] and "needs a symbol" in errors[4]
    assert "1 times for 2 closes" in errors[5] and '"close" must be a list' in errors[6]
    assert "CHAT needs a question" in errors[7] and "the limit is 262,144" in errors[8]
    assert answers[-1]["signal"] in ("buy", "sell", "hold") and after["signal"]
    assert '"close"' in odd[0]["error"] and "is not a number" in odd[1]["error"]
    assert "out of range" in odd[2]["error"] and "error" in odd[3]
    assert "true and false are not numbers" in odd[4]["error"] and odd[5]["signal"]
    for _ in range(100):  # the debate of the terminal that left is kept all the same
        if "LEFT" in set(store.debates()["symbol"]):
            break
        time.sleep(0.1)
    assert "LEFT" in set(store.debates()["symbol"])


def test_rate_limit_budget_and_token(tmp_path):
    with Running(SignalServer(SignalStore(tmp_path / "a"), rate=3)) as url:
        answers = ask(url, *[f"PRICES:EURUSD:{RISING}"] * 4)
    assert "rate limit: 3 commands a minute" in answers[-1]["error"]
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(OPINIONS[role_of(r)])
        server = SignalServer(SignalStore(tmp_path / "b"), model_panel(stub), budget=Budget(5))
        with Running(server) as url:
            first, second, single = ask(url, *[f"DEBATE:EURUSD:{RISING}"] * 2,
                                        f"PRICES:EURUSD:{RISING}")
    assert first["signal"] == "buy" and "daily budget of 5 model calls" in second["error"]
    assert single["signal"] == "buy"  # one call left
    budget = Budget(10)  # every attempt a call may take is reserved, the unused given back
    budget.spend(3, pd.Timestamp("2026-12-01", tz="UTC"))
    budget.refund(2)
    budget.spend(9, pd.Timestamp("2026-12-01 10:00", tz="UTC"))
    with pytest.raises(ProtocolError, match="daily budget"):
        budget.spend(1, pd.Timestamp("2026-12-01 11:00", tz="UTC"))
    budget.spend(10, pd.Timestamp("2026-12-02", tz="UTC"))  # a new UTC day
    with pytest.raises(ProtocolError, match="needs a token"):
        check_bind("0.0.0.0", None)
    with Running(SignalServer(SignalStore(tmp_path / "c")), token="s3cret") as url:
        with connect(url) as ws:
            assert "a token is required" in json.loads(ws.recv(timeout=20))["error"]
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=20)
        [ok] = ask(url, f"PRICES:EURUSD:{RISING}",
                   additional_headers={"Authorization": "Bearer s3cret"})
        [ok2] = ask(f"{url}/?token=s3cret", f"PRICES:EURUSD:{RISING}")
    assert ok["signal"] and ok2["signal"]


def test_a_failing_chat_model_or_a_broken_store_is_an_error_answer(tmp_path):
    with OpenAIStub(default=StubResponse.error(500, "model down")) as stub:
        store = SignalStore(tmp_path / "s")
        (store.root / "debates" / "day=2026-12-01").parent.mkdir(parents=True, exist_ok=True)
        with Running(SignalServer(store, model_panel(stub), clock=lambda: pd.Timestamp(
                "2026-12-01 12:00", tz="UTC"))) as url:
            (store.root / "debates" / "day=2026-12-01").write_text("not a folder")
            chat, prices = ask(url, "CHAT:hello?", f"PRICES:EURUSD:{RISING}")
            stub.default = StubResponse.answer(OPINIONS["analyst"])
            stub.handler = None
            [after] = ask(url, f"PRICES:EURUSD:{RISING}")  # the store cannot keep it
    assert "model gave no answer" in chat["error"] and "model gave no answer" in prices["error"]
    assert after["signal"] == "buy"  # answered all the same


def test_chat_keeps_the_conversation_until_cleared(tmp_path):
    with OpenAIStub() as stub:
        stub.handler = lambda r: StubResponse.answer(f"answer {len(r.messages)}")
        with Running(SignalServer(SignalStore(tmp_path / "s"), model_panel(stub))) as url:
            one, two, _, three = ask(url, "CHAT:what is RSI?", "CHAT:and ATR?", "CLEAR",
                                     "CHAT:hello")
        sent = [len(r.messages) for r in stub.chat_requests]
    assert sent == [2, 4, 2]  # system + question; then the first exchange too; then cleared
    assert one["reply"] == "answer 2" and two["reply"] == "answer 4" and three["reply"]


def _extended(closes: np.ndarray, start: str = "2026-11-02") -> str:
    times = [t.isoformat() for t in pd.date_range(start, periods=len(closes), freq="1D",
                                                  tz="UTC")]
    return json.dumps({"time": times, "close": [float(c) for c in closes]})


def test_debates_are_kept_and_later_prices_attach_their_outcomes_to_the_mart(tmp_path):
    """A debate on 30 daily bars; a later request with 55 bars reaches 1, 5 and 20 bars past
    it: the returns are attached, and the mart counts them by pattern."""
    closes = 100 * 1.01 ** np.arange(55)
    store = SignalStore(tmp_path / "store")
    # one terminal across connections: its token (optional on loopback) names it
    terminal = {"additional_headers": {"Authorization": "Bearer terminal-1"}}
    clock = lambda: pd.Timestamp("2026-12-27 12:00", tz="UTC")  # noqa: E731 after every bar
    with Running(SignalServer(store, clock=clock)) as url:
        [first] = ask(url, f"DEBATE:EURUSD:{_extended(closes[:30])}", **terminal)
        # 32 bars reach one bar past the debate's last (the 32nd may still be forming)
        [_] = ask(url, f"PRICES:EURUSD:{_extended(closes[:32])}", **terminal)
        assert sorted(store.outcomes()["horizon_bars"]) == [1]
        hourly = json.dumps({"time": [t.isoformat() for t in pd.date_range(
            "2026-12-01", periods=60, freq="1h", tz="UTC")], "close": [1.0] * 60})
        [_] = ask(url, f"PRICES:EURUSD:{hourly}", **terminal)  # another timeframe: no outcome
        assert len(store.outcomes()) == 1
        [_] = ask(url, f"PRICES:EURUSD:{_extended(closes)}", **terminal)
    outcomes = store.outcomes()
    debate_id = store.debates().query("command == 'DEBATE'")["id"].iloc[0]
    got = outcomes[outcomes["debate_id"] == debate_id].set_index("horizon_bars")["return"]
    for h in HORIZONS:
        assert got[h] == pytest.approx(closes[29 + h] / closes[29] - 1)
    assert first["signal"] == "buy"
    mart = pd.read_parquet(build_signal_marts(store))
    row = mart[(mart["horizon_bars"] == 5)].iloc[0]
    assert (row["agreement"], row["signal"], row["debates"], row["outcomes"]) == \
        ("agree", "buy", 1, 1)
    assert row["mean_signal_return"] == pytest.approx(1.01 ** 5 - 1) and row["hit_rate"] == 1.0


def test_the_protocol_parser():
    assert parse("prices:ETH:1,2,3").kind == "PRICES"
    command = parse('DEBATE:ETH:{"time": [0, 86400], "close": [1, 2], "high": [1.5, 2.5], '
                    '"low": [0.5, 1.5], "volume": [10, 20]}')
    assert command.times[1] == pd.Timestamp("1970-01-02", tz="UTC")
    assert command.series.highs.tolist() == [1.5, 2.5]
    with pytest.raises(ProtocolError, match="must increase"):
        parse('PRICES:ETH:{"time": [2, 1], "close": [1, 2]}')


def test_the_readme_terminal_gets_a_signal(tmp_path):
    """The terminals guide's example, as a program of its own, against a served store."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "terminals.md").read_text()
    [snippet] = re.findall(r"```python\n(.*?)```", guide, re.S)
    with Running(SignalServer(SignalStore(tmp_path / "store"))) as url:
        script = tmp_path / "terminal.py"
        script.write_text(snippet.replace("ws://127.0.0.1:8971", url))
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=60)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"(buy|sell|hold) - .+\n", done.stdout), done.stdout


def test_a_lake_brings_the_outcomes_of_debates_on_its_symbols(tmp_path):
    """No later request came, but a lake holds the symbol's daily bars: the outcomes come from
    there (on bars of the debate's length only)."""
    from arena.data.lake import Lake, PartitionKey, write_bars_file
    from arena.doors.signal_store import attach_from_lake

    days = pd.date_range("2026-11-02", periods=40, freq="1D", tz="UTC")
    closes = 100 * 1.02 ** np.arange(40)
    lake = Lake(tmp_path / "lake")
    frame = pd.DataFrame({"timestamp": days.as_unit("us"), "open": closes, "high": closes,
                          "low": closes, "close": closes, "volume": 1.0})
    key = PartitionKey("synthetic", "1d", "ETH")
    lake.path(key).parent.mkdir(parents=True, exist_ok=True)
    write_bars_file(frame, lake.path(key))
    store = SignalStore(tmp_path / "store")
    with Running(SignalServer(store, clock=lambda: pd.Timestamp("2026-11-12", tz="UTC"))) as url:
        ask(url, f"DEBATE:ETH:{_extended(closes[:10])}")
    assert attach_from_lake(store, lake, pd.Timestamp("2026-12-20", tz="UTC")) == len(HORIZONS)
    got = store.outcomes().set_index("horizon_bars")["return"]
    for h in HORIZONS:
        assert got[h] == pytest.approx(1.02 ** h - 1)
    assert attach_from_lake(store, lake, pd.Timestamp("2026-12-21", tz="UTC")) == 0  # once
