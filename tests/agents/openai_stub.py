"""A scripted OpenAI-compatible chat server on loopback, for tests of the real HTTP path.

``OpenAIStub`` runs a :class:`http.server.ThreadingHTTPServer` on ``127.0.0.1`` with a free port
(port 0) in a background thread and answers ``POST /v1/chat/completions`` in the OpenAI format.
Answers come from a script (a queue of :class:`StubResponse`, one per request, in order) and, once
the script is used up, from ``default`` or a ``handler`` callable. Every request is recorded
(path, headers, JSON body) so tests can assert what the client really sent.

Use it as a context manager or through the ``openai_stub`` pytest fixture::

    def test_something(openai_stub):
        openai_stub.script(StubResponse.error(500), StubResponse.answer('{"decisions": []}'))
        ... model="openai/stub-model", api_base=openai_stub.url ...
        assert len(openai_stub.requests) == 2

A ``delay`` makes a response slow (for timeouts and latency); the stub wakes sleeping handlers when
it stops, so a test never waits for an abandoned slow answer.

**Proving concurrency without a clock.** A :class:`Gate` holds requests until ``parties`` of them
are in the server at the same time::

    gate = Gate(parties=3, timeout=20)
    openai_stub.handler = lambda request: StubResponse.answer("...", gate=gate)
    ...  # the client under test, with a timeout longer than the gate's
    assert gate.opened

Every response carrying the gate waits for it; once all ``parties`` have arrived they are all
answered (and any later one at once). If they have not all arrived within ``timeout`` seconds
(the requests came one after another), the gate breaks: every held request and any later one gets
a **400** (``stub gate broken: ...``), which the client does not retry, so a sequential
implementation fails and a parallel one passes whatever the machine's load. Give the client a
timeout above the gate's: a request that timed out and was retried would count twice.
``OpenAIStub.max_in_flight`` is the most chat requests the server held at once (counted from
arrival until the answer starts), e.g. ``== 1`` to show calls were serialised.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it (header names lower-cased)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any  # the decoded JSON body, or the raw text when it was not JSON

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []


class Gate:
    """Holds the requests answered with it until ``parties`` of them have arrived (see the module
    docstring). ``opened``: they all did; ``broken``: one waited ``timeout`` seconds in vain (or
    the stub stopped); ``arrived`` counts every request that reached the gate, ``held_at_break``
    those that had when it broke."""

    def __init__(self, parties: int, *, timeout: float = 20.0) -> None:
        if parties < 1:
            raise ValueError("a gate needs at least one party")
        self.parties, self.timeout = parties, timeout
        self.arrived = self.held_at_break = 0
        self.opened = self.broken = False
        self._cond = threading.Condition()

    def wait(self) -> bool:
        """Arrive and wait: True once the gate is open, False if it is (or becomes) broken."""
        with self._cond:
            self.arrived += 1
            if not self.broken and self.arrived >= self.parties:
                self.opened = True
                self._cond.notify_all()
            deadline = time.monotonic() + self.timeout
            while not (self.opened or self.broken):
                left = deadline - time.monotonic()
                if left <= 0:
                    self.broken, self.held_at_break = True, self.arrived
                    self._cond.notify_all()
                    break
                self._cond.wait(left)
            return self.opened

    def abort(self) -> None:
        """Break the gate if it is still closed, releasing every held request."""
        with self._cond:
            if not (self.opened or self.broken):
                self.broken, self.held_at_break = True, self.arrived
                self._cond.notify_all()

    def __repr__(self) -> str:
        state = "open" if self.opened else "broken" if self.broken else "closed"
        return f"Gate({self.arrived}/{self.parties} arrived, {state})"


@dataclass(frozen=True)
class StubResponse:
    """What the server sends back for one request. ``body`` may be a dict (sent as JSON), a str or
    bytes (sent verbatim, for malformed bodies). With a ``gate`` the answer first waits for it (a
    broken gate answers 400 instead), then for ``delay``."""

    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)
    gate: Gate | None = None

    @classmethod
    def answer(cls, content: str | None, *, prompt_tokens: int = 100, completion_tokens: int = 20,
               model: str = "stub-model", delay: float = 0.0,
               gate: Gate | None = None) -> StubResponse:
        """A successful chat completion whose message content is ``content``."""
        body = {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
        return cls(200, body, delay, gate=gate)

    @classmethod
    def tool_calls(cls, calls: list[tuple[str, Mapping[str, object]]], *, first_id: int = 0,
                   prompt_tokens: int = 50, completion_tokens: int = 10) -> StubResponse:
        """A chat completion that asks for the tools ``calls`` (name, arguments), their ids
        ``call_<first_id>``, ``call_<first_id + 1>``, ..."""
        asked = [{"id": f"call_{first_id + i}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(args)}}
                 for i, (name, args) in enumerate(calls)]
        body = {"id": "x", "object": "chat.completion", "created": 0, "model": "stub-model",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": None, "tool_calls": asked}}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}
        return cls(200, body)

    @classmethod
    def error(cls, status: int, message: str = "stub error", *, delay: float = 0.0,
              headers: Mapping[str, str] | None = None) -> StubResponse:
        """An OpenAI-style error body with the given HTTP status."""
        body = {"error": {"message": message, "type": "stub_error", "code": status}}
        return cls(status, body, delay, dict(headers or {}))

    @classmethod
    def raw(cls, text: str | bytes, *, status: int = 200,
            content_type: str = "application/json") -> StubResponse:
        """A body sent byte for byte (e.g. truncated JSON or an HTML page)."""
        return cls(status, text, 0.0, {"Content-Type": content_type})


Handler = Callable[[RecordedRequest], StubResponse]


class _Server(ThreadingHTTPServer):
    """A model server many clients call at once: a cycle sends every contestant's request
    together, more than the default listen backlog of 5 would take without refusing some."""

    request_queue_size = 256


class OpenAIStub:
    """The scripted loopback server. ``url`` is the ``api_base`` to give litellm
    (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, *, default: StubResponse | None = None,
                 handler: Handler | None = None) -> None:
        self.default = default or StubResponse.answer('{"decisions": []}')
        self.handler = handler
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0  # chat requests arrived and not yet answered
        self.max_in_flight = 0
        self._gates: set[Gate] = set()
        self._script: deque[StubResponse] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------------

    def script(self, *responses: StubResponse) -> None:
        """Queue responses, answered one per request in order."""
        with self._lock:
            self._script.extend(responses)

    def _next(self, request: RecordedRequest) -> StubResponse:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
        return self.handler(request) if self.handler is not None else self.default

    def _hold(self, response: StubResponse) -> StubResponse | None:
        """Wait for the response's gate and delay; None when the stub is stopping (no answer)."""
        gate = response.gate
        if gate is not None:
            with self._lock:
                self._gates.add(gate)
            if not gate.wait():
                response = StubResponse.error(400, (
                    f"stub gate broken: only {gate.held_at_break} of {gate.parties} requests were"
                    f" in the server together after {gate.timeout:g} s (not in parallel?)"))
            if self._stopping.is_set():
                return None
        if response.delay and self._stopping.wait(response.delay):
            return None  # the stub is stopping: drop the abandoned slow answer
        return response

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == CHAT_PATH]

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "the stub is not running"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAIStub:
        stub = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                request = RecordedRequest("POST", self.path,
                                          {k.lower(): v for k, v in self.headers.items()}, body)
                if self.path != CHAT_PATH:
                    with stub._lock:
                        stub.requests.append(request)
                    self._send(StubResponse.error(404, f"no route {self.path}"))
                    return
                with stub._lock:
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                try:
                    response = stub._hold(stub._next(request))
                finally:
                    with stub._lock:  # before the answer: its client cannot overlap a next call
                        stub.in_flight -= 1
                if response is not None:
                    self._send(response)

            def _send(self, response: StubResponse) -> None:
                if isinstance(response.body, bytes):
                    payload = response.body
                elif isinstance(response.body, str):
                    payload = response.body.encode()
                else:
                    payload = json.dumps(response.body).encode()
                try:
                    self.send_response(response.status)
                    headers = {"Content-Type": "application/json", **response.headers}
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name=f"openai-stub-{self.port}")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            gates = list(self._gates)
        for gate in gates:
            gate.abort()  # held requests end now, unanswered
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def unreachable_url() -> str:
    """An ``api_base`` on a loopback port nobody listens on: every call is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A fresh scripted loopback server per test (see :class:`OpenAIStub`)."""
    with OpenAIStub() as stub:
        yield stub
