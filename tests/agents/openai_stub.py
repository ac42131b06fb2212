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
"""

from __future__ import annotations

import json
import threading
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


@dataclass(frozen=True)
class StubResponse:
    """What the server sends back for one request. ``body`` may be a dict (sent as JSON), a str or
    bytes (sent verbatim, for malformed bodies)."""

    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def answer(cls, content: str | None, *, prompt_tokens: int = 100, completion_tokens: int = 20,
               model: str = "stub-model", delay: float = 0.0) -> StubResponse:
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
        return cls(200, body, delay)

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


class OpenAIStub:
    """The scripted loopback server. ``url`` is the ``api_base`` to give litellm
    (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, *, default: StubResponse | None = None,
                 handler: Handler | None = None) -> None:
        self.default = default or StubResponse.answer('{"decisions": []}')
        self.handler = handler
        self.requests: list[RecordedRequest] = []
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
                response = stub._next(request)
                if response.delay and stub._stopping.wait(response.delay):
                    return  # the stub is stopping: drop the abandoned slow answer
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

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name=f"openai-stub-{self.port}")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A fresh scripted loopback server per test (see :class:`OpenAIStub`)."""
    with OpenAIStub() as stub:
        yield stub
