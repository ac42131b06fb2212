"""How the doors' HTTP servers are served: uvicorn's h11 protocol with a deadline on reading each
request, so a half-open or idle connection is closed instead of held forever.

uvicorn times out only an idle keep-alive connection (one that has been answered), never a
connection that does not complete its first request: a client that opens a socket and sends
nothing, or half a request line, would hold it (and a file descriptor) for as long as it likes.
:class:`DeadlineH11Protocol` closes such a connection :data:`REQUEST_TIMEOUT` seconds after it
was ready for a request; :func:`server_config` is the one uvicorn configuration of ``arena mcp``
and ``arena web`` (and of their tests).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_TIMEOUT = 10.0  # seconds a request has to arrive whole (a half-open connection's life)
KEEP_ALIVE = 5  # seconds an idle keep-alive connection stays open between requests
MAX_HEADER = 16 * 1024  # bytes of a request line and headers (h11's incomplete-event limit)


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on reading a request: from the moment the
    connection is ready for one (opened, or its last response sent) the request line, headers
    and body must arrive within :attr:`request_timeout` seconds, else the connection is
    closed (a 408 first when part of a request came). A request read whole stops the clock:
    a long answer (a server-sent event stream) is not cut."""

    request_timeout: float = REQUEST_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _watch(self) -> None:
        reading = (self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
                   and not self.transport.is_closing())
        if not reading:
            self._stop()
        elif self._deadline is None:
            self._deadline = self.loop.call_later(self.request_timeout, self._expired)

    def _stop(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        answering = self.cycle is not None and not self.cycle.response_complete
        if self.conn.trailing_data[0] and not answering:
            body = (f"no whole request within {self.request_timeout:g} s\n").encode()
            self.transport.write(b"HTTP/1.1 408 Request Timeout\r\n"
                                 b"content-type: text/plain; charset=utf-8\r\n"
                                 b"content-length: " + str(len(body)).encode() + b"\r\n"
                                 b"connection: close\r\n\r\n" + body)
        self.transport.close()


def server_config(asgi: ASGIApp, host: str, port: int, *,
                  request_timeout: float = REQUEST_TIMEOUT, **options: Any) -> uvicorn.Config:
    """How uvicorn serves ``asgi``: h11 with a deadline on every request
    (:class:`DeadlineH11Protocol`), :data:`MAX_HEADER` bytes of request line and headers,
    idle keep-alive connections closed after :data:`KEEP_ALIVE` s, no WebSocket upgrade.
    ``options``: further ``uvicorn.Config`` arguments."""
    protocol = type("DeadlineH11Protocol", (DeadlineH11Protocol,),
                    {"request_timeout": request_timeout})
    return uvicorn.Config(asgi, host=host, port=port, http=protocol, ws="none",
                          timeout_keep_alive=KEEP_ALIVE, h11_max_incomplete_event_size=MAX_HEADER,
                          **{"log_level": "warning", **options})
