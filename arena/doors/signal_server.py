"""``arena signal-server``: trading terminals ask for a signal over a WebSocket, one line each.

The protocol (one text message per command, one JSON answer each)::

    PRICES:SYMBOL:c1,c2,...        one analyst's signal on closes (oldest first):
                                   {"symbol", "signal": "buy|sell|hold", "comment": "..."}
    DEBATE:SYMBOL:c1,c2,...        bull, bear and risk analysts in parallel, then the judge:
                                   {"symbol", "signal", "comment", "debate": {"bull", "bear",
                                    "risk", "judge"}}  ("judge" is the judge's raw JSON answer)
    CHAT:text                      a free question, with this connection's conversation so far:
                                   {"reply": "..."}
    CLEAR                          forget the conversation: {"ok": true, "forgotten": n}
    STOP                           the answers under way are sent first, then
                                   {"ok": true, "bye": true}, and the server closes this
                                   connection (no other); a line sent after STOP is answered
                                   {"error": "the connection is closed: ...", "signal": "hold"}

A terminal may name a request: ``DEBATE#42:EURUSD:...`` (any command, ``KIND#ID`` with an id of
1 to 64 letters, digits, ``.``, ``_`` or ``-``); the answer carries ``"id": "42"``. The PRICES
and DEBATE of one connection run at once, each as a task of its own, so their answers come back
in the order they are ready: each carries its request's ``symbol`` (and ``id`` when one was
sent), so the terminal matches them. CHAT and CLEAR keep their order among themselves (one
conversation). A terminal that sends one line and waits for its answer sees no difference.

The extended form of PRICES and DEBATE puts a JSON object after the symbol, carrying bar times
(ISO-8601 or epoch seconds, UTC) and optionally highs, lows and volumes::

    DEBATE:EURUSD:{"time": ["2026-11-02T00:00Z", ...], "close": [...], "high": [...],
                   "low": [...], "volume": [...]}

Bar times let the server attach outcomes to earlier debates (:mod:`arena.doors.signal_store`)
of the same terminal: a connection is a terminal of its own, and connections sending the same
bearer token (required beyond loopback, optional on it) are one terminal; ``--token`` may name
several, comma-separated, one per terminal, so terminals beyond loopback stay apart too. A bar time after the
server's clock (beyond :data:`CLOCK_SKEW`) is refused, as is a series whose closed bar
disagrees with one the store already rests on for that terminal.
Whatever cannot be served is an answer too: ``{"error": "...", "signal": "hold"}`` naming the
problem (with the request's ``symbol`` and ``id`` where they could be read) - every error
answer carries ``signal: hold``, so a terminal that reads only the signal stays out -, and the
connection stays open.

The analysts answer in free text, read by :func:`arena.doors.judge.parse_opinion` and
:func:`~arena.doors.judge.parse_risk`: this product's final lines, or a lean and a strength in
words ("bullish, strength 7/10") and a risk level in words ("MEDIUM RISK: ATR14 normal"). An
analyst's answer that cannot be read is sent back to it once, naming the problem
(:func:`arena.doors.judge.analyst_repair`); when it still cannot be read, the debate is an
error (``signal: hold``, the analysts' answers under ``debate``) and the judge is never asked,
nor paid for. The judge answers one JSON object ``{"signal", "comment"}``; an answer that
cannot be read is sent back to it once, naming the problem (template ``signal_repair``), and
when that answer cannot be read either the rules decide alone. The verdict of a debate is the
decision table of :mod:`arena.doors.judge` under the server's
:class:`~arena.doors.judge.JudgeRules` (the judge's answer is kept; where the table differs,
the table wins and the comment says so).

Models come from a roster entry (``--contestant NAME``: its model, endpoint and key variable,
through litellm); without one - or without its key - a rule-based analyst set answers, so the
server runs with no key at all. Bound beyond loopback the server requires a token (the
``Authorization: Bearer`` header or ``?token=`` in the URL). Each connection may send
:data:`RATE` commands a minute (counted as they arrive, however many run at once), and the
server spends at most ``--daily-calls`` model calls a UTC day.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from arena.agents.llm import complete
from arena.agents.roster import ContestantSpec, is_loopback
from arena.core.errors import UnusableInput
from arena.core.types import Message
from arena.doors.brief import BriefError, Series, brief, render
from arena.doors.judge import (
    COMMITTEE_RULES,
    HOLD,
    JudgeAnswer,
    JudgeRules,
    VerdictError,
    analyst_repair,
    read_judge,
    read_panel,
    rule_analysts,
    rules_text,
    unreadable,
)
from arena.doors.judge import verdict as table_verdict
from arena.doors.limits import SlidingWindow
from arena.doors.signal_store import BarConflict, SignalStore, bar_seconds
from arena.market.prompts import Prompts

log = logging.getLogger(__name__)
HOST, PORT = "127.0.0.1", 8971
MAX_MESSAGE = 256 * 1024  # bytes of one command; up to 4x that gets an error answer, beyond
HARD_LIMIT = 4 * MAX_MESSAGE  # the WebSocket closes the connection (1009: message too big)
WORKERS = 64  # threads for model calls and the store
MAX_VALUE = 1e12  # no price, high, low or volume a terminal sends is larger
MAX_BARS = 5000
RATE = 30  # commands a connection may send in any minute
DAILY_CALLS = 2000  # model calls the server spends in a UTC day
TIMEOUT_S = 120.0  # a request's models answer within this, or the request gets an error
ANALYSTS = ("bull", "bear", "risk")
ANALYST_TEMPERATURE, JUDGE_TEMPERATURE = 0.7, 0.2  # the analysts argue; the judge decides
REPAIR_TEMPERATURE = JUDGE_TEMPERATURE  # an analyst's repair restates, it does not argue anew
_SYMBOL = re.compile(r"^[A-Za-z0-9._/-]{1,24}$")
_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # a request id a terminal may send: KIND#ID
CHAT_TURNS = 20  # messages of a conversation kept
CLOCK_SKEW = pd.Timedelta(seconds=60)  # a bar may open this far after the server's clock
STOP_GRACE_S = 1.0  # after STOP's bye, lines still arriving are answered (not served) this long


class ProtocolError(UnusableInput, ValueError):
    """A command the server cannot serve; the answer names why."""


@dataclass(frozen=True)
class Repair:
    """An analyst's repair round: whether it was asked (a model call), and what still keeps the
    answer from being read ("" when nothing does)."""

    asked: bool
    problem: str


@dataclass(frozen=True)
class Command:
    kind: str
    symbol: str = ""
    series: Series | None = None
    times: pd.DatetimeIndex | None = None
    text: str = ""
    id: str | None = None  # the terminal's name for the request (KIND#ID), echoed back

    def echo(self) -> dict[str, str]:
        """What every answer to this command carries so the terminal can match it."""
        return _echo_of(self.id, self.symbol)


def failure(message: str, **echoed: str) -> dict[str, Any]:
    """An error answer: what went wrong, and ``signal: hold`` - a terminal that reads only the
    signal stays out of the market."""
    return {**echoed, "error": message, "signal": HOLD}


def closed(message: str | bytes) -> dict[str, Any]:
    """The answer to a line sent after STOP: the connection is closing, the line not served."""
    return failure("the connection is closed: STOP was received, so this line was not served; "
                   "send it on a new connection", **echo(message))


def _echo_of(request_id: str | None, symbol: str | None) -> dict[str, str]:
    return {**({"id": request_id} if request_id else {}),
            **({"symbol": symbol} if symbol else {})}


def _text(message: str | bytes) -> str:
    if isinstance(message, bytes):
        try:
            return message.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("a command is UTF-8 text") from None
    return message


def echo(message: str | bytes) -> dict[str, str]:
    """The ``id`` and ``symbol`` of a line, read as far as they can be (never raises): what an
    answer carries when the line itself cannot be served."""
    head_of = message[:200]
    if isinstance(head_of, bytes):
        head_of = head_of.decode("utf-8", "ignore")
    head, _, rest = head_of.strip().partition(":")
    kind, _, request_id = head.partition("#")
    symbol = rest.partition(":")[0].strip() if kind.strip().upper() in ("PRICES", "DEBATE") else ""
    return _echo_of(request_id if _ID.match(request_id) else None,
                    symbol if _SYMBOL.match(symbol) else None)


def parse(message: str | bytes) -> Command:
    """One terminal line as a :class:`Command` (or :class:`ProtocolError` saying what is wrong)."""
    line = _text(message).strip()
    head, _, rest = line.partition(":")
    name, named, request_id = head.partition("#")
    kind = name.strip().upper()
    if named and not _ID.match(request_id):
        raise ProtocolError(f"the request id {request_id[:70]!r} is not one: 1 to 64 letters, "
                            "digits, '.', '_' or '-' after '#' (DEBATE#42:SYMBOL:...)")
    ident = request_id if named else None
    if kind in ("CLEAR", "STOP"):
        return Command(kind, id=ident)
    if kind == "CHAT":
        if not rest.strip():
            raise ProtocolError("CHAT needs a question: CHAT:text")
        return Command(kind, text=rest.strip(), id=ident)
    if kind not in ("PRICES", "DEBATE"):
        raise ProtocolError(f"unknown command {head[:20]!r}: PRICES, DEBATE, CHAT, CLEAR or STOP")
    symbol, sep, payload = rest.partition(":")
    if not sep or not _SYMBOL.match(symbol.strip()):
        raise ProtocolError(f"{kind} needs a symbol and a series: {kind}:SYMBOL:c1,c2,...")
    series, times = _series(payload.strip())
    return Command(kind, symbol.strip(), series, times, id=ident)


def _series(payload: str) -> tuple[Series, pd.DatetimeIndex | None]:
    if not payload:
        raise ProtocolError("the series is empty: send closes, oldest first (c1,c2,...)")
    if payload.startswith("{"):
        try:
            raw = json.loads(payload)
        except ValueError as exc:
            raise ProtocolError(f"the series object is not JSON: {exc}") from None
        if not isinstance(raw, dict) or raw.get("close") is None:
            raise ProtocolError('the series object needs "close" (and may carry "time", '
                                '"high", "low", "volume")')
        columns = {k: raw.get(k) for k in ("close", "high", "low", "volume")}
        times = _times(raw["time"]) if raw.get("time") is not None else None
    else:
        columns = {"close": payload.split(","), "high": None, "low": None, "volume": None}
        times = None
    values = {k: None if v is None else _numbers(k, v) for k, v in columns.items()}
    if len(values["close"]) > MAX_BARS:
        raise ProtocolError(f"{len(values['close'])} bars; the limit is {MAX_BARS}")
    if times is not None and len(times) != len(values["close"]):
        raise ProtocolError(f"{len(times)} times for {len(values['close'])} closes")
    try:
        series = Series.of(values["close"], values["high"], values["low"], values["volume"])
    except BriefError as exc:
        raise ProtocolError(str(exc)) from None
    return series, times


def _numbers(name: str, raw: object) -> np.ndarray:
    if not isinstance(raw, list | tuple):
        raise ProtocolError(f'"{name}" must be a list of numbers')
    try:
        values = np.array([float(v) for v in raw if not isinstance(v, bool)], dtype=float)
    except (TypeError, ValueError, OverflowError):
        bad = next((v for v in raw if not _is_number(v)), "?")
        raise ProtocolError(f"{name}: {str(bad)[:20]!r} is not a number") from None
    if len(values) != len(raw):
        raise ProtocolError(f"{name}: true and false are not numbers")
    limit = MAX_VALUE if name != "volume" else MAX_VALUE ** 1.5
    if np.any(np.abs(values[np.isfinite(values)]) > limit):
        raise ProtocolError(f"{name}: a value beyond {limit:g} is out of range")
    return values


def _is_number(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def _times(raw: object) -> pd.DatetimeIndex:
    if not isinstance(raw, list):
        raise ProtocolError('"time" must be a list of ISO-8601 times or epoch seconds')
    try:
        stamps = pd.DatetimeIndex([pd.Timestamp(v, unit="s", tz="UTC")
                                   if isinstance(v, int | float) else pd.Timestamp(v)
                                   for v in raw])
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"a bar time cannot be read: {exc}") from None
    stamps = stamps.tz_localize("UTC") if stamps.tz is None else stamps.tz_convert("UTC")
    if not stamps.is_monotonic_increasing or stamps.has_duplicates:
        raise ProtocolError("bar times must increase, oldest first")
    return stamps.as_unit("us")


# ----------------------------------------------------------------------------- the analysts
class Panel:
    """Who answers: ``ask(role, messages, temperature)`` for one model answer and the attempts
    it took (at most ``attempts``); a rule set needs none."""

    model = "rules"
    attempts = 1

    def ask(self, role: str, messages: Sequence[Message], temperature: float
            ) -> tuple[str, int]:
        raise NotImplementedError


class ModelPanel(Panel):
    """The analysts and judge on one roster entry's model, through litellm."""

    def __init__(self, spec: ContestantSpec, env: Mapping[str, str] | None = None) -> None:
        self.spec, self.env = spec, env
        self.model = spec.model or ""
        self.attempts = 1 + spec.params.num_retries

    def ask(self, role: str, messages: Sequence[Message], temperature: float
            ) -> tuple[str, int]:
        done = complete(self.spec, messages, role=role, contestant="signal-server",
                        env=self.env, temperature=temperature)
        if done.text is None:
            raise RuntimeError(f"the {role} model gave no answer: {done.error}")
        return done.text, min(self.attempts, 1 + int(done.record.retries or 0))


