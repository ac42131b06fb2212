"""The doors' rate limit: at most ``calls`` per key in any ``window`` seconds."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable


class SlidingWindow:
    """A sliding window of recent calls per key (an entrant, a connection)."""

    def __init__(self, calls: int, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.calls, self.window, self.clock = calls, window, clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def admit(self, key: str = "") -> float | None:
        """Count a call of ``key``: None when it is admitted, else the seconds to wait."""
        now = self.clock()
        with self._lock:
            seen = self._seen.setdefault(key, deque())
            while seen and seen[0] <= now - self.window:
                seen.popleft()
            if len(seen) >= self.calls:
                return seen[0] + self.window - now
            seen.append(now)
            return None
