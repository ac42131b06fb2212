"""Process-wide settings, applied once at the process edge (the ``arena`` command, a flow's
entry, a test session), never inside a call. (The arena's own ``ARENA_*`` variables are one
table: :mod:`arena.core.environment`.)

Most libraries take their settings as arguments and get them that way. litellm is the exception:
it reads ``LITELLM_LOCAL_MODEL_COST_MAP`` and ``LITELLM_OFFLINE_MODE`` from the environment when it
is imported (without them, the import fetches a price map from the internet), so
:func:`prepare_process` sets them before anything can import it. A value the operator already set
is kept.

Stopping is process-wide too: under :func:`stop_signals`, ``SIGTERM`` (like ``SIGINT``) raises a
``KeyboardInterrupt`` (:class:`Interrupted`) in the main thread, so a stopped command unwinds
through its cleanups.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from arena.core.errors import SettingsError

__all__ = ["Interrupted", "SettingsError", "prepare_process", "process_prepared", "stop_signals"]

IMPORT_TIME_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}


def prepare_process() -> None:
    """Set the environment that libraries read only at import (see the module docstring)."""
    for name, value in IMPORT_TIME_ENV.items():
        os.environ.setdefault(name, value)


def process_prepared() -> bool:
    """Whether :func:`prepare_process` (or the operator) has set every import-time setting."""
    return all(name in os.environ for name in IMPORT_TIME_ENV)


class Interrupted(KeyboardInterrupt):
    """The process was asked to stop (``SIGINT``, ``SIGTERM``): raised in the main thread like a
    ``KeyboardInterrupt`` (so every ``finally`` and ``except BaseException`` cleanup runs), with
    the signal's number. Library code lets it propagate; only the process edge (the ``arena``
    command) turns it into an exit code, ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        """The signal's name, e.g. ``SIGTERM``."""
        return signal.Signals(self.signum).name


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_signals() -> Iterator[None]:
    """While inside, ``SIGTERM`` raises :class:`Interrupted` in the main thread (Python's default
    for it ends the process at once, skipping every cleanup), and so does ``SIGINT`` unless
    Python's own handler is in place: that one already raises ``KeyboardInterrupt``, and
    ``asyncio.run`` only cancels its task gracefully on Ctrl-C while it is there. A signal the
    process was started to ignore stays ignored; outside the main thread (where no handler can be
    set) nothing changes. The previous handlers come back on the way out.

    A stop is never lost: the interpreter runs a handler between any two bytecodes, also inside
    a finaliser (``__del__``, a weakref callback) whose exceptions it prints and drops, so the
    signal is remembered as well as raised, and a block that still ends without an interrupt
    propagating (it ran on to completion) raises :class:`Interrupted` on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def interrupted(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        raise Interrupted(signum)

    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for signum, handler in previous.items():
        if handler not in (signal.SIG_IGN, signal.default_int_handler):
            signal.signal(signum, interrupted)
    try:
        yield
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        if received:  # a cleanup turned the interrupt into an error of its own: the stop wins
            raise Interrupted(received[0]) from exc
        raise
    else:
        if received:  # the interrupt was dropped where it was raised (see above)
            raise Interrupted(received[0])
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
