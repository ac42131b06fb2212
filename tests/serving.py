"""An ASGI app served for real in a test: uvicorn in a thread on a free loopback port."""

from __future__ import annotations

import threading
import time

import pandas as pd
import uvicorn


class Clock:
    """A served app's clock in a test: set ``at`` to any instant, read by every request."""

    def __init__(self, at: pd.Timestamp) -> None:
        self.at = at

    def __call__(self) -> pd.Timestamp:
        return self.at


class Served:
    """``with Served(config) as origin``: uvicorn serves ``config`` (port 0: a free one) in a
    thread; ``origin`` is ``http://127.0.0.1:<port>``; leaving stops the server."""

    def __init__(self, config: uvicorn.Config) -> None:
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "no server"
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(20)