class Budget:
    """Model calls spent in the current UTC day, at most ``daily``."""

    def __init__(self, daily: int = DAILY_CALLS) -> None:
        self.daily, self._day, self._spent = daily, "", 0
        self._lock = threading.Lock()

    def spend(self, calls: int, now: pd.Timestamp) -> None:
        with self._lock:
            day = f"{now:%Y-%m-%d}"
            if day != self._day:
                self._day, self._spent = day, 0
            if self._spent + calls > self.daily:
                raise ProtocolError(f"the server's daily budget of {self.daily} model calls is "
                                    "spent: try again after 00:00 UTC")
            self._spent += calls

    def refund(self, calls: int) -> None:
        with self._lock:
            self._spent = max(0, self._spent - max(0, calls))


def _connection_id() -> str:
    return f"conn-{uuid.uuid4().hex[:16]}"


def terminal_of(token: str | None) -> str:
    """The terminal id of a connection: its token's (a digest, never the token itself), or
    one of its own."""
    if not token:
        return _connection_id()
    return f"key-{hashlib.sha256(token.encode()).hexdigest()[:16]}"


@dataclass
class Connection:
    """One terminal's state: who it is (the store's terminal id), its conversation, the times of
    its recent commands, and the lock that keeps its CHAT and CLEAR in the order sent."""

    chat: list[Message] = field(default_factory=list)
    recent: SlidingWindow | None = None  # its commands of the last minute
    terminal: str = field(default_factory=_connection_id)
    talk: asyncio.Lock = field(default_factory=asyncio.Lock)


class SignalServer:
    """The protocol's answers (transport-free: :meth:`answer` maps a line to a JSON object;
    :meth:`admit` and :meth:`respond` are its two halves, for a transport that serves the
    commands of one connection at once)."""

    def __init__(self, store: SignalStore, panel: Panel | None = None, *,
                 budget: Budget | None = None, rate: int = RATE, timeout_s: float = TIMEOUT_S,
                 clock: Callable[[], pd.Timestamp] | None = None,
                 prompts: Prompts | None = None, workers: int = WORKERS,
                 rules: JudgeRules = COMMITTEE_RULES) -> None:
        self.store, self.panel, self.rules = store, panel, rules
        self.budget, self.rate, self.timeout_s = budget or Budget(), rate, timeout_s
        self.clock = clock or (lambda: pd.Timestamp.now(tz="UTC"))
        self.prompts = prompts or Prompts()
        # model calls and the store's files wait in threads of their own: eight debates of
        # three analysts each are 24 calls at once, beyond asyncio's default pool
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="signal")

    def close(self) -> None:
        """Stop taking model calls (the ones under way finish in the background)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _thread(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        return asyncio.get_running_loop().run_in_executor(self._pool, partial(fn, *args))

    async def answer(self, line: str | bytes, conn: Connection) -> dict[str, Any]:
        """The answer to one line: :meth:`admit`, then :meth:`respond`."""
        admitted = self.admit(line, conn)
        return admitted if isinstance(admitted, dict) else await self.respond(admitted, conn)

    def admit(self, line: str | bytes, conn: Connection) -> Command | dict[str, Any]:
        """A line as it arrives, in order: counted against the connection's rate, sized and
        parsed. The :class:`Command` to serve, or the line's answer (an error) at once."""
        conn.recent = conn.recent or SlidingWindow(self.rate)
        if conn.recent.admit() is not None:
            return failure(f"rate limit: {self.rate} commands a minute per connection",
                           **echo(line))
        if len(line) > MAX_MESSAGE:
            return failure(f"the command is {len(line):,} characters; the limit is "
                           f"{MAX_MESSAGE:,}", **echo(line))
        try:
            return parse(line)
        except ProtocolError as exc:
            return failure(str(exc), **echo(line))

    async def respond(self, command: Command, conn: Connection) -> dict[str, Any]:
        """The answer to an admitted command, carrying its ``id`` and ``symbol``. Never raises:
        a failure is an answer too."""
        return {**command.echo(), **await self._respond(command, conn)}

    async def _respond(self, command: Command, conn: Connection) -> dict[str, Any]:
        try:
            if command.kind == "STOP":
                return {"ok": True, "bye": True}
            if command.kind in ("CHAT", "CLEAR"):
                async with conn.talk:  # one conversation: in the order the lines came
                    if command.kind == "CLEAR":
                        dropped, conn.chat[:] = len(conn.chat), []
                        return {"ok": True, "forgotten": dropped}
                    return await asyncio.wait_for(self._chat(command, conn), self.timeout_s)
            return await asyncio.wait_for(self._serve(command, conn), self.timeout_s)
        except (ProtocolError, BarConflict) as exc:
            return failure(str(exc))
        except TimeoutError:
            return failure(f"the models did not answer within {self.timeout_s:g} s; nothing was "
                           "decided")
        except (RuntimeError, VerdictError) as exc:  # a model that failed (a chat's too)
            return failure(str(exc))
        except Exception as exc:  # never a dropped connection: the terminal gets an answer
            log.exception("signal server: %s", type(exc).__name__)
            return failure(f"internal error ({type(exc).__name__}); nothing was decided")

    async def _serve(self, command: Command, conn: Connection) -> dict[str, Any]:
        assert command.series is not None
        received = self.clock()
        if command.times is not None and command.times[-1] > received + CLOCK_SKEW:
            raise ProtocolError(f"the last bar time {command.times[-1].isoformat()} is after "
                                f"the server's clock ({received.isoformat()}): bar times are "
                                "UTC open times; convert a broker's time, or leave out the "
                                "times")
        facts = brief(command.series)
        if command.times is not None:  # a BarConflict refuses the request before any model
            await self._thread(partial(self.store.attach_outcomes, terminal=conn.terminal),
                               command.symbol, command.times, command.series.closes, received)
        text = render(facts)
        started = time.perf_counter()
        try:
            if command.kind == "DEBATE":
                out, record = await self._debate(command.symbol, facts, text, received)
            else:
                out, record = await self._single(command.symbol, facts, text, received)
        except (RuntimeError, VerdictError) as exc:
            out, record = failure(str(exc)), {"error": str(exc)}
        record.update(received_at=received, command=command.kind, symbol=command.symbol,
                      bars=len(command.series.closes), last_close=float(command.series.closes[-1]),
                      last_bar_at=None if command.times is None else command.times[-1],
                      bar_seconds=None if command.times is None else bar_seconds(command.times),
                      analysts=self.panel.model if self.panel else "rules",
                      terminal=conn.terminal, request_id=command.id,
                      latency_s=time.perf_counter() - started)
        try:
            await self._thread(self.store.add_debate, record)
        except Exception:  # the answer stands; the store's trouble goes to the operator's log
            log.exception("signal server: the debate could not be stored")
        return out

    def _ask(self, role: str, messages: Sequence[Message], temperature: float,
             reserved: bool = False) -> str:
        """One model answer, paid from the day's budget: every attempt it may take is
        reserved first (unless the caller ``reserved`` them), the unused ones given back."""
        assert self.panel is not None
        attempts = self.panel.attempts
        if not reserved:
            self.budget.spend(attempts, self.clock())
        text, used = self.panel.ask(role, messages, temperature)  # a failure used them all
        self.budget.refund(attempts - used)
        return text

    def _prompt(self, role: str, **fields: str) -> tuple[Message, ...]:
        return (Message("user", self.prompts.render(f"signal_{role}", **fields)),)

    async def _judged(self, role: str, asked: tuple[Message, ...], reserved: bool
                      ) -> tuple[str, JudgeAnswer, str | None]:
        """The judge's (or the PRICES analyst's) JSON answer, sent back once when it cannot be
        read: ``(the last raw answer, as read, the first raw answer when a repair was asked)``.
        The repair is paid when asked; when the day's budget refuses it (nothing asked) or the
        model fails it, the first answer stands unread and the caller decides what then."""
        raw = await self._thread(self._ask, role, asked, JUDGE_TEMPERATURE, reserved)
        first = read_judge(raw)
        if first.readable:
            return raw, first, None
        repair = (*asked, Message("assistant", raw),
                  Message("user", self.prompts.render("signal_repair", problem=first.problem)))
        try:
            again = await self._thread(self._ask, role, repair, JUDGE_TEMPERATURE)
        except ProtocolError as exc:  # the day's budget: no repair was asked
            return raw, JudgeAnswer(None, problem=f"{first.problem}; no repair: {exc}"), None
        except RuntimeError as exc:  # asked, and the model failed it
            return raw, JudgeAnswer(None, problem=f"{first.problem}; the repair failed: {exc}"), raw
        second = read_judge(again)
        if not second.readable:
            second = JudgeAnswer(None, problem=f"after one repair, {second.problem}")
        return again, second, raw

    async def _debate(self, symbol: str, facts: Mapping[str, Any], text: str,
                      now: pd.Timestamp) -> tuple[dict[str, Any], dict[str, Any]]:
        """The analysts, each unreadable answer sent back once, then - only when all three can
        be read - the judge (also repaired once), and the table's verdict."""
        if self.panel is None:
            answers = rule_analysts(facts, symbol, self.rules)
            return self._decided(answers, read_judge(answers["judge"]), None, 0)
        attempts = self.panel.attempts
        self.budget.spend(4 * attempts, now)  # the whole debate, or none of it
        asked = {role: self._prompt(role, symbol=symbol, brief=text) for role in ANALYSTS}
        try:
            answers = dict(zip(ANALYSTS, await asyncio.gather(
                *[self._thread(self._ask, role, asked[role], ANALYST_TEMPERATURE, True)
                  for role in ANALYSTS]), strict=True))
            problems = await self._repair_panel(asked, answers)
        except BaseException:
            self.budget.refund(attempts)  # the judge was never asked
            raise
        calls = len(ANALYSTS) + sum(p.asked for p in problems.values())
        unread = {role: p.problem for role, p in problems.items() if p.problem}
        if unread:  # the judge is never asked (nor paid for) about a panel it cannot weigh
            self.budget.refund(attempts)
            return self._unread(answers, unread, calls)
        judged = self._prompt("judge", symbol=symbol, brief=text,
                              judge_rules=rules_text(self.rules), **answers)
        answers["judge"], judge, first = await self._judged("judge", judged, True)
        return self._decided(answers, judge, first, calls + (1 if first is None else 2))

    async def _repair_panel(self, asked: Mapping[str, tuple[Message, ...]],
                            answers: dict[str, str]) -> dict[str, Repair]:
        """Send each analyst's unreadable answer back once (at once), naming the problem, and
        put the new answers in ``answers``: per role sent back, whether a repair was asked and
        what still keeps its answer from being read ("" when nothing)."""
        wrong = {role: problem for role in ANALYSTS
                 if (problem := unreadable(role, answers[role])) is not None}
        done = await asyncio.gather(*[self._repair_analyst(role, asked[role], answers[role],
                                                           problem)
                                      for role, problem in wrong.items()])
        out: dict[str, Repair] = {}
        for role, (again, repair) in zip(wrong, done, strict=True):
            answers[role] = again if again is not None else answers[role]
            out[role] = repair
        return out

    async def _repair_analyst(self, role: str, asked: tuple[Message, ...], raw: str,
                              problem: str) -> tuple[str | None, Repair]:
        """One analyst's repair round: its new answer (None when none came) and the outcome.
        Paid when asked; the day's budget may refuse it (nothing asked)."""
        repair = (*asked, Message("assistant", raw),
                  Message("user", analyst_repair(role, problem)))
        try:
            again = await self._thread(self._ask, role, repair, REPAIR_TEMPERATURE)
        except ProtocolError as exc:  # the day's budget: no repair was asked
            return None, Repair(False, f"{role}: {problem}; no repair: {exc}")
        except RuntimeError as exc:  # asked, and the model failed it
            return None, Repair(True, f"{role}: {problem}; the repair failed: {exc}")
        still = unreadable(role, again)
        return again, Repair(True, f"{role}: after one repair, {still}" if still else "")

    def _unread(self, answers: Mapping[str, str], unread: Mapping[str, str], calls: int
                ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A debate whose panel could not be read: an error with ``signal: hold``, the
        analysts' answers kept; the judge was not asked."""
        error = ("the analysts' answers could not be read (" + "; ".join(unread.values())
                 + "): the judge was not asked and nothing was decided")
        out = {**failure(error), "debate": {role: answers[role] for role in ANALYSTS}}
        return out, {"error": error, "bull": answers["bull"], "bear": answers["bear"],
                     "risk_text": answers["risk"], "model_calls": calls,
                     "judge_rules": ",".join(self.rules.extras)}

    def _decided(self, answers: Mapping[str, str], judge: JudgeAnswer, first: str | None,
                 calls: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """The table's verdict on a read panel, with the judge's answer alongside: the answer
        and the record kept."""
        bull, bear, risk = read_panel(answers)
        decided = table_verdict(bull, bear, risk, judge, self.rules)
        out = {"signal": decided.signal, "comment": decided.comment,
               "debate": {role: answers[role] for role in (*ANALYSTS, "judge")}}
        record = {"signal": decided.signal, "comment": decided.comment, "rule": decided.rule,
                  "judge_signal": decided.judge_signal, "overruled": decided.overruled,
                  "bull_lean": str(bull.lean), "bull_strength": bull.strength,
                  "bear_lean": str(bear.lean), "bear_strength": bear.strength,
                  "risk": str(risk.level), "bull": answers["bull"], "bear": answers["bear"],
                  "risk_text": answers["risk"], "judge": answers["judge"],
                  "judge_first": first, "judge_repaired": first is not None,
                  "judge_rules": ",".join(self.rules.extras), "model_calls": calls}
        return out, record

    async def _single(self, symbol: str, facts: Mapping[str, Any], text: str,
                      now: pd.Timestamp) -> tuple[dict[str, Any], dict[str, Any]]:
        first: str | None = None
        if self.panel is None:
            answer = rule_analysts(facts, symbol, self.rules)["judge"]
            read = read_judge(answer)
            calls = 0
        else:
            asked = self._prompt("analyst", symbol=symbol, brief=text)
            answer, read, first = await self._judged("analyst", asked, False)
            calls = 1 if first is None else 2
        kept = {"judge": answer, "judge_first": first, "judge_repaired": first is not None,
                "model_calls": calls}
        if read.signal is None:  # nothing decided; the calls it took are on the record
            error = f"the analyst's answer could not be read ({read.problem}): {answer[:120]!r}"
            return failure(error), {"error": error, **kept}
        return ({"signal": read.signal, "comment": read.comment},
                {"signal": read.signal, "comment": read.comment, **kept})

    async def _chat(self, command: Command, conn: Connection) -> dict[str, Any]:
        question = Message("user", command.text)
        if self.panel is None:
            reply = ("No model is configured (the rule-based analysts answer PRICES and DEBATE "
                     "only): start the server with --contestant NAME for a conversation.")
        else:
            system = Message("system", self.prompts.render(
                "signal_chat", symbol="", brief="", judge_rules=rules_text(self.rules)))
            reply = await self._thread(self._ask, "chat",
                                       (system, *conn.chat[-CHAT_TURNS:], question), 0.5)
        conn.chat += [question, Message("assistant", reply)]  # kept once answered
        return {"reply": reply}


# ----------------------------------------------------------------------------- the transport
def _token_of(connection: ServerConnection) -> str | None:
    request = connection.request
    if request is None:
        return None
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return (parse_qs(urlsplit(request.path).query).get("token") or [None])[0]


def tokens_of(token: str | None) -> tuple[str, ...]:
    """The tokens a server accepts: ``--token`` names one, or several separated by commas - one
    per terminal, so that terminals beyond loopback keep their debates' outcomes apart (a
    terminal is its token: :func:`terminal_of`)."""
    return tuple(t.strip() for t in (token or "").split(",") if t.strip())


def handler(server: SignalServer, token: str | None) -> Callable[..., Any]:
    accepted = tokens_of(token)

    async def handle(connection: ServerConnection) -> None:
        if accepted:
            given = (_token_of(connection) or "").encode()
            # every token compared, whichever matches: the time says nothing of which one
            if not sum(hmac.compare_digest(given, t.encode()) for t in accepted):
                await connection.send(json.dumps(failure("a token is required "
                                                         "(Authorization: Bearer, or ?token=)")))
                await connection.close(code=1008, reason="token")
                return
        await serve_connection(server, connection,
                               Connection(terminal=terminal_of(_token_of(connection))))

    return handle


async def serve_connection(server: SignalServer, connection: ServerConnection,
                           state: Connection) -> None:
    """Read the connection's lines in order and answer each as a task of its own, so one
    terminal's debates run at once. A line that cannot be served is answered at once; STOP
    waits for the answers under way, then says bye and closes this connection. A line that
    comes after STOP - until the close, which waits up to :data:`STOP_GRACE_S` after the bye
    for the terminal to close first - is answered at once as not served (:func:`closed`).
    When the terminal goes away, the answers under way still finish (their debates are
    stored)."""
    running: set[asyncio.Task[None]] = set()
    left = asyncio.Event()  # the terminal closed its side

    async def send(out: Mapping[str, Any]) -> None:
        with suppress(ConnectionClosed):  # the terminal left: its debate is stored all the same
            await connection.send(json.dumps(out, default=str))

    async def reply(command: Command) -> None:
        await send(await server.respond(command, state))

    async def stop(command: Command) -> None:
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        await send(await server.respond(command, state))
        with suppress(TimeoutError):  # lines already on their way are answered, not dropped
            await asyncio.wait_for(left.wait(), STOP_GRACE_S)
        await connection.close()

    closing: asyncio.Task[None] | None = None
    try:
        async for message in connection:
            if closing is not None:
                await send(closed(message))
                continue
            admitted = server.admit(message, state)
            if isinstance(admitted, dict):
                await send(admitted)
            elif admitted.kind == "STOP":
                closing = asyncio.create_task(stop(admitted))
            else:
                task = asyncio.create_task(reply(admitted))
                running.add(task)
                task.add_done_callback(running.discard)
    except ConnectionClosed:
        pass
    finally:
        left.set()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        if closing is not None:
            await closing


def check_bind(host: str, token: str | None) -> None:
    """Beyond loopback the server needs a token."""
    if not tokens_of(token) and not is_loopback(f"ws://{host}"):
        raise ProtocolError(f"listening on {host} needs a token (--token, or "
                            "$ARENA_SIGNAL_TOKEN): terminals beyond this machine must prove "
                            "who they are")


async def serve_until(server: SignalServer, stopped: asyncio.Future[None], *, host: str = HOST,
                      port: int = PORT, token: str | None = None,
                      ready: Callable[[int], None] | None = None) -> None:
    """Serve until ``stopped`` resolves; ``ready`` gets the bound port."""
    check_bind(host, token)
    try:
        async with serve(handler(server, token), host, port, max_size=HARD_LIMIT) as ws:
            if ready is not None:
                ready(next(iter(ws.sockets)).getsockname()[1])
            await stopped
    finally:
        server.close()


def run(server: SignalServer, host: str = HOST, port: int = PORT,
        token: str | None = None) -> None:
    """Serve until interrupted (``arena signal-server``)."""
    check_bind(host, token)

    async def main() -> None:
        await serve_until(server, asyncio.get_running_loop().create_future(), host=host,
                          port=port, token=token)

    asyncio.run(main())
